"""First-step times with a cold and a warm numba cache, per scenario family, and the cold
compile of everything.

Every measurement runs in a fresh Python process; a cold one gets a fresh, empty
``NUMBA_CACHE_DIR``. Per family (a shipped config), the first ``reset`` and ``step`` of
``orca_env.parallel_env(config)`` after the imports, in seconds, and what numba compiled on the
way (top-level compiles, their CPU seconds), in four settings:

* ``cold``: an empty cache;
* ``after``: a copy of the cache that a first process running ``circle_dense`` left (the
  issue's case: a user's second scenario after the first);
* ``in_proc``: that cache again, and one process that runs ``circle_dense`` first, then the
  family: what the family costs in a process that has already stepped an env (the target:
  no compile);
* ``warm``: the cache that the cold compile of everything below left (only cache loads).

The cold compile of everything comes first: one process with an empty cache runs the core (a
``Simulator`` of 100 agents with an obstacle: the serial and the multi-threaded step, queries,
debug accessors), then for every family the single env's and a two-world ``OrcaVectorEnv``'s
first step, the heuristic actions and the render data, and one evaluation episode (the crowd
metrics); with ``--warmup`` also ``orca-env warmup`` in another empty cache. The 1-minute
load average is printed before and after; the last line is JSON with every figure.

    python benchmarks/bench_compile.py [--configs circle_dense bottleneck ...] [--warmup]
        [--skip-cold]

Run it against another checkout with ``PYTHONPATH=/that/checkout`` (the children import
``orca_env`` from the same path; they run in the temporary folder, so the working directory's
checkout does not win over it).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

DEFAULT_CONFIGS = ("circle_dense", "corridor", "bottleneck", "doorway", "intersection",
                   "random_obstacles", "blocks", "blocks_roadmap", "crowdnav_circle",
                   "crowdnav_square", "bottleneck_sf", "random_obstacles_lidar",
                   "nh_circle_swap", "crowdnav_circle_unicycle_invisible", "replay_sample")

# Counts numba's top-level compiles (nested ones are part of their caller) and their CPU time.
_PRELUDE = r"""
import sys, time, warnings, json
warnings.filterwarnings("ignore")
import numba.core.event as _ev
class _Compiles(_ev.Listener):
    def __init__(self):
        self.depth, self.n, self.cpu, self.t0 = 0, 0, 0.0, 0.0
    def on_start(self, event):
        if self.depth == 0:
            self.t0 = time.process_time()
        self.depth += 1
    def on_end(self, event):
        self.depth -= 1
        if self.depth == 0:
            self.n += 1
            self.cpu += time.process_time() - self.t0
_C = _Compiles()
_ev.register("numba:compile", _C)
import numpy as np

def first_step(name, vector=False):
    n0, c0, t0 = _C.n, _C.cpu, time.perf_counter()
    if vector:
        from orca_env.vector import OrcaVectorEnv
        env = OrcaVectorEnv(name, 2, seed=0)
        env.reset()
        env.step(np.zeros((env.num_envs,) + env.single_action_space.shape))
    else:
        import orca_env
        env = orca_env.parallel_env(name)
        env.reset(seed=0)
        env.step({a: np.zeros(env.action_space(a).shape, np.float32) for a in env.agents})
    env.close()
    return {"s": time.perf_counter() - t0, "compiles": _C.n - n0, "compile_cpu": _C.cpu - c0}
"""

_FIRST = _PRELUDE + r"""
print(json.dumps(first_step(sys.argv[1])))
"""

_SEQUENCE = _PRELUDE + r"""
out = {}
for name in sys.argv[1:]:
    out.setdefault(name, first_step(name))
print(json.dumps(out))
"""

_EVERYTHING = _PRELUDE + r"""
t0, c0 = time.perf_counter(), time.process_time()
import numba
import orca_env
from orca_env.core import Simulator
from orca_env.evaluation.suite import evaluate
for threads in (1, 2):  # 100 agents: the serial step, then the multi-threaded one
    sim = Simulator(num_threads=min(threads, numba.config.NUMBA_NUM_THREADS))
    sim.add_agents(np.random.default_rng(0).uniform(-30.0, 30.0, (100, 2)))
    sim.add_obstacle(np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]]))
    sim.set_pref_velocities(-sim.positions / 10.0)
    sim.step()
sim.orca_lines(0)
sim.query_agent_neighbors(2, 10.0)
sim.query_obstacle_neighbors(sim.positions, 10.0, 2)
sim.query_visibility(np.array([-5.0, 0.0]), np.array([5.0, 0.0]))
sim.is_walkable(sim.positions)
for name in sys.argv[1:]:
    first_step(name)
    first_step(name, vector=True)
    env = orca_env.parallel_env(name)  # what eval and the renderer call besides the step
    env.reset(seed=0)
    env.heuristic_actions()
    env.render_data()
evaluate("bottleneck", "orca", episodes=1, overrides={"max_steps": 10})  # the crowd metrics
print(json.dumps({"s": time.perf_counter() - t0, "cpu": time.process_time() - c0,
                  "compiles": _C.n, "compile_cpu": _C.cpu}))
"""


def _child(code, args, cache):
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    # cwd outside any checkout: ``python -c`` puts the working directory first on sys.path,
    # ahead of PYTHONPATH (from a checkout it would import that checkout's orca_env).
    out = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True,
                         text=True, check=False, cwd=os.path.dirname(cache))
    if out.returncode:
        sys.exit(f"child failed ({args}):\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _warmup(cache):
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    t0, r0 = time.perf_counter(), os.times()
    out = subprocess.run([sys.executable, "-m", "orca_env", "warmup"], env=env, check=False,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         cwd=os.path.dirname(cache))
    if out.returncode:  # a version without the command
        return None
    r1 = os.times()
    cpu = (r1.children_user - r0.children_user) + (r1.children_system - r0.children_system)
    return {"s": time.perf_counter() - t0, "cpu": cpu}


def _load():
    return os.getloadavg()[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--configs", nargs="+", default=list(DEFAULT_CONFIGS))
    ap.add_argument("--warmup", action="store_true",
                    help="also time `orca-env warmup` into an empty cache")
    ap.add_argument("--skip-cold", action="store_true", help="no per-family cold runs")
    args = ap.parse_args()
    names = args.configs
    root = tempfile.mkdtemp(prefix="bench_compile_")
    res = {"load_before": _load(), "families": {}}
    import orca_env
    print(f"orca_env from {os.path.dirname(orca_env.__file__)}; 1-min load {_load():.2f}; "
          f"{os.cpu_count()} CPUs", flush=True)
    try:
        everything = os.path.join(root, "everything")
        res["everything"] = _child(_EVERYTHING, names, everything)
        e = res["everything"]
        print(f"cold compile of everything (core, every family's env and vector env): "
              f"{e['s']:.1f} s wall, {e['cpu']:.1f} CPU-s, {e['compiles']} top-level compiles "
              f"(load {_load():.2f})", flush=True)
        if args.warmup:
            res["warmup"] = w = _warmup(os.path.join(root, "warmup"))
            shutil.rmtree(os.path.join(root, "warmup"), ignore_errors=True)
            print(f"cold `orca-env warmup`: {w['s']:.1f} s wall, {w['cpu']:.1f} CPU-s "
                  f"(load {_load():.2f})" if w else "no `orca-env warmup` in this version",
                  flush=True)
        base = os.path.join(root, "after_circle_dense")
        _child(_FIRST, ["circle_dense"], base)
        for name in names:
            row = {}
            if not args.skip_cold:
                cold = os.path.join(root, "cold")
                row["cold"] = _child(_FIRST, [name], cold)
                shutil.rmtree(cold, ignore_errors=True)
            after = os.path.join(root, "after")
            shutil.copytree(base, after)
            row["after"] = _child(_FIRST, [name], after)
            shutil.rmtree(after)
            shutil.copytree(base, after)
            row["in_proc"] = _child(_SEQUENCE, ["circle_dense", name], after)[name]
            shutil.rmtree(after)
            row["warm"] = _child(_FIRST, [name], everything)
            res["families"][name] = row
            print(f"  {name} done (load {_load():.2f})", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    res["load_after"] = _load()

    def cell(r):
        return f"{r['s']:6.2f} s {r['compiles']:4d} / {r['compile_cpu']:5.1f}"
    head = (["cold"] if not args.skip_cold else []) + ["after", "in_proc", "warm"]
    print("first reset + step per family: seconds, numba compiles / their CPU-s")
    print(f"{'family':<36}" + "".join(f"{h:>22}" for h in head))
    for name, row in res["families"].items():
        print(f"{name:<36}" + "".join(f"{cell(row[h]):>22}" for h in head))
    print(f"1-min load average: {res['load_before']:.2f} before, {res['load_after']:.2f} after")
    print(json.dumps(res))


if __name__ == "__main__":
    main()
