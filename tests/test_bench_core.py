"""benchmarks/bench_core.py's ``--against`` mode (issue 28 item 4): old / new and new / RVO2
ratios from one run, the two checkouts' positions checked bit-identical. No timing assertions."""

import importlib.util
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "benchmarks", "bench_core.py")


def run(*args):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True,
                          timeout=600, cwd=ROOT, env=env)


def test_against_itself_prints_the_table_and_identical_positions():
    proc = run("--against", ROOT, "--sizes", "60", "200", "--reps", "2", "--quick")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "| agents | new (ms) | old (ms) | RVO2 C++ (ms) | old / new |" in out
    rows = [line for line in out.splitlines() if line.startswith("| 60 |")
            or line.startswith("| 200 |")]
    assert len(rows) == 2
    cells = rows[0].strip("|").split("|")
    assert float(cells[1]) > 0 and float(cells[2]) > 0
    if importlib.util.find_spec("pyrvo") is not None:
        assert float(cells[3]) > 0 and "RVO2 2.0.3" in out
    else:
        assert cells[3].strip() == "n/a"
    assert "bit-identical after every repetition: yes" in out


def test_against_a_folder_that_is_no_checkout_fails_naming_it(tmp_path):
    proc = run("--against", str(tmp_path))
    assert proc.returncode != 0
    assert "--against must be a checkout of orca-env" in proc.stderr
    assert str(tmp_path) in proc.stderr


def test_bad_reps_and_sizes_fail_naming_them():
    proc = run("--against", ROOT, "--reps", "0")
    assert proc.returncode != 0 and "--reps must be >= 1, got 0" in proc.stderr
    proc = run("--against", ROOT, "--sizes", "0")
    assert proc.returncode != 0 and "--sizes must be >= 1, got [0]" in proc.stderr
