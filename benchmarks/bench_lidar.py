"""Microseconds per agent of one LiDAR scan (``orca_env.sensors.lidar_scan``), per config.

Each config is reset with seed 0 and stepped 5 times with pure ORCA; then the scan of every
live learned agent is timed (200 calls, 7 repeats; the minimum and the median are printed).
The scan alone, no step: ``bench_vector.py`` measures what it costs the vector env. Usage:

    python benchmarks/bench_lidar.py [--beams 32] [CONFIG ...]   (default: circle_dense
        random_obstacles blocks)
"""

import argparse
import time

import numpy as np

import orca_env
from orca_env.sensors import lidar_scan, sensor_axes


def scan_us(config, beams):
    """``(slots, scanning agents, segments, min us, median us)`` of one scan per agent."""
    env = orca_env.parallel_env(config)
    env.reset(seed=0)
    for _ in range(5):
        env.step(env.heuristic_actions())
    sl, sim = env._batch.slots, env.sim
    live = np.ascontiguousarray(env.live_slots, dtype=np.int64)
    axes = np.empty((live.size, 2))
    sensor_axes(live, sl.pos, sl.targets, sl.heading, sl.kinematics, False, axes)
    order, boxes = (np.ascontiguousarray(a) for a in sim.obstacle_index)
    pts = np.ascontiguousarray(sim.obstacle_points)
    nxt = np.ascontiguousarray(sim.obstacle_next)
    out = np.empty((live.size, beams))
    args = (live, sl.pos, sl.radius, sl.active, axes, 2 * np.pi, env.world_config.obs_range,
            pts, nxt, order, boxes, out)
    lidar_scan(*args)  # compile or load the cache
    times = []
    for _ in range(7):
        t0 = time.perf_counter()
        for _ in range(200):
            lidar_scan(*args)
        times.append((time.perf_counter() - t0) / 200 / live.size * 1e6)
    times.sort()
    return env.num_slots, live.size, pts.shape[0], times[0], times[3]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("configs", nargs="*", default=["circle_dense", "random_obstacles", "blocks"])
    ap.add_argument("--beams", type=int, default=32)
    args = ap.parse_args()
    for config in args.configs:
        n, k, m, lo, med = scan_us(config, args.beams)
        print(f"{config}: {n} slots, {k} scanning, {m} segments: {lo:.2f} us per "
              f"{args.beams}-beam scan (min of 7), median {med:.2f}")


if __name__ == "__main__":
    main()
