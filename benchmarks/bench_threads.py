"""Two threads against one in ``OrcaVectorEnv``: the speed-up, where the time goes, bit-identity.

Steps the same ``circle_dense`` worlds (seeds ``seed + b``, the same random actions, autoreset
inside the timed steps) with ``num_threads`` 1 and 2 in one process, ``--reps`` times, and
prints per repetition the wall time of each, their ratio, and how the time splits: the kernel
calls (``WorldBatch._call``, with the Python it overlaps on two threads), the resets
(``OrcaVectorEnv._reset_worlds``) and the rest of the step; then the median ratio, the episodes
drawn ahead and used, the load average before and after, and checks that every output of every
run is the same bits. Short of a second free core the two-thread figures say nothing (the script
prints the load).

By default both envs live side by side and take turns every ``--block`` steps (25; the one-thread
env first on even blocks), so that both see the machine in the same state: on a VM whose speed
drifts within seconds, whole runs one after the other (``--block 0``: each repetition builds the
one-thread env, runs it, then the two-thread env) gave ratios from 1.15 to 2.4 for the same code.
Between its blocks the two-thread env's pool sleeps (its threads spin for about 2 ms after a
call), so each block's first call wakes it: one call in ``--block``.

``--no-ahead`` adds a third env, two threads without drawing episodes ahead (its batch's
``side_work`` off: every reset draws on the Python thread), taking its turns with the others,
and prints its ratio to one thread too: what drawing ahead is worth on this machine.

Usage:

    python benchmarks/bench_threads.py [--config circle_dense] [--worlds 256] [--steps 1500]
        [--reps 5] [--block 25] [--mode same_step|next_step] [--seed 0] [--no-ahead]
"""

import argparse
import hashlib
import json
import statistics
import time

import numpy as np

from orca_env import pipeline, vector
from orca_env.vector import OrcaVectorEnv

_CALL, _RESET_WORLDS = pipeline.WorldBatch._call, vector.OrcaVectorEnv._reset_worlds
#: The variant ``--no-ahead`` adds: two threads, no episodes drawn ahead.
NO_AHEAD = "2-no-ahead"
#: Steps whose outputs are kept before they are hashed (outside the timing).
HASH_EVERY = 25


class Run:
    """One env stepping ``steps`` steps after a seeded reset, with its time split and digest."""

    def __init__(self, config, worlds, variant, mode, seed):
        threads = 2 if variant == NO_AHEAD else variant
        self.env = OrcaVectorEnv(config, worlds, seed=seed, num_threads=threads,
                                 autoreset_mode=mode)
        if variant == NO_AHEAD:
            self.env._batch.side_work = None  # every reset draws its episodes itself
        self.seed = seed

    def start(self, actions):
        v = self.env
        v.reset()
        for t in range(3):  # warm-up: numba cache load, first allocations
            v.step(actions[t])
        v.reset(seed=self.seed)
        self.used0 = v._ahead_used
        self.spent = {"wall": 0.0, "kernel": 0.0, "resets": 0.0}
        self.digest = hashlib.sha256()

    def steps(self, actions):
        """Step through ``actions``, timing the steps and their kernel calls and resets.

        The outputs are hashed every :data:`HASH_EVERY` steps, outside the timing: keeping every
        output of a long run (about 1 GB at 1500 steps of 4096 rows) made the first repetition
        pay its page faults.
        """
        spent, v = self.spent, self.env

        def timed(fn, key):
            def wrapper(*a, **k):
                t0 = time.perf_counter()
                try:
                    return fn(*a, **k)
                finally:
                    spent[key] += time.perf_counter() - t0
            return wrapper

        pipeline.WorldBatch._call = timed(_CALL, "kernel")
        vector.OrcaVectorEnv._reset_worlds = timed(_RESET_WORLDS, "resets")
        h = self.digest
        try:
            for i in range(0, len(actions), HASH_EVERY):
                outs = []
                t0 = time.perf_counter()
                for a in actions[i:i + HASH_EVERY]:
                    outs.append(v.step(a))
                spent["wall"] += time.perf_counter() - t0
                for obs, rew, term, trunc, info in outs:
                    for a in (obs, rew, term, trunc, *(info[k] for k in sorted(info))):
                        h.update(np.ascontiguousarray(a).tobytes())
        finally:
            pipeline.WorldBatch._call, vector.OrcaVectorEnv._reset_worlds = _CALL, _RESET_WORLDS

    def finish(self):
        """(wall s, kernel s, resets s, episodes drawn ahead and used, digest of every output)."""
        h = self.digest
        h.update(self.env._batch.slots.pos.tobytes())
        s = self.spent
        return s["wall"], s["kernel"], s["resets"], self.env._ahead_used - self.used0, \
            h.hexdigest()

    def close(self):
        self.env.close()


def rep(args, actions, runs, variants):
    """One repetition: {variant: Run.finish()}."""
    timed = actions[3:]
    if args.block <= 0:  # whole runs, one after the other
        out = {}
        for variant in variants:
            r = Run(args.config, args.worlds, variant, args.mode, args.seed)
            r.start(actions)
            r.steps(timed)
            out[variant] = r.finish()
            r.close()
        return out
    for r in runs.values():
        r.start(actions)
    for k, t in enumerate(range(0, args.steps, args.block)):
        for variant in (variants if k % 2 == 0 else variants[::-1]):
            runs[variant].steps(timed[t:t + args.block])
    return {variant: r.finish() for variant, r in runs.items()}


def main():
    ap = argparse.ArgumentParser(description="Two threads against one in OrcaVectorEnv in one "
                                 "process: speed-up, time split, bit-identity.")
    ap.add_argument("--config", default="circle_dense", help="env config (default circle_dense)")
    ap.add_argument("--worlds", type=int, default=256, help="worlds (default 256)")
    ap.add_argument("--steps", type=int, default=1500, help="timed steps per run (default "
                    "1500; at 300 the ratios of one invocation spread from 1.47 to 2.00)")
    ap.add_argument("--reps", type=int, default=5, help="repetitions of the envs' turns "
                    "(default 5)")
    ap.add_argument("--block", type=int, default=25, help="steps each env takes in turn "
                    "(default 25; 0: whole runs one after the other, a new env each)")
    ap.add_argument("--mode", default="same_step", help="autoreset mode: same_step (default) "
                    "or next_step")
    ap.add_argument("--seed", type=int, default=0, help="seed of world 0 (default 0)")
    ap.add_argument("--no-ahead", action="store_true", help="also run two threads without "
                    "drawing episodes ahead (a third env taking its turns with the others)")
    args = ap.parse_args()
    for name in ("worlds", "steps", "reps"):
        if getattr(args, name) < 1:
            ap.error(f"--{name} must be >= 1, got {getattr(args, name)}")
    if args.block < 0:
        ap.error(f"--block must be >= 0, got {args.block}")
    probe = OrcaVectorEnv(args.config, args.worlds)
    n = probe.num_envs
    probe.close()
    actions = np.random.default_rng(args.seed).uniform(-1, 1, (args.steps + 3, n, 2))
    load0 = open("/proc/loadavg").read().split()[:3]
    variants = (1, 2, NO_AHEAD) if args.no_ahead else (1, 2)
    ratios, no_ahead, digests, drawn = [], [], set(), []
    how = f"blocks of {args.block} steps in turn" if args.block else "whole runs in turn"
    print(f"{args.config}, {args.worlds} worlds, {args.steps} steps, {args.mode}, {how}")
    print("rep  threads     wall (s)  kernel  resets  rest   drawn ahead and used")
    runs = {} if args.block <= 0 else \
        {v: Run(args.config, args.worlds, v, args.mode, args.seed) for v in variants}
    try:
        for r in range(args.reps):
            got = rep(args, actions, runs, variants)
            for variant, (wall, kernel, resets, used, digest) in got.items():
                digests.add(digest)
                if variant == 2:
                    drawn.append(used)
                print(f"{r:3d}  {str(variant):10s}  {wall:8.3f}  {kernel:6.3f}  {resets:6.3f}  "
                      f"{wall - kernel - resets:5.3f}  {used}")
            ratios.append(got[1][0] / got[2][0])
            line = f"     1 thread / 2 threads: {ratios[-1]:.2f}"
            if args.no_ahead:
                no_ahead.append(got[1][0] / got[NO_AHEAD][0])
                line += f"; without drawing ahead: {no_ahead[-1]:.2f}"
            print(line)
    finally:
        for run in runs.values():
            run.close()
    load1 = open("/proc/loadavg").read().split()[:3]
    print(f"load average before {' '.join(load0)}, after {' '.join(load1)}")
    print(f"speed-up (1 thread / 2 threads): median {statistics.median(ratios):.2f}, "
          f"min {min(ratios):.2f}, max {max(ratios):.2f}")
    if args.no_ahead:
        print(f"speed-up without drawing ahead: median {statistics.median(no_ahead):.2f}, "
              f"min {min(no_ahead):.2f}, max {max(no_ahead):.2f}")
    print(f"outputs bit-identical across threads and repetitions: {len(digests) == 1}")
    out = {"ratios": [round(x, 3) for x in ratios], "identical": len(digests) == 1,
           "drawn_ahead_used": drawn, "block": args.block, "load_before": load0,
           "load_after": load1}
    if args.no_ahead:
        out["ratios_no_ahead"] = [round(x, 3) for x in no_ahead]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
