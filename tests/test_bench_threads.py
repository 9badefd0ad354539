"""benchmarks/bench_threads.py (issue 28 item 3): it runs, splits the time, and checks that two
threads give the same bits as one. No timing assertions."""

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "benchmarks", "bench_threads.py")


def test_small_run_reports_ratios_and_identical_outputs():
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.run([sys.executable, SCRIPT, "--worlds", "8", "--steps", "120",
                           "--reps", "2"], capture_output=True, text=True, timeout=600,
                          cwd=ROOT, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["identical"] is True
    assert len(out["ratios"]) == 2 and all(r > 0 for r in out["ratios"])
    assert "kernel" in proc.stdout and "resets" in proc.stdout
