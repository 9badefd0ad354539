"""Reward terms: the built-in ones (numba) and the weights of a scenario's own terms.

The reward of a learned agent on a step is the sum of its weighted terms. The built-in terms,
their raw values and default weights are documented on :class:`orca_env.config.RewardConfig`;
a scenario may add terms of its own (``Scenario.EXTRA_REWARDS`` and
``Scenario.reward_terms``, see :mod:`orca_env.scenarios.base` and ``docs/extending.md``).
``infos[agent]['reward_terms']`` reports every weighted term by name; they sum to the reward.

Adding a built-in term: its name in :data:`TERMS`, its weight as a field of ``RewardConfig``
(same name), its raw value in :func:`reward_terms`.
"""

from __future__ import annotations

import functools
import math
import numbers
from collections.abc import Mapping

import numpy as np
from numba import njit

__all__ = ["TERMS", "progress", "reward_terms", "term_dicts", "extra_weights"]

#: Built-in reward terms, in the order of the ``(k, len(TERMS))`` term matrix.
TERMS = ("progress", "goal", "collision", "deadlock", "intervention", "time", "discomfort")


def term_dicts(weighted: np.ndarray, names: tuple[str, ...] = TERMS) -> list[dict]:
    """One ``{term: weighted value}`` dict per row of a ``(k, len(names))`` term matrix."""
    return _dict_builder(tuple(names))(weighted.tolist())


@functools.lru_cache(maxsize=64)
def _dict_builder(names: tuple[str, ...]):
    """``rows -> [{names[0]: row[0], ...}, ...]`` as a dict display, compiled once per names.

    Building ``infos`` is the env's largest per-agent Python cost, and a dict display is 1.7x
    faster than ``dict(zip(names, row))``. The source holds only ``repr``-quoted names and row
    indices, so any name string is safe in it.
    """
    items = ", ".join(f"{name!r}: r[{i}]" for i, name in enumerate(names))
    return eval(f"lambda rows: [{{{items}}} for r in rows]", {})  # noqa: S307


def extra_weights(declared: Mapping[str, float], configured: Mapping[str, object],
                  scenario: str) -> np.ndarray:
    """Weights of a scenario's own reward terms, in the scenario's order.

    Args:
        declared: ``Scenario.EXTRA_REWARDS``: term name -> default weight.
        configured: The config's ``rewards.extra``: term name -> weight (overrides).
        scenario: The scenario's name, for error messages.

    Returns:
        ``(len(declared),)`` float64 weights.

    Raises:
        ValueError: On a name the scenario does not declare, or a weight that is not a finite
            number (the message names the key).
    """
    for name, w in configured.items():
        key = f"rewards.extra.{name}"
        if name not in declared:
            raise ValueError(f"unknown config key {key!r}: scenario {scenario} declares the "
                             f"extra reward terms {sorted(declared)}")
        if isinstance(w, bool) or not isinstance(w, numbers.Real) or not math.isfinite(w):
            raise ValueError(f"config key {key!r} must be a finite number, got {w!r}")
    return np.array([float(configured.get(n, d)) for n, d in declared.items()], dtype=np.float64)


@njit(cache=True, no_cfunc_wrapper=True)
def progress(live, d_prev, path_len, d0, out):
    """The progress stage: fraction of the initial distance covered this step, per agent.

    The one writer of ``d_prev``: it moves on to the current remaining distance.

    Args:
        live: (L,) int64 slots.
        d_prev: (n,) float64 remaining distance at the previous step, m; updated in place.
        path_len: (n,) float64 remaining distance now, m.
        d0: (n,) float64 initial distance, m.
        out: (L,) float64 output.
    """
    for k in range(live.shape[0]):
        i = live[k]
        out[k] = (d_prev[i] - path_len[i]) / d0[i]
        d_prev[i] = path_len[i]


@njit(cache=True, no_cfunc_wrapper=True)
def reward_terms(live, progress, reached, collided, stalled, intervention, max_speed, time_step,
                 sep_agents, discomfort_dist, weights, weighted, reward):
    """Weighted built-in reward terms (order of ``TERMS``) and rewards of the live agents.

    Args:
        live: (L,) int64 slots.
        progress: (L,) float64 raw progress term (:func:`progress`).
        reached: (L,) bool, the agent succeeded this step (reached its goal, no collision that
            ends its episode).
        collided: (L,) bool.
        stalled: (n,) bool.
        intervention: (n,) float64 |safe - preferred velocity|, m/s.
        max_speed: (n,) float64, m/s.
        time_step: s.
        sep_agents: (L,) float64 clearance to the nearest agent, m (the proximity stage).
        discomfort_dist: m.
        weights: (len(TERMS),) float64.
        weighted: (L, len(TERMS)) float64 output.
        reward: (L,) float64 output.
    """
    for k in range(live.shape[0]):
        i = live[k]
        sep = sep_agents[k]
        discomfort = (discomfort_dist - sep) * time_step if sep < discomfort_dist else 0.0
        raws = (progress[k], 1.0 if reached[k] else 0.0, 1.0 if collided[k] else 0.0,
                1.0 if stalled[i] else 0.0, intervention[i] / max_speed[i], time_step,
                discomfort)
        total = 0.0
        for t in range(len(raws)):
            w = raws[t] * weights[t] + 0.0  # + 0.0 turns -0.0 into 0.0
            weighted[k, t] = w
            total += w
        reward[k] = total
