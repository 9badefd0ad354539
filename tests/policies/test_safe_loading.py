"""The loader of trained models unpickles nothing from the files it reads."""

import base64
import json
import os
import pickle
import shutil
import sys
import zipfile

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

from orca_env.policies import SHIPPED_MODEL  # noqa: E402
from orca_env.policies.sb3 import convert_legacy_normalizer, load  # noqa: E402

import orca_env  # noqa: E402
from orca_env.training.model_files import (  # noqa: E402
    LegacyPickleError,
    load_normalizer,
    read_model_zip,
)

ENV = {"scenario": "circle_v0", "scenario_kwargs": {"circle_radius": 2.5}, "max_steps": 20,
       "groups": [{"population": "learned", "count": 3, "on_goal": "stop"}],
       "observation": {"num_agents": 2, "range": 3.0}}


class Marker:
    """Unpickling this creates the file ``path``: a real payload, harmless beyond that."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


@pytest.fixture(scope="module")
def trained(tmp_path_factory, train_tiny):
    return train_tiny(tmp_path_factory.mktemp("run"), ENV, n_envs=1, n_timesteps=128,
                      checkpoint_freq=64, batch_size=48, net_arch=(8,))


@pytest.fixture
def run(trained, tmp_path):
    shutil.copytree(trained, tmp_path / "run")
    return tmp_path / "run"


def rewrite_zip(path, **members):
    with zipfile.ZipFile(path) as z:
        old = {n: z.read(n) for n in z.namelist()}
    old.update(members)
    with zipfile.ZipFile(path, "w") as z:
        for name, blob in old.items():
            z.writestr(name, blob)


def actions(policy):
    env = orca_env.parallel_env(ENV)
    obs, _ = env.reset(seed=3)
    return np.stack(list(policy(obs, env).values()))


def test_payload_is_real(tmp_path):
    pickle.loads(pickle.dumps(Marker(tmp_path / "proof")))
    assert (tmp_path / "proof").exists()


def test_loader_ignores_pickled_entries_of_the_model_data(run, tmp_path):
    clean = actions(load(run))
    marker = tmp_path / "pwned"
    with zipfile.ZipFile(run / "model.zip") as z:
        data = json.loads(z.read("data"))
    blob = base64.b64encode(pickle.dumps(Marker(marker))).decode()
    serialized = [k for k, v in data.items() if isinstance(v, dict) and ":serialized:" in v]
    assert {"lr_schedule", "policy_class", "observation_space"} <= set(serialized)
    for k in serialized:
        data[k][":serialized:"] = blob
    rewrite_zip(run / "model.zip", data=json.dumps(data).encode())
    np.testing.assert_array_equal(actions(load(run)), clean)
    assert not marker.exists()


def test_loader_refuses_a_pickle_in_the_weights(run, tmp_path):
    marker = tmp_path / "pwned"
    rewrite_zip(run / "model.zip", **{"policy.pth": pickle.dumps(Marker(marker))})
    with pytest.raises(ValueError, match="not a readable model zip"):
        load(run)
    assert not marker.exists()


@pytest.mark.parametrize("where", ["dir", "checkpoint"])
def test_loader_refuses_a_legacy_pickled_normaliser(run, tmp_path, where):
    marker = tmp_path / "pwned"
    if where == "dir":
        path, npz = run, run / "vecnormalize.npz"
    else:
        path = sorted((run / "checkpoints").glob("rl_model_*_steps.zip"))[-1]
        npz = run / "checkpoints" / path.name.replace("rl_model_", "rl_model_vecnormalize_")
        npz = npz.with_suffix(".npz")
    npz.unlink()
    npz.with_suffix(".pkl").write_bytes(pickle.dumps(Marker(marker)))
    with pytest.raises(LegacyPickleError) as err:
        load(path)
    msg = str(err.value)
    assert "pickle" in msg and "runs any code" in msg and "convert_legacy_normalizer" in msg
    assert not marker.exists()
    # An NPZ that is secretly a pickle is refused too (allow_pickle=False).
    npz.write_bytes(pickle.dumps(Marker(marker)))
    with pytest.raises(ValueError, match="not a readable NPZ"):
        load(path)
    assert not marker.exists()


def test_convert_legacy_normalizer_round_trips_a_trusted_file(run, tmp_path):
    from stable_baselines3.common.vec_env import VecNormalize

    from orca_env.training.sb3.adapter import make_vec_env

    venv = VecNormalize(make_vec_env(ENV, 1), norm_reward=False, clip_obs=7.0)
    venv.reset()
    for _ in range(3):
        venv.step(np.zeros((venv.num_envs, 2), dtype=np.float32))
    pkl = tmp_path / "vecnormalize.pkl"
    venv.save(str(pkl))  # SB3's pickle: what runs before this change wrote
    assert convert_legacy_normalizer(pkl) == [str(tmp_path / "vecnormalize.npz")]
    stats = load_normalizer(tmp_path / "vecnormalize.npz")
    np.testing.assert_array_equal(stats["obs_mean"], venv.obs_rms.mean)
    np.testing.assert_array_equal(stats["obs_var"], venv.obs_rms.var)
    assert stats["obs_count"] == venv.obs_rms.count and stats["clip_obs"] == 7.0
    assert stats["norm_obs"] is True and stats["norm_reward"] is False
    venv.close()
    # A whole legacy run folder: its normaliser and the checkpoints' ones.
    (run / "vecnormalize.npz").unlink()
    shutil.copy(pkl, run / "vecnormalize.pkl")
    ck = sorted((run / "checkpoints").glob("*vecnormalize*.npz"))[0]
    ck.unlink()
    shutil.copy(pkl, ck.with_suffix(".pkl"))
    assert sorted(convert_legacy_normalizer(run)) == sorted([str(run / "vecnormalize.npz"),
                                                             str(ck)])


def test_shipped_policy_has_no_pickle():
    files = os.listdir(SHIPPED_MODEL)
    assert "vecnormalize.npz" in files and not [f for f in files if f.endswith(".pkl")]
    stats = load_normalizer(os.path.join(SHIPPED_MODEL, "vecnormalize.npz"))
    assert stats["norm_obs"] and stats["obs_mean"].shape == (64,)  # the universal layout
    assert read_model_zip(os.path.join(SHIPPED_MODEL, "model.zip")).num_timesteps > 0


def test_loader_runs_torch_on_one_thread_unless_told_otherwise():
    import torch
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        load(SHIPPED_MODEL)
        assert torch.get_num_threads() == 1  # one thread per env process, as the kernels
        torch.set_num_threads(2)
        load(SHIPPED_MODEL, torch_threads=None)
        assert torch.get_num_threads() == 2
        for bad in (0, -1, 1.5, True, "2"):
            with pytest.raises(ValueError, match=rf"torch_threads .*got {bad!r}"):
                load(SHIPPED_MODEL, torch_threads=bad)
            assert torch.get_num_threads() == 2  # refused before anything changed
    finally:
        torch.set_num_threads(before)


def test_loader_without_the_train_extra_names_it(run, monkeypatch):
    monkeypatch.setitem(sys.modules, "stable_baselines3", None)
    with pytest.raises(ImportError, match=r'pip install "orca-env\[train\]"') as err:
        load(run)
    assert "\n" not in str(err.value)


def test_loader_needs_the_run_config(run):
    (run / "config.yaml").unlink()
    with pytest.raises(FileNotFoundError, match="config.yaml"):
        load(run / "model.zip")


def test_loader_output_is_unchanged_by_the_new_format(trained):
    """The NPZ normaliser and rebuilt network act exactly as SB3's own (unsafe) load would."""
    from stable_baselines3 import PPO

    pol = load(trained)
    ref = PPO.load(str(trained / "model.zip"), device="cpu")  # trusted: we wrote it
    obs = np.random.default_rng(0).normal(size=(5, ref.observation_space.shape[0]))
    want, _ = ref.predict(pol.normalize(obs.astype(np.float32)), deterministic=True)
    got = pol.act(obs)
    np.testing.assert_array_equal(got, np.clip(want.astype(np.float64), -1, 1))


def _normaliser_with(tmp_path, **changes):
    from orca_env.training.model_files import NORMALIZER_FORMAT

    src = os.path.join(SHIPPED_MODEL, "vecnormalize.npz")
    with np.load(src, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    assert int(arrays["format"]) == NORMALIZER_FORMAT
    arrays.update(changes)
    path = tmp_path / "vecnormalize.npz"
    np.savez(path, **arrays)
    return str(path)


@pytest.mark.parametrize("changes, match", [
    ({"obs_mean": "inf"}, "obs_mean must be finite"),
    ({"obs_var": "neg"}, "obs_var must be finite and >= 0"),
    ({"clip_obs": np.array(np.nan)}, "clip_obs must be > 0"),
    ({"epsilon": np.array(-1.0)}, "epsilon must be finite and > 0"),
    ({"gamma": np.array(1.5)}, "gamma must be in"),
    ({"obs_count": np.array(np.nan)}, "obs_count must be finite"),
])
def test_a_normaliser_with_bad_values_is_refused_naming_the_file(tmp_path, changes, match):
    # Issue 27, item 12: these loaded and made the policy act on garbage or fail later.
    from orca_env.training.model_files import load_normalizer

    src = os.path.join(SHIPPED_MODEL, "vecnormalize.npz")
    with np.load(src, allow_pickle=False) as z:
        mean, var = z["obs_mean"].copy(), z["obs_var"].copy()
    fixed = {"inf": np.where(np.arange(mean.size) == 0, np.inf, mean),
             "neg": np.where(np.arange(var.size) == 0, -1.0, var)}
    changes = {k: fixed[v] if isinstance(v, str) else v for k, v in changes.items()}
    path = _normaliser_with(tmp_path, **changes)
    with pytest.raises(ValueError, match=match) as exc:
        load_normalizer(path)
    assert repr(path) in str(exc.value)


def test_a_normaliser_member_that_is_not_npy_or_inflates_is_refused(tmp_path):
    import zipfile

    from orca_env.training import model_files

    path = _normaliser_with(tmp_path)
    with zipfile.ZipFile(path, "a") as zf:
        zf.writestr("notes.txt", b"not an array")
    with pytest.raises(ValueError, match="member 'notes.txt' is not a .npy array"):
        model_files.load_normalizer(path)
    bomb = tmp_path / "bomb.npz"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("obs_mean.npy", b"\0" * (model_files.NORMALIZER_MAX_BYTES + 1))
    assert bomb.stat().st_size < 1_000_000  # small on disk, large when read
    with pytest.raises(ValueError, match="member 'obs_mean.npy' declares .* over its cap"):
        model_files.load_normalizer(str(bomb))
