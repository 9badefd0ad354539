"""torch's intra-op threads for the shipped small networks: 1 vs 2 vs torch's default.

Two workloads, each run in a fresh Python process per measurement (torch's thread pool is
set once per process, as the project sets it), the thread settings alternated ``--repeats``
times so that each sees the same machine load:

* ``ppo``: the SB3 snippet of docs/training.md: ``make_vec_env("circle_dense", n_envs=8)``
  (128 entries), ``MaskedVecNormalize``, PPO with ``n_steps=64`` (its default network, 2x64
  tanh), trained for ``--rollouts`` rollouts with their updates (64 x 128 entry-steps each).
* ``eval``: the shipped ``circle_ppo`` policy acting in ``circle_dense`` (16 agents, its
  training env config) for ``--episodes`` episodes
  (``orca_env.policies.sb3.load(..., torch_threads=None)`` after the process set T).

Thread settings: ``1``, ``2`` and ``default`` (torch left alone: ``torch.get_num_threads()``,
the physical cores unless ``OMP_NUM_THREADS`` is set). Each process compiles nothing new (the
numba cache is warmed by a first, unmeasured run) and times only the work after its imports
and model build. ``--busy N`` adds N spinning processes for the whole benchmark, standing in
for the other work on a shared machine. The load average (1 min) is printed before and after.
The last line is JSON: seconds per setting and workload (every repeat, and the median).

    python benchmarks/bench_torch_threads.py [--rollouts 2] [--episodes 4] [--repeats 3]
        [--busy 0] [--only ppo|eval]
"""

import argparse
import json
import multiprocessing as mp
import os
import statistics
import subprocess
import sys
import time

SETTINGS = ("1", "2", "default")

_CHILD = r"""
import sys, time
setting, kind, amount = sys.argv[1], sys.argv[2], int(sys.argv[3])
import torch
if setting != "default":
    torch.set_num_threads(int(setting))
threads = torch.get_num_threads()
if kind == "ppo":
    from stable_baselines3 import PPO
    from orca_env.training.sb3.adapter import (MaskedRolloutBuffer, MaskedVecNormalize,
                                               attach_masks, make_vec_env)
    base = make_vec_env("circle_dense", n_envs=8, torch_threads=None)
    venv = MaskedVecNormalize(base, norm_reward=False)
    model = PPO("MlpPolicy", venv, n_steps=64, rollout_buffer_class=MaskedRolloutBuffer,
                seed=0, device="cpu")
    attach_masks(model, base)
    t0 = time.perf_counter()
    model.learn(amount * 64 * base.num_envs)
    elapsed = time.perf_counter() - t0
else:
    import os
    import orca_env
    from orca_env.config import load_yaml
    from orca_env.policies import SHIPPED_MODEL
    from orca_env.policies.sb3 import load
    # circle_dense as the policy was trained on it (its universal observation layout)
    env = orca_env.parallel_env(load_yaml(os.path.join(SHIPPED_MODEL, "config.yaml"))["env"])
    policy = load(SHIPPED_MODEL, env=env, torch_threads=None)
    t0 = time.perf_counter()
    for ep in range(amount):
        obs, _ = env.reset(seed=10000 + ep)
        while env.agents:
            obs, *_ = env.step(policy(obs, env))
    elapsed = time.perf_counter() - t0
assert torch.get_num_threads() == threads, "something changed torch's threads meanwhile"
print(threads, elapsed)
"""


def _spin():
    while True:
        pass


def run(setting, kind, amount):
    """``(torch threads, seconds)`` of one measurement in a fresh process."""
    env = dict(os.environ, SDL_VIDEODRIVER="dummy")
    out = subprocess.run([sys.executable, "-c", _CHILD, setting, kind, str(amount)], env=env,
                         capture_output=True, text=True, timeout=3600)
    if out.returncode:
        raise RuntimeError(out.stderr)
    threads, seconds = out.stdout.split()[-2:]
    return int(threads), float(seconds)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rollouts", type=int, default=2)
    p.add_argument("--episodes", type=int, default=4)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--busy", type=int, default=0)
    p.add_argument("--only", choices=("ppo", "eval"))
    a = p.parse_args()
    kinds = [k for k in ("ppo", "eval") if a.only in (None, k)]
    amounts = {"ppo": a.rollouts, "eval": a.episodes}
    for kind in kinds:  # warm the numba cache (and the OS's file cache) unmeasured
        run("1", kind, 1)
    spinners = [mp.Process(target=_spin, daemon=True) for _ in range(a.busy)]
    for s in spinners:
        s.start()
    try:
        load0 = os.getloadavg()[0]
        print(f"cpus {os.cpu_count()}, busy processes {a.busy}, load (1 min) {load0:.2f}")
        results = {k: {s: [] for s in SETTINGS} for k in kinds}
        threads = {}
        for r in range(a.repeats):
            for kind in kinds:
                for setting in SETTINGS:
                    t0 = time.time()
                    threads[setting], sec = run(setting, kind, amounts[kind])
                    results[kind][setting].append(sec)
                    print(f"repeat {r} {kind:4s} threads {setting:7s} ({threads[setting]}): "
                          f"{sec:7.1f} s  (load {os.getloadavg()[0]:.2f}, "
                          f"process {time.time() - t0:.0f} s)", flush=True)
        load1 = os.getloadavg()[0]
    finally:
        for s in spinners:
            s.terminate()
    print(f"load (1 min) before {load0:.2f}, after {load1:.2f}")
    for kind in kinds:
        what = (f"{a.rollouts} PPO rollouts+updates" if kind == "ppo"
                else f"{a.episodes} eval episodes")
        med = {s: statistics.median(v) for s, v in results[kind].items()}
        print(f"{what}: " + ", ".join(f"{s} ({threads[s]}) {med[s]:.1f} s" for s in SETTINGS))
    print(json.dumps({"cpus": os.cpu_count(), "busy": a.busy, "load_before": load0,
                      "load_after": load1, "threads": threads, "amounts": amounts,
                      "seconds": results,
                      "median": {k: {s: statistics.median(v) for s, v in r.items()}
                                 for k, r in results.items()}}))


if __name__ == "__main__":
    main()
