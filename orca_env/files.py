"""Atomic file writes: a result is either complete at its final name or absent.

Everything orca-env writes that someone may read later (checkpoints, run-folder files, shipped
models, ``metrics.json``, episode logs) goes through here: the bytes go to a temporary file in
the destination's folder, are flushed to disk, and the file is then renamed over the
destination (``os.replace``, atomic on POSIX and Windows). A crash or Ctrl-C mid-write leaves
the previous file, never a truncated one.

A write that fails for lack of room (``ENOSPC``, ``EDQUOT``; ``EFBIG``, the file size limit)
raises :class:`WriteError`, an ``OSError`` whose message is one line naming the destination,
the cause and what was kept ("the earlier file there is kept" or "nothing was written
there"); the temporary file is removed first. :func:`remove_stale_temps` removes the
temporary files a killed earlier run left in an output folder (recognised by their name).

Reading is bounded too: :func:`read_npz` reads the arrays of an untrusted ``.npz`` (a run
folder's normaliser, replay buffer and RLlib weights, an episode log) and :func:`check_zip_members`
checks any zip's members (a model ``.zip``), each member's declared size (the zip directory's
``file_size``, and a ``.npy`` header's shape times item size) against a cap *before* anything is
inflated, so a few megabytes that would inflate to gigabytes (a zip bomb) are refused unread.
Their errors are one-line :class:`ArchiveError` (a ``ValueError``) naming the member; a
``MemoryError`` while reading becomes one too.
"""

from __future__ import annotations

import contextlib
import errno
import math
import os
import re
import tempfile
import zipfile
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

__all__ = ["ArchiveError", "MAX_MEMBER_BYTES", "WriteError", "atomic_path", "atomic_write_bytes",
           "atomic_write_text", "check_zip_members", "no_room_error", "read_npz",
           "remove_stale_temps", "write_error"]

#: The default cap on one member of an untrusted archive, inflated: 1 GiB. Readers that know
#: what a member should hold pass a smaller cap or the expected shapes (:func:`read_npz`).
MAX_MEMBER_BYTES = 2**30

#: errno values that mean "the disk (or the file size limit) had no room for the file".
NO_ROOM = {errno.ENOSPC: "no space left on device", errno.EDQUOT: "disk quota exceeded",
           errno.EFBIG: "file too large (the file size limit)"}

# The temporary names atomic_path makes (tempfile.mkstemp's 8 random characters):
# ".<name>.<random><suffix>.tmp", or ".<name>.<random><ext>" when the writer appends <ext>.
_TEMP_NAME = re.compile(r"^\.(?P<name>.+)\.[a-z0-9_]{8}(?:.*\.tmp|(?P<ext>\.[^.]+))$")


class WriteError(OSError):
    """A file that could not be written completely; its message is one line.

    ``errno`` is the cause's (``ENOSPC`` for a full disk, or ``None``), ``filename`` the
    destination. The destination is as it was before the write (the earlier file, or none).
    """

    def __init__(self, code: int | None, message: str, path: str) -> None:
        super().__init__(code, message, path)
        self.message = message

    def __str__(self) -> str:
        return self.message


def write_error(path: str | os.PathLike, reason: str, code: int | None = None) -> WriteError:
    """The :class:`WriteError` for ``path``: ``could not write PATH: REASON; <what was kept>``.

    Call it after the temporary file is gone and before anything is renamed to ``path``, so
    what it says was kept is what is there.
    """
    path = os.fspath(path)
    kept = ("the earlier file there is kept" if os.path.lexists(path)
            else "nothing was written there")
    return WriteError(code, f"could not write {path}: {reason}; {kept}", path)


def no_room_error(path: str, exc: BaseException) -> WriteError | None:
    """A :class:`WriteError` for ``exc`` if it is a lack of room, else ``None``."""
    if isinstance(exc, WriteError) or not isinstance(exc, OSError) or exc.errno not in NO_ROOM:
        return None
    return write_error(path, NO_ROOM[exc.errno], exc.errno)


def remove_stale_temps(folder: str | os.PathLike) -> list[str]:
    """Remove the temporary files of :func:`atomic_path` that a killed run left in ``folder``.

    Only ``folder``'s own entries are looked at (no subfolder, no symlink followed): regular
    files whose names have the pattern of :func:`atomic_path`'s temporary names (hidden, the
    destination's name, 8 random characters, then ``.tmp`` or the destination's extension).
    Call it only on a folder the command owns, before its work starts: a writer running at
    the same time in the same folder would lose its temporary file.

    Returns:
        The paths removed.
    """
    removed = []
    with os.scandir(folder) as entries:
        for entry in entries:
            m = _TEMP_NAME.match(entry.name)
            if m is None or not entry.is_file(follow_symlinks=False):
                continue
            if m.group("ext") is not None and not m.group("name").endswith(m.group("ext")):
                continue
            with contextlib.suppress(FileNotFoundError):
                os.remove(entry.path)
                removed.append(entry.path)
    return removed


def _umask() -> int:
    mask = os.umask(0)  # reading the umask means setting it; put it straight back
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, suffix: str = "") -> Iterator[str]:
    """A temporary path to write ``path``'s content to; renamed to ``path`` on success.

    For writers that want a file name (``np.savez``, ``torch.save``, ``model.save``). On an
    exception the temporary file is removed and ``path`` is left as it was.

    Args:
        path: The destination.
        suffix: Suffix of the temporary name, for writers that append or check one
            (``np.savez`` appends ``.npz`` to names without it).

    Yields:
        The temporary path, in the destination's folder.

    Raises:
        WriteError: When the disk (or the file size limit) has no room for the file: one line
            naming ``path`` (the temporary file is removed, ``path`` untouched). Other errors
            pass through unchanged.
    """
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=suffix + ".tmp",
                               dir=folder)
    os.close(fd)
    if suffix:
        # The writer appends its own suffix to the name it is given.
        os.remove(tmp)
        tmp = tmp[: -len(".tmp")]
    try:
        yield tmp
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        # mkstemp makes the file private (0600); give it the permissions of a normal new file.
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        no_room = no_room_error(path, exc)
        if no_room is not None:
            raise no_room from exc
        raise


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        fh.write(data)


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    atomic_write_bytes(path, text.encode("utf-8"))


# -- bounded reads of untrusted archives ------------------------------------------------------
class ArchiveError(ValueError):
    """A member of an archive that is refused before (or while) it is read; one line.

    The message names the member, not the file: callers put the file in front.
    """


def _size(n: int) -> str:
    """``3221225472 bytes (3.0 GiB)``."""
    for unit, k in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 2**k:
            return f"{n} bytes ({n / 2**k:.1f} {unit})"
    return f"{n} bytes"


def check_zip_members(archive: zipfile.ZipFile, caps: Mapping[str, int] | None = None,
                      default_cap: int = MAX_MEMBER_BYTES) -> None:
    """Refuse a zip whose members declare more than their caps, before any is inflated.

    A member's declared size (``ZipInfo.file_size``) bounds what :mod:`zipfile` inflates from
    it (reading stops there, and a member whose data inflates to more fails its CRC check), so
    checking it is checking what a read can cost.

    Args:
        archive: The open zip.
        caps: Bytes allowed per member name; names not in it get ``default_cap``.
        default_cap: The cap of every other member.

    Raises:
        ArchiveError: Naming the first member over its cap, its declared size and the cap.
    """
    caps = caps or {}
    for info in archive.infolist():
        cap = caps.get(info.filename, default_cap)
        if info.file_size > cap:
            raise ArchiveError(f"member {info.filename!r} declares {_size(info.file_size)} "
                               f"inflated, over its cap of {_size(cap)}")


def _npy_header(fh: Any) -> tuple[tuple[int, ...], bool, Any]:
    """``(shape, fortran_order, dtype)`` of the ``.npy`` stream ``fh`` (nothing else read)."""
    from numpy.lib import format as npy  # noqa: PLC0415  (numpy is a dependency anyway)

    version = npy.read_magic(fh)
    if version == (1, 0):
        return npy.read_array_header_1_0(fh)
    if version == (2, 0):
        return npy.read_array_header_2_0(fh)
    raise ValueError(f".npy format version {version} is not supported")


def read_npz(path: str | os.PathLike, keys: Iterable[str] | None = None, *,
             max_bytes: int = MAX_MEMBER_BYTES,
             shapes: Mapping[str, tuple[int, ...]] | None = None) -> dict[str, Any]:
    """The arrays of an untrusted ``.npz``, each member's size checked before it is read.

    For every member read: the zip's declared size must be at most ``max_bytes``; the
    ``.npy`` header (read alone first) must declare a plain dtype (no objects: nothing is
    unpickled), an array of at most ``max_bytes`` bytes that fits in the member, and, if
    ``shapes`` names the key, exactly that shape. Only then is the array read.

    Args:
        path: The file.
        keys: The arrays to read (members ``<key>.npy``); the others are left unread. ``None``
            reads every member. A key without a member is left out of the result (the caller
            says what is missing).
        max_bytes: The cap on one member (declared zip size and array bytes).
        shapes: Expected shapes by key, checked from the headers.

    Returns:
        ``{key: ndarray}``.

    Raises:
        ArchiveError: A member over its cap, of another shape than expected, holding objects,
            not a ``.npy`` array (a member ``<key>`` without the suffix), a malformed header, or
            no memory to read it; the message names the member.
        OSError, zipfile.BadZipFile, EOFError: If the file is not a readable zip (the caller
            names the file).
    """
    from numpy.lib import format as npy  # noqa: PLC0415

    shapes = shapes or {}
    out: dict[str, Any] = {}
    with zipfile.ZipFile(path) as zf:
        infos = {i.filename: i for i in zf.infolist()}
        wanted = ([n[:-4] if n.endswith(".npy") else n for n in infos] if keys is None
                  else list(keys))
        for key in wanted:
            info = infos.get(key + ".npy")
            if info is None:
                if key in infos:  # np.load would hand it back as bytes
                    raise ArchiveError(f"member {key!r} is not a .npy array")
                continue
            if info.file_size > max_bytes:
                raise ArchiveError(f"member {info.filename!r} declares {_size(info.file_size)} "
                                   f"inflated, over its cap of {_size(max_bytes)}")
            try:
                with zf.open(info) as fh:
                    shape, _, dtype = _npy_header(fh)
                    offset = fh.tell()
            except (ValueError, SyntaxError, TypeError) as exc:
                raise ArchiveError(f"member {info.filename!r} has no valid .npy header "
                                   f"({type(exc).__name__}: {str(exc)[:200]})") from None
            if dtype.hasobject:
                raise ArchiveError(f"member {info.filename!r} holds Python objects (dtype "
                                   f"{dtype}), which are never unpickled")
            nbytes = math.prod(shape) * dtype.itemsize
            if nbytes > max_bytes:
                raise ArchiveError(f"member {info.filename!r} declares an array of shape "
                                   f"{shape} ({_size(nbytes)}), over its cap of "
                                   f"{_size(max_bytes)}")
            if nbytes > info.file_size - offset:
                raise ArchiveError(f"member {info.filename!r} declares an array of shape "
                                   f"{shape} ({_size(nbytes)}) in {_size(info.file_size)}: "
                                   f"truncated or forged")
            if key in shapes and tuple(shape) != tuple(shapes[key]):
                raise ArchiveError(f"member {info.filename!r} declares shape {shape}, expected "
                                   f"{tuple(shapes[key])}")
            try:
                with zf.open(info) as fh:
                    out[key] = npy.read_array(fh, allow_pickle=False)
            except MemoryError:
                raise ArchiveError(f"member {info.filename!r}: not enough memory to read "
                                   f"{_size(nbytes)}") from None
    return out
