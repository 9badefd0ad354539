"""The Ray RLlib training backend (``backend: rllib``): PPO on the new API stack, one shared policy.

A training config with ``backend: rllib`` runs here instead of stable-baselines3, through the same
``python train.py --config ...`` / ``orca-env train ...``. Its keys mean:

    env:             as for SB3 (the env config)
    algo:            ppo (the only RLlib algorithm wired up)
    num_env_runners: env runner processes (Ray actors); 0 samples in the driver. On a Ray cluster
                     they spread over its machines
    n_envs:          env copies per env runner (RLlib's ``num_envs_per_env_runner``)
    n_timesteps:     budget in agent-steps (samples of live agents; RLlib counts steps by agent)
    seed:            the one seed of the run: RLlib's (torch, numpy) and the env copies' (copy e
                     starts with seed + e, see :mod:`orca_env.training.rllib.adapter`). With
                     num_env_runners 0 two runs train identical weights; with env runners they
                     do not (measured; RLlib 2.60 syncs weights to the runners fire-and-forget,
                     the likely cause), although every copy's episodes start from its seed
    normalize:       must be false (observation normalisation is not wired up for RLlib)
    hyperparams:     passed verbatim to ``PPOConfig.training(...)`` (``lr``, ``gamma``,
                     ``lambda_``, ``train_batch_size_per_learner``, ``minibatch_size``,
                     ``num_epochs``, ``clip_param``, ...; batch sizes in agent-steps)
    policy_kwargs:   passed to RLlib's ``DefaultModelConfig`` (``fcnet_hiddens``,
                     ``fcnet_activation``, ``vf_share_layers``, ...); ``extractor`` (deepsets,
                     sarl) and ``extractor_kwargs`` select a crowd network instead of the MLP
                     encoder (:mod:`orca_env.training.rllib.module`)
    torch_threads:   torch threads of the driver (the learner) and of each env runner
    checkpoint_freq: agent-steps between RLlib checkpoints
    eval:            the final comparison, as for SB3

The driver connects to the Ray cluster named by ``RAY_ADDRESS`` (``ray.init()`` reads it) or
starts a local Ray; a session already started (``ray.init`` by the caller) is used and left
running. Ray and RLlib are imported only when a run starts (``pip install 'orca-env[rllib]'``).

Run folder (names in :mod:`orca_env.training.run_folder`): the usual ``config.yaml``,
``name.txt``, ``command.txt``, ``git.txt``, ``train_stats.json`` and ``eval/``, plus
``rllib_checkpoint/`` (RLlib's ``Algorithm.save_to_path``: for RLlib's own tools; it holds
pickles and orca-env never loads it) and ``rllib_module.npz`` (the shared module's weights as
plain arrays, what :mod:`orca_env.training.rllib.loader` loads without unpickling anything).
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

import numpy as np

from orca_env.evaluation import is_eval_seed
from orca_env.files import atomic_path, atomic_write_text

from ..comparison import compare as compare_policies
from ..config import DEFAULT_CONFIG, TrainConfigError, check_rllib_config, load_train_config
from ..run_folder import (
    CONFIG_FILE,
    RLLIB_CHECKPOINT_DIR,
    RLLIB_WEIGHTS_FILE,
    TRAIN_STATS_FILE,
    check_creatable,
    check_new_run_dir,
    new_run_dir,
    run_name,
    write_run_info,
)
from .algorithm import algorithm_config, require_ray
from .loader import load
from .quiet import RAY_INIT_KWARGS

__all__ = ["save_module_weights", "agent_steps_sampled", "train", "compare", "run_experiment"]


def save_module_weights(algo: Any, path: str) -> None:
    """Write the learner's shared-module weights to an NPZ of plain arrays (atomically)."""
    from .adapter import SHARED_MODULE_ID  # noqa: PLC0415  (imports ray)

    weights = algo.learner_group.get_weights(module_ids=[SHARED_MODULE_ID])[SHARED_MODULE_ID]
    arrays = {k: np.asarray(v.detach().cpu().numpy() if hasattr(v, "detach") else v)
              for k, v in weights.items()}
    with atomic_path(path, suffix=".npz") as tmp:
        np.savez(tmp, **arrays)


def agent_steps_sampled(result: dict) -> int:
    """Agent-steps sampled so far, from a result of ``Algorithm.train()``."""
    er = result.get("env_runners", {})
    for key in ("num_agent_steps_sampled_lifetime", "num_module_steps_sampled_lifetime"):
        v = er.get(key)
        if isinstance(v, dict):
            return int(sum(v.values()))
        if v is not None:
            return int(v)
    return int(result.get("num_env_steps_sampled_lifetime", 0))


def train(cfg: dict, run_dir: str, progress_bar: bool = True) -> dict:
    """Train per ``cfg`` into ``run_dir``; returns the training statistics.

    Runs ``Algorithm.train()`` until ``n_timesteps`` agent-steps are sampled, saving an RLlib
    checkpoint every ``checkpoint_freq`` agent-steps and at the end, then the module's weights.
    """
    import ray  # noqa: PLC0415

    started = not ray.is_initialized()
    if started:
        # RAY_ADDRESS, when set, names the cluster; otherwise a local Ray starts.
        ray.init(**RAY_INIT_KWARGS)  # warnings and errors only; see .quiet
    from .adapter import limit_torch_threads  # noqa: PLC0415  (imports ray)

    limit_torch_threads(cfg["torch_threads"])
    algo = algorithm_config(cfg).build_algo()
    ckpt = os.path.join(run_dir, RLLIB_CHECKPOINT_DIR)
    t0 = time.perf_counter()
    steps = env_steps = iters = 0
    next_ckpt = cfg["checkpoint_freq"]
    try:
        while steps < cfg["n_timesteps"]:
            result = algo.train()
            iters += 1
            steps = agent_steps_sampled(result)
            env_steps = int(result.get("env_runners", {}).get("num_env_steps_sampled_lifetime",
                                                                 env_steps))
            if progress_bar:
                ret = result.get("env_runners", {}).get("episode_return_mean")
                ret = "-" if ret is None or not np.isfinite(ret) else f"{float(ret):.2f}"
                print(f"  iteration {iters}: {steps:,} agent-steps, mean episode return {ret} "
                      f"(all agents' sum), {time.perf_counter() - t0:.0f} s", flush=True)
            if steps >= next_ckpt:
                algo.save_to_path(os.path.abspath(ckpt))
                next_ckpt = (steps // cfg["checkpoint_freq"] + 1) * cfg["checkpoint_freq"]
        wall = time.perf_counter() - t0
        algo.save_to_path(os.path.abspath(ckpt))
        save_module_weights(algo, os.path.join(run_dir, RLLIB_WEIGHTS_FILE))
    finally:
        algo.stop()
        if started:
            ray.shutdown()
    return {
        "backend": "rllib",
        "timesteps": steps,
        "timesteps_this_run": steps,
        "env_steps": env_steps,
        "iterations": iters,
        "num_env_runners": cfg["num_env_runners"],
        "envs_per_runner": cfg["n_envs"],
        "wall_seconds": round(wall, 2),
        "samples_per_second": round(steps / wall, 1) if wall > 0 else None,
    }


def compare(cfg: dict, run_dir: str, video: bool = True) -> dict:
    """The three-way comparison of :func:`orca_env.training.comparison.compare` for an RLlib run.

    The same policies, seeds, files and table; the trained policy is loaded with
    :func:`orca_env.training.rllib.loader.load`.
    """
    return compare_policies(cfg, run_dir, video=video, load=load)


def run_experiment(config: str | os.PathLike | None = None, *, run_dir: str | None = None,
                   runs_root: str = "runs", resume: str | None = None,
                   n_timesteps: int | None = None, n_envs: int | None = None,
                   seed: int | None = None, eval_episodes: int | None = None,
                   evaluate: bool = True, video: bool = True, progress_bar: bool = True,
                   ship_result: bool = False, num_env_runners: int | None = None) -> dict:
    """Train and evaluate one RLlib run (as :func:`orca_env.training.experiment.run_experiment`).

    Everything that can reject the run (the config, RLlib's view of its hyperparameters, the
    seeds) is checked before the run folder is created.

    Returns:
        ``{"run_dir", "stats", "results"}`` as the SB3 pipeline.

    Raises:
        MissingExtraError: If ray[rllib] or torch is missing (an ``ImportError`` naming the
            extra).
        ValueError: On a config or seed training refuses, or on ``resume`` / ``ship_result``
            (not supported by this backend yet).
    """
    require_ray("training with backend rllib")
    try:  # whatever refuses the run does so here, before the run folder is made
        cfg, run_dir, config_name = _prepare(config, run_dir, runs_root, resume, n_timesteps,
                                             n_envs, seed, eval_episodes, ship_result,
                                             num_env_runners)
    except TrainConfigError:
        raise
    except ValueError as exc:
        raise TrainConfigError(str(exc)) from exc
    write_run_info(run_dir, cfg, config_name)
    print(f"Run folder: {run_dir}")
    t_all = time.perf_counter()
    stats = train(cfg, run_dir, progress_bar=progress_bar)
    stats["algo"] = cfg["algo"]
    atomic_write_text(os.path.join(run_dir, TRAIN_STATS_FILE), json.dumps(stats, indent=1))
    results = compare(cfg, run_dir, video=video) if evaluate else None
    print(f"Training throughput: {stats['samples_per_second']:,.0f} agent samples/s with "
          f"{cfg['num_env_runners']} env runner(s) x {cfg['n_envs']} env(s) "
          f"({stats['timesteps']:,} samples in {stats['wall_seconds']:.0f} s).")
    print(f"Total wall time {time.perf_counter() - t_all:.0f} s; run folder {run_dir} "
          f"(config {run_name(run_dir)}, {CONFIG_FILE}, {RLLIB_WEIGHTS_FILE})")
    return {"run_dir": run_dir, "stats": stats, "results": results}


def _prepare(config, run_dir, runs_root, resume, n_timesteps, n_envs, seed, eval_episodes,
             ship_result, num_env_runners):
    """What :func:`run_experiment` checks before it writes: ``(cfg, run_dir, config_name)``."""
    if resume:
        raise ValueError(f"--resume {resume!r}: resuming is not supported for backend rllib yet "
                         f"(its RLlib checkpoint is in {RLLIB_CHECKPOINT_DIR}/)")
    if ship_result:
        raise ValueError("--ship: shipping is not supported for backend rllib yet")
    cfg_path = config or DEFAULT_CONFIG
    cfg = load_train_config(cfg_path, n_timesteps=n_timesteps, n_envs=n_envs, seed=seed,
                            num_env_runners=num_env_runners)
    if cfg.get("backend") != "rllib":
        raise ValueError(f"training config {os.fspath(cfg_path)!r} has backend "
                         f"{cfg.get('backend')!r}, not 'rllib'")
    check_rllib_config(cfg)
    if eval_episodes is not None:
        cfg["eval"]["n_episodes"] = eval_episodes
    copies = max(cfg["num_env_runners"], 1) * cfg["n_envs"]
    if any(is_eval_seed(cfg["seed"] + e) for e in range(copies)):
        raise ValueError(f"seed {cfg['seed']}: training would reset env copies with seeds "
                         f"{cfg['seed']}..{cfg['seed'] + copies - 1}, which overlap the "
                         f"evaluation seeds 10_000..19_999; pick another seed")
    algorithm_config(cfg)  # RLlib's verdict on hyperparams and policy_kwargs, before any file
    config_name = os.path.splitext(os.path.basename(os.fspath(cfg_path)))[0]
    if run_dir is not None:
        check_new_run_dir(run_dir)  # never mix two runs in one folder
        check_creatable(run_dir, "--run-dir")
    else:
        check_creatable(runs_root, "--runs-root")
        run_dir = new_run_dir(cfg, os.fspath(cfg_path), runs_root)
    return cfg, run_dir, config_name
