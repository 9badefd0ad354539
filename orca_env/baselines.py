"""Scripted baseline policies: pure ORCA and uniform random.

Both act on the env's observation dicts like any policy (``policy(observations, env) ->
actions``, see :mod:`orca_env.evaluation`) and draw their randomness from a generator re-seeded
at every episode from the env's seed, so an episode depends only on its seed. The evaluation
suite's built-in ``orca``, ``orca_margin`` and ``random`` are these classes;
``orca_env.policies.orca`` and ``orca_env.policies.random`` re-export them beside the
trained-model loader.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

__all__ = ["ORCA_MARGIN", "OrcaMarginPolicy", "OrcaPolicy", "RandomPolicy", "episode_rng"]

#: The safety margin (metres) of the evaluation suite's ``orca_margin`` baseline: pure ORCA
#: whose agents' ORCA radius is their radius + this (``learned_orca_padding``), the margin every
#: shipped generalist deploys with. Against it, a learned policy's gain is the learning's alone,
#: not the margin's.
ORCA_MARGIN = 0.1


def episode_rng(seed: int, env: Any) -> np.random.Generator:
    """A policy's generator for the env's current episode.

    Keyed by the env's seed and by how many episodes ran since that seed
    (``env.seed_episode``), so an episode's noise depends only on how the env was seeded, and
    episodes after ``reset(seed=None)`` get fresh noise instead of repeating the last one.
    """
    return np.random.default_rng(
        [int(seed), int(env.np_random_seed or 0), int(getattr(env, "seed_episode", 0))]
    )


class OrcaPolicy:
    """Pure ORCA for the learned agents (RVO2's ``setPreferredVelocities`` of its examples).

    The action is the env's goal-directed preferred velocity (towards the goal, or the next
    waypoint with guidance, shortened to ``pref_speed``; :meth:`OrcaEnv.heuristic_actions`) plus
    RVO2's symmetry-breaking perturbation: a vector of magnitude ``U(0, noise)`` m/s in a uniform
    direction, per agent and step. With the safety layer on, the env's ORCA then filters it, so
    these agents behave exactly like the env's ``orca`` crowd population.

    The noise is reproducible: its generator is re-seeded at every new episode by
    :func:`episode_rng`, so the same env seed gives the same episode whatever ran before.

    Args:
        noise: Magnitude bound (m/s) of the perturbation; RVO2's Blocks example uses 1e-4.
            Larger breaks symmetric deadlocks sooner but makes paths less smooth; must be >= 0.
        seed: Extra seed mixed into the per-episode generator.
    """

    name = "orca+noise"

    def __init__(self, noise: float = 1e-4, seed: int = 0) -> None:
        if not noise >= 0.0:
            raise ValueError(f"noise must be >= 0, got {noise!r}")
        self.noise = float(noise)
        self.seed = int(seed)
        self._episode = None
        self._rng = np.random.default_rng(self.seed)

    def __call__(self, observations: dict, env: Any) -> dict:
        """Actions of the live agents (``env.agents``)."""
        if env.sim is not self._episode:  # a new episode: the env builds a new simulator
            self._episode = env.sim
            self._rng = episode_rng(self.seed, env)
        base = env.heuristic_actions()
        agents = [k for k in env.agents if k in observations]  # only live agents act
        if not agents:
            return {}
        a = np.array([base[k] for k in agents], dtype=np.float64)
        if self.noise > 0.0:
            ang = self._rng.uniform(0.0, 2.0 * np.pi, len(agents))
            mag = self._rng.uniform(0.0, 1.0, len(agents)) * self.noise
            max_speed = _max_speeds(env, agents)  # actions are in units of max speed
            if env.episode_config.action == "residual":
                max_speed = 2.0 * max_speed  # a residual is in units of twice the max speed
            a[:, 0] += mag * np.cos(ang) / max_speed
            a[:, 1] += mag * np.sin(ang) / max_speed
        np.clip(a, -1.0, 1.0, out=a)
        return {k: a[i].astype(np.float32) for i, k in enumerate(agents)}


class OrcaMarginPolicy(OrcaPolicy):
    """Pure ORCA with :data:`ORCA_MARGIN`: the evaluation suite's built-in ``orca_margin``.

    The margin is the env's, not the policy's: ``learned_orca_padding`` pads the learned
    agents' ORCA radius inside the env's safety layer, so this policy acts exactly as
    :class:`OrcaPolicy` and the env must be built with ``learned_orca_padding=ORCA_MARGIN``.
    ``orca-env eval``, ``orca-env bench`` and :func:`orca_env.evaluation.evaluate` build it so
    (the policy's settings, :func:`orca_env.evaluation.suite.policy_settings`); in an env
    with another margin (an override, or an env built by hand) the first episode warns that
    these are pure ORCA's episodes with that margin.
    """

    name = "orca_margin"
    _warned = False  # the different-margin warning is given once per policy

    def __call__(self, observations: dict, env: Any) -> dict:
        """Actions of the live agents (``env.agents``); warns once about a different margin."""
        if env.sim is not self._episode and not self._warned:
            margin = env.episode_config.learned_orca_padding
            if margin != ORCA_MARGIN:
                self._warned = True
                warnings.warn(f"orca_margin: the env runs learned_orca_padding={margin!r}, not "
                              f"the baseline's {ORCA_MARGIN} m, so these are pure ORCA's "
                              f"episodes with that margin; build the env with "
                              f"learned_orca_padding={ORCA_MARGIN} (orca-env eval and bench "
                              f"do it unless --set overrides it)", UserWarning, stacklevel=2)
        return super().__call__(observations, env)


def _max_speeds(env: Any, agents: list) -> np.ndarray:
    """Max speed (m/s) of each agent: actions are in units of it."""
    slots = env.learned_slots[[env.possible_agents.index(k) for k in agents]]
    return env.max_speeds[slots]


class RandomPolicy:
    """Actions drawn uniformly from each agent's action box.

    The generator is re-seeded at every new episode by :func:`episode_rng`, so an episode
    depends only on how the env was seeded.

    Args:
        seed: Extra seed mixed into the per-episode generator.
    """

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.seed = int(seed)
        self._episode = None
        self._rng = np.random.default_rng(self.seed)

    def __call__(self, observations: dict, env: Any) -> dict:
        """Actions of the live agents (``env.agents``)."""
        if env.sim is not self._episode:
            self._episode = env.sim
            self._rng = episode_rng(self.seed, env)
        out = {}
        for k in env.agents:  # only live agents act
            sp = env.action_space(k)
            out[k] = self._rng.uniform(sp.low, sp.high).astype(np.float32)
        return out
