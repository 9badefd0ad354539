"""Training runs: complete run folders with no temporaries, no run folder for a rejected config
or a missing train extra, ship names checked, resume past a truncated checkpoint and with the
evaluation seed guard, Ctrl-C (SIGINT, SIGTERM) saves a checkpoint that resume continues."""

import glob
import os
import signal
import subprocess
import sys
import time

import pytest
import yaml
from tiny_training import TINY_ENV, tiny_config

pytest.importorskip("stable_baselines3")

from orca_env.training.cli import EXIT_FAILURE, main  # noqa: E402
from orca_env.training.experiment import run_experiment, ship  # noqa: E402
from orca_env.training.run_folder import check_ship_name  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_resume_skips_a_truncated_newest_checkpoint(run):
    (run / "model.zip").unlink()
    ckpts = sorted(glob.glob(str(run / "checkpoints" / "rl_model_*_steps.zip")),
                   key=lambda p: int(p.rsplit("_", 2)[-2]))
    newest, previous = ckpts[-1], ckpts[-2]
    blob = open(newest, "rb").read()
    open(newest, "wb").write(blob[: len(blob) // 2])
    with pytest.warns(UserWarning, match=f"skipping the checkpoint '{newest}'"):
        res = run_experiment(resume=str(run), n_timesteps=640, evaluate=False,
                             progress_bar=False)
    assert res["stats"]["timesteps"] >= 640
    steps = int(previous.rsplit("_", 2)[-2])
    assert res["stats"]["timesteps_this_run"] >= 640 - steps - 64


def test_run_folder_files_are_complete_and_no_temporaries_are_left(run):
    left = [f for f in glob.glob(str(run / "**" / ".*"), recursive=True)]
    assert left == []
    assert yaml.safe_load((run / "config.yaml").read_text())["n_timesteps"] == 512
    assert not list(run.rglob("*.pkl"))  # nothing of a run is a pickle any more


@pytest.mark.parametrize("name", ["/../../../tmp/x", "../x", ".hidden", "a/b", "", "a b"])
def test_ship_refuses_a_name_that_is_not_a_bare_folder_name(name, tmp_path):
    with pytest.raises(ValueError, match="cannot name a shipped policy"):
        check_ship_name(name)
    with pytest.raises(ValueError, match="cannot name a shipped policy"):
        ship(str(tmp_path), name, trained_dir=str(tmp_path / "trained"))
    assert not (tmp_path / "trained").exists()


def test_resume_with_ship_refuses_a_traversing_name_before_training(run, tmp_path, capsys):
    # Issue 27, item 15: a traceback before; now train.py's one line, exit 2.
    (run / "name.txt").write_text("/../../../tmp/x\n")
    before = (run / "command.txt").read_text()
    assert main(["--resume", str(run), "--n-timesteps", "640", "--no-eval", "--no-progress",
                 "--ship"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "run name '/../../../tmp/x' cannot name a shipped" in err
    assert (run / "command.txt").read_text() == before  # nothing ran, nothing was written
    with pytest.raises(ValueError, match=r"run name '/\.\./\.\./\.\./tmp/x'"):
        run_experiment(resume=str(run), n_timesteps=640, evaluate=False, ship_result=True)
    assert check_ship_name("circle_ppo-v1.2") == "circle_ppo-v1.2"


@pytest.mark.parametrize("bad, match", [
    ({"hyperparams": {"n_step": 32}}, "hyperparams.n_step"),
    ({"policy_kwargs": {"net_arch": "wide"}}, "policy_kwargs"),
    ({"env": dict(TINY_ENV, max_step=3)}, "max_step"),
    ({"seed": 9_999}, "evaluation seeds"),
])
def test_a_rejected_config_leaves_no_run_folder(tmp_path, bad, match):
    cfg = tiny_config(tmp_path, **bad)
    with pytest.raises(ValueError, match=match):
        run_experiment(str(cfg), runs_root=str(tmp_path / "runs"), evaluate=False,
                       progress_bar=False)
    with pytest.raises(ValueError, match=match):
        run_experiment(str(cfg), run_dir=str(tmp_path / "mine"), evaluate=False,
                       progress_bar=False)
    assert not (tmp_path / "runs").exists() and not (tmp_path / "mine").exists()


def test_resume_applies_the_evaluation_seed_guard(run):
    cfg = yaml.safe_load((run / "config.yaml").read_text())
    cfg["seed"] = 10_000
    (run / "config.yaml").write_text(yaml.safe_dump(cfg))
    before = (run / "command.txt").read_text()
    with pytest.raises(ValueError, match="evaluation seeds"):
        run_experiment(resume=str(run), n_timesteps=640, evaluate=False, progress_bar=False)
    assert (run / "command.txt").read_text() == before


def test_missing_train_extra_is_one_line_with_exit_2(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "stable_baselines3", None)
    cfg = tiny_config(tmp_path)
    assert main(["--config", str(cfg), "--runs-root", str(tmp_path / "runs")]) == EXIT_FAILURE
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and 'pip install "orca-env[train]"' in err
    assert not (tmp_path / "runs").exists()
    from orca_env.cli import main as cli_main

    assert cli_main(["train", "--config", str(cfg), "--runs-root", str(tmp_path / "r")]) == 1
    assert 'pip install "orca-env[train]"' in capsys.readouterr().err


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_saves_a_checkpoint_that_resume_continues(tmp_path, sig):
    cfg = tiny_config(tmp_path, n_timesteps=10_000_000, checkpoint_freq=256)
    run = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, os.path.join(ROOT, "train.py"), "--config",
                             str(cfg), "--run-dir", str(run), "--no-progress", "--no-eval"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=tmp_path, env=dict(os.environ, SDL_VIDEODRIVER="dummy"))
    try:
        deadline = time.monotonic() + 240
        while not glob.glob(str(run / "checkpoints" / "rl_model_*_steps.zip")):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no checkpoint within 240 s"
            time.sleep(0.2)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + sig, out + err
    saved = max(glob.glob(str(run / "checkpoints" / "rl_model_*_steps.zip")),
                key=lambda p: int(p.rsplit("_", 2)[-2]))
    steps = int(saved.rsplit("_", 2)[-2])
    assert steps >= 256
    assert os.path.isfile(saved.replace("rl_model_", "rl_model_vecnormalize_")[:-4] + ".npz")
    assert f"saved the checkpoint {saved}" in out
    assert f"Resume with: python train.py --resume {run}" in out
    assert not (run / "model.zip").exists()
    res = run_experiment(resume=str(run), n_timesteps=steps + 256, evaluate=False,
                         progress_bar=False)
    assert res["stats"]["timesteps"] >= steps + 256
    assert (run / "model.zip").is_file()


def test_a_new_run_into_an_earlier_run_folder_is_refused_and_changes_nothing(run, tmp_path,
                                                                             capsys):
    # Issue 27, item 2: a second run into a run folder mixed two runs' checkpoints.
    before = {p: os.path.getmtime(p) for p in glob.glob(str(run / "**"), recursive=True)}
    code = main(["--config", str(tiny_config(tmp_path)), "--run-dir", str(run), "--no-eval",
                 "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "exists and is not empty" in err, err
    assert f"--resume {run}" in err
    after = {p: os.path.getmtime(p) for p in glob.glob(str(run / "**"), recursive=True)}
    assert after == before
    afile = tmp_path / "a_file"
    afile.write_text("x")
    code = main(["--config", str(tiny_config(tmp_path)), "--run-dir", str(afile), "--no-eval",
                 "--no-progress"])
    assert code == 2 and "is not a folder" in capsys.readouterr().err


def test_resume_of_a_folder_that_is_no_run_and_a_runs_root_that_is_a_file(tmp_path, capsys):
    # Issue 27, item 15: both were tracebacks.
    assert main(["--resume", str(tmp_path / "typo")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not a run folder (it has no config.yaml)" in err, err
    afile = tmp_path / "runs"
    afile.write_text("x")
    assert main(["--config", str(tiny_config(tmp_path)), "--runs-root", str(afile)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--runs-root" in err and "is not a folder" in err, err
