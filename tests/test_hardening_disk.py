"""A full disk in training and in ``eval --logs`` (issue 27, item 4).

Training that cannot write a periodic checkpoint stops with one line naming the file and what
was kept, then names the newest complete checkpoint and prints the ``--resume`` command (as on
Ctrl-C), exit 1; ``eval --logs`` prints one line, exit 1. No tmpfs: a fake writer that fails
with ENOSPC as a full disk does, and the file size limit (``RLIMIT_FSIZE``) in a subprocess.
"""

import errno
import glob
import os
import subprocess
import sys
import textwrap

import pytest
from tiny_training import tiny_config

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _no_temporaries(folder):
    return [p for p in glob.glob(os.path.join(folder, "**", ".*"), recursive=True)]


def test_a_full_disk_at_a_periodic_checkpoint_keeps_the_last_one_and_prints_resume(
        tmp_path, monkeypatch, capsys):
    pytest.importorskip("stable_baselines3")
    from orca_env.files import atomic_path
    from orca_env.training import model_files
    from orca_env.training.cli import EXIT_FAILURE, main
    from orca_env.training.experiment import run_experiment

    real = model_files.save_model

    def disk_full_from_256_steps(model, path):
        if model.num_timesteps < 256:
            return real(model, path)
        with atomic_path(path) as tmp, open(tmp, "wb") as fh:
            fh.write(b"PK\x03\x04 half a zip")
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(model_files, "save_model", disk_full_from_256_steps)
    run = tmp_path / "run"
    code = main(["--config", str(tiny_config(tmp_path)), "--run-dir", str(run), "--no-eval",
                 "--no-progress"])
    out, err = capsys.readouterr()
    assert code == EXIT_FAILURE
    ckpt = run / "checkpoints" / "rl_model_256_steps.zip"
    kept = run / "checkpoints" / "rl_model_128_steps.zip"
    assert err == (f"train.py: error: could not write {ckpt}: no space left on device; "
                   f"nothing was written there\n"), err
    assert (f"Training stopped at 256 steps; the newest complete checkpoint {kept} is kept in "
            f"the run folder {run}") in out
    assert f"Free some space, then resume with: python train.py --resume {run}" in out
    assert "Traceback" not in out + err
    assert kept.is_file() and not ckpt.exists() and not (run / "model.zip").exists()
    assert _no_temporaries(run) == []
    # The hint is true: with room again, --resume continues from the kept checkpoint.
    monkeypatch.setattr(model_files, "save_model", real)
    res = run_experiment(resume=str(run), evaluate=False, progress_bar=False)
    assert res["stats"]["timesteps"] >= 512 and (run / "model.zip").is_file()
    assert res["stats"]["timesteps"] - res["stats"]["timesteps_this_run"] == 128


def _limited(args, limit, cwd):
    """Run ``args`` with a file size limit of ``limit`` bytes (Python ignores SIGXFSZ: EFBIG)."""
    code = textwrap.dedent(f"""
        import resource, runpy, sys
        resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))
        sys.argv = {args!r}
        runpy.run_path(sys.argv[0], run_name="__main__") if sys.argv[0].endswith(".py") \\
            else runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
    """)
    env = dict(os.environ, PYTHONPATH=ROOT, SDL_VIDEODRIVER="dummy")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=600)


def test_training_under_a_file_size_limit_is_one_line_and_says_nothing_is_kept(tmp_path):
    pytest.importorskip("resource")
    pytest.importorskip("stable_baselines3")
    run = tmp_path / "run"
    proc = _limited([os.path.join(ROOT, "train.py"), "--config", str(tiny_config(tmp_path)),
                     "--run-dir", str(run), "--no-eval", "--no-progress"], 20_000, tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    err = [ln for ln in proc.stderr.splitlines() if ln.startswith("train.py:")]
    assert len(err) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert err[0] == (f"train.py: error: could not write {run}/checkpoints/rl_model_128_steps.zip"
                      f": file too large (the file size limit); nothing was written there")
    assert (f"Training stopped at 128 steps with no complete checkpoint in the run folder {run}: "
            f"free some space and start again") in proc.stdout
    assert "--resume" not in proc.stdout
    assert _no_temporaries(run) == []


def test_eval_logs_under_a_file_size_limit_is_one_line_exit_1(tmp_path):
    pytest.importorskip("resource")
    out = tmp_path / "out"
    proc = _limited(["orca_env", "eval", "circle", "--episodes", "2", "--logs", "2",
                     "--set", "max_steps=20", "--out", str(out), "--quiet"], 30_000, tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines[-1] == (f"python -m orca_env eval: error: could not write "
                         f"{out}/logs/episode_10000.npz: file too large (the file size limit); "
                         f"nothing was written there"), proc.stderr
    assert os.listdir(out / "logs") == []
