"""One training experiment, whatever its backend: the entry point behind ``train.py``.

:func:`run_experiment` reads the config's ``backend`` and runs that backend's pipeline: the
stable-baselines3 trainer (:mod:`orca_env.training.sb3.trainer`, the default) or the RLlib
trainer (:mod:`orca_env.training.rllib.trainer`). Both resolve the config, write the run folder
(:mod:`orca_env.training.run_folder`), train, save the statistics and run the three-way
comparison (:mod:`orca_env.training.comparison`). Neither imports its training library before
a run starts.

The SB3 trainer's names most used from here (:func:`ship`, :func:`train`,
:func:`make_training_env`, :class:`TrainingInterrupted`, ...) are re-exported.
"""

from __future__ import annotations

import os
import shlex

from .config import config_backend
from .rllib import trainer as rllib_trainer
from .run_folder import CONFIG_FILE
from .sb3 import trainer as sb3_trainer
from .sb3.trainer import (
    SHIP_EVAL_FILES,
    SHIP_FILES,
    NoCheckpointError,
    TrainingInterrupted,
    TrainingWriteError,
    check_training_seeds,
    find_checkpoint,
    make_training_env,
    print_throughput,
    save_checkpoint,
    ship,
    train,
    training_seeds,
)

__all__ = ["NoCheckpointError", "TrainingInterrupted", "TrainingWriteError", "SHIP_FILES",
           "SHIP_EVAL_FILES",
           "make_training_env", "training_seeds", "check_training_seeds", "find_checkpoint",
           "save_checkpoint", "train", "print_throughput", "ship", "run_experiment",
           "resume_command"]


def run_experiment(config: str | os.PathLike | None = None, *, run_dir: str | None = None,
                   runs_root: str = "runs", resume: str | None = None,
                   n_timesteps: int | None = None, n_envs: int | None = None,
                   seed: int | None = None, eval_episodes: int | None = None,
                   evaluate: bool = True, video: bool = True, progress_bar: bool = True,
                   ship_result: bool = False, num_env_runners: int | None = None) -> dict:
    """Train (or resume), evaluate and optionally ship one run, with the config's backend.

    A config with ``backend: rllib`` runs :func:`orca_env.training.rllib.trainer.run_experiment`
    (``num_env_runners`` overrides its key), any other
    :func:`orca_env.training.sb3.trainer.run_experiment`; the arguments are theirs. On resume
    the run's saved ``config.yaml`` names the backend.

    Everything that can reject the run (the config, the env, the algorithm's arguments, the
    seeds, the ship name, the checkpoint to resume) is checked before the run folder is created
    or changed.

    Args:
        config: Training YAML (default: :data:`~orca_env.training.config.DEFAULT_CONFIG`);
            ignored on resume.
        run_dir: The run folder (default: a new ``<runs_root>/<name>_s<seed>_<time>``).
        runs_root: Where new run folders go.
        resume: A run folder to continue from its newest sound checkpoint, with its saved
            config.
        n_timesteps: Overrides ``n_timesteps`` (also on resume: the new budget).
        n_envs: Overrides ``n_envs``.
        seed: Overrides ``seed``.
        eval_episodes: Overrides ``eval.n_episodes``.
        evaluate: Run the final three-way comparison.
        video: Render the comparison's video.
        progress_bar: Show SB3's progress bar.
        ship_result: :func:`ship` the result under the config's name.
        num_env_runners: Overrides ``num_env_runners`` (backend rllib only; an error otherwise).

    Returns:
        ``{"run_dir", "stats" (training statistics), "results" (comparison reports or None)}``.

    Raises:
        ImportError: If the backend's training library is missing (the message names the
            extra).
        NoCheckpointError: If ``resume`` holds no usable checkpoint or model.
        ValueError: On a config, seed or ship name that training refuses.
        TrainingInterrupted: On SIGINT or SIGTERM, after saving a checkpoint.
        TrainingWriteError: When a file of the run cannot be written during training (a full
            disk), naming the newest complete checkpoint to resume from.
    """
    backend = config_backend(os.path.join(resume, CONFIG_FILE) if resume else config)
    pipeline = rllib_trainer if backend == "rllib" else sb3_trainer
    return pipeline.run_experiment(
        config, run_dir=run_dir, runs_root=runs_root, resume=resume, n_timesteps=n_timesteps,
        n_envs=n_envs, seed=seed, eval_episodes=eval_episodes, evaluate=evaluate, video=video,
        progress_bar=progress_bar, ship_result=ship_result, num_env_runners=num_env_runners)


def resume_command(prog: str, run_dir: str) -> str:
    """The command that continues a run: ``python train.py --resume <run_dir>``."""
    cmd = f"python {prog}" if prog.endswith(".py") else prog
    return f"{cmd} --resume {shlex.quote(run_dir)}"
