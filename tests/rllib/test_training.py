"""The RLlib backend: a tiny training through train.py's code path, then orca-env eval of the run.

One Ray session serves the whole module (starting Ray costs seconds); the backend uses a session
that is already running and leaves it running.
"""

import json
import os
import shutil
import zipfile

import numpy as np
import pytest
import yaml

pytest.importorskip("ray.rllib", reason="the RLlib tests need ray[rllib]: the rllib or dev extra "
                    "(the test extra leaves it out)")

import ray  # noqa: E402
from orca_env.policies import load_policy  # noqa: E402
from orca_env.policies.rllib import RLlibPolicy, is_rllib_run  # noqa: E402

from orca_env import cli  # noqa: E402
from orca_env.training.cli import main  # noqa: E402
from orca_env.training.config import load_train_config  # noqa: E402
from orca_env.training.rllib import trainer as backend  # noqa: E402

TINY_ENV = {"scenario": "circle_v0", "scenario_kwargs": {"circle_radius": 2.5}, "max_steps": 30,
            "groups": [{"population": "learned", "count": 4, "on_goal": "stop", "radius": 0.3,
                        "max_speed": 1.0, "pref_speed": 1.0, "neighbor_dist": 4.0,
                        "time_horizon": 3.0, "time_horizon_obst": 3.0}],
            "observation": {"num_agents": 3, "range": 3.0}}


def tiny_config(tmp_path, name="tiny_rllib.yaml", **over):
    cfg = {"backend": "rllib", "env": TINY_ENV, "num_env_runners": 1, "n_envs": 1,
           "n_timesteps": 256, "seed": 0, "normalize": False, "checkpoint_freq": 128,
           "hyperparams": {"train_batch_size_per_learner": 128, "minibatch_size": 64,
                           "num_epochs": 1},
           "policy_kwargs": {"fcnet_hiddens": [16, 16], "fcnet_activation": "tanh"},
           "eval": {"n_episodes": 1, "video": False}}
    cfg.update(over)
    path = tmp_path / name
    path.write_text(yaml.safe_dump(cfg))
    return path


@pytest.fixture(scope="module")
def ray_session():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_train_py_then_orca_env_eval(ray_session, tmp_path, capsys):
    run_dir = tmp_path / "run"
    code = main(["--config", str(tiny_config(tmp_path)), "--run-dir", str(run_dir),
                 "--no-progress"])
    assert code == 0
    out = capsys.readouterr().out
    assert "agent samples/s with 1 env runner(s)" in out and "pure ORCA" in out
    files = set(os.listdir(run_dir))
    assert {"config.yaml", "name.txt", "command.txt", "git.txt", "train_stats.json", "eval",
            "rllib_checkpoint", "rllib_module.npz"} <= files
    assert "model.zip" not in files
    resolved = yaml.safe_load((run_dir / "config.yaml").read_text())
    assert resolved["backend"] == "rllib" and resolved["num_env_runners"] == 1
    stats = json.loads((run_dir / "train_stats.json").read_text())
    assert stats["backend"] == "rllib" and stats["timesteps"] >= 256
    assert stats["samples_per_second"] > 0
    assert ray.is_initialized()  # the caller's session is left running

    # The evaluation loader picks the RLlib loader from what the run folder holds.
    assert is_rllib_run(run_dir)
    policy = load_policy(str(run_dir))
    assert isinstance(policy, RLlibPolicy)
    out_dir = tmp_path / "eval"
    env_yaml = tmp_path / "tiny_env.yaml"
    env_yaml.write_text(yaml.safe_dump(TINY_ENV))
    code = cli.main(["eval", str(env_yaml), "--policy", str(run_dir),
                     "--episodes", "2", "--out", str(out_dir), "--quiet"])
    assert code == 0
    report = json.loads((out_dir / "metrics.json").read_text())
    assert len(report["episodes"]) == 2

    # Issue 27: a downloaded RLlib run gets training's model-config rules and bounded reads.
    from orca_env.policies.rllib import load

    bad = tmp_path / "poisoned"
    shutil.copytree(run_dir, bad)
    cfg = yaml.safe_load((bad / "config.yaml").read_text())
    cfg["policy_kwargs"]["fcnet_hiddens"] = [200_000_000, 64]
    (bad / "config.yaml").write_text(yaml.safe_dump(cfg))
    with pytest.raises(ValueError, match=r"config.yaml: training config key "
                                         r"'policy_kwargs.fcnet_hiddens': layer sizes"):
        load(bad)
    shutil.copy(run_dir / "config.yaml", bad / "config.yaml")
    with zipfile.ZipFile(run_dir / "rllib_module.npz") as z:
        names = z.namelist()
    with zipfile.ZipFile(bad / "rllib_module.npz", "w", zipfile.ZIP_DEFLATED) as z:
        for name in names:
            z.writestr(name, b"\0" * 2**21)  # 2 MiB each: over any weight of this network
    with pytest.raises(ValueError, match=r"rllib_module.npz': member '.*\.npy' declares 2097152 "
                                         r"bytes \(2.0 MiB\) inflated, over its cap"):
        load(bad)


def test_same_seed_same_weights(ray_session, tmp_path):
    """num_env_runners 0: two runs with one seed train identical weights (another seed not)."""
    weights = []
    for i, seed in enumerate((3, 3, 4)):
        cfg = tiny_config(tmp_path, name=f"r{i}.yaml", num_env_runners=0, seed=seed)
        out = backend.run_experiment(str(cfg), run_dir=str(tmp_path / f"r{i}"), evaluate=False,
                                     progress_bar=False)
        with np.load(os.path.join(out["run_dir"], "rllib_module.npz")) as npz:
            weights.append({k: npz[k] for k in npz.files})
    assert all(np.array_equal(weights[0][k], weights[1][k]) for k in weights[0])
    assert not all(np.array_equal(weights[0][k], weights[2][k]) for k in weights[0])


@pytest.mark.parametrize("over, match", [
    ({"normalize": True}, "'normalize' must be false with backend rllib"),
    ({"algo": "sac"}, "'algo' must be ppo with backend rllib, got 'sac'"),
    ({"num_env_runners": -1}, "'num_env_runners' must be an integer >= 0, got -1"),
    ({"backend": "jax"}, "'backend' must be one of"),
    ({"backend": "sb3"}, "'num_env_runners' is a key of backend rllib"),
])
def test_config_errors(tmp_path, over, match):
    with pytest.raises(ValueError, match=match):
        load_train_config(str(tiny_config(tmp_path, **over)))


def test_rllib_rejects_hyperparams_before_the_run_folder(tmp_path):
    cfg = tiny_config(tmp_path, hyperparams={"n_steps": 64})
    with pytest.raises(ValueError, match="'hyperparams'"):
        backend.run_experiment(str(cfg), run_dir=str(tmp_path / "never"), evaluate=False)
    assert not (tmp_path / "never").exists()


def test_shipped_config_loads():
    cfg = load_train_config("configs/train/circle_rllib.yaml")
    assert cfg["backend"] == "rllib" and cfg["num_env_runners"] >= 1
    assert load_train_config("configs/train/circle_ppo.yaml")["backend"] == "sb3"
