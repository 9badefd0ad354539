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
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import tempfile
from collections.abc import Iterator

__all__ = ["WriteError", "atomic_path", "atomic_write_bytes", "atomic_write_text",
           "no_room_error", "remove_stale_temps", "write_error"]

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
