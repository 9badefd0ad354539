"""Atomic writes: complete at the final name, or the old file untouched."""

import os

import numpy as np
import pytest

from orca_env.files import atomic_path, atomic_write_bytes, atomic_write_text


def test_write_replaces_and_leaves_no_temporary(tmp_path):
    p = tmp_path / "a.json"
    atomic_write_text(p, "old")
    atomic_write_bytes(p, b"new")
    assert p.read_bytes() == b"new"
    assert os.listdir(tmp_path) == ["a.json"]


def test_failure_mid_write_keeps_the_previous_file(tmp_path):
    p = tmp_path / "a.txt"
    atomic_write_text(p, "complete")
    with pytest.raises(KeyboardInterrupt), atomic_path(p) as tmp:
        with open(tmp, "w") as fh:
            fh.write("trunc")
        raise KeyboardInterrupt
    assert p.read_text() == "complete"
    assert os.listdir(tmp_path) == ["a.txt"]


def test_suffix_for_writers_that_append_one(tmp_path):
    p = tmp_path / "stats.npz"
    with atomic_path(p, suffix=".npz") as tmp:
        np.savez(tmp, x=np.arange(3))
    assert np.array_equal(np.load(p)["x"], np.arange(3))
    assert os.listdir(tmp_path) == ["stats.npz"]


def test_written_files_get_the_usual_permissions(tmp_path):
    p = tmp_path / "a.txt"
    atomic_write_text(p, "x")
    mask = os.umask(0)
    os.umask(mask)
    assert (p.stat().st_mode & 0o777) == 0o666 & ~mask


def test_no_room_is_one_write_error_naming_the_file_and_what_was_kept(tmp_path):
    """A full disk (ENOSPC) or the file size limit (EFBIG) mid-write: issue 27, item 1."""
    import errno

    from orca_env.files import WriteError

    p = tmp_path / "metrics.json"
    atomic_write_text(p, "complete")
    for code, words in ((errno.ENOSPC, "no space left on device"),
                        (errno.EFBIG, "file too large (the file size limit)")):
        with pytest.raises(WriteError) as info, atomic_path(p) as tmp:
            with open(tmp, "w") as fh:
                fh.write("trunc")
            raise OSError(code, os.strerror(code))
        assert str(info.value) == f"could not write {p}: {words}; the earlier file there is kept"
        assert info.value.errno == code and isinstance(info.value, OSError)
        assert p.read_text() == "complete" and os.listdir(tmp_path) == ["metrics.json"]
    with pytest.raises(WriteError, match=r"new\.json: no space left on device; nothing was "
                                         r"written there$"), atomic_path(tmp_path / "new.json"):
        raise OSError(errno.ENOSPC, "No space left on device")
    with pytest.raises(PermissionError), atomic_path(p):  # other errors pass through as they are
        raise PermissionError(errno.EACCES, "Permission denied")
