"""The command line: orca-env / python -m orca_env with train, eval and replay."""

import os
import shutil
import subprocess
import sys
import types

import pytest

import orca_env
from orca_env.cli import COMMANDS, main

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CROWDNAV = os.path.join(ROOT, "configs", "crowdnav_circle.yaml")
ENV = {**os.environ, "SDL_VIDEODRIVER": "dummy", "NUMBA_NUM_THREADS": "1"}


def run(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=600, cwd=ROOT, env=ENV,
                          **kw)


def test_python_m_orca_env_help_lists_the_subcommands():
    out = run([sys.executable, "-m", "orca_env", "--help"])
    assert out.returncode == 0, out.stderr
    assert "usage: python -m orca_env" in out.stdout
    for name in ("train", "eval", "replay", "bench", "warmup"):
        assert name in out.stdout
    assert [c.name for c in COMMANDS] == ["train", "eval", "replay", "bench", "warmup"]


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"orca-env {orca_env.__version__}"
    script = shutil.which("orca-env", path=os.path.dirname(sys.executable))
    if script is None:
        pytest.skip("the orca-env console script is not installed beside this python")
    out = run([script, "--version"])
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"orca-env {orca_env.__version__}"


def test_python_m_eval_hash_matches_in_process():
    from orca_env.evaluation import eval_seeds, evaluate, report_hash

    rep = evaluate(CROWDNAV, "random", seeds=eval_seeds(2, start=3),
                   overrides={"max_steps": 30})
    out = run([sys.executable, "-m", "orca_env", "eval", CROWDNAV, "--policy", "random",
               "--episodes", "2", "--first-episode", "3", "--set", "max_steps=30", "--quiet",
               "--print-hash"])
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == report_hash(rep)


def test_importing_the_cli_is_light():
    code = ("import sys, orca_env.cli\n"
            "heavy = {'numpy', 'numba', 'torch', 'pygame', 'matplotlib', 'stable_baselines3',\n"
            "         'orca_env.evaluation', 'orca_env.environment'} & set(sys.modules)\n"
            "print(sorted(heavy))\n")
    out = run([sys.executable, "-c", code])
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_train_forwards_its_arguments_untouched(monkeypatch):
    calls = []
    fake = types.ModuleType("orca_env.training.cli")
    fake.main = lambda argv, prog: calls.append((argv, prog)) or 3
    monkeypatch.setitem(sys.modules, "orca_env.training.cli", fake)
    assert main(["train", "--help", "--seed", "3"]) == 3
    assert main(["train"], prog="python -m orca_env") == 3
    assert calls == [(["--help", "--seed", "3"], "orca-env train"),
                     ([], "python -m orca_env train")]


def test_train_without_the_training_package_fails_with_a_message(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "orca_env.training.cli", None)  # import raises ImportError
    with pytest.raises(SystemExit) as exc:
        main(["train", "--n-timesteps", "10"])
    assert exc.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith("orca-env train: error: training is unavailable")
    assert err.count("\n") == 1


@pytest.mark.parametrize("name", ["missing.npz", "not_a_log.npz"])
def test_replay_of_a_bad_log_exits_with_a_message(tmp_path, capsys, name):
    path = tmp_path / name
    if name == "not_a_log.npz":
        import numpy as np

        np.savez(path, meta=np.array('{"format": "something else"}'))
    with pytest.raises(SystemExit) as exc:
        main(["replay", str(path)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("orca-env replay: error: ") and err.count("\n") == 1
