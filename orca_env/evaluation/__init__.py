"""Evaluation of policies on orca-env scenarios, episode logs and their replay.

* :mod:`~orca_env.evaluation.suite`: the frozen evaluation seeds, policy resolution,
  :func:`run_episode` and :func:`evaluate` (the whole evaluation, its report and output files).
* :mod:`~orca_env.evaluation.metrics`: the metric definitions, aggregates with 95% intervals
  (Wilson, Student-t), the canonical report JSON and its hash, the CSV and the text table.
* :mod:`~orca_env.evaluation.social`: the social-navigation metrics of the learned agents
  (clearance to humans, discomfort, personal-space intrusion, time to collision, path and
  motion), computed from the positions of every step.
* :mod:`~orca_env.evaluation.plots`: trajectory plots of recorded episodes (matplotlib).
* :mod:`~orca_env.evaluation.episode_log`: episode logs (record, save, load) and their replay.

The command line (``orca-env eval``, ``orca-env replay``, or ``python -m orca_env ...``) is
:mod:`orca_env.cli`. A policy given as ``package.module:callable`` is imported and called: that
is the plug-in mechanism and it runs arbitrary code (see :mod:`~orca_env.evaluation.suite`).
"""

from __future__ import annotations

from .episode_log import LOG_FORMAT, EpisodeLog, EpisodeRecorder, load_log, replay, snapshot
from .metrics import (
    ALL_METRICS,
    ARRIVAL_TIMES,
    METRICS,
    OVERLAP_METRICS,
    SOCIAL_METRICS,
    aggregate,
    format_ci,
    format_table,
    paired_time_ratio,
    report_hash,
    report_json,
    t95,
    wilson95,
    write_csv,
)
from .plots import plot_trajectories, trajectory_figure
from .suite import (
    DEFAULT_LOADER,
    EVAL_SEED_BASE,
    EVAL_SEEDS,
    REPORT_FORMAT,
    OrcaPolicy,
    Policy,
    RandomPolicy,
    eval_seeds,
    evaluate,
    is_eval_seed,
    resolve_policy,
    run_episode,
)

__all__ = [
    # suite
    "EVAL_SEED_BASE", "EVAL_SEEDS", "DEFAULT_LOADER", "REPORT_FORMAT", "Policy", "OrcaPolicy",
    "RandomPolicy", "eval_seeds", "is_eval_seed", "resolve_policy", "run_episode", "evaluate",
    # metrics
    "METRICS", "OVERLAP_METRICS", "SOCIAL_METRICS", "ALL_METRICS", "ARRIVAL_TIMES", "t95",
    "wilson95", "aggregate", "paired_time_ratio", "format_ci", "report_json", "report_hash",
    "write_csv", "format_table",
    # plots
    "plot_trajectories", "trajectory_figure",
    # episode logs
    "LOG_FORMAT", "EpisodeLog", "EpisodeRecorder", "load_log", "replay", "snapshot",
]
