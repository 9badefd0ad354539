"""World-steps per second of the native TorchRL env next to the raw ``OrcaVectorEnv`` it wraps.

Both step the same B worlds (seeds ``seed + b``) with the same random actions, with numeric
infos (``--no-infos``: without), resetting the worlds that end: the raw env by its own
``SAME_STEP`` autoreset, the TorchRL env (:class:`orca_env.wrappers.torchrl.OrcaTorchRLEnv`)
through TorchRL's ``step_and_maybe_reset`` (a partial ``"_reset"``, as its collectors do),
actions given as tensors. The two run interleaved, ``--reps`` times each, so both figures come
from the same load; the ratio is raw / TorchRL of the medians (the target is 1.5 or less). The
last line printed is JSON: ``raw_world_steps_per_s``, ``torchrl_world_steps_per_s``,
``ratio`` and the settings. The TorchRL env's extra cost is mostly a fixed one per step
(TorchRL's ``step``, ``step_mdp`` and reset checks over the tensordict's entries, 18 of them
the numeric infos), shared by every world: the ratio falls as ``--worlds`` grows.

Usage:

    python benchmarks/bench_torchrl.py [--config circle_dense] [--worlds 64] [--steps 200]
        [--reps 5] [--seed 0] [--max-steps 60] [--no-infos]
"""

import argparse
import json
import statistics
import time

import numpy as np
import torch

from orca_env.vector import OrcaVectorEnv
from orca_env.wrappers.torchrl import OrcaTorchRLEnv


def bench_raw(env, actions, seed):
    env.reset(seed=seed)
    t0 = time.perf_counter()
    for a in actions:
        env.step(a)
    return len(actions) * env.num_worlds / (time.perf_counter() - t0)


def bench_torchrl(env, actions, seed):
    env.set_seed(seed)
    td = env.reset()
    t0 = time.perf_counter()
    for a in actions:
        td.set(("agents", "action"), a)
        _, td = env.step_and_maybe_reset(td)
    return len(actions) * env.num_worlds / (time.perf_counter() - t0)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--config", default="circle_dense")
    p.add_argument("--worlds", type=int, default=64)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-steps", type=int, default=60,
                   help="episode length, so that worlds end and reset during the run")
    p.add_argument("--no-infos", action="store_true",
                   help="without the numeric infos (infos=False in both envs)")
    args = p.parse_args()
    torch.set_num_threads(1)
    kw = dict(seed=args.seed, infos=False if args.no_infos else "numeric",
              max_steps=args.max_steps)
    raw = OrcaVectorEnv(args.config, args.worlds, **kw)
    trl = OrcaTorchRLEnv(args.config, args.worlds, **kw)
    B, L = args.worlds, trl.num_agents
    rng = np.random.default_rng(args.seed)
    acts = rng.uniform(-1, 1, (args.steps, B * L, 2)).astype(np.float32)
    acts_t = [torch.from_numpy(a.reshape(B, L, 2)) for a in acts]
    bench_raw(raw, list(acts[:5]), args.seed)  # warm-up: numba compilation or cache load
    bench_torchrl(trl, acts_t[:5], args.seed)
    raws, trls = [], []
    for r in range(args.reps):
        raws.append(bench_raw(raw, list(acts), args.seed))
        trls.append(bench_torchrl(trl, acts_t, args.seed))
        print(f"rep {r}: raw {raws[-1]:9.0f}  torchrl {trls[-1]:9.0f} world-steps/s  "
              f"ratio {raws[-1] / trls[-1]:.2f}")
    raw_s, trl_s = statistics.median(raws), statistics.median(trls)
    print(f"{args.config}, {B} worlds x {L} agents: raw {raw_s:.0f}, torchrl {trl_s:.0f} "
          f"world-steps/s; ratio raw/torchrl {raw_s / trl_s:.2f} (target <= 1.5)")
    print(json.dumps({"raw_world_steps_per_s": raw_s, "torchrl_world_steps_per_s": trl_s,
                      "ratio": raw_s / trl_s, "config": args.config, "worlds": B,
                      "agents_per_world": L, "steps": args.steps, "reps": args.reps,
                      "infos": kw["infos"]}))
    raw.close()
    trl.close()


if __name__ == "__main__":
    main()
