"""benchmarks/bench_threads.py (issue 28 item 3): it runs, splits the time, and checks that two
threads give the same bits as one. No timing assertions."""

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "benchmarks", "bench_threads.py")


def _run(*args):
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.run([sys.executable, SCRIPT, "--worlds", "8", *args], capture_output=True,
                          text=True, timeout=600, cwd=ROOT, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout, json.loads(proc.stdout.strip().splitlines()[-1])


def test_small_run_reports_ratios_and_identical_outputs():
    stdout, out = _run("--steps", "120", "--reps", "2", "--block", "7")  # a partial last block
    assert out["identical"] is True and out["block"] == 7
    assert len(out["ratios"]) == 2 and all(r > 0 for r in out["ratios"])
    assert "kernel" in stdout and "resets" in stdout and "blocks of 7 steps" in stdout
    stdout, out = _run("--steps", "30", "--reps", "1", "--block", "0")  # whole runs in turn
    assert out["identical"] is True and "whole runs" in stdout


def test_bad_arguments_are_named():
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.run([sys.executable, SCRIPT, "--block", "-1"], capture_output=True,
                          text=True, timeout=120, cwd=ROOT, env=env)
    assert proc.returncode != 0 and "--block must be >= 0, got -1" in proc.stderr


def test_no_ahead_adds_a_third_env_with_the_same_bits():
    stdout, out = _run("--steps", "60", "--reps", "1", "--block", "10", "--no-ahead")
    assert out["identical"] is True  # the env without drawing ahead gives the same outputs
    assert len(out["ratios_no_ahead"]) == 1 and out["ratios_no_ahead"][0] > 0
    assert "2-no-ahead" in stdout and "without drawing ahead" in stdout
    stdout, out = _run("--steps", "20", "--reps", "1", "--block", "0", "--no-ahead")
    assert out["identical"] is True and len(out["ratios_no_ahead"]) == 1
