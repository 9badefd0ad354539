"""benchmarks/bench_peers.py runs (``--quick``) and prints orca-env's rows and, where installed,
its peers' (issue 28 item 5); missing peers are named and skipped. No timing assertions."""

import importlib.util
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "benchmarks", "bench_peers.py")
OURS = ("core-batch", "core-sims", "env", "vec-1t", "vec-2t", "vec-lidar")
PEER_ROWS = {"pyrvo": ("rvo2", "rvo2-io"), "vmas": ("vmas", "vmas-collide", "vmas-lidar"),
             "mpe2": ("mpe2",)}
#: Looped systems run at most this many worlds (their cost per agent-step does not depend on it).
CAPPED = {"env": 256, "mpe2": 16}


def run(args, prelude="pass"):
    """The script's stdout and its last line as JSON (``prelude`` runs first, e.g. to hide a
    package)."""
    code = (f"import runpy, sys; {prelude}; sys.argv = [{SCRIPT!r}] + {list(args)!r}; "
            f"runpy.run_path({SCRIPT!r}, run_name='__main__')")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=900, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout, json.loads(proc.stdout.strip().splitlines()[-1])


def installed(module):
    return importlib.util.find_spec(module) is not None


def test_quick_table_has_our_rows_and_the_installed_peers():
    out, res = run(["--quick"])
    assert "CPUs (" in out and "versions: numpy" in out and "load average before" in out
    assert res["machine"]["cpus"] == os.cpu_count() and res["machine"]["cpu_model"]
    expected = list(OURS)
    for module, keys in PEER_ROWS.items():
        if installed(module):
            expected += keys
            assert res["versions"][module]
        else:
            assert f"{module} not installed" in out and "pip install" in out
    cases = {"16x16": (16, 16), "64x4": (64, 4)}
    for case, (worlds, agents) in cases.items():
        rows = {r["key"]: r for r in res["rows"] if r["case"] == case}
        assert sorted(rows) == sorted(expected), case
        for key, r in rows.items():
            assert r["agent_steps_per_s"] > 0 and r["min"] <= r["agent_steps_per_s"] <= r["max"]
            assert r["per_cpu_s"] > 0
            assert r["what"] and f"(`{key}`) | {r['worlds']} x {r['agents']} |" in out
            # equal work: every system steps the case's worlds (the looped ones up to a cap)
            # for the same number of steps; the core and RVO2 count every agent.
            assert r["worlds"] == min(worlds, CAPPED.get(key, worlds)) and r["agents"] == agents
            if key.startswith(("core", "rvo2", "vmas")):
                assert r["agent_steps_per_rep"] == r["worlds"] * agents * res["steps"]
            else:  # envs count the agents still acting
                assert 0 < r["agent_steps_per_rep"] <= r["worlds"] * agents * res["steps"]
        assert rows["vec-2t"]["threads"] == 2 and rows["vec-1t"]["threads"] == 1
        assert rows["vec-1t"]["vs_vec_1t"] == 1.0
    assert [d["case"] for d in res["loads"]] == list(cases)
    assert all(d["core_identical"] for d in res["loads"])
    assert "bit-identical after the warm-up: yes" in out
    assert {d["key"] for d in res["setup"]} == set(expected)  # compile reported apart
    assert "| load before | load after |" in out and "first step (s)" in out


def test_missing_peers_are_named_with_the_install_command_and_skipped():
    hide = "sys.modules.update(pyrvo=None, vmas=None, mpe2=None)"  # import raises ImportError
    out, res = run(["--quick", "--cases", "4x4", "--reps", "1", "--steps", "2"], prelude=hide)
    for dist in ("pyrvo", "vmas", "mpe2"):
        line = next(ln for ln in out.splitlines() if ln.startswith(f"{dist} not installed"))
        assert 'pip install -e ".[peers]"' in line and "skipped" in line
    assert res["missing"] == ["mpe2", "pyrvo", "vmas"]
    assert sorted(r["key"] for r in res["rows"]) == sorted(OURS)


def test_core_scaling_prints_ours_over_rvo2():
    out, res = run(["--core-scaling", "--quick"])
    if not installed("pyrvo"):
        assert "--core-scaling needs pyrvo" in out and res["core_scaling"] == []
        return
    rows = res["core_scaling"]
    assert [r["agents"] for r in rows] == [1000, 2000]
    for r in rows:
        assert r["ours_ms"] > 0 and r["rvo2_ms"] > 0
        assert abs(r["ratio"] - r["ours_ms"] / r["rvo2_ms"]) < 1e-9
    assert "| ours / RVO2 |" in out and "log-log slope" in out


def test_bad_cases_is_one_clear_error():
    proc = subprocess.run([sys.executable, SCRIPT, "--cases", "64by16"], capture_output=True,
                          text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 2
    assert "--cases: '64by16' is not WORLDSxAGENTS" in proc.stderr
    assert "Traceback" not in proc.stderr
