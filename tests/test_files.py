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
