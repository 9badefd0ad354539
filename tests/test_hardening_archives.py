"""Bounded reads of untrusted archives (issue 27, item 6).

Every zip or NPZ member's declared size, the zip directory's and a ``.npy`` header's shape
times item size, is checked against a cap before the member is inflated: a small file that
claims gigabytes is one ValueError naming the file and the member, never a MemoryError or a
gigabyte allocation. The files here are a few kilobytes: a deflated run of zeros that inflates
past a (lowered) cap, and ``.npy`` headers that claim 2**33 floats.
"""

import io
import os
import shutil
import zipfile

import numpy as np
import pytest
from numpy.lib import format as npy

from orca_env.evaluation import episode_log
from orca_env.evaluation.episode_log import load_log
from orca_env.files import ArchiveError, read_npz

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HUGE = (2**33,)  # 2**33 float64: 64 GiB


def _npy_claiming(shape, dtype="<f8", payload=b"\0" * 64):
    """A .npy stream whose header claims ``shape`` and whose data is a few bytes."""
    fh = io.BytesIO()
    npy.write_array_header_1_0(fh, {"descr": dtype, "fortran_order": False, "shape": shape})
    return fh.getvalue() + payload


def _npy(array):
    fh = io.BytesIO()
    np.save(fh, array)
    return fh.getvalue()


def _rewrite(src, dst, **members):
    """Copy the zip ``src`` to ``dst`` with ``members`` (name -> bytes) replaced or added."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            if info.filename not in members:
                zout.writestr(info.filename, zin.read(info.filename))
        for name, data in members.items():
            zout.writestr(name, data)
    return dst


# -- the shared reader ------------------------------------------------------------------------
def test_read_npz_checks_declared_sizes_and_headers_before_reading(tmp_path, monkeypatch):
    path = tmp_path / "a.npz"
    np.savez(path, a=np.arange(10.0), b=np.zeros((3, 2)))
    out = read_npz(path)
    assert set(out) == {"a", "b"} and np.array_equal(out["a"], np.arange(10.0))
    assert set(read_npz(path, ["a", "missing"])) == {"a"}  # the caller says what is missing

    read = []
    real = npy.read_array
    monkeypatch.setattr(npy, "read_array", lambda *a, **k: (read.append(1), real(*a, **k))[1])
    with pytest.raises(ArchiveError, match=r"member 'a.npy' declares 208 bytes inflated, over its "
                                           r"cap of 207 bytes"):
        read_npz(path, max_bytes=207)  # 128 bytes of header and 80 of data
    with pytest.raises(ArchiveError, match=r"member 'b.npy' declares shape \(3, 2\), expected "
                                           r"\(2, 3\)"):
        read_npz(path, ["b"], shapes={"b": (2, 3)})
    assert read == []  # refused from the directory and the headers: nothing was read

    bomb = tmp_path / "bomb.npz"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("x.npy", _npy_claiming(HUGE))
        zf.writestr("o.npy", _npy(np.array([{"a": 1}], dtype=object)))
        zf.writestr("raw", b"bytes")
    assert bomb.stat().st_size < 2000
    with pytest.raises(ArchiveError, match=r"member 'x.npy' declares an array of shape "
                                           r"\(8589934592,\) \(68719476736 bytes \(64.0 GiB\)\), "
                                           r"over its cap"):
        read_npz(bomb, ["x"])
    with pytest.raises(ArchiveError, match=r"'x.npy' declares an array .* in 192 bytes: "
                                           r"truncated or forged"):
        read_npz(bomb, ["x"], max_bytes=2**40)  # under the cap, but more than the member holds
    with pytest.raises(ArchiveError, match="member 'o.npy' holds Python objects"):
        read_npz(bomb, ["o"])
    with pytest.raises(ArchiveError, match="member 'raw' is not a .npy array"):
        read_npz(bomb, ["raw"])
    assert read == []


# -- episode logs ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def log_path(tmp_path_factory):
    """A short episode log (pure ORCA on crowdnav_circle, 8 steps)."""
    from orca_env.evaluation import evaluate

    out = tmp_path_factory.mktemp("log")
    evaluate(os.path.join(ROOT, "configs", "crowdnav_circle.yaml"), "orca", episodes=1,
             out_dir=str(out), logs=1, overrides={"max_steps": 8})
    return str(out / "logs" / "episode_10000.npz")


def test_a_log_member_inflating_past_the_cap_is_refused_unread(log_path, tmp_path,
                                                              monkeypatch, capsys):
    # 3 GiB in the attack; here a cap lowered to 1 MiB and 2 MiB of zeros (a few KB on disk).
    monkeypatch.setattr(episode_log, "MAX_MEMBER_BYTES", 2**20)
    bad = _rewrite(log_path, tmp_path / "bomb.npz", **{"orca_lines.npy": b"\0" * 2**21})
    assert os.path.getsize(bad) < 50_000
    with pytest.raises(ValueError) as exc:
        load_log(bad)
    msg = str(exc.value)
    assert repr(str(bad)) in msg and "member 'orca_lines.npy' declares 2097152 bytes" in msg
    assert "over its cap of 1048576 bytes (1.0 MiB)" in msg and "\n" not in msg
    load_log(log_path)  # the sound log still loads under the lowered cap


def test_a_log_whose_header_claims_2_33_floats_is_one_line_not_a_memory_error(
        log_path, tmp_path, capsys):
    from orca_env.cli import main

    bad = _rewrite(log_path, tmp_path / "huge.npz", **{"positions.npy": _npy_claiming(HUGE)})
    with pytest.raises(ValueError, match=r"huge.npz' is unreadable: member 'positions.npy' "
                                         r"declares an array of shape \(8589934592,\)"):
        load_log(bad)
    with pytest.raises(SystemExit) as exc:
        main(["replay", str(bad)])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1 and "positions.npy" in err, err


# -- the normaliser and the replay buffer ---------------------------------------------------
def test_a_normaliser_header_claiming_2_33_floats_names_the_file_and_member(tmp_path):
    pytest.importorskip("stable_baselines3")
    from orca_env.training import model_files

    good = tmp_path / "vecnormalize.npz"
    model_files.write_normalizer_stats({
        "format": np.array(1), "norm_obs": np.array(True), "norm_reward": np.array(False),
        "clip_obs": np.array(10.0), "clip_reward": np.array(10.0), "gamma": np.array(0.99),
        "epsilon": np.array(1e-8), "ret_mean": np.array(0.0), "ret_var": np.array(1.0),
        "ret_count": np.array(1.0), "obs_mean": np.zeros(4), "obs_var": np.ones(4),
        "obs_count": np.array(1.0)}, good)
    model_files.load_normalizer(good)
    bad = _rewrite(good, tmp_path / "bad.npz", **{"obs_mean.npy": _npy_claiming(HUGE)})
    with pytest.raises(ValueError) as exc:
        model_files.load_normalizer(str(bad))
    msg = str(exc.value)
    assert msg.startswith(f"normaliser {str(bad)!r}: member 'obs_mean.npy' declares an array of "
                          f"shape (8589934592,)"), msg


def test_a_replay_buffer_is_checked_against_the_model_buffer_before_it_is_read(tmp_path):
    pytest.importorskip("stable_baselines3")
    from types import SimpleNamespace

    from orca_env.training import model_files

    arrays = {"observations": np.zeros((8, 2, 3), np.float32),
              "next_observations": np.zeros((8, 2, 3), np.float32),
              "actions": np.zeros((8, 2, 2), np.float32), "rewards": np.zeros((8, 2), np.float32),
              "dones": np.zeros((8, 2), np.float32), "timeouts": np.zeros((8, 2), np.float32),
              "valid": np.ones((8, 2), np.float32)}
    buf = SimpleNamespace(buffer_size=8, pos=3, full=False, **arrays)
    path = tmp_path / "rb.npz"
    model_files.save_replay_buffer(buf, path)
    fresh = SimpleNamespace(buffer_size=8, pos=0, full=False,
                            **{k: np.ones_like(v) for k, v in arrays.items()})
    model_files.load_replay_buffer(fresh, path)
    assert fresh.pos == 3 and not fresh.observations.any()
    forged = _rewrite(path, tmp_path / "forged.npz",
                      **{"observations.npy": _npy_claiming((2**20, 2, 3), "<f4")})
    with pytest.raises(ValueError, match=r"replay buffer .*forged.npz': member "
                                         r"'observations.npy' declares an array of shape "
                                         r"\(1048576, 2, 3\)"):
        model_files.load_replay_buffer(fresh, forged)
    bomb = _rewrite(path, tmp_path / "bomb.npz", **{"actions.npy": b"\0" * 2**21})
    with pytest.raises(ValueError, match=r"member 'actions.npy' declares 2097152 bytes "
                                         r"\(2.0 MiB\) inflated, over its cap of 1048576"):
        model_files.load_replay_buffer(fresh, bomb)  # the largest array is 192 bytes: 1 MiB cap


# -- SB3 model zips -------------------------------------------------------------------------
@pytest.fixture
def shipped_run(tmp_path):
    pytest.importorskip("stable_baselines3")
    src = os.path.join(ROOT, "policies", "trained", "circle_ppo")
    dst = tmp_path / "circle_ppo"
    shutil.copytree(src, dst)
    return dst


def test_a_model_zip_whose_data_member_inflates_past_its_cap_is_refused_unread(shipped_run,
                                                                               monkeypatch):
    from orca_env.policies.sb3 import load

    from orca_env.training import model_files

    load(shipped_run)
    monkeypatch.setattr(model_files, "MODEL_DATA_MAX_BYTES", 2**20)
    model = shipped_run / "model.zip"
    _rewrite(model, shipped_run / "bomb.zip", data=b" " * 2**21)
    os.replace(shipped_run / "bomb.zip", model)
    read = []
    monkeypatch.setattr(zipfile.ZipFile, "read",
                        lambda self, *a, **k: read.append(a) or b"{}")  # never reached
    with pytest.raises(ValueError, match=r"model .*model.zip': member 'data' declares 2097152 "
                                         r"bytes \(2.0 MiB\) inflated, over its cap of 1048576"):
        load(shipped_run)
    assert read == []


def test_a_policy_member_larger_than_the_network_needs_is_refused(shipped_run):
    from orca_env.policies.sb3 import load

    from orca_env.training import model_files

    policy = load(shipped_run)
    cap = model_files.model_member_cap(policy.model)
    assert 16 * 2**20 < cap < 17 * 2**20  # two copies of a small network, plus 16 MiB
    model = shipped_run / "model.zip"
    _rewrite(model, shipped_run / "bomb.zip", **{"policy.pth": b"\0" * (cap + 1)})
    os.replace(shipped_run / "bomb.zip", model)
    assert model.stat().st_size < 200_000
    with pytest.raises(ValueError, match=rf"member 'policy.pth' declares {cap + 1} bytes "
                                         rf"\(16.1 MiB\) inflated, over its cap of {cap} bytes"):
        load(shipped_run)
