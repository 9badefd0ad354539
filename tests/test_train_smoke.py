"""Training (train.py, orca_env.training) with a tiny budget in a temporary folder: run folder
contents, resume, config errors."""

import json
import os
import re
import subprocess
import sys

import pytest
import yaml
from tiny_training import TINY_ENV
from tiny_training import tiny_config as shared_tiny_config

pytest.importorskip("stable_baselines3")

from orca_env.training.cli import (  # noqa: E402
    EXIT_FAILURE,
    EXIT_OK,
    main,  # noqa: E402
)
from orca_env.training.comparison import compare, without_safety_layer  # noqa: E402
from orca_env.training.config import load_train_config  # noqa: E402
from orca_env.training.experiment import run_experiment  # noqa: E402
from orca_env.training.run_folder import run_name  # noqa: E402
from orca_env.training.sb3 import trainer  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def tiny_config(tmp_path, **over):
    """The shared tiny config, with checkpoints every 256 steps and a 2-episode eval with video."""
    return shared_tiny_config(tmp_path, **{"checkpoint_freq": 256,
                                           "eval": {"n_episodes": 2, "video": True}, **over})


def test_train_script_run_folder(tmp_path):
    cfg = tiny_config(tmp_path)
    run_dir = tmp_path / "run"
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "train.py"), "--config", str(cfg),
                           "--run-dir", str(run_dir), "--no-progress"],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path,
                          env=dict(os.environ, SDL_VIDEODRIVER="dummy"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "Training throughput:" in out and "env samples/s" in out
    for name in ("trained+safety", "pure ORCA", "trained, no safety"):
        assert name in out
    files = set(os.listdir(run_dir))
    assert {"model.zip", "config.yaml", "command.txt", "git.txt", "vecnormalize.npz",
            "train_stats.json", "checkpoints", "eval"} <= files
    resolved = yaml.safe_load((run_dir / "config.yaml").read_text())
    assert resolved["env"] == TINY_ENV and resolved["n_timesteps"] == 512
    assert resolved["normalize"] == {"norm_obs": True, "norm_reward": False}  # default filled in
    assert "train.py" in (run_dir / "command.txt").read_text()
    assert (run_dir / "git.txt").read_text().startswith("commit: ")
    stats = json.loads((run_dir / "train_stats.json").read_text())
    assert stats["timesteps"] >= 512 and stats["samples_per_second"] > 0
    assert os.listdir(run_dir / "checkpoints")
    ev = run_dir / "eval"
    assert (ev / "comparison.txt").is_file()
    comp = json.loads((ev / "comparison.json").read_text())
    assert set(comp) == {"trained+safety", "pure ORCA", "trained, no safety"}
    assert comp["pure ORCA"]["aggregate"]["success_rate"]["n"] == 2
    for sub in ("trained_safety", "orca", "trained_no_safety"):
        assert (ev / sub / "metrics.json").is_file()
    vids = list((ev / "trained_safety" / "videos").glob("*"))
    assert vids and vids[0].stat().st_size > 0
    if shutil_which_tb():
        assert (run_dir / "tb").is_dir()


def shutil_which_tb():
    try:
        import tensorboard  # noqa: F401
    except ImportError:
        return False
    return True


def test_resume_continues_to_the_budget(tmp_path):
    cfg = tiny_config(tmp_path)
    run_dir = tmp_path / "run"
    assert main(["--config", str(cfg), "--run-dir", str(run_dir), "--no-eval",
                 "--no-progress"]) == EXIT_OK
    first = json.loads((run_dir / "train_stats.json").read_text())["timesteps"]
    res = run_experiment(resume=str(run_dir), n_timesteps=1024, evaluate=False,
                         progress_bar=False)
    stats = res["stats"]
    assert stats["timesteps"] >= 1024 and stats["timesteps_this_run"] <= 1024 - first + 64
    assert len((run_dir / "command.txt").read_text().strip().splitlines()) == 2


def test_same_seed_same_model(tmp_path):
    cfg = tiny_config(tmp_path, n_timesteps=256)
    a = run_experiment(str(cfg), run_dir=str(tmp_path / "a"), evaluate=False, progress_bar=False)
    b = run_experiment(str(cfg), run_dir=str(tmp_path / "b"), evaluate=False, progress_bar=False)
    from stable_baselines3 import PPO

    pa = PPO.load(os.path.join(a["run_dir"], "model.zip")).policy.state_dict()
    pb = PPO.load(os.path.join(b["run_dir"], "model.zip")).policy.state_dict()
    assert all((pa[k] == pb[k]).all() for k in pa)


@pytest.mark.parametrize("bad, match", [
    ({"n_env": 2}, "unknown training config key 'n_env'"),
    ({"algo": "dqn"}, "algo"),
    ({"n_timesteps": 0}, "n_timesteps"),
    ({"n_timesteps": 512.5}, r"'n_timesteps' must be a positive integer, got 512.5"),
    ({"checkpoint_freq": "often"}, r"'checkpoint_freq' must be a positive integer, got 'often'"),
    ({"policy_kwargs": {"activation_fn": "nn.Tanh"}}, "activation_fn"),
    ({"env": dict(TINY_ENV, max_step=3)}, "max_step"),
    ({"eval": {"episodes": 3}}, "eval"),
    ({"bootstrap": "sometimes"}, "training config key 'bootstrap' must be one of "
                                 r"\['truncated', 'time_limit', 'never'\], got 'sometimes'"),
    ({"backend": "rllib", "bootstrap": "never"}, "'bootstrap' is a key of backend sb3"),
])
def test_config_errors(tmp_path, bad, match):
    with pytest.raises(ValueError, match=match):
        load_train_config(str(tiny_config(tmp_path, **bad)))


def test_step_counts_may_be_written_as_floats(tmp_path):
    """YAML reads 1e7 and 1.2e7 as floats: an integer value is taken as the integer."""
    path = tiny_config(tmp_path, n_timesteps=512.0)
    text = open(path).read()
    assert "n_timesteps: 512.0" in text
    with open(path, "w") as f:
        f.write(text.replace("n_timesteps: 512.0", "n_timesteps: 5.12e2"))
    cfg = load_train_config(str(path))
    assert cfg["n_timesteps"] == 512 and type(cfg["n_timesteps"]) is int


def test_bootstrap_reaches_the_training_env(tmp_path):
    assert load_train_config(str(tiny_config(tmp_path)))["bootstrap"] == "truncated"
    cfg = load_train_config(str(tiny_config(tmp_path, bootstrap="never")))
    venv, base = trainer.make_training_env(cfg)
    assert base.bootstrap == "never"
    venv.close()


def test_training_seeds_never_evaluation_seeds(tmp_path):
    cfg = load_train_config(str(tiny_config(tmp_path, seed=9_999)))
    with pytest.raises(ValueError, match="evaluation seeds"):
        trainer.train(cfg, str(tmp_path / "r"), progress_bar=False)


def test_default_config_is_valid_and_fits_the_budget():
    cfg = load_train_config()
    assert cfg["env"]["scenario"] == "circle_v0" and cfg["algo"] == "ppo"
    assert cfg["n_timesteps"] <= 3_000_000
    no_safety = without_safety_layer(cfg["env"])
    assert all(g["safety_layer"] is False for g in no_safety["groups"])


def test_sac_trains_and_loads(tmp_path):
    cfg = tiny_config(tmp_path, algo="sac", n_timesteps=256,
                      hyperparams={"learning_starts": 64, "batch_size": 32, "buffer_size": 2000,
                                   "gradient_steps": 1, "train_freq": 4},
                      policy_kwargs={"net_arch": [16]})
    res = run_experiment(str(cfg), run_dir=str(tmp_path / "sac"), evaluate=False,
                         progress_bar=False)
    from orca_env.policies.sb3 import load

    pol = load(res["run_dir"])
    import orca_env

    env = orca_env.parallel_env(TINY_ENV)
    obs, _ = env.reset(seed=1)
    acts = pol(obs, env)
    assert set(acts) == set(env.agents)


def test_normalize_mapping_merges_into_the_defaults(tmp_path):
    cfg = load_train_config(str(tiny_config(tmp_path, normalize={"clip_obs": 5.0})))
    # VecNormalize's own default norm_reward=True must not switch on.
    assert cfg["normalize"] == {"norm_obs": True, "norm_reward": False, "clip_obs": 5.0}
    venv, _ = trainer.make_training_env(cfg)
    assert venv.norm_obs is True and venv.norm_reward is False and venv.clip_obs == 5.0
    venv.close()
    cfg = load_train_config(str(tiny_config(tmp_path, normalize=True)))
    assert cfg["normalize"] == {"norm_obs": True, "norm_reward": False}
    assert load_train_config(str(tiny_config(tmp_path, normalize=False)))["normalize"] \
        is False
    with pytest.raises(ValueError, match="unknown key 'norm_rewards' in training config key "
                                         "'normalize'"):
        load_train_config(str(tiny_config(tmp_path, normalize={"norm_rewards": True})))


def test_eval_episodes_must_be_positive(tmp_path, capsys):
    with pytest.raises(ValueError, match=r"'eval.n_episodes' must be a positive integer, got 0"):
        load_train_config(str(tiny_config(tmp_path, eval={"n_episodes": 0})))
    with pytest.raises(SystemExit) as exc:
        main(["--config", str(tiny_config(tmp_path)), "--eval-episodes", "0"])
    assert exc.value.code == 2
    assert "argument --eval-episodes: expected an integer >= 1, got '0'" in capsys.readouterr().err


def test_run_name_survives_underscore_s_in_the_config_name(tmp_path):
    for folder, name in [("crowdnav_square_ppo_s0_20250101-120000", "crowdnav_square_ppo"),
                         ("crowdnav_square_ppo_s12_20250101-120000-2", "crowdnav_square_ppo"),
                         ("my_sweep_s3_run", "my_sweep_s3_run")]:
        (tmp_path / folder).mkdir()
        assert run_name(str(tmp_path / folder)) == name
    (tmp_path / "custom").mkdir()
    (tmp_path / "custom" / "name.txt").write_text("circle_ppo\n")
    assert run_name(str(tmp_path / "custom")) == "circle_ppo"


def test_resume_reads_the_stored_name_and_needs_the_normaliser(tmp_path, monkeypatch, capsys):
    cfg = tiny_config(tmp_path, n_timesteps=256)
    (tmp_path / "crowdnav_square_ppo.yaml").write_text(cfg.read_text())
    res = run_experiment(str(tmp_path / "crowdnav_square_ppo.yaml"),
                         runs_root=str(tmp_path / "runs"), evaluate=False, progress_bar=False)
    run_dir = res["run_dir"]
    assert (tmp_path / "runs").is_dir() and os.path.dirname(run_dir) == str(tmp_path / "runs")
    assert open(os.path.join(run_dir, "name.txt")).read().strip() == "crowdnav_square_ppo"
    shipped = []
    monkeypatch.setattr(trainer, "ship", lambda d, name: shipped.append(name))
    assert main(["--resume", run_dir, "--n-timesteps", "320", "--no-eval", "--no-progress",
                 "--ship"]) == EXIT_OK
    assert shipped == ["crowdnav_square_ppo"]
    os.remove(os.path.join(run_dir, "vecnormalize.npz"))
    # The final model lacks its normaliser: resume falls back to the newest sound checkpoint.
    with pytest.warns(UserWarning, match="skipping the checkpoint .*model.zip.*vecnormalize.npz"):
        assert main(["--resume", run_dir, "--n-timesteps", "384", "--no-eval",
                     "--no-progress"]) == EXIT_OK
    os.remove(os.path.join(run_dir, "vecnormalize.npz"))
    for f in os.listdir(os.path.join(run_dir, "checkpoints")):
        if "vecnormalize" in f:
            os.remove(os.path.join(run_dir, "checkpoints", f))
    with pytest.warns(UserWarning, match="skipping"):
        assert main(["--resume", run_dir, "--n-timesteps", "448", "--no-eval",
                     "--no-progress"]) == EXIT_FAILURE
    assert "vecnormalize.npz" in capsys.readouterr().err


def test_ship_replaces_the_destination(tmp_path):
    run = tmp_path / "run"
    (run / "eval").mkdir(parents=True)
    (run / "model.zip").write_bytes(b"new model")
    (run / "config.yaml").write_text("normalize: false\n")
    (run / "eval" / "comparison.txt").write_text("table")
    dest = tmp_path / "policies" / "trained" / "circle_ppo"
    dest.mkdir(parents=True)
    (dest / "model.zip").write_bytes(b"old model")
    (dest / "vecnormalize.pkl").write_bytes(b"old normaliser")  # would be loaded with the new
    (dest / "comparison.json").write_text("{}")
    out = trainer.ship(str(run), "circle_ppo", trained_dir=str(dest.parent))
    assert out == str(dest)
    assert sorted(os.listdir(dest)) == ["comparison.txt", "config.yaml", "model.zip"]
    assert (dest / "model.zip").read_bytes() == b"new model"
    assert sorted(os.listdir(dest.parent)) == ["circle_ppo"]  # no temporary folders left
    assert os.stat(dest).st_mode & 0o777 == 0o755


def test_compare_survives_a_missing_video_backend_without_re_running(tmp_path, monkeypatch,
                                                                      capsys):
    import orca_env.evaluation
    import orca_env.evaluation.episode_log

    cfg_path = tiny_config(tmp_path, n_timesteps=128)
    run_dir = tmp_path / "run"
    main(["--config", str(cfg_path), "--run-dir", str(run_dir), "--no-eval", "--no-progress"])
    cfg = load_train_config(str(run_dir / "config.yaml"))
    calls = []
    real = orca_env.evaluation.evaluate
    monkeypatch.setattr(orca_env.evaluation, "evaluate",
                        lambda *a, **k: calls.append(k) or real(*a, **k))

    def no_backend(*a, **k):
        raise ImportError("No module named 'pygame'")

    monkeypatch.setattr(orca_env.evaluation.episode_log, "replay", no_backend)
    capsys.readouterr()
    reports = compare(cfg, str(run_dir))
    assert len(calls) == 3 and set(reports) == {"trained+safety", "pure ORCA",
                                                 "trained, no safety"}
    assert "No video (ImportError: No module named 'pygame')" in capsys.readouterr().out
    assert (run_dir / "eval" / "trained_safety" / "logs" / "episode_10000.npz").is_file()

    def broken(*a, **k):
        raise ValueError("a bug, not a missing backend")

    monkeypatch.setattr(orca_env.evaluation.episode_log, "replay", broken)
    with pytest.raises(ValueError, match="a bug"):
        compare(cfg, str(run_dir))


def test_compare_raises_a_video_write_error_after_saving_the_numbers(tmp_path, monkeypatch,
                                                                      capsys):
    """A full disk for the comparison video: the table is saved, then train.py says so in one
    line and exits 1, instead of printing the video as if it were there (issue 27 item 1)."""
    import orca_env.evaluation.episode_log
    import orca_env.training.cli as train_cli
    from orca_env.files import WriteError

    cfg_path = tiny_config(tmp_path, n_timesteps=128)
    run_dir = tmp_path / "run"
    main(["--config", str(cfg_path), "--run-dir", str(run_dir), "--no-eval", "--no-progress"])
    cfg = load_train_config(str(run_dir / "config.yaml"))
    error = WriteError(28, "could not write v.mp4: no space left on device; nothing was "
                           "written there", "v.mp4")

    def full(*a, **k):
        raise error

    monkeypatch.setattr(orca_env.evaluation.episode_log, "replay", full)
    with pytest.raises(WriteError):
        compare(cfg, str(run_dir))
    assert (run_dir / "eval" / "comparison.txt").is_file()
    assert "No video: could not write v.mp4: no space left" in capsys.readouterr().out

    def run(*a, **k):
        raise error

    monkeypatch.setattr(train_cli, "run_experiment", run)
    assert main(["--config", str(cfg_path), "--no-progress"]) == EXIT_FAILURE
    assert capsys.readouterr().err == ("train.py: error: could not write v.mp4: no space left "
                                       "on device; nothing was written there\n")


def test_sac_resume_keeps_the_replay_buffer(tmp_path, capsys):
    cfg = tiny_config(tmp_path, algo="sac", n_timesteps=192, checkpoint_freq=128,
                      hyperparams={"learning_starts": 64, "batch_size": 32, "buffer_size": 2000,
                                   "gradient_steps": 1, "train_freq": 4},
                      policy_kwargs={"net_arch": [16]})
    run_dir = tmp_path / "sac"
    main(["--config", str(cfg), "--run-dir", str(run_dir), "--no-eval", "--no-progress"])
    assert (run_dir / "replay_buffer.npz").is_file()
    assert list((run_dir / "checkpoints").glob("rl_model_replay_buffer_*_steps.npz"))
    capsys.readouterr()
    main(["--resume", str(run_dir), "--n-timesteps", "256", "--no-eval", "--no-progress"])
    out = capsys.readouterr().out
    m = re.search(r"Loaded the replay buffer (\S+) \((\d+) transitions\)", out)
    assert m and m.group(1) == str(run_dir / "replay_buffer.npz")
    assert int(m.group(2)) * 8 >= 192  # buffer rows hold one step of all 8 entries


def test_resume_without_a_model_exits_with_a_message(tmp_path, capsys):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "config.yaml").write_text(tiny_config(tmp_path).read_text())
    assert main(["--resume", str(run_dir), "--no-progress"], prog="orca-env train") \
        == EXIT_FAILURE
    assert f"--resume: no checkpoint or model in {str(run_dir)!r}" in capsys.readouterr().err


def test_help_names_the_calling_command(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--help"], prog="orca-env train")
    assert exc.value.code == EXIT_OK
    out = capsys.readouterr().out
    assert out.startswith("usage: orca-env train") and "--runs-root" in out
