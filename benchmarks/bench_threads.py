"""Two threads against one in ``OrcaVectorEnv``: the speed-up, where the time goes, bit-identity.

Steps the same ``circle_dense`` worlds (seeds ``seed + b``, the same random actions, autoreset
inside the timed steps) with ``num_threads`` 1 and 2 in one process, alternating, ``--reps``
times, and prints per repetition the wall time of each, their ratio, and how the time splits:
the kernel calls (``WorldBatch._call``, with the Python it overlaps on two threads), the
resets (``OrcaVectorEnv._reset_worlds``) and the rest of the step; then the median ratio, the
episodes drawn ahead and used, the load average before and after, and checks that every output
of both runs is the same bits. Short of a second free core the two-thread figures say nothing
(the script prints the load).

Usage:

    python benchmarks/bench_threads.py [--config circle_dense] [--worlds 256] [--steps 300]
        [--reps 3] [--mode same_step|next_step] [--seed 0]
"""

import argparse
import hashlib
import json
import statistics
import time

import numpy as np

from orca_env import pipeline, vector
from orca_env.vector import OrcaVectorEnv


def run(config, worlds, steps, threads, mode, seed, actions):
    """(wall s, kernel s, resets s, episodes drawn ahead and used, digest of every output)."""
    v = OrcaVectorEnv(config, worlds, seed=seed, num_threads=threads, autoreset_mode=mode)
    v.reset()
    for t in range(3):  # warm-up: numba cache load, first allocations
        v.step(actions[t])
    v.reset(seed=seed)
    used0 = v._ahead_used
    spent = {"kernel": 0.0, "resets": 0.0}
    call, reset_worlds = pipeline.WorldBatch._call, vector.OrcaVectorEnv._reset_worlds

    def timed(fn, key):
        def wrapper(*a, **k):
            t0 = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                spent[key] += time.perf_counter() - t0
        return wrapper

    pipeline.WorldBatch._call = timed(call, "kernel")
    vector.OrcaVectorEnv._reset_worlds = timed(reset_worlds, "resets")
    outs = []
    try:
        t0 = time.perf_counter()
        for t in range(steps):
            outs.append(v.step(actions[t]))
        wall = time.perf_counter() - t0
    finally:
        pipeline.WorldBatch._call, vector.OrcaVectorEnv._reset_worlds = call, reset_worlds
    h = hashlib.sha256()
    for obs, rew, term, trunc, info in outs:
        for a in (obs, rew, term, trunc, *(info[k] for k in sorted(info))):
            h.update(np.ascontiguousarray(a).tobytes())
    h.update(v._batch.slots.pos.tobytes())
    used = v._ahead_used - used0
    v.close()
    return wall, spent["kernel"], spent["resets"], used, h.hexdigest()


def main():
    ap = argparse.ArgumentParser(description="Two threads against one in OrcaVectorEnv, "
                                 "alternating in one process: speed-up, time split, bit-identity.")
    ap.add_argument("--config", default="circle_dense", help="env config (default circle_dense)")
    ap.add_argument("--worlds", type=int, default=256, help="worlds (default 256)")
    ap.add_argument("--steps", type=int, default=300, help="timed steps per run (default 300)")
    ap.add_argument("--reps", type=int, default=3, help="repetitions of the 1- and 2-thread "
                    "pair (default 3)")
    ap.add_argument("--mode", default="same_step", help="autoreset mode: same_step (default) "
                    "or next_step")
    ap.add_argument("--seed", type=int, default=0, help="seed of world 0 (default 0)")
    args = ap.parse_args()
    probe = OrcaVectorEnv(args.config, args.worlds)
    n = probe.num_envs
    probe.close()
    actions = np.random.default_rng(args.seed).uniform(-1, 1, (args.steps + 3, n, 2))
    load0 = open("/proc/loadavg").read().split()[:3]
    ratios, digests, drawn = [], set(), []
    print(f"{args.config}, {args.worlds} worlds, {args.steps} steps, {args.mode}")
    print("rep  threads  wall (s)  kernel  resets  rest   drawn ahead and used")
    for r in range(args.reps):
        walls = {}
        for threads in (1, 2):
            wall, kernel, resets, used, digest = run(args.config, args.worlds, args.steps,
                                                     threads, args.mode, args.seed, actions)
            walls[threads] = wall
            digests.add(digest)
            if threads == 2:
                drawn.append(used)
            print(f"{r:3d}  {threads:7d}  {wall:8.3f}  {kernel:6.3f}  {resets:6.3f}  "
                  f"{wall - kernel - resets:5.3f}  {used}")
        ratios.append(walls[1] / walls[2])
        print(f"     1 thread / 2 threads: {ratios[-1]:.2f}")
    load1 = open("/proc/loadavg").read().split()[:3]
    print(f"load average before {' '.join(load0)}, after {' '.join(load1)}")
    print(f"speed-up (1 thread / 2 threads): median {statistics.median(ratios):.2f}, "
          f"min {min(ratios):.2f}, max {max(ratios):.2f}")
    print(f"outputs bit-identical across threads and repetitions: {len(digests) == 1}")
    print(json.dumps({"ratios": [round(x, 3) for x in ratios], "identical": len(digests) == 1,
                      "drawn_ahead_used": drawn, "load_before": load0, "load_after": load1}))


if __name__ == "__main__":
    main()
