"""Training of shared navigation policies with stable-baselines3, and their comparison.

* :mod:`~orca_env.training.config`: the training config schema, defaults, loading, validation.
* :mod:`~orca_env.training.run_folder`: run-folder layout and names, checkpoints, git info.
* :mod:`~orca_env.training.experiment`: the training env, training, resuming, shipping, and
  :func:`run_experiment` (the whole pipeline, returning a summary).
* :mod:`~orca_env.training.comparison`: the three-way comparison and its table.
* :mod:`~orca_env.training.cli`: :func:`main`, the command line of ``python train.py`` and
  ``orca-env train``.

Importing this package is light: stable-baselines3 and torch load when training starts.
"""

from __future__ import annotations

from .cli import main
from .config import DEFAULT_CONFIG, load_train_config
from .experiment import run_experiment

__all__ = ["main", "run_experiment", "load_train_config", "DEFAULT_CONFIG"]
