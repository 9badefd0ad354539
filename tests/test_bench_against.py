"""benchmarks/bench_against.py (issue 28 items 1-3): this checkout's vector env against another
checkout's, interleaved, old / new from one run and the states compared bit for bit. No timing
assertions."""

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "benchmarks", "bench_against.py")


def run(*args):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True,
                          timeout=600, cwd=ROOT, env=env)


def test_against_itself_prints_the_table_and_identical_states():
    proc = run("--against", ROOT, "--cases", "3x4", "--reps", "2", "--steps", "3", "--warmup",
               "1", "--systems", "core-batch,vec-1t")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "| case | system | old | new | old time / new time |" in out
    rows = [line for line in out.splitlines() if line.startswith("| 3x4 |")]
    assert [r.split("|")[2].strip() for r in rows] == ["core-batch", "vec-1t"]
    for r in rows:
        cells = r.strip("|").split("|")
        assert float(cells[2].replace(",", "")) > 0 and float(cells[3].replace(",", "")) > 0
    assert "states bit-identical between the checkouts after every repetition: yes" in out
    last = json.loads(out.strip().splitlines()[-1])
    assert last["identical"] is True
    summary = [r for r in last["rows"] if r["system"] == "summary"]
    assert summary and summary[0]["vec/core new"] > 0


def test_against_a_folder_that_is_no_checkout_fails_naming_it(tmp_path):
    proc = run("--against", str(tmp_path))
    assert proc.returncode != 0
    assert "--against must be a checkout of orca-env" in proc.stderr
    assert str(tmp_path) in proc.stderr


def test_bad_reps_cases_and_systems_fail_naming_them():
    proc = run("--against", ROOT, "--reps", "0")
    assert proc.returncode != 0 and "--reps must be >= 1, got 0" in proc.stderr
    proc = run("--against", ROOT, "--cases", "64by16")
    assert proc.returncode != 0 and "--cases: '64by16' is not WORLDSxAGENTS" in proc.stderr
    proc = run("--against", ROOT, "--systems", "vec-9t")
    assert proc.returncode != 0 and "--systems: unknown system 'vec-9t'" in proc.stderr
