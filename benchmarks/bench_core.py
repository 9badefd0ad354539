"""Benchmark of the ORCA core against RVO2 2.0.3 C++ (pyrvo, when installed).

Prints one markdown table per section:

* ms per step on the RVO2 Circle layout (density of Circle-250: the circle radius scales with
  the agent count) for our core on 1 and 2 threads and for RVO2 (single-threaded: pyrvo is built
  without OpenMP), same states, after warm-up; ratios are ours / RVO2 (lower is faster);
* obstacle-index build time (``process_obstacles``) for grids of square obstacles;
* the first ``step()`` after import in a fresh process (numba cache warm).

Usage: ``python benchmarks/bench_core.py [--quick]``.
"""

from __future__ import annotations

import argparse
import math
import os
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, few steps")
    args = ap.parse_args()
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
