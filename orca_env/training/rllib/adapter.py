"""An RLlib ``MultiAgentEnv`` (new API stack) around :class:`orca_env.OrcaEnv`.

RLlib's own ``ParallelPettingZooEnv`` sets ``__all__`` to ``all(terminateds)`` and
``all(truncateds)``; on a step where some agents terminate (goal, collision) and the rest are
truncated (time limit, deadlock) both are ``False``, RLlib's vector env does not reset, and the
next step runs on a finished env. :class:`OrcaRLlibEnv` fixes that and sets up what RLlib needs:

Episode end
-----------
Per-agent ``terminateds``/``truncateds`` are the env's. ``"__all__"`` is in both dicts on every
step; it is ``True`` in exactly one of them once no live agent remains (``env.agents`` empty):
in ``truncateds`` when every agent that finished on that step was truncated, otherwise in
``terminateds`` (a mixed step, or all terminated). Either ends RLlib's episode and resets the
copy. A ``step`` after that raises ``RuntimeError`` until ``reset``. The per-agent flags handed
to RLlib are the truthful ones, but RLlib 2.60's ``MultiAgentEpisode`` marks every agent of the
last step terminated once all agents are done (its "case 2"; also when all were truncated), so a
time-limit truncation on the last step reaches the learner as a termination (no value
bootstrap). The SB3 adapter bootstraps it unless its ``bootstrap`` setting says otherwise.

Agents that leave
-----------------
An agent that terminates or is truncated is in that step's dicts (its last observation and
reward) and absent from every later dict; ``agents`` is the live agents (``env.agents``),
``possible_agents`` all learned agents. Actions for agents that already left are ignored; an
action for a name that is not an agent is a ``ValueError``. Actions are clipped to the action box
(RLlib samples Gaussian actions; the env would warn once per episode).

Spaces
------
``observation_spaces``/``action_spaces`` map every possible agent to its ``Box``
(``get_observation_space(agent)`` is RLlib's accessor); ``observation_space``/``action_space``
are the ``Dict`` of them, for RLlib's checks.

Seeding
-------
With ``env_config["seed"] = s`` the copy's own seed is ``s + e``, where ``e`` is its global copy
index ``(max(worker_index, 1) - 1) * envs_per_runner + vector_index`` (remote env runners are
numbered from 1; the local one, 0, samples only without remote ones). A ``reset`` with a seed
(RLlib passes one on an env runner's first reset: ``config.seed + worker_index + i``, which
repeats across runners when they run several envs) resets the copy with ``s + e`` instead, so
the first episode of every copy is fixed by ``s`` and ``e`` alone; a ``reset`` without a seed
continues the copy's own generator. A run is then a deterministic function of ``s`` (and the
runner layout), as with the SB3 adapter's ``seed + e``. Without ``env_config["seed"]`` a
``reset(seed=...)`` seeds the env with that seed, as gymnasium's API says.

Example::

    from orca_env.training.rllib.adapter import (OrcaRLlibEnv, SHARED_MODULE_ID,
                                                 shared_policy_mapping)
    config = (PPOConfig()
              .environment(OrcaRLlibEnv, env_config={"env": "circle_dense", "seed": 0})
              .multi_agent(policies={SHARED_MODULE_ID},
                           policy_mapping_fn=shared_policy_mapping))

Importing this module imports ray (``pip install 'orca-env[rllib]'``); ``orca_env.wrappers``
imports it only when ``OrcaRLlibEnv`` is asked for, and the RLlib trainer and loader
(:mod:`orca_env.training.rllib`) only when a run starts or a policy is built.
"""

from __future__ import annotations

import numbers
from typing import Any

import gymnasium as gym
import numpy as np
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from orca_env.environment import parallel_env

__all__ = ["OrcaRLlibEnv", "SHARED_MODULE_ID", "ENV_CONFIG_KEYS", "shared_policy_mapping",
           "copy_index", "limit_torch_threads"]

#: The module every learned agent maps to (one shared policy).
SHARED_MODULE_ID = "shared"
#: Keys of the adapter's ``env_config``.
ENV_CONFIG_KEYS = ("env", "overrides", "seed", "envs_per_runner", "infos")


def shared_policy_mapping(agent_id: str, episode: Any = None, **kwargs: Any) -> str:
    """RLlib ``policy_mapping_fn``: every agent maps to :data:`SHARED_MODULE_ID`."""
    return SHARED_MODULE_ID


def limit_torch_threads(num_threads: int, **kwargs: Any) -> None:
    """``torch.set_num_threads(num_threads)``, for every env runner process.

    Used as RLlib's ``on_environment_created`` callback through ``functools.partial``.
    """
    import torch  # noqa: PLC0415

    torch.set_num_threads(int(num_threads))


def copy_index(worker_index: int, vector_index: int, envs_per_runner: int) -> int:
    """The global index of an env copy from RLlib's worker and vector indices.

    Remote env runners are numbered ``1..N`` and the local one ``0`` (it samples only when there
    are no remote ones), so runner ``w`` holds copies ``(max(w, 1) - 1) * envs_per_runner + v``.
    """
    return (max(int(worker_index), 1) - 1) * int(envs_per_runner) + int(vector_index)


def _seed_arg(name: str, value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise ValueError(f"{name} must be None or a non-negative integer, got {value!r}")
    return int(value)


class OrcaRLlibEnv(MultiAgentEnv):
    """One :class:`orca_env.OrcaEnv` as an RLlib ``MultiAgentEnv`` (see the module docstring).

    Args:
        config: RLlib's ``env_config`` (an ``EnvContext``, which adds ``worker_index`` and
            ``vector_index``, or a plain dict). Keys: ``env`` (env config: YAML path, shipped
            name, dict or ``EnvConfig``; default the env's defaults), ``overrides`` (config keys
            as keywords, a dict), ``seed`` (base seed, see Seeding), ``envs_per_runner``
            (RLlib's ``num_envs_per_env_runner``, for the copy index; default 1), ``infos``
            (``"compact"``, the default for training, or ``"full"``).

    Attributes:
        env: The wrapped ``OrcaEnv``.
        copy_index: This copy's global index ``e``.
        base_seed: ``seed + e``, or ``None`` without a seed.
    """

    def __init__(self, config: dict | None = None) -> None:
        config = {} if config is None else config
        if not isinstance(config, dict):
            raise ValueError(f"config must be a dict (RLlib's env_config), got {config!r}")
        unknown = sorted(set(config) - set(ENV_CONFIG_KEYS))
        if unknown:
            raise ValueError(f"unknown env_config key {unknown[0]!r}; valid keys: "
                             f"{list(ENV_CONFIG_KEYS)}")
        overrides = config.get("overrides") or {}
        if not isinstance(overrides, dict):
            raise ValueError(f"env_config key 'overrides' must be a dict, got {overrides!r}")
        per_runner = config.get("envs_per_runner", 1)
        if isinstance(per_runner, bool) or not isinstance(per_runner, int) or per_runner < 1:
            raise ValueError(f"env_config key 'envs_per_runner' must be a positive integer, "
                             f"got {per_runner!r}")
        seed = _seed_arg("env_config key 'seed'", config.get("seed"))
        super().__init__()
        self.env = parallel_env(config.get("env"), infos=config.get("infos", "compact"),
                                **overrides)
        self.copy_index = copy_index(getattr(config, "worker_index", 0),
                                     getattr(config, "vector_index", 0), per_runner)
        self.base_seed = None if seed is None else seed + self.copy_index
        self.possible_agents = list(self.env.possible_agents)
        self.agents = []
        self._agent_ids = set(self.possible_agents)
        self.observation_spaces = {a: self.env.observation_space(a) for a in self.possible_agents}
        self.action_spaces = {a: self.env.action_space(a) for a in self.possible_agents}
        self.observation_space = gym.spaces.Dict(self.observation_spaces)
        self.action_space = gym.spaces.Dict(self.action_spaces)
        first = self.action_spaces[self.possible_agents[0]]
        self._low, self._high = first.low, first.high
        self._done = True

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Start an episode (see Seeding in the module docstring for which seed is used).

        Returns:
            ``(observations, infos)`` of every learned agent.
        """
        seed = _seed_arg("seed", seed)
        if seed is not None and self.base_seed is not None:
            seed = self.base_seed
        elif seed is None and self.base_seed is not None and self.env.np_random is None:
            seed = self.base_seed  # never seeded yet: the copy's own seed, not entropy
        obs, infos = self.env.reset(seed=seed, options=options)
        self.agents = list(self.env.agents)
        self._done = False
        return obs, infos

    def step(self, action_dict: dict):
        """Step the live agents; ``__all__`` as in the module docstring.

        Raises:
            RuntimeError: After the episode ended (``__all__`` was True) or before ``reset``.
            ValueError: On an action for a name that is not an agent, or a missing live agent.
        """
        if self._done:
            raise RuntimeError("step() called after the episode ended (__all__ was True) or "
                               "before reset(); call reset()")
        live = self.env.agents
        extra = [a for a in action_dict if a not in self._agent_ids]
        if extra:
            raise ValueError(f"action_dict has an action for {extra[0]!r}, which is not an "
                             f"agent; agents: {self.possible_agents}")
        missing = [a for a in live if a not in action_dict]
        if missing:
            raise ValueError(f"action_dict has no action for the live agent {missing[0]!r}")
        acts = {a: np.clip(np.asarray(action_dict[a], dtype=np.float32), self._low, self._high)
                for a in live}
        obs, rews, terms, truncs, infos = self.env.step(acts)
        self.agents = list(self.env.agents)
        over = not self.agents
        all_truncated = over and all(truncs[a] and not terms[a] for a in truncs)
        terms["__all__"] = over and not all_truncated
        truncs["__all__"] = all_truncated
        self._done = over
        return obs, rews, terms, truncs, infos

    def get_observation_space(self, agent_id: str):
        """The observation ``Box`` of ``agent_id``."""
        return self.observation_spaces[agent_id]

    def get_action_space(self, agent_id: str):
        """The action ``Box`` of ``agent_id``."""
        return self.action_spaces[agent_id]

    def render(self):
        """The wrapped env's ``render()``."""
        return self.env.render()

    def close(self) -> None:
        """Close the wrapped env."""
        self.env.close()
