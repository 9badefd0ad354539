"""Read a TensorFlow 1 checkpoint and its graph without TensorFlow: arrays and constants only.

A TF1 checkpoint ``name`` is three files: ``name.index`` (a LevelDB-format table mapping each
variable's name to a ``BundleEntryProto``: dtype, shape, offset and size in the data shard,
CRC32C), ``name.data-00000-of-00001`` (the tensors' raw little-endian bytes) and ``name.meta``
(a ``MetaGraphDef``: the graph, with its constants). :func:`read_variables` returns the
variables as numpy arrays, :func:`read_graph` the graph's nodes (name, op, inputs, and the
value of every ``Const``); nothing is executed and nothing but numbers and strings is built,
so a checkpoint is read as data. Only what TensorFlow writes for such checkpoints is accepted
(one shard, uncompressed table blocks, numeric dtypes, no partitioned variables); anything
else is a ``ValueError`` naming the file. The protobuf wire format is decoded by hand
(varints and length-delimited fields), for the few message fields these files use.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field

import numpy as np

__all__ = ["read_variables", "read_graph", "GraphNode"]

# LevelDB table footer: two block handles (varint pairs) padded to 40 bytes, then the magic.
_TABLE_MAGIC = 0xDB4775248B80FB57
_FOOTER_SIZE = 48
_BLOCK_TRAILER = 5  # compression type (1 byte) + masked CRC32C (4 bytes)

# TensorFlow's DataType enum -> numpy dtype (the numeric ones a policy's checkpoint holds).
_DTYPES = {1: np.float32, 2: np.float64, 3: np.int32, 4: np.uint8, 5: np.int16, 6: np.int8,
           9: np.int64, 10: np.bool_, 17: np.uint16, 19: np.float16, 22: np.uint32,
           23: np.uint64}


# -- protobuf wire format ------------------------------------------------------------------------
def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise ValueError("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint longer than 64 bits")


def _fields(buf: bytes) -> list[tuple[int, int, object]]:
    """The ``(field number, wire type, value)`` triples of a protobuf message.

    Values: ints for varints, raw bytes for fixed32/fixed64 and length-delimited fields.
    """
    out, pos = [], 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        num, wt = key >> 3, key & 7
        if wt == 0:
            val, pos = _varint(buf, pos)
        elif wt == 1:
            val, pos = buf[pos:pos + 8], pos + 8
        elif wt == 2:
            n, pos = _varint(buf, pos)
            val, pos = buf[pos:pos + n], pos + n
        elif wt == 5:
            val, pos = buf[pos:pos + 4], pos + 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wt}")
        if pos > len(buf):
            raise ValueError("truncated protobuf message")
        out.append((num, wt, val))
    return out


def _shape(buf: bytes) -> tuple[int, ...]:
    """A ``TensorShapeProto``: ``dim`` (2) entries' ``size`` (1)."""
    dims = []
    for num, _, val in _fields(buf):
        if num == 2:
            size = [v for n, _, v in _fields(val) if n == 1]
            dims.append(int(size[0]) if size else 0)
        elif num == 3 and val:
            raise ValueError("tensor of unknown rank")
    return tuple(dims)


# -- CRC32C (Castagnoli), as TensorFlow checks the data shard --------------------------------------
def _crc32c_table() -> np.ndarray:
    t = np.arange(256, dtype=np.uint32)
    for _ in range(8):
        t = np.where(t & 1, (t >> 1) ^ np.uint32(0x82F63B78), t >> 1).astype(np.uint32)
    return t


_CRC_TABLE = _crc32c_table().tolist()


def _crc32c(data: bytes) -> int:
    crc, table = 0xFFFFFFFF, _CRC_TABLE
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _unmask(masked: int) -> int:
    rot = (masked - 0xA282EAD8) & 0xFFFFFFFF
    return ((rot >> 17) | (rot << 15)) & 0xFFFFFFFF


# -- the LevelDB-format table of the .index file ---------------------------------------------------
def _block(data: bytes, offset: int, size: int, path: str) -> bytes:
    if offset + size + _BLOCK_TRAILER > len(data):
        raise ValueError(f"{path}: block beyond the end of the file")
    if data[offset + size] != 0:
        raise ValueError(f"{path}: compressed table block (type {data[offset + size]}); "
                         f"TensorFlow writes checkpoint indexes uncompressed")
    return data[offset:offset + size]


def _block_entries(block: bytes) -> list[tuple[bytes, bytes]]:
    if len(block) < 4:
        raise ValueError("table block too short")
    n_restarts = struct.unpack_from("<I", block, len(block) - 4)[0]
    end = len(block) - 4 - 4 * n_restarts
    if end < 0:
        raise ValueError("bad table block restarts")
    entries, pos, key = [], 0, b""
    while pos < end:
        shared, pos = _varint(block, pos)
        non_shared, pos = _varint(block, pos)
        value_len, pos = _varint(block, pos)
        key = key[:shared] + block[pos:pos + non_shared]
        pos += non_shared
        entries.append((key, block[pos:pos + value_len]))
        pos += value_len
    return entries


def _table(path: str) -> list[tuple[bytes, bytes]]:
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < _FOOTER_SIZE or \
            struct.unpack_from("<Q", data, len(data) - 8)[0] != _TABLE_MAGIC:
        raise ValueError(f"{path}: not a TensorFlow checkpoint index (no table footer)")
    footer = data[len(data) - _FOOTER_SIZE:]
    _, pos = _varint(footer, 0)  # the metaindex block's handle (unused)
    _, pos = _varint(footer, pos)
    index_off, pos = _varint(footer, pos)
    index_size, _ = _varint(footer, pos)
    out = []
    for _, handle in _block_entries(_block(data, index_off, index_size, path)):
        off, p = _varint(handle, 0)
        size, _ = _varint(handle, p)
        out.extend(_block_entries(_block(data, off, size, path)))
    return out


def read_variables(prefix: str | os.PathLike,
                   names: list[str] | None = None) -> dict[str, np.ndarray]:
    """The variables of the TF1 checkpoint ``prefix`` (``prefix.index`` and its data shard).

    Args:
        prefix: The checkpoint's path without the extensions.
        names: Read only these variables (those the checkpoint has); default: all.

    Returns:
        ``{name: array}``, each a fresh, writable numpy array of the stored dtype and shape.

    Raises:
        ValueError: Naming the file, if it is not such a checkpoint or a tensor fails its
            size or CRC32C check.
    """
    prefix = os.fspath(prefix)
    index = prefix + ".index"
    entries = _table(index)
    header = [v for k, v in entries if k == b""]
    if not header:
        raise ValueError(f"{index}: no bundle header")
    num_shards = next((v for n, _, v in _fields(header[0]) if n == 1), 1)
    if num_shards != 1:
        raise ValueError(f"{index}: {num_shards} data shards; only single-shard checkpoints "
                         f"are read")
    shard = f"{prefix}.data-00000-of-00001"
    with open(shard, "rb") as f:
        blob = f.read()
    out = {}
    for key, value in entries:
        if key == b"":
            continue
        name = key.decode("utf-8")
        if names is not None and name not in names:
            continue
        dtype, shape, offset, size, crc, sliced = 0, (), 0, 0, None, False
        for num, _, val in _fields(value):
            if num == 1:
                dtype = val
            elif num == 2:
                shape = _shape(val)
            elif num == 3 and val != 0:
                raise ValueError(f"{index}: {name!r} in shard {val}")
            elif num == 4:
                offset = val
            elif num == 5:
                size = val
            elif num == 6:
                crc = struct.unpack("<I", val)[0]
            elif num == 7:
                sliced = True
        if sliced:
            raise ValueError(f"{index}: {name!r} is a partitioned variable; not supported")
        if dtype not in _DTYPES:
            raise ValueError(f"{index}: {name!r} has TensorFlow dtype {dtype}, not a numeric "
                             f"dtype this reader takes")
        dt = np.dtype(_DTYPES[dtype]).newbyteorder("<")
        if size != dt.itemsize * int(np.prod(shape, dtype=np.int64)) \
                or offset + size > len(blob):
            raise ValueError(f"{shard}: {name!r} has {size} bytes at {offset}, expected "
                             f"{dt.itemsize} x {shape}")
        raw = blob[offset:offset + size]
        if crc is not None and _crc32c(raw) != _unmask(crc):
            raise ValueError(f"{shard}: {name!r} fails its CRC32C check (a damaged file?)")
        out[name] = np.frombuffer(raw, dtype=dt).reshape(shape).astype(dt.newbyteorder("="))
    return out


# -- the graph of the .meta file ----------------------------------------------------------------
@dataclass
class GraphNode:
    """One ``NodeDef`` of a graph: its name, op type, inputs, and for ``Const`` its value."""

    name: str
    op: str
    inputs: list[str] = field(default_factory=list)
    value: np.ndarray | None = None


def _tensor(buf: bytes) -> np.ndarray | None:
    """A ``TensorProto``'s value: ``tensor_content`` or the typed repeated fields."""
    dtype, shape, content, vals = 0, (), None, []
    for num, wt, val in _fields(buf):
        if num == 1:
            dtype = val
        elif num == 2:
            shape = _shape(val)
        elif num == 4:
            content = val
        elif num in (5, 6, 7, 10, 11):  # float_val, double_val, int_val, int64_val, bool_val
            vals.append((num, wt, val))
    if dtype not in _DTYPES:
        return None  # strings and the like: not needed
    dt = np.dtype(_DTYPES[dtype]).newbyteorder("<")
    n = int(np.prod(shape, dtype=np.int64))
    if content is not None:
        return np.frombuffer(content, dtype=dt).reshape(shape).astype(dt.newbyteorder("="))
    flat: list = []
    for num, wt, val in vals:
        if num == 5:
            fmt, width = "<f", 4
        elif num == 6:
            fmt, width = "<d", 8
        else:
            fmt, width = None, 0
        if wt == 2 and fmt is not None:  # packed floats or doubles
            flat.extend(struct.unpack(f"<{len(val) // width}{fmt[1]}", val))
        elif wt == 2:  # packed varints
            p = 0
            while p < len(val):
                v, p = _varint(val, p)
                flat.append(v - (1 << 64) if v >= 1 << 63 else v)
        elif fmt is not None:
            flat.append(struct.unpack(fmt, val)[0])
        else:
            flat.append(val - (1 << 64) if val >= 1 << 63 else val)
    arr = np.asarray(flat, dtype=dt.newbyteorder("="))
    if arr.size == n:
        return arr.reshape(shape)
    if arr.size == 1:  # a splat: every element is the one value given
        return np.full(shape, arr[0], dtype=arr.dtype)
    if arr.size == 0:
        return np.zeros(shape, dtype=arr.dtype)
    raise ValueError(f"constant of shape {shape} with {arr.size} values")


def read_graph(path: str | os.PathLike) -> dict[str, GraphNode]:
    """The nodes of the graph in a ``.meta`` file (a ``MetaGraphDef``), by name.

    Raises:
        ValueError: Naming the file, if it holds no graph.
    """
    path = os.fspath(path)
    with open(path, "rb") as f:
        data = f.read()
    try:
        graph = [v for n, _, v in _fields(data) if n == 2]
        if not graph:
            raise ValueError("no graph_def")
        nodes = {}
        for num, _, node_buf in _fields(graph[0]):
            if num != 1:
                continue
            node, value = GraphNode("", ""), None
            for n, _, v in _fields(node_buf):
                if n == 1:
                    node.name = v.decode("utf-8")
                elif n == 2:
                    node.op = v.decode("utf-8")
                elif n == 3:
                    node.inputs.append(v.decode("utf-8"))
                elif n == 5:  # an attr map entry: key (1), AttrValue (2)
                    kv = {k: x for k, _, x in _fields(v)}
                    if kv.get(1) == b"value":
                        value = kv.get(2, b"")
            if node.op == "Const" and value is not None:
                tensor = [x for k, _, x in _fields(value) if k == 8]  # AttrValue.tensor
                node.value = _tensor(tensor[0]) if tensor else None
            nodes[node.name] = node
    except (ValueError, UnicodeDecodeError, struct.error) as exc:
        raise ValueError(f"{path}: not a TensorFlow MetaGraphDef ({exc})") from exc
    return nodes
