"""Agent-steps per second of env.step (observations, rewards, infos) next to the core's step.

Circle layout (RVO2 parameters), N learned agents plus a crowd of N ORCA agents, heuristic
(pure ORCA) actions. The env steps through its pipeline, which runs the core's ORCA step
inside one numba call; the core's own ``Simulator.step`` is timed on a copy of the env's
simulator taken before each env step, so both figures come from the very same states.
Prints, per N and per ``infos`` level (``full``: every per-agent info entry, what evaluation
reads; ``compact``: only ``status``, what the training adapters use):
core step time, env step time (core included), env overhead factor (env / core - 1) and
agent-steps per second of env.step. Usage:

    python benchmarks/bench_env.py [--sizes 10 100 1000] [--steps 200] [--threads 1]
        [--infos full compact]
"""

import argparse
import copy
import time

import orca_env


def bench(n, steps, threads, infos):
    """Time env.step and, inside it, the core's sim.step on the very same states."""
    kw = dict(scenario="circle_v0", num_threads=threads, max_steps=100_000, infos=infos,
              scenario_kwargs={"circle_radius": max(20.0, 0.8 * 2 * n)},
              groups=[{"population": "learned", "count": n, "on_goal": "stay"},
                      {"population": "orca", "count": n, "on_goal": "stay"}])
    env = orca_env.parallel_env(**kw)
    env.reset(seed=0)
    for _ in range(5):  # warm-up (numba compilation)
        env.step(env.heuristic_actions())
    copy.deepcopy(env.sim).step()
    t_core = [0.0]
    t_env = 0.0
    done = 0
    for _ in range(steps):
        acts = env.heuristic_actions()
        core = copy.deepcopy(env.sim)  # the same state, stepped by the core alone
        t0 = time.perf_counter()
        env.step(acts)
        t_env += time.perf_counter() - t0
        core.set_pref_velocities(env.sim.pref_velocities)
        t0 = time.perf_counter()
        core.step()
        t_core[0] += time.perf_counter() - t0
        done += 1
        if not env.agents:
            break
    env_ms, core_ms = 1e3 * t_env / done, 1e3 * t_core[0] / done
    return core_ms, env_ms, n * done / t_env


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--infos", nargs="+", choices=("full", "compact"),
                    default=["full", "compact"])
    args = ap.parse_args()
    print(f"{'learned':>8} {'crowd':>6} {'infos':>8} {'core ms':>8} {'env ms':>8} "
          f"{'overhead':>9} {'agent-steps/s':>14}")
    for n in args.sizes:
        for infos in args.infos:
            core_ms, env_ms, rate = bench(n, args.steps, args.threads, infos)
            print(f"{n:>8} {n:>6} {infos:>8} {core_ms:>8.3f} {env_ms:>8.3f} "
                  f"{env_ms / core_ms - 1:>8.2f}x {rate:>14,.0f}")


if __name__ == "__main__":
    main()
