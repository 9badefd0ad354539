"""Placement at 10^5 agents: no scenario does n x n work (issue 27, item 5).

Times ``env.reset`` (placement, the start-overlap check, the core's setup) for 10^5 agents in a
jittered circle (``any_overlap``'s sort and sweep) and in random_obstacles' open arena
(``sample_pairs``' rejection sampling with a hash grid of the accepted discs), and random
placement of ``--small`` agents both with the grid and with the all-pairs check it replaced
(the same layout, measured in this run: the ratio). A bound per case (``--bound``, generous:
the machine may be shared) makes the script exit 1 when exceeded.

    python benchmarks/bench_placement.py                # 10^5 agents, ratio at 2,000
    python benchmarks/bench_placement.py --agents 1000000 --cases circle

Prints one line per case and a JSON line.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

import orca_env
import orca_env.scenarios.base as base


class _AllPairs:
    """The all-pairs check ``sample_pairs`` made before the grid (for the ratio only)."""

    def __init__(self, capacity, max_radius, margin):
        self.xy, self.r, self.count = np.zeros((0, 2)), np.zeros(0), 0

    def add(self, points, radii):
        self.xy = np.concatenate([self.xy, points])
        self.r = np.concatenate([self.r, radii])
        self.count = len(self.r)

    def clear(self, points, radius, margin, ok):
        if self.count:
            d = np.linalg.norm(points[:, None, :] - self.xy[None, :, :], axis=2)
            ok &= np.all(d >= self.r[None, :] + radius + margin, axis=1)
        return ok


def _config(case: str, n: int) -> dict:
    groups = [{"population": "learned", "count": 1, "radius": 0.3},
              {"population": "orca", "count": n - 1, "radius": 0.3}]
    if case == "circle":  # 1.26 m between neighbours, 0.1 m jitter
        return {"scenario": "circle_v0", "groups": groups,
                "scenario_kwargs": {"circle_radius": 0.2 * n, "jitter": 0.1}}
    # About 6.4 m^2 per agent in a walled arena without obstacles.
    return {"scenario": "random_obstacles_v0", "groups": groups,
            "scenario_kwargs": {"half_size": float(np.sqrt(1.6 * n)), "num_obstacles": 0}}


def _reset_seconds(case: str, n: int) -> float:
    env = orca_env.parallel_env(_config(case, n))
    t = time.perf_counter()
    env.reset(seed=0)
    return time.perf_counter() - t


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--agents", type=int, default=100_000)
    p.add_argument("--small", type=int, default=2_000,
                   help="agents of the grid-vs-all-pairs ratio (default: %(default)s)")
    p.add_argument("--cases", nargs="+", default=["circle", "random"],
                   choices=["circle", "random"])
    p.add_argument("--bound", type=float, default=120.0,
                   help="seconds allowed per reset of --agents agents (default: %(default)s)")
    args = p.parse_args(argv)
    _reset_seconds("random", 50)  # compile (or load) the kernels first
    out: dict = {"agents": args.agents}
    failed = False
    for case in args.cases:
        s = _reset_seconds(case, args.agents)
        out[case] = round(s, 2)
        failed |= s > args.bound
        print(f"{case}: reset of {args.agents:,} agents in {s:.2f} s (bound {args.bound:g} s)")
    grid = _reset_seconds("random", args.small)
    real = base.DiscGrid
    base.DiscGrid = _AllPairs
    try:
        pairs = _reset_seconds("random", args.small)
    finally:
        base.DiscGrid = real
    out["ratio"] = {"agents": args.small, "grid_s": round(grid, 3), "all_pairs_s": round(pairs, 3),
                    "speedup": round(pairs / grid, 1)}
    print(f"random placement of {args.small:,} agents: grid {grid:.2f} s, all pairs "
          f"{pairs:.2f} s ({pairs / grid:.1f}x)")
    print(json.dumps(out))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
