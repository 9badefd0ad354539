"""Vector-env steps per second of one env process alone and of two env processes at once.

Several env processes on one machine (SubprocVecEnv, RLlib env runners, parameter sweeps) must
not oversubscribe the cores. The envs therefore step on one thread by default
(``num_threads: None``); with more, ``OrcaVectorEnv`` steps blocks of worlds on a thread pool
(the single env steps one world, always on one thread). This script measures, in one run:
``OrcaVectorEnv.step``/s (``--worlds`` worlds) of one process alone, then per process with two
processes at once, for the default and for ``num_threads`` = the CPU count. The last line is
JSON. Usage:

    python benchmarks/bench_processes.py [--config circle_dense] [--worlds 8] [--steps 400]
"""

import argparse
import json
import multiprocessing as mp
import os
import time


def _run(config, worlds, num_threads, steps, start, out):
    import numpy as np  # noqa: PLC0415  (in the child)

    from orca_env.vector import OrcaVectorEnv  # noqa: PLC0415

    kw = {} if num_threads is None else {"num_threads": num_threads}
    env = OrcaVectorEnv(config, worlds, seed=0, **kw)
    env.reset()
    acts = np.tile([1.0, 0.0], (env.num_envs, 1))  # straight at the goal, in the goal frame
    for _ in range(5):  # numba compilation, cache load
        env.step(acts)
    start.wait()
    t0 = time.perf_counter()
    for _ in range(steps):
        env.step(acts)
    out.put(steps / (time.perf_counter() - t0))


def rate(config, worlds, num_threads, steps, n_procs):
    """Mean env.step/s per process with ``n_procs`` processes stepping at once."""
    ctx = mp.get_context("spawn")
    start = ctx.Barrier(n_procs)
    out = ctx.Queue()
    procs = [ctx.Process(target=_run, args=(config, worlds, num_threads, steps, start, out))
             for _ in range(n_procs)]
    for p in procs:
        p.start()
    rates = [out.get() for _ in procs]
    for p in procs:
        p.join()
    return sum(rates) / len(rates)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="circle_dense", help="shipped config name or YAML path")
    ap.add_argument("--worlds", type=int, default=8)
    ap.add_argument("--steps", type=int, default=400)
    args = ap.parse_args()
    cores = os.cpu_count() or 1
    result = {"config": args.config, "worlds": args.worlds, "cores": cores}
    print(f"{'num_threads':>12} {'1 process':>10} {'2 at once':>10} {'ratio':>6}")
    for label, threads in (("default (1)", None), (f"{cores} (all)", cores)):
        alone = rate(args.config, args.worlds, threads, args.steps, 1)
        both = rate(args.config, args.worlds, threads, args.steps, 2)
        print(f"{label:>12} {alone:>10.0f} {both:>10.0f} {both / alone:>6.2f}")
        key = "default" if threads is None else "all_cores"
        result[key] = {"alone": alone, "two_at_once": both}
    result["two_default_vs_one_default"] = result["default"]["two_at_once"] / \
        result["default"]["alone"]
    result["two_all_cores_vs_one_default"] = result["all_cores"]["two_at_once"] / \
        result["default"]["alone"]
    print(json.dumps(result))


if __name__ == "__main__":
    main()
