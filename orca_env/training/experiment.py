"""One training experiment: the training env, training and resuming, the run, shipping.

:func:`run_experiment` is the whole pipeline behind ``train.py`` (and ``orca-env train``): resolve
the config, write the run folder (:mod:`orca_env.training.run_folder`), train or resume, save
the statistics, run the three-way comparison (:mod:`orca_env.training.comparison`) and, on
request, :func:`ship` the result as the package's shipped policy. stable-baselines3 and torch are
imported inside the functions that need them.
"""

from __future__ import annotations

import json
import os
import time
import warnings

from .comparison import compare
from .config import (
    DEFAULT_CONFIG,
    NORMALIZE_DEFAULTS,
    load_train_config,
    policy_kwargs_from_config,
)
from .run_folder import (
    CHECKPOINT_DIR,
    CHECKPOINT_PREFIX,
    COMMAND_FILE,
    COMPARISON_JSON,
    COMPARISON_TXT,
    CONFIG_FILE,
    EVAL_DIR,
    GIT_FILE,
    MODEL_FILE,
    REPLAY_BUFFER_FILE,
    TB_DIR,
    TRAIN_STATS_FILE,
    VECNORMALIZE_FILE,
    latest_checkpoint,
    new_run_dir,
    run_name,
    write_run_info,
)

__all__ = ["NoCheckpointError", "SHIP_FILES", "SHIP_EVAL_FILES", "make_training_env", "train",
           "print_throughput", "ship", "run_experiment"]

#: Files of a run that :func:`ship` copies (run folder, then its ``eval/``).
SHIP_FILES = (MODEL_FILE, CONFIG_FILE, VECNORMALIZE_FILE, GIT_FILE, COMMAND_FILE)
SHIP_EVAL_FILES = (COMPARISON_TXT, COMPARISON_JSON)
#: Offset of the env seeds on resume: fresh episodes, far from the evaluation seeds 10_000+.
RESUME_SEED_OFFSET = 1_000_000
#: SB3's default discount, the normaliser's when the hyperparameters set none.
DEFAULT_GAMMA = 0.99


class NoCheckpointError(FileNotFoundError):
    """A run folder to resume holds neither a checkpoint nor a model."""


def make_training_env(cfg: dict):
    """The training ``VecEnv``: adapter -> VecMonitor -> (VecNormalize).

    Returns:
        ``(venv, base)``: the outermost ``VecEnv`` and the adapter (its throughput counters).
    """
    from stable_baselines3.common.vec_env import VecMonitor, VecNormalize  # noqa: PLC0415

    from orca_env.wrappers import make_vec_env  # noqa: PLC0415

    base = make_vec_env(cfg["env"], cfg["n_envs"])
    venv = VecMonitor(base)
    norm = cfg["normalize"]
    if norm:
        kwargs = dict(NORMALIZE_DEFAULTS) if norm is True else {**NORMALIZE_DEFAULTS, **norm}
        kwargs.setdefault("gamma", cfg["hyperparams"].get("gamma", DEFAULT_GAMMA))
        venv = VecNormalize(venv, **kwargs)
    return venv, base


def train(cfg: dict, run_dir: str, resume: tuple[str, ...] | None = None,
          progress_bar: bool = True) -> dict:
    """Train per ``cfg`` into ``run_dir``; returns the training statistics.

    Args:
        cfg: The resolved training config.
        run_dir: The run folder.
        resume: ``(model zip, vecnormalize pkl, replay buffer pkl)`` to continue from (see
            :func:`~orca_env.training.run_folder.latest_checkpoint`); the replay buffer is
            optional.
        progress_bar: Show SB3's progress bar.

    Raises:
        ValueError: If the env copies would use evaluation seeds.
        FileNotFoundError: On resume, if ``cfg`` normalises and the normaliser is missing.
    """
    import torch  # noqa: PLC0415
    from stable_baselines3 import PPO, SAC  # noqa: PLC0415
    from stable_baselines3.common.callbacks import CheckpointCallback  # noqa: PLC0415
    from stable_baselines3.common.vec_env import VecNormalize  # noqa: PLC0415

    from orca_env.evaluation import is_eval_seed  # noqa: PLC0415

    train_seeds = range(cfg["seed"], cfg["seed"] + cfg["n_envs"])
    if any(is_eval_seed(s) for s in train_seeds):
        raise ValueError(f"seed {cfg['seed']}: training would reset env copies with seeds "
                         f"{train_seeds.start}..{train_seeds.stop - 1}, which overlap the "
                         f"evaluation seeds 10_000..19_999; pick another seed")
    torch.set_num_threads(cfg["torch_threads"])
    algo_cls = {"ppo": PPO, "sac": SAC}[cfg["algo"]]
    venv, base = make_training_env(cfg)
    try:
        import tensorboard  # noqa: F401, PLC0415

        tb = os.path.join(run_dir, TB_DIR)
    except ImportError:
        tb = None
        print("tensorboard is not installed: no TensorBoard logs")
    if resume is not None:
        model_path, norm_path, buffer_path = (*resume, None, None)[:3]
        if isinstance(venv, VecNormalize):
            if norm_path is None or not os.path.isfile(norm_path):
                venv.close()
                raise FileNotFoundError(f"--resume: the config normalises (normalize: "
                                        f"{cfg['normalize']!r}) but the normaliser of "
                                        f"{model_path!r} is missing: expected {norm_path!r}")
            venv = VecNormalize.load(norm_path, venv.venv)
        model = algo_cls.load(model_path, env=venv, device="cpu", tensorboard_log=tb)
        if hasattr(model, "replay_buffer"):  # off-policy (SAC): continue with its buffer
            if buffer_path is not None and os.path.isfile(buffer_path):
                model.load_replay_buffer(buffer_path)
                print(f"Loaded the replay buffer {buffer_path} ({model.replay_buffer.size()} "
                      f"transitions)")
            else:
                warnings.warn(f"--resume: no replay buffer at {buffer_path!r}; {cfg['algo']} "
                              f"continues with an empty one", stacklevel=2)
        venv.seed(cfg["seed"] + RESUME_SEED_OFFSET + model.num_timesteps)
        print(f"Resuming from {model_path} at {model.num_timesteps} timesteps")
    else:
        model = algo_cls("MlpPolicy", venv, seed=cfg["seed"], device="cpu", tensorboard_log=tb,
                         policy_kwargs=policy_kwargs_from_config(cfg["policy_kwargs"]),
                         verbose=0, **cfg["hyperparams"])
    remaining = cfg["n_timesteps"] - model.num_timesteps
    ckpt = CheckpointCallback(save_freq=max(cfg["checkpoint_freq"] // venv.num_envs, 1),
                              save_path=os.path.join(run_dir, CHECKPOINT_DIR),
                              name_prefix=CHECKPOINT_PREFIX, save_vecnormalize=True,
                              save_replay_buffer=True)
    start_steps = model.num_timesteps
    t0 = time.perf_counter()
    if remaining > 0:
        model.learn(total_timesteps=remaining, callback=ckpt, progress_bar=progress_bar,
                    reset_num_timesteps=resume is None, tb_log_name=cfg["algo"])
    wall = time.perf_counter() - t0
    model.save(os.path.join(run_dir, MODEL_FILE))
    if getattr(model, "replay_buffer", None) is not None:
        model.save_replay_buffer(os.path.join(run_dir, REPLAY_BUFFER_FILE))
    if isinstance(venv, VecNormalize):
        venv.save(os.path.join(run_dir, VECNORMALIZE_FILE))
    done = model.num_timesteps - start_steps
    stats = {
        "timesteps": int(model.num_timesteps),
        "timesteps_this_run": int(done),
        "wall_seconds": round(wall, 2),
        "samples_per_second": round(done / wall, 1) if wall > 0 else None,
        "live_agent_samples_per_second": round(base.agent_steps / wall, 1) if wall > 0 else None,
        "live_fraction": round(base.live_fraction, 4),
        "env_seconds": round(base.step_seconds, 2),
        "env_share_of_wall": round(base.step_seconds / wall, 4) if wall > 0 else None,
        "env_only_samples_per_second": round(base.entry_steps / base.step_seconds, 1)
        if base.step_seconds > 0 else None,
    }
    venv.close()
    return stats


def print_throughput(stats: dict) -> None:
    """The training throughput lines printed at the end of every run."""
    if not stats.get("timesteps_this_run"):
        print("No training steps in this run.")
        return
    print(f"Training throughput: {stats['samples_per_second']:,.0f} env samples/s during "
          f"{stats['algo'].upper()} ({stats['timesteps_this_run']:,} samples in "
          f"{stats['wall_seconds']:.0f} s; live agents {stats['live_fraction']:.0%} of samples, "
          f"{stats['live_agent_samples_per_second']:,.0f}/s).")
    print(f"Env side: {stats['env_seconds']:.0f} s of {stats['wall_seconds']:.0f} s "
          f"({stats['env_share_of_wall']:.0%}); the env alone steps "
          f"{stats['env_only_samples_per_second']:,.0f} samples/s, so the "
          f"{'env' if stats['env_share_of_wall'] > 0.5 else 'learner'} is the bottleneck.")


def ship(run_dir: str, name: str, trained_dir: str | None = None) -> str:
    """Replace ``<trained_dir>/<name>`` with the model, config and normaliser of a run.

    The files go to a temporary folder next to the destination, which then takes the
    destination's place, so nothing of an earlier shipment survives (an old
    ``vecnormalize.pkl`` next to a model trained without normalisation would be loaded with it).

    Args:
        run_dir: The run folder.
        name: The shipped policy's name.
        trained_dir: Folder of the shipped policies (default: ``trained/`` of the installed
            :mod:`orca_env.policies`; in an editable install the repository's
            ``policies/trained/``).

    Returns:
        The destination folder.
    """
    import shutil  # noqa: PLC0415
    import tempfile  # noqa: PLC0415

    if trained_dir is None:
        from orca_env.policies import TRAINED_DIR  # noqa: PLC0415

        trained_dir = TRAINED_DIR
    dest = os.path.join(trained_dir, name)
    os.makedirs(trained_dir, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=f".{name}-", dir=trained_dir)
    try:
        for src_dir, files in ((run_dir, SHIP_FILES),
                               (os.path.join(run_dir, EVAL_DIR), SHIP_EVAL_FILES)):
            for f in files:
                if os.path.isfile(os.path.join(src_dir, f)):
                    shutil.copy2(os.path.join(src_dir, f), os.path.join(tmp, f))
        os.chmod(tmp, 0o755)  # mkdtemp makes it private
        old = None
        if os.path.exists(dest):
            old = tempfile.mkdtemp(prefix=f".{name}-old-", dir=trained_dir)
            os.rename(dest, os.path.join(old, name))
        os.rename(tmp, dest)
        tmp = None
        if old is not None:
            shutil.rmtree(old)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"Shipped to {dest}")
    return dest


def run_experiment(config: str | os.PathLike | None = None, *, run_dir: str | None = None,
                   runs_root: str = "runs", resume: str | None = None,
                   n_timesteps: int | None = None, n_envs: int | None = None,
                   seed: int | None = None, eval_episodes: int | None = None,
                   evaluate: bool = True, video: bool = True, progress_bar: bool = True,
                   ship_result: bool = False) -> dict:
    """Train (or resume), evaluate and optionally ship one run.

    Args:
        config: Training YAML (default: :data:`~orca_env.training.config.DEFAULT_CONFIG`);
            ignored on resume.
        run_dir: The run folder (default: a new ``<runs_root>/<name>_s<seed>_<time>``).
        runs_root: Where new run folders go.
        resume: A run folder to continue from its newest checkpoint, with its saved config.
        n_timesteps: Overrides ``n_timesteps`` (also on resume: the new budget).
        n_envs: Overrides ``n_envs``.
        seed: Overrides ``seed``.
        eval_episodes: Overrides ``eval.n_episodes``.
        evaluate: Run the final three-way comparison.
        video: Render the comparison's video.
        progress_bar: Show SB3's progress bar.
        ship_result: :func:`ship` the result under the config's name.

    Returns:
        ``{"run_dir", "stats" (training statistics), "results" (comparison reports or None)}``.

    Raises:
        NoCheckpointError: If ``resume`` holds neither a checkpoint nor a model.
    """
    resume_from = None
    if resume:
        run_dir = resume
        cfg = load_train_config(os.path.join(run_dir, CONFIG_FILE), n_timesteps=n_timesteps)
        resume_from = latest_checkpoint(run_dir)
        if resume_from is None:
            raise NoCheckpointError(f"--resume: no checkpoint or model in {run_dir!r}")
        config_name = run_name(run_dir)
    else:
        cfg_path = config or DEFAULT_CONFIG
        cfg = load_train_config(cfg_path, n_timesteps=n_timesteps, n_envs=n_envs, seed=seed)
        run_dir = run_dir or new_run_dir(cfg, cfg_path, runs_root)
        config_name = os.path.splitext(os.path.basename(cfg_path))[0]
    if eval_episodes is not None:
        cfg["eval"]["n_episodes"] = eval_episodes
    write_run_info(run_dir, cfg, config_name)
    print(f"Run folder: {run_dir}")

    t_all = time.perf_counter()
    stats = train(cfg, run_dir, resume=resume_from, progress_bar=progress_bar)
    stats["algo"] = cfg["algo"]
    with open(os.path.join(run_dir, TRAIN_STATS_FILE), "w", encoding="utf-8") as fh:
        json.dump(stats, fh, indent=1)
    results = None
    if evaluate:
        results = compare(cfg, run_dir, video=video)
    if ship_result:
        ship(run_dir, config_name)
    print_throughput(stats)
    print(f"Total wall time {time.perf_counter() - t_all:.0f} s; run folder {run_dir}")
    return {"run_dir": run_dir, "stats": stats, "results": results}
