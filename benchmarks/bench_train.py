"""PPO training throughput of the default config: the vector-env adapter next to env copies.

Builds the training pipeline of ``python train.py`` (``configs/train/circle_ppo.yaml``, its
hyperparameters, its seed) twice and trains each for ``--timesteps`` entry-steps, alternating
``--repeats`` times so both see the same machine load:

* ``vector``: what ``train.py`` runs: the SB3 adapter on ``OrcaVectorEnv`` (every world in one
  numba call), finished agents' steps masked out of the rollout (``MaskedRolloutBuffer``) and
  the normaliser (``MaskedVecNormalize``).
* ``copies``: the pipeline of the first release: the adapter stepping ``n_envs`` ``OrcaEnv``
  copies one after another, ``VecMonitor``, plain ``VecNormalize`` and ``RolloutBuffer``
  (training on finished agents' steps as an absorbing state), and its minibatches of 1024
  (the default config now uses 4096: a quarter of the optimizer steps, better results).

PPO samples/s counts entry-steps (``model.num_timesteps``, SB3's own count) per second of
``learn``; ``valid`` samples are the entry-steps of agents that acted. The last line printed is
JSON with both figures, the best of the repeats, and ``ratio`` (vector / copies). Usage:

    python benchmarks/bench_train.py [--timesteps 300000] [--repeats 2]

``--networks`` measures the policy networks instead (:mod:`orca_env.training.networks`): the
vector pipeline of the same config observing with the universal layout (``--k`` neighbour
slots, default 16, and 4 segment slots; no normaliser, as the crowd networks require) trained
with ``policy_kwargs.extractor`` ``mlp``, ``deepsets`` and ``sarl`` (their default sizes, the
config's ``net_arch`` after them), alternating over the repeats; the JSON line holds each one's
samples/s and its ratio to ``mlp``:

    python benchmarks/bench_train.py --networks [--timesteps 100000] [--repeats 1] [--k 16]
"""

import argparse
import json
import tempfile
import time


def build(kind, timesteps):
    """The model and adapter of the default config, for pipeline ``kind``."""
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.vec_env import VecMonitor, VecNormalize

    from orca_env.training.config import (
        NORMALIZE_DEFAULTS,
        load_train_config,
        policy_kwargs_from_config,
    )
    from orca_env.training.sb3 import trainer
    from orca_env.training.sb3.adapter import make_vec_env

    cfg = load_train_config(None)
    cfg["n_timesteps"] = timesteps
    if kind == "vector":
        model, _, base = trainer._build(cfg, tempfile.mkdtemp(), None)
        return model, base
    torch.set_num_threads(cfg["torch_threads"])
    cfg["hyperparams"]["batch_size"] = 1024  # the first release's minibatches
    base = make_vec_env(cfg["env"], cfg["n_envs"], backend="copies")
    norm = cfg["normalize"]
    kwargs = dict(NORMALIZE_DEFAULTS) if norm is True else {**NORMALIZE_DEFAULTS, **norm}
    kwargs.setdefault("gamma", cfg["hyperparams"].get("gamma", 0.99))
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # VecMonitor: the adapter reports episodes itself
        venv = VecNormalize(VecMonitor(base), **kwargs)
    model = PPO("MlpPolicy", venv, seed=cfg["seed"], device="cpu",
                policy_kwargs=policy_kwargs_from_config(cfg["policy_kwargs"]), verbose=0,
                **cfg["hyperparams"])
    return model, base


NETWORKS = ("mlp", "deepsets", "sarl")


def build_network(extractor, timesteps, k):
    """The vector pipeline of the default config, universal layout, with ``extractor``."""
    from orca_env.training.config import load_train_config
    from orca_env.training.sb3 import trainer

    cfg = load_train_config(None)
    cfg["n_timesteps"] = timesteps
    cfg["normalize"] = False
    cfg["env"]["observation"] = {**cfg["env"].get("observation", {}), "layout": "universal",
                                 "num_agents": k, "num_obstacles": 4}
    cfg["policy_kwargs"] = {**cfg["policy_kwargs"], "extractor": extractor}
    model, _, base = trainer._build(cfg, tempfile.mkdtemp(), None)
    return model, base


def run(kind, timesteps, k=None):
    model, base = build_network(kind, timesteps, k) if kind in NETWORKS else \
        build(kind, timesteps)
    t0 = time.perf_counter()
    model.learn(timesteps)
    wall = time.perf_counter() - t0
    base.close()
    return {"samples_per_s": model.num_timesteps / wall,
            "valid_samples_per_s": base.agent_steps / wall,
            "env_share": base.step_seconds / wall, "wall_s": wall}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--timesteps", type=int, default=300_000)
    p.add_argument("--repeats", type=int, default=None,
                   help="default 2; 1 with --networks")
    p.add_argument("--networks", action="store_true",
                   help="mlp vs deepsets vs sarl on the universal layout")
    p.add_argument("--k", type=int, default=16, help="neighbour slots K with --networks")
    args = p.parse_args()
    if args.networks:
        networks(args.timesteps if args.timesteps != 300_000 else 100_000,
                 args.repeats or 1, args.k)
        return
    args.repeats = args.repeats or 2
    run("vector", 20_000)  # warm-up: numba compilation or cache load, torch init
    run("copies", 20_000)
    best = {}
    for r in range(args.repeats):
        for kind in (("vector", "copies") if r % 2 == 0 else ("copies", "vector")):
            res = run(kind, args.timesteps)
            print(f"{kind:>6}: {res['samples_per_s']:>8,.0f} PPO samples/s "
                  f"({res['valid_samples_per_s']:,.0f} valid/s), env {res['env_share']:.0%} "
                  f"of {res['wall_s']:.1f} s", flush=True)
            if res["samples_per_s"] > best.get(kind, {}).get("samples_per_s", 0):
                best[kind] = res
    out = {"samples_per_s": round(best["vector"]["samples_per_s"]),
           "valid_samples_per_s": round(best["vector"]["valid_samples_per_s"]),
           "copies_samples_per_s": round(best["copies"]["samples_per_s"]),
           "ratio": round(best["vector"]["samples_per_s"] / best["copies"]["samples_per_s"], 2)}
    print(json.dumps(out))


def networks(timesteps, repeats, k):
    """mlp vs deepsets vs sarl: samples/s, best of ``repeats``, ratios to mlp."""
    for kind in NETWORKS:
        run(kind, 5_000, k)  # warm-up: compilation or cache load, torch init
    best = {}
    for r in range(repeats):
        order = NETWORKS if r % 2 == 0 else NETWORKS[::-1]
        for kind in order:
            res = run(kind, timesteps, k)
            print(f"{kind:>8}: {res['samples_per_s']:>8,.0f} PPO samples/s, env "
                  f"{res['env_share']:.0%} of {res['wall_s']:.1f} s", flush=True)
            best[kind] = max(best.get(kind, 0.0), res["samples_per_s"])
    out = {"k": k, **{f"{n}_samples_per_s": round(best[n]) for n in NETWORKS},
           **{f"{n}_over_mlp": round(best[n] / best["mlp"], 2) for n in NETWORKS[1:]}}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
