"""Benchmark of the ORCA core against RVO2 2.0.3 C++ (pyrvo, when installed).

Prints one markdown table per section:

* ms per step on the RVO2 Circle layout (density of Circle-250: the circle radius scales with
  the agent count) for our core on 1 and 2 threads and for RVO2 (single-threaded: pyrvo is built
  without OpenMP), same states, after warm-up; ratios are ours / RVO2 (lower is faster);
* obstacle-index build time (``process_obstacles``) for grids of square obstacles;
* the first ``step()`` after import in a fresh process (numba cache warm).

``--against CHECKOUT`` instead times this checkout's core against another's (e.g. a worktree of
an older commit) and RVO2, one thread, thread CPU time per step: one worker process per
checkout steps its own Simulator on the same Circle layout, and the repetitions alternate
new, old, RVO2 (RVO2 in this process; its per-agent input and output untimed); it checks that
both checkouts' positions stay bit-identical and prints the ratios old / new and new / RVO2
with the 1-minute load average.

Usage: ``python benchmarks/bench_core.py [--quick]`` or
``python benchmarks/bench_core.py --against /path/to/old/checkout [--sizes 1000 5000 ...]
[--reps 5]``.
"""

from __future__ import annotations

import argparse
import inspect
import math
import os
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from orca_env.core import Simulator  # noqa: E402

try:
    import pyrvo
except ImportError:  # pragma: no cover - optional
    pyrvo = None

DEFAULTS = dict(neighbor_dist=15.0, max_neighbors=10, time_horizon=10.0, time_horizon_obst=10.0,
                radius=1.5, max_speed=2.0)


def circle_layout(n):
    """Circle positions with Circle-250's spacing (radius 200 for 250 agents) and goals."""
    radius = 200.0 * n / 250.0
    ang = np.arange(n) * 2.0 * math.pi / n
    pos = radius * np.stack([np.cos(ang), np.sin(ang)], axis=1)
    return pos, -pos


def pref_towards(pos, goals):
    g = goals - pos
    n = np.linalg.norm(g, axis=1, keepdims=True)
    return np.where(n > 1.0, g / np.maximum(n, 1e-300), g)


def bench_ours(pos0, goals, threads, warmup, steps):
    sim = Simulator(time_step=0.25, num_threads=threads, **DEFAULTS)
    sim.add_agents(pos0)
    for _ in range(warmup):
        sim.set_pref_velocities(pref_towards(sim.positions, goals))
        sim.step()
    state = (np.array(sim.positions), np.array(sim.velocities))
    t_total = 0.0
    for _ in range(steps):
        pref = pref_towards(sim.positions, goals)
        sim.set_pref_velocities(pref)
        t0 = time.perf_counter()
        sim.step()
        t_total += time.perf_counter() - t0
    return 1e3 * t_total / steps, state


def bench_rvo(state, goals, steps):
    pos, vel = state
    sim = pyrvo.RVOSimulator(0.25, 15.0, 10, 10.0, 10.0, 1.5, 2.0)
    for p, v in zip(pos, vel, strict=False):
        sim.add_agent((float(p[0]), float(p[1])), 15.0, 10, 10.0, 10.0, 1.5, 2.0,
                      (float(v[0]), float(v[1])))
    n = len(pos)
    t_total = 0.0
    cur = pos.copy()
    for _ in range(steps):
        pref = pref_towards(cur, goals)
        for i in range(n):
            sim.set_agent_pref_velocity(i, (float(pref[i, 0]), float(pref[i, 1])))
        t0 = time.perf_counter()
        sim.do_step()
        t_total += time.perf_counter() - t0
        cur = np.array([sim.get_agent_position(i).to_tuple() for i in range(n)])
    return 1e3 * t_total / steps


def square_grid(num_segments):
    """Counter-clockwise 1x1 squares on a grid with spacing 3: ``num_segments / 4`` squares."""
    k = int(round(math.sqrt(num_segments / 4)))
    polys = []
    for i in range(k):
        for j in range(k):
            x, y = 3.0 * i, 3.0 * j
            polys.append([(x, y), (x + 1.0, y), (x + 1.0, y + 1.0), (x, y + 1.0)])
    return polys


def bench_obstacles(num_segments, with_rvo):
    polys = square_grid(num_segments)
    sim = Simulator(time_step=0.25, **DEFAULTS)
    for p in polys:
        sim.add_obstacle(p)
    t0 = time.perf_counter()
    sim.process_obstacles()
    ours = time.perf_counter() - t0
    theirs = None
    if with_rvo:
        rvo = pyrvo.RVOSimulator(0.25, 15.0, 10, 10.0, 10.0, 1.5, 2.0)
        for p in polys:
            rvo.add_obstacle(p)
        t0 = time.perf_counter()
        rvo.process_obstacles()
        theirs = time.perf_counter() - t0
    return 4 * len(polys), ours, theirs


FIRST_STEP = textwrap.dedent(
    """
    import sys, time
    t0 = time.perf_counter()
    sys.path.insert(0, {repo!r})
    import numpy as np
    from orca_env.core import Simulator
    t1 = time.perf_counter()
    sim = Simulator(time_step=0.25)
    sim.add_agents(np.random.default_rng(0).uniform(-50, 50, (250, 2)))
    sim.add_obstacle([(0, 0), (1, 0), (1, 1), (0, 1)])
    sim.set_pref_velocities(np.ones((250, 2)))
    sim.step()
    t2 = time.perf_counter()
    print(t1 - t0, t2 - t1)
    """
)


def first_step_fresh_process():
    cmd = [sys.executable, "-c", FIRST_STEP.format(repo=str(REPO))]
    subprocess.run(cmd, check=True, capture_output=True)  # make sure the cache is warm
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.split()
    return float(out[0]), float(out[1])


WORKER = textwrap.dedent(
    """
    import hashlib, sys, time
    sys.path.insert(0, {repo!r})
    import math
    import numba
    import numpy as np
    from orca_env.core import Simulator
    numba.set_num_threads(1)
    {helpers}
    sim = goals = None
    for line in sys.stdin:
        cmd, arg = line.split()
        if cmd == "setup":
            n = int(arg)
            pos0, goals = circle_layout(n)
            sim = Simulator(time_step=0.25, num_threads=1, **{defaults!r})
            sim.add_agents(pos0)
            print("ok", flush=True)
            continue
        t = 0.0
        for _ in range(int(arg)):
            sim.set_pref_velocities(pref_towards(sim.positions, goals))
            t0 = time.thread_time()
            sim.step()
            t += time.thread_time() - t0
        digest = hashlib.sha1(np.ascontiguousarray(sim.positions).tobytes()).hexdigest()
        print(t, digest, flush=True)
    """
)


class Worker:
    """A process stepping one checkout's Simulator on the Circle layout, on request."""

    def __init__(self, repo):
        helpers = inspect.getsource(circle_layout) + inspect.getsource(pref_towards)
        code = WORKER.format(repo=str(repo), helpers=textwrap.indent(helpers, "").strip(),
                             defaults=DEFAULTS)
        env = dict(os.environ, PYTHONPATH=str(repo))
        self.proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, cwd=str(repo), env=env)

    def ask(self, cmd, arg):
        self.proc.stdin.write(f"{cmd} {arg}\n")
        self.proc.stdin.flush()
        reply = self.proc.stdout.readline().split()
        if not reply:
            raise SystemExit(f"the worker for {cmd} {arg} died (see its stderr above)")
        return reply

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def rvo_steps(sim, goals, k):
    """Thread CPU time of ``k`` RVO2 ``do_step`` calls (per-agent I/O untimed)."""
    n, t = sim.get_num_agents(), 0.0
    for _ in range(k):
        cur = np.array([sim.get_agent_position(i).to_tuple() for i in range(n)])
        for i, v in enumerate(pref_towards(cur, goals).tolist()):
            sim.set_agent_pref_velocity(i, v)
        t0 = time.thread_time()
        sim.do_step()
        t += time.thread_time() - t0
    return t


def load1():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def against(args):
    """This checkout's core against ``args.against``'s and RVO2 (see the module docstring)."""
    other = Path(args.against).resolve()
    if not (other / "orca_env" / "core" / "simulator.py").is_file():
        raise SystemExit(f"--against must be a checkout of orca-env, got {args.against!r}")
    rev = subprocess.run(["git", "-C", str(other), "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True).stdout.strip() or "unknown"
    new, old = Worker(REPO), Worker(other)
    warm = 2 if args.quick else 5
    budget = 2e4 if args.quick else 2.5e5  # agent-steps per repetition and simulator
    rows, identical = [], True
    print(f"# orca_env.core against {other} ({rev}){' and RVO2 2.0.3 (pyrvo)' if pyrvo else ''}"
          f", one thread, {os.cpu_count()} CPUs, load {load1():.2f}\n", flush=True)
    for n in args.sizes:
        l0 = load1()
        for w in (new, old):
            w.ask("setup", n)
            w.ask("steps", warm)
        rvo = None
        if pyrvo is not None:
            pos0, goals = circle_layout(n)
            d = DEFAULTS
            rvo = pyrvo.RVOSimulator(0.25, d["neighbor_dist"], d["max_neighbors"],
                                     d["time_horizon"], d["time_horizon_obst"], d["radius"],
                                     d["max_speed"])
            for p in pos0:
                rvo.add_agent((float(p[0]), float(p[1])))
            rvo_steps(rvo, goals, warm)
        k = max(3, int(budget / n))
        t_new, t_old, t_rvo = [], [], []
        for _ in range(args.reps):  # alternating
            a = new.ask("steps", k)
            b = old.ask("steps", k)
            t_new.append(float(a[0]) / k)
            t_old.append(float(b[0]) / k)
            identical &= a[1] == b[1]
            if rvo is not None:
                t_rvo.append(rvo_steps(rvo, goals, k) / k)
        med = statistics.median
        rows.append(dict(agents=n, new_ms=1e3 * med(t_new), old_ms=1e3 * med(t_old),
                         rvo_ms=1e3 * med(t_rvo) if t_rvo else None,
                         old_new=[o / w for o, w in zip(t_old, t_new, strict=True)],
                         new_rvo=[w / r for w, r in zip(t_new, t_rvo, strict=True)],
                         steps=k, load=(l0, load1())))
        print(f"{n} agents done", file=sys.stderr, flush=True)
    new.close()
    old.close()
    print(f"Thread CPU time per step, medians of {args.reps} alternating repetitions (per-rep "
          "min-max in brackets); Circle layout at Circle-250's density\n")
    print("| agents | new (ms) | old (ms) | RVO2 C++ (ms) | old / new | new / RVO2 "
          "(target <= 0.5 at 5k-100k) | old / RVO2 | steps per rep | load before / after |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        on, nr = r["old_new"], r["new_rvo"]
        rv = ("n/a | n/a" if r["rvo_ms"] is None else
              f"{r['new_ms'] / r['rvo_ms']:.2f} ({min(nr):.2f}-{max(nr):.2f}) "
              f"| {r['old_ms'] / r['rvo_ms']:.2f}")
        rvo_ms = "n/a" if r["rvo_ms"] is None else f"{r['rvo_ms']:.2f}"
        print(f"| {r['agents']:,} | {r['new_ms']:.2f} | {r['old_ms']:.2f} | {rvo_ms} "
              f"| {r['old_ms'] / r['new_ms']:.2f} ({min(on):.2f}-{max(on):.2f}) | {rv} "
              f"| {r['steps']} "
              f"| {r['load'][0]:.2f} / {r['load'][1]:.2f} |")
    print(f"\nnew and old positions bit-identical after every repetition: "
          f"{'yes' if identical else 'NO'}")
    if not identical:
        raise SystemExit(1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, few steps")
    ap.add_argument("--against", default=None, metavar="CHECKOUT",
                    help="time this checkout's core against another checkout's and RVO2")
    ap.add_argument("--sizes", type=int, nargs="+", default=None,
                    help="agent counts for --against (default 1000 5000 20000 100000)")
    ap.add_argument("--reps", type=int, default=5, help="repetitions for --against")
    args = ap.parse_args()
    if args.reps < 1:
        ap.error(f"--reps must be >= 1, got {args.reps}")
    if args.against is not None:
        args.sizes = args.sizes or ([1000, 5000] if args.quick else [1000, 5000, 20000, 100000])
        if min(args.sizes) < 1:
            ap.error(f"--sizes must be >= 1, got {args.sizes}")
        against(args)
        return
    sizes = [1000, 5000] if args.quick else [1000, 5000, 20000]
    warmup, steps = (3, 5) if args.quick else (5, 20)
    segs = [400, 6400] if args.quick else [6400, 14400, 100000]
    have_rvo = pyrvo is not None

    print(f"# orca_env.core benchmark ({os.cpu_count()} CPUs"
          f"{', RVO2 2.0.3 via pyrvo' if have_rvo else ', pyrvo not installed'})\n")
    print(f"## Step time, Circle layout (Circle-250 density), mean of {steps} steps after "
          f"{warmup} warm-up steps\n")
    print("| agents | ours 1 thread (ms) | ours 2 threads (ms) | RVO2 C++ (ms) "
          "| ours-1t / RVO2 (target <= 1.0 at 5,000) | ours-2t / RVO2 (target <= 0.6) "
          "| ours-2t µs/agent |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for n in sizes:
        pos0, goals = circle_layout(n)
        t1, state = bench_ours(pos0, goals, 1, warmup, steps)
        t2, _ = bench_ours(pos0, goals, 2, warmup, steps)
        if have_rvo:
            tr = bench_rvo(state, goals, steps)
            rv = f"{tr:.2f} | {t1 / tr:.2f} | {t2 / tr:.2f}"
        else:
            rv = "n/a | n/a | n/a"
        print(f"| {n:,} | {t1:.2f} | {t2:.2f} | {rv} | {1e3 * t2 / n:.2f} |", flush=True)

    print("\n## Obstacle index build (`process_obstacles`), grids of counter-clockwise squares\n")
    print("| segments | ours (s) | RVO2 C++ (s) | RVO2 / ours (target >= 20 at 14,400; "
          "ours < 1 s at 100,000) |")
    print("|---:|---:|---:|---:|")
    for s in segs:
        with_rvo = have_rvo and s <= 20000
        m, ours, theirs = bench_obstacles(s, with_rvo)
        if theirs is None:
            why = "skipped: RVO2's BSP build is quadratic" if have_rvo else "n/a"
            print(f"| {m:,} | {ours:.3f} | {why} | – |", flush=True)
        else:
            print(f"| {m:,} | {ours:.3f} | {theirs:.3f} | {theirs / max(ours, 1e-9):.0f} |",
                  flush=True)

    imp, first = first_step_fresh_process()
    print("\n## Fresh process, numba cache warm\n")
    print("| import orca_env.core (s) | first step, 250 agents + obstacle (s) (target < 1 s) |")
    print("|---:|---:|")
    print(f"| {imp:.2f} | {first:.2f} |")


if __name__ == "__main__":
    main()
