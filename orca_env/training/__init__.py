"""Training of shared navigation policies (stable-baselines3 or Ray RLlib), and their comparison.

Shared by both backends:

* :mod:`~orca_env.training.config`: the training config schema, defaults, loading, validation.
* :mod:`~orca_env.training.run_folder`: run-folder layout and names, checkpoints, git info.
* :mod:`~orca_env.training.model_files`: model, normaliser and replay-buffer files, read
  without unpickling.
* :mod:`~orca_env.training.comparison`: the three-way comparison at the end of a run.
* :mod:`~orca_env.training.experiment`: :func:`~orca_env.training.experiment.run_experiment`,
  one run with the config's backend (returning a summary).
* :mod:`~orca_env.training.cli`: :func:`~orca_env.training.cli.main`, the command line of
  ``python train.py`` and ``orca-env train``.

One folder per backend, each with its env adapter, its trainer and its model loader:
:mod:`orca_env.training.sb3` and :mod:`orca_env.training.rllib`.

Importing this package imports its config schema only: the loaders (below the evaluation suite,
which ``orca_env.policies`` and evaluation use) and the trainers (above it) live in this package
too, so it must not import the trainers (``from orca_env.training.experiment import
run_experiment``, ``from orca_env.training.cli import main``). stable-baselines3, torch and ray
load when training starts or a model is loaded.
"""

from __future__ import annotations

from .config import DEFAULT_CONFIG, load_train_config

__all__ = ["load_train_config", "DEFAULT_CONFIG"]
