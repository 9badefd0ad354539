"""A stable-baselines3 ``VecEnv`` in which every learned agent is one batch entry.

Parameter sharing: ``n_envs`` copies of :class:`orca_env.OrcaEnv`, each with ``L`` learned
agents (``len(possible_agents)``), give a ``VecEnv`` of fixed size ``num_envs = n_envs * L``.
Entry ``e * L + k`` is agent ``agent_k`` of copy ``e``. One policy acts for all entries.

Agents that finish early (absorbing state, one episode per agent)
------------------------------------------------------------------
Agents terminate at different steps (goal reached, collision) while their copy's episode goes on.
A ``VecEnv`` entry cannot pause, and reporting ``done`` for it would start a new episode in
``VecMonitor`` that does not exist. So a finished agent enters an **absorbing state**:

* On the step it terminates, its entry reports its real reward, ``done = False``, and from the
  next observation on it observes the absorbing observation (all zeros: never a real observation,
  whose radius and max-speed features are positive) and earns reward 0; its actions are ignored.
* When the copy's episode ends (every agent terminated or truncated), **all** ``L`` entries of the
  copy report ``done = True`` together, with ``infos[i]["terminal_observation"]`` (the agent's real
  last observation if it finished on this step, the absorbing one otherwise) and
  ``infos[i]["TimeLimit.truncated"]`` (True only for an agent truncated on this step, so SB3
  bootstraps from its terminal observation). The copy is then reset (auto-reset, as
  ``DummyVecEnv``) and the entries observe the new episode.

Hence ``VecMonitor`` (and ``evaluate_policy``/``EvalCallback``) counts **exactly one episode per
agent per env episode**; its episode return is the agent's return (absorbing steps add 0) and its
episode length is the copy's episode length. The agent's own length and final status are in
``infos[i]["agent_episode"] = {"r", "l", "status"}`` on the final step. For the learner the
absorbing steps are correct MDP semantics: after termination the return is 0 and V(absorbing) is
learned as 0 (they cost some samples, reported by :attr:`SB3VecEnv.live_fraction`).

Seeding
-------
``seed(s)`` makes copy ``e`` reset with seed ``s + e`` at the next ``reset()``; later auto-resets
continue each copy's own generator, so a run is a deterministic function of ``s`` (two
``PPO(seed=s)`` runs give identical weights). ``seed`` returns one seed per entry (its copy's),
as SB3 expects; ``seed(None)`` draws the base seed from fresh OS entropy, never from
``np.random``.

Actions are passed to the env unchanged: the env reads them in the frame of the observation
(goal-aligned by default), so one shared policy acts the same way for every agent.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices, VecEnvStepReturn

__all__ = ["SB3VecEnv", "make_vec_env"]


class SB3VecEnv(VecEnv):
    """``n_envs`` env copies, one ``VecEnv`` entry per learned agent (see the module docstring).

    Args:
        env_fns: One callable per copy returning a new :class:`orca_env.OrcaEnv`; every copy
            must have the same agents and spaces.

    Attributes:
        envs: The env copies.
        agents_per_env: ``L``, learned agents per copy.
        step_seconds: Wall time spent in ``step_wait`` (env stepping and bookkeeping).
        entry_steps: Entry-steps taken (``num_envs`` per ``step``).
        agent_steps: Steps of live agents (entries not in the absorbing state).
    """

    def __init__(self, env_fns: Sequence[Callable[[], Any]]) -> None:
        if not env_fns:
            raise ValueError("env_fns must hold at least one env constructor")
        self.envs = [fn() for fn in env_fns]
        first = self.envs[0]
        self.agent_names = list(first.possible_agents)
        for e, env in enumerate(self.envs):
            if list(env.possible_agents) != self.agent_names:
                raise ValueError(f"env copy {e} has agents {env.possible_agents}, copy 0 has "
                                 f"{self.agent_names}; all copies must be alike")
        self.agents_per_env = len(self.agent_names)
        self.n_copies = len(self.envs)
        self._index = {a: k for k, a in enumerate(self.agent_names)}
        self._all_k = np.arange(self.agents_per_env, dtype=np.int64)
        obs_space = first.observation_space(self.agent_names[0])
        act_space = first.action_space(self.agent_names[0])
        for a in self.agent_names:
            if first.observation_space(a) != obs_space or first.action_space(a) != act_space:
                raise ValueError("parameter sharing needs every agent to have the same spaces; "
                                 f"{a!r} differs from {self.agent_names[0]!r}")
        super().__init__(self.n_copies * self.agents_per_env, obs_space, act_space)
        n, dim = self.num_envs, obs_space.shape[0]
        self._obs_dim = dim
        self.buf_obs = np.zeros((n, dim), dtype=np.float32)
        self.buf_rews = np.zeros(n, dtype=np.float32)
        self.buf_dones = np.zeros(n, dtype=bool)
        self.buf_infos: list[dict] = [{} for _ in range(n)]
        self._actions: np.ndarray | None = None
        c, ell = self.n_copies, self.agents_per_env
        self._alive = np.zeros((c, ell), dtype=bool)
        self._ret = np.zeros((c, ell))
        self._len = np.zeros((c, ell), dtype=np.int64)
        self._status: list[list[str]] = [["active"] * ell for _ in range(c)]
        self._copy_seeds: list[int | None] = [None] * c
        self.step_seconds = 0.0
        self.entry_steps = 0
        self.agent_steps = 0

    # -- helpers ---------------------------------------------------------------------------
    def _copy_of(self, i: int) -> int:
        return i // self.agents_per_env

    def _start_copy(self, e: int, obs: dict) -> None:
        """Fill the entries of copy ``e`` from a reset's observations."""
        base = e * self.agents_per_env
        self.buf_obs[base:base + self.agents_per_env] = 0.0
        for a, o in obs.items():
            self.buf_obs[base + self._index[a]] = o
        self._alive[e] = False
        self._alive[e, [self._index[a] for a in obs]] = True
        self._ret[e] = 0.0
        self._len[e] = 0
        self._status[e] = ["active"] * self.agents_per_env

    @property
    def live_fraction(self) -> float:
        """Share of entry-steps taken by live agents (the rest are absorbing steps)."""
        return self.agent_steps / self.entry_steps if self.entry_steps else 1.0

    # -- VecEnv API ------------------------------------------------------------------------
    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Copy ``e`` resets with ``seed + e`` at the next ``reset()``.

        Args:
            seed: Base seed; ``None`` draws one from fresh OS entropy (never from the global
                ``np.random`` state).

        Returns:
            One seed per entry (``num_envs`` of them, as SB3's ``VecEnv.seed`` promises): entry
            ``e * L + k`` gets its copy's seed ``seed + e``.
        """
        if seed is None:
            seed = int(np.random.SeedSequence().generate_state(1, dtype=np.uint32)[0])
        self._copy_seeds = [int(seed) + e for e in range(self.n_copies)]
        return [s for s in self._copy_seeds for _ in range(self.agents_per_env)]

    def reset(self) -> np.ndarray:
        """Reset every copy (with the seeds of :meth:`seed`, used once); returns all entries."""
        for e, env in enumerate(self.envs):
            opts = self._options[e * self.agents_per_env]
            kwargs = {"options": opts} if opts else {}
            obs, infos = env.reset(seed=self._copy_seeds[e], **kwargs)
            self._start_copy(e, obs)
            base = e * self.agents_per_env
            for a, inf in infos.items():
                self.reset_infos[base + self._index[a]] = inf
        self._copy_seeds = [None] * self.n_copies
        self._reset_seeds()
        self._reset_options()
        return self.buf_obs.copy()

    def step_async(self, actions: np.ndarray) -> None:
        """Store the actions ``(num_envs, 2)`` for :meth:`step_wait`."""
        self._actions = np.asarray(actions)

    def step_wait(self) -> VecEnvStepReturn:
        """Step every copy; see the module docstring for finished agents and auto-reset.

        The env's info dicts are handed to SB3 without a copy (the env builds new ones every
        step); the final step's entries get the terminal keys added to them.
        """
        t0 = time.perf_counter()
        acts_all = np.asarray(self._actions, dtype=np.float64).reshape(self.num_envs, -1)
        ell = self.agents_per_env
        index = self._index
        self.buf_rews[:] = 0.0
        self.buf_dones[:] = False
        infos: list[dict] = [{} for _ in range(self.num_envs)]
        live_steps = 0
        for e, env in enumerate(self.envs):
            base = e * ell
            live = list(env.agents)
            n_live = len(live)
            live_steps += n_live
            if n_live == ell:  # everyone live: env.agents is possible_agents, in order
                ks = self._all_k
                slots, kidx = slice(base, base + ell), slice(None)
            else:
                ks = np.array(list(map(index.__getitem__, live)), dtype=np.int64)
                slots, kidx = base + ks, ks
            obs, rews, terms, truncs, env_infos = env.step(
                dict(zip(live, acts_all[slots], strict=True)))
            r = np.array(list(map(rews.__getitem__, live)), dtype=np.float64)
            term = np.array(list(map(terms.__getitem__, live)), dtype=bool)
            trunc = np.array(list(map(truncs.__getitem__, live)), dtype=bool)
            self.buf_rews[slots] = r
            self._ret[e, kidx] += r
            self._len[e, kidx] += 1
            fin = term | trunc
            if n_live:
                o = np.array(list(map(obs.__getitem__, live)), dtype=np.float32)
                self.buf_obs[slots] = o
            if n_live == ell:
                infos[base:base + ell] = map(env_infos.__getitem__, live)
            else:
                for slot, a in zip(slots.tolist(), live, strict=True):
                    infos[slot] = env_infos[a]
            last_obs = {}
            finished_now = np.zeros(ell, dtype=bool)
            truncated_now = np.zeros(ell, dtype=bool)
            if fin.any():
                ks_fin = ks[fin]
                self.buf_obs[base + ks_fin] = 0.0  # absorbing observation from now on
                self._alive[e, ks_fin] = False
                finished_now[ks_fin] = True
                truncated_now[ks_fin] = trunc[fin] & ~term[fin]
                status = self._status[e]
                for j in np.flatnonzero(fin).tolist():
                    a, k = live[j], int(ks[j])
                    # An agent's final status is the one of the step it finished on.
                    status[k] = env_infos[a].get("status", "active")
                    last_obs[k] = o[j]
            if not env.agents:  # the copy's episode ended: every entry is done
                zeros = np.zeros(self._obs_dim, np.float32)
                for k in range(ell):
                    info = infos[base + k]
                    info["terminal_observation"] = np.array(last_obs.get(k, zeros),
                                                            dtype=np.float32)
                    info["TimeLimit.truncated"] = bool(truncated_now[k])
                    info["agent_episode"] = {"r": float(self._ret[e, k]),
                                             "l": int(self._len[e, k]),
                                             "status": self._status[e][k]}
                self.buf_dones[base:base + ell] = True
                new_obs, new_infos = env.reset()
                self._start_copy(e, new_obs)
                for a, inf in new_infos.items():
                    self.reset_infos[base + index[a]] = inf
        self.buf_infos = infos
        self.entry_steps += self.num_envs
        self.agent_steps += live_steps
        self.step_seconds += time.perf_counter() - t0
        return self.buf_obs.copy(), self.buf_rews.copy(), self.buf_dones.copy(), infos

    def close(self) -> None:
        """Close every copy."""
        for env in self.envs:
            env.close()

    def get_images(self) -> Sequence[np.ndarray | None]:
        """One ``rgb_array`` frame per env copy (not per entry)."""
        if self.render_mode != "rgb_array":
            warnings.warn(f"The render mode is {self.render_mode}, but get_images() needs "
                          f"'rgb_array'", stacklevel=2)
            return [None for _ in self.envs]
        return [env.render() for env in self.envs]

    def _copies(self, indices: VecEnvIndices) -> list[int]:
        return [self._copy_of(i) for i in self._get_indices(indices)]

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """Attribute of the copy that holds each requested entry."""
        if not hasattr(self, "envs"):
            return []
        return [getattr(self.envs[c], attr_name) for c in self._copies(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Set an attribute on each copy holding a requested entry (once per copy)."""
        for c in sorted(set(self._copies(indices))):
            setattr(self.envs[c], attr_name, value)

    def env_method(self, method_name: str, *method_args, indices: VecEnvIndices = None,
                   **method_kwargs) -> list[Any]:
        """Call a method once per copy holding a requested entry; one result per entry."""
        copies = self._copies(indices)
        results = {c: getattr(self.envs[c], method_name)(*method_args, **method_kwargs)
                   for c in sorted(set(copies))}
        return [results[c] for c in copies]

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        """The copies are PettingZoo envs, never wrapped in gymnasium wrappers."""
        return [False for _ in self._get_indices(indices)]


def make_vec_env(config: Any = None, n_envs: int = 1, render_mode: str | None = None,
                 **env_kwargs: Any) -> SB3VecEnv:
    """``n_envs`` copies of ``orca_env.parallel_env(config, **env_kwargs)`` as one ``SB3VecEnv``.

    Args:
        config: Env config (YAML path, dict or ``EnvConfig``).
        n_envs: Number of env copies (``num_envs = n_envs * learned agents``); must be >= 1.
        render_mode: ``None`` or ``"rgb_array"`` (for ``VecVideoRecorder``).
        **env_kwargs: Overrides of config keys, and ``infos`` (default ``"compact"``: the
            adapter reads only ``status``; pass ``"full"`` for callbacks that log reward terms
            or ORCA telemetry).
    """
    from ..environment import parallel_env  # noqa: PLC0415  (keeps this module light to import)

    if not isinstance(n_envs, int) or n_envs < 1:
        raise ValueError(f"n_envs must be a positive integer, got {n_envs!r}")
    if render_mode is not None:
        env_kwargs["render_mode"] = render_mode
    env_kwargs.setdefault("infos", "compact")
    return SB3VecEnv([lambda: parallel_env(config, **env_kwargs) for _ in range(n_envs)])
