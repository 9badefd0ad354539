"""Agent-steps per second of ``OrcaVectorEnv`` next to a loop over single envs, same worlds.

Both run the same B worlds (seeds ``seed + b``) with the same random actions, autoresetting
finished worlds (the single envs with ``reset()`` once their last agent is done), so both
figures come from one run on the same load. An agent-step is one live learned agent acting
once. The vector env runs with ``--threads`` numba threads (default 2: the target is for 2
cores; the single env's core stays serial at 16 agents whatever its setting). The last line
printed is JSON: ``agent_steps_per_s`` (vector env),
``single_env_agent_steps_per_s`` (the loop over ``orca_env.parallel_env``, ``infos="compact"``
as the training adapters use it), ``ratio``, ``threads``, and ``lidar_agent_steps_per_s``: the
vector env on the same worlds and actions with a LiDAR scan of ``--lidar-beams`` beams
(``observation.lidar``, default 32; 0 skips it) added to the observation. ``--set key=value``
overrides the config as ``orca-env eval --set`` does, e.g. the robot cases (issue 22)::

    python benchmarks/bench_vector.py --set groups.0.kinematics=differential_drive
    python benchmarks/bench_vector.py --set groups.0.kinematics=unicycle

Usage:

    python benchmarks/bench_vector.py [--config circle_dense] [--worlds 64] [--steps 300]
        [--threads 2] [--seed 0] [--lidar-beams 32] [--set KEY=VALUE ...]
"""

import argparse
import json
import time

import numpy as np

import orca_env
from orca_env.evaluation.overrides import config_overrides, parse_set_items
from orca_env.vector import OrcaVectorEnv


def bench_vector(config, worlds, steps, threads, seed, actions, **overrides):
    """Agent-steps/s of the vector env over ``steps`` steps (after a compile warm-up)."""
    v = OrcaVectorEnv(config, worlds, seed=seed, num_threads=threads, **overrides)
    v.reset()
    for t in range(3):  # warm-up: numba compilation or cache load
        v.step(actions[t])
    v.reset(seed=seed)
    done = 0
    alive = np.ones(v.num_envs, dtype=bool)
    t0 = time.perf_counter()
    for t in range(steps):
        done += int(alive.sum())
        _, _, _, _, info = v.step(actions[t])
        alive = info["alive"]
    return done / (time.perf_counter() - t0)


def bench_single(config, worlds, steps, seed, actions, over):
    """Agent-steps/s of a loop over one ``parallel_env`` per world, same actions."""
    envs = [orca_env.parallel_env(config, infos="compact", **over) for _ in range(worlds)]
    for b, e in enumerate(envs):
        e.reset(seed=seed + b)
    L = len(envs[0].possible_agents)
    index = {a: k for k, a in enumerate(envs[0].possible_agents)}
    done = 0
    t0 = time.perf_counter()
    for t in range(steps):
        act = actions[t]
        for b, e in enumerate(envs):
            done += len(e.agents)
            e.step({a: act[b * L + index[a]] for a in e.agents})
            if not e.agents:
                e.reset()
    return done / (time.perf_counter() - t0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="circle_dense")
    ap.add_argument("--worlds", type=int, default=64)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--lidar-beams", type=int, default=32)
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="config override, as orca-env eval --set (repeatable)")
    args = ap.parse_args()
    over = config_overrides(args.config, parse_set_items(args.set))
    probe = orca_env.parallel_env(args.config, **over)
    rows = args.worlds * len(probe.possible_agents)
    rng = np.random.default_rng(args.seed)
    actions = rng.uniform(-1.0, 1.0, (args.steps, rows, 2)).astype(np.float32)
    vec = bench_vector(args.config, args.worlds, args.steps, args.threads, args.seed, actions,
                       **over)
    lidar = None
    if args.lidar_beams > 0:
        lid_over = dict(over)
        lid_over["observation"] = {**over.get("observation", {}),
                                   "lidar": {"beams": args.lidar_beams}}
        lidar = bench_vector(args.config, args.worlds, args.steps, args.threads, args.seed,
                             actions, **lid_over)
    bench_single(args.config, 2, 3, args.seed, actions, over)  # warm-up (numba cache load)
    single = bench_single(args.config, args.worlds, args.steps, args.seed, actions, over)
    sets = f" ({', '.join(args.set)})" if args.set else ""
    print(f"config {args.config}{sets}, {args.worlds} worlds x {len(probe.possible_agents)} "
          f"learned agents, {args.steps} steps, {args.threads} thread(s)")
    print(f"vector env:          {vec:>12,.0f} agent-steps/s")
    print(f"loop of single envs: {single:>12,.0f} agent-steps/s")
    if lidar is not None:
        print(f"vector env + LiDAR:  {lidar:>12,.0f} agent-steps/s ({args.lidar_beams} beams)")
    print(json.dumps({"agent_steps_per_s": round(vec), "single_env_agent_steps_per_s":
                      round(single), "ratio": round(vec / single, 2),
                      "threads": args.threads, "set": args.set,
                      "lidar_agent_steps_per_s": None if lidar is None else round(lidar),
                      "lidar_beams": args.lidar_beams}))


if __name__ == "__main__":
    main()
