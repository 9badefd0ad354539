"""Atomic file writes: a result is either complete at its final name or absent.

Everything orca-env writes that someone may read later (checkpoints, run-folder files, shipped
models, ``metrics.json``, episode logs) goes through here: the bytes go to a temporary file in
the destination's folder, are flushed to disk, and the file is then renamed over the
destination (``os.replace``, atomic on POSIX and Windows). A crash or Ctrl-C mid-write leaves
the previous file, never a truncated one.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator

__all__ = ["atomic_path", "atomic_write_bytes", "atomic_write_text"]


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
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        fh.write(data)


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    atomic_write_bytes(path, text.encode("utf-8"))
