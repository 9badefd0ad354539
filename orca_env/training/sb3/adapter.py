"""A stable-baselines3 ``VecEnv`` in which every learned agent slot is one batch entry.

Parameter sharing: ``n_envs`` worlds of one config, each with ``L`` learned agents
(``len(possible_agents)``), give a ``VecEnv`` of fixed size ``num_envs = n_envs * L``. Entry
``b * L + k`` is agent ``agent_k`` of world ``b``. One policy acts for all entries.

Backends
--------
By default the worlds are one :class:`~orca_env.vector.OrcaVectorEnv`: every step of every world
goes through the step pipeline at once, arrays in and out, mixtures included. With
``render_mode`` the worlds are ``n_envs`` :class:`~orca_env.environment.OrcaEnv` copies
stepped one after another
(``backend="copies"``), with the same semantics and, world by world, the same numbers
(``tests/wrappers``).

Finished agents: one episode per agent, masked until their world resets
-----------------------------------------------------------------------
Agents finish (goal, collision, time limit) at different steps while their world goes on. An
entry reports ``done = True`` on the step its agent finishes, with
``infos[i]["terminal_observation"]`` (the agent's last real observation),
``infos[i]["TimeLimit.truncated"]`` (True when SB3 should bootstrap from the terminal
observation: see *Truncation and bootstrapping* below), ``infos[i]["episode"] = {"r", "l",
"t"}`` (the agent's own return and length, in the format of SB3's ``Monitor``) and
``infos[i]["agent_episode"] = {"r", "l", "status"}``. Until its world resets (when its last
agent finishes: Gymnasium's ``SAME_STEP`` autoreset) the entry is *not alive*: it observes
zeros, earns 0 and its actions are ignored.

Those steps are not samples of anything, so nothing learns from them:

* :attr:`SB3VecEnv.step_valid` says which entries acted on the last step. PPO built with
  ``rollout_buffer_class=MaskedRolloutBuffer`` (and :func:`attach_masks`) stores it with every
  row and hands only valid rows to the gradient steps. GAE never reads across a finished
  agent's ``done``, so the advantages of valid rows are those of the agent's own episode.
* Off-policy (SAC): ``replay_buffer_class=MaskedReplayBuffer`` stores every transition with
  its validity and samples valid ones only.
* :attr:`SB3VecEnv.obs_real` says which entries observe a real observation;
  :class:`MaskedVecNormalize` updates its running statistics with those rows only (and its
  return statistics with valid rows only).

Because the adapter reports ``Monitor``-style episodes itself, it needs no ``VecMonitor`` (one
would count the masked steps in the lengths; it warns when wrapped around this adapter). The
counters :attr:`~SB3VecEnv.entry_steps` and :attr:`~SB3VecEnv.agent_steps` give the share of
valid samples (:attr:`~SB3VecEnv.live_fraction`). Plain ``RolloutBuffer``/``VecNormalize`` still
work, training on the masked steps as an absorbing state (observation 0, reward 0).

Truncation and bootstrapping
----------------------------
An agent's episode is *truncated* (not terminated) when the time limit ends it, or when the
stall rule ends the world's episode because every remaining agent is stalled (status
``deadlocked``). SB3 adds ``gamma * V(terminal observation)`` to the last reward of an episode
whose ``TimeLimit.truncated`` is True, as if it went on. ``bootstrap`` says which truncations get
that (:data:`BOOTSTRAP_MODES`):

* ``"truncated"`` (default; what every shipped policy was trained with): both. Right for the time
  limit when the policy cannot see the time, but a deadlock end then costs the agent nothing
  beyond the per-step ``deadlock`` penalty: the value of its lost goal is added back.
* ``"time_limit"``: only the time limit; a deadlock end is terminal, so the agent learns that a
  frozen world forfeits its goal.
* ``"never"``: neither. With ``observation: {time: true}`` the time limit is part of what the
  policy sees, so running out of time is a real end of the task, not an interruption
  (Pardo et al. 2018, "Time Limits in Reinforcement Learning"); bootstrapping would hide it.

Seeding
-------
``seed(s)`` makes world ``b`` reset with seed ``s + b`` at the next ``reset()``; later
autoresets continue each world's own generator, so a run is a deterministic function of ``s``
(two ``PPO(seed=s)`` runs give identical weights). ``seed`` returns one seed per entry (its
world's), as SB3 expects; ``seed(None)`` draws the base seed from fresh OS entropy, never from
``np.random``.

Actions are passed to the env unchanged: the env reads them in the frame of the observation
(goal-aligned by default), so one shared policy acts the same way for every agent.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Generator, Sequence
from typing import Any

import numpy as np
from stable_baselines3.common.buffers import ReplayBuffer, RolloutBuffer
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.type_aliases import ReplayBufferSamples, RolloutBufferSamples
from stable_baselines3.common.vec_env import VecNormalize
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices, VecEnvStepReturn

from orca_env.codes import STATUSES, Status
from orca_env.environment import parallel_env
from orca_env.vector import OrcaVectorEnv

from ..config import BOOTSTRAP_MODES, check_bootstrap
from ..model_files import resolve_torch_threads, set_torch_threads

__all__ = ["SB3VecEnv", "make_vec_env", "MaskedRolloutBuffer", "MaskedReplayBuffer",
           "MaskedVecNormalize", "attach_masks", "BACKENDS", "BOOTSTRAP_MODES",
           "check_bootstrap"]

#: ``make_vec_env`` backends: ``auto`` picks ``vector`` when the config and mode allow it.
BACKENDS = ("auto", "vector", "copies")
_DEADLOCKED = int(Status.DEADLOCKED)


class _EnvCopies:
    """``B`` :class:`~orca_env.environment.OrcaEnv` copies behind ``OrcaVectorEnv``'s contract.

    The backend for rendering (``render_mode``), which the vector env does not do:
    rows ``b * L + k``, zero rows for finished agents, ``SAME_STEP`` autoreset and the ``info``
    arrays ``alive``, ``active``, ``final_obs``/``_final_obs``, ``world_reset`` and ``status``
    (:class:`~orca_env.codes.Status` codes), as :class:`~orca_env.vector.OrcaVectorEnv` gives
    them with ``infos=True``.
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
        obs_space = first.observation_space(self.agent_names[0])
        act_space = first.action_space(self.agent_names[0])
        for a in self.agent_names:
            if first.observation_space(a) != obs_space or first.action_space(a) != act_space:
                raise ValueError("parameter sharing needs every agent to have the same spaces; "
                                 f"{a!r} differs from {self.agent_names[0]!r}")
        self.single_observation_space, self.single_action_space = obs_space, act_space
        self.num_worlds = len(self.envs)
        self.num_agents_per_world = L = len(self.agent_names)
        self.num_envs = self.num_worlds * L
        self.render_mode = first.render_mode
        self._index = {a: k for k, a in enumerate(self.agent_names)}
        self._alive = np.zeros(self.num_envs, dtype=bool)
        self._code = {name: code for code, name in enumerate(STATUSES)}

    def _load(self, b: int, obs_d: dict, obs: np.ndarray) -> None:
        base = b * self.num_agents_per_world
        for a, o in obs_d.items():
            obs[base + self._index[a]] = o
            self._alive[base + self._index[a]] = True

    def reset(self, *, seed: Sequence[int | None]) -> tuple[np.ndarray, dict]:
        obs = np.zeros((self.num_envs, self.single_observation_space.shape[0]), np.float32)
        self._alive[:] = False
        for b, env in enumerate(self.envs):
            self._load(b, env.reset(seed=seed[b])[0], obs)
        return obs, {"alive": self._alive.copy()}

    def step(self, actions: np.ndarray) -> tuple:
        n, L = self.num_envs, self.num_agents_per_world
        obs = np.zeros((n, self.single_observation_space.shape[0]), np.float32)
        reward, term, trunc = np.zeros(n), np.zeros(n, bool), np.zeros(n, bool)
        status = np.zeros(n, np.int64)
        final = np.zeros_like(obs)
        active = self._alive.copy()
        world_reset = np.zeros(self.num_worlds, bool)
        index, code = self._index, self._code
        for b, env in enumerate(self.envs):
            live = list(env.agents)
            rows = [b * L + index[a] for a in live]
            o, r, te, tr, inf = env.step(dict(zip(live, actions[rows], strict=True)))
            for a, row in zip(live, rows, strict=True):
                reward[row], term[row], trunc[row] = r[a], te[a], tr[a]
                status[row] = code[inf[a]["status"]]
                if te[a] or tr[a]:
                    final[row] = o[a]
                    self._alive[row] = False
                else:
                    obs[row] = o[a]
            if not env.agents:
                world_reset[b] = True
                self._load(b, env.reset()[0], obs)
        fin = term | trunc
        info = {"alive": self._alive.copy(), "active": active, "world_reset": world_reset,
                "status": status}
        if fin.any():
            info["final_obs"], info["_final_obs"] = final, fin
        return obs, reward, term, trunc, info

    def close(self) -> None:
        for env in self.envs:
            env.close()


class SB3VecEnv(VecEnv):
    """``B`` worlds, one ``VecEnv`` entry per learned agent slot (see the module docstring).

    Args:
        worlds: An :class:`~orca_env.vector.OrcaVectorEnv` built with ``infos=True``, or a
            sequence of callables each returning a new :class:`orca_env.OrcaEnv` (the
            ``copies`` backend; every copy must have the same agents and spaces).
        bootstrap: Which truncated agent episodes are reported with ``TimeLimit.truncated``
            (SB3 bootstraps them): ``"truncated"`` (all), ``"time_limit"`` (not those ended by
            the stall rule) or ``"never"``; see the module docstring.

    Attributes:
        worlds: The backend (``OrcaVectorEnv`` or the copies).
        envs: The ``OrcaEnv`` copies (``copies`` backend only; ``[]`` otherwise).
        agents_per_env: ``L``, learned agents per world.
        step_valid: ``(num_envs,)`` bool, the entries whose agent acted on the last step.
        obs_real: ``(num_envs,)`` bool, the entries whose last observation is real.
        step_seconds: Wall time spent in ``step_wait`` (env stepping and bookkeeping).
        entry_steps: Entry-steps taken (``num_envs`` per ``step``).
        agent_steps: Valid entry-steps (agents that acted).
    """

    def __init__(self, worlds: Any, bootstrap: str = "truncated") -> None:
        self.bootstrap = check_bootstrap(bootstrap)
        if isinstance(worlds, OrcaVectorEnv):
            if not worlds.infos:
                raise ValueError("SB3VecEnv needs an OrcaVectorEnv built with infos=True (it "
                                 "reports each agent's final status)")
            self.envs: list = []
        else:
            worlds = _EnvCopies(worlds)
            self.envs = worlds.envs
        self.worlds = worlds
        self.agents_per_env = worlds.num_agents_per_world
        self.n_copies = worlds.num_worlds
        self.agent_names = [f"agent_{k}" for k in range(self.agents_per_env)]
        obs_space, act_space = worlds.single_observation_space, worlds.single_action_space
        super().__init__(worlds.num_envs, obs_space, act_space)
        n = self.num_envs
        self._actions: np.ndarray | None = None
        self._world_seeds: list[int | None] = [None] * self.n_copies
        self._ret = np.zeros(n)
        self._len = np.zeros(n, dtype=np.int64)
        self._t0 = time.perf_counter()
        self.step_valid = np.ones(n, dtype=bool)
        self.obs_real = np.ones(n, dtype=bool)
        self.step_seconds = 0.0
        self.entry_steps = 0
        self.agent_steps = 0

    @property
    def live_fraction(self) -> float:
        """Share of entry-steps taken by agents that acted (the rest are masked steps)."""
        return self.agent_steps / self.entry_steps if self.entry_steps else 1.0

    # -- VecEnv API ------------------------------------------------------------------------
    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """World ``b`` resets with ``seed + b`` at the next ``reset()``.

        Args:
            seed: Base seed; ``None`` draws one from fresh OS entropy (never from the global
                ``np.random`` state).

        Returns:
            One seed per entry (``num_envs`` of them, as SB3's ``VecEnv.seed`` promises): entry
            ``b * L + k`` gets its world's seed ``seed + b``.
        """
        if seed is None:
            seed = int(np.random.SeedSequence().generate_state(1, dtype=np.uint32)[0])
        self._world_seeds = [int(seed) + b for b in range(self.n_copies)]
        return [s for s in self._world_seeds for _ in range(self.agents_per_env)]

    def reset(self) -> np.ndarray:
        """Reset every world (with the seeds of :meth:`seed`, used once); returns all entries."""
        if any(self._options):
            warnings.warn("SB3VecEnv ignores reset options (the worlds reset on their own)",
                          stacklevel=2)
        seeds = self._world_seeds
        if self.envs or any(s is not None for s in seeds):
            obs, info = self.worlds.reset(seed=seeds)
        else:  # the vector env's own first seeds, or each world's generator continued
            obs, info = self.worlds.reset()
        self._world_seeds = [None] * self.n_copies
        self._reset_seeds()
        self._reset_options()
        self._ret[:] = 0.0
        self._len[:] = 0
        self.obs_real = info["alive"]
        self.step_valid = np.ones(self.num_envs, dtype=bool)
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        """Store the actions ``(num_envs, 2)`` for :meth:`step_wait`."""
        self._actions = np.asarray(actions)

    def step_wait(self) -> VecEnvStepReturn:
        """Step every world; see the module docstring for finished agents and autoreset."""
        t0 = time.perf_counter()
        acts = np.asarray(self._actions, dtype=np.float64).reshape(self.num_envs, -1)
        obs, reward, term, trunc, info = self.worlds.step(acts)
        active = info["active"]
        self._ret += reward
        self._len += active
        done = term | trunc
        infos: list[dict] = [{} for _ in range(self.num_envs)]
        if done.any():
            final, status = info["final_obs"], info["status"]
            elapsed = round(time.perf_counter() - self._t0, 6)
            for i in np.flatnonzero(done).tolist():
                r, ln = float(self._ret[i]), int(self._len[i])
                cut = bool(trunc[i] and not term[i]) and (
                    self.bootstrap == "truncated" or
                    (self.bootstrap == "time_limit" and int(status[i]) != _DEADLOCKED))
                infos[i] = {"terminal_observation": final[i],
                            "TimeLimit.truncated": cut,
                            "episode": {"r": r, "l": ln, "t": elapsed},
                            "agent_episode": {"r": r, "l": ln,
                                              "status": STATUSES[int(status[i])]}}
            self._ret[done] = 0.0
            self._len[done] = 0
        self.step_valid = active
        self.obs_real = info["alive"]
        n_active = int(np.count_nonzero(active))
        self.entry_steps += self.num_envs
        self.agent_steps += n_active
        self.step_seconds += time.perf_counter() - t0
        return obs, reward.astype(np.float32), done, infos

    def close(self) -> None:
        """Close the worlds."""
        self.worlds.close()

    def get_images(self) -> Sequence[np.ndarray | None]:
        """One ``rgb_array`` frame per world copy (``copies`` backend, ``render_mode``)."""
        if self.render_mode != "rgb_array" or not self.envs:
            warnings.warn(f"The render mode is {self.render_mode}, but get_images() needs "
                          f"'rgb_array' (make_vec_env(..., render_mode='rgb_array'))",
                          stacklevel=2)
            return [None for _ in range(self.n_copies)]
        return [env.render() for env in self.envs]

    def _targets(self, indices: VecEnvIndices) -> list:
        """The object behind each requested entry: its world's copy, or the vector env."""
        idx = self._get_indices(indices)
        if self.envs:
            return [self.envs[i // self.agents_per_env] for i in idx]
        return [self.worlds for _ in idx]

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """Attribute of the world copy holding each entry (of the vector env, for that one)."""
        if not hasattr(self, "worlds"):
            return []
        return [getattr(t, attr_name) for t in self._targets(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Set an attribute once on each copy (or the vector env) holding a requested entry."""
        for t in {id(t): t for t in self._targets(indices)}.values():
            setattr(t, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices: VecEnvIndices = None,
                   **method_kwargs) -> list[Any]:
        """Call a method once per copy (or vector env) holding a requested entry."""
        targets = self._targets(indices)
        results = {id(t): getattr(t, method_name)(*method_args, **method_kwargs)
                   for t in {id(t): t for t in targets}.values()}
        return [results[id(t)] for t in targets]

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        """True for SB3's ``Monitor`` only: entries report ``Monitor``-style episodes."""
        return [wrapper_class is Monitor for _ in self._get_indices(indices)]


class MaskedRolloutBuffer(RolloutBuffer):
    """A ``RolloutBuffer`` that trains on the rows of agents that acted, and on no others.

    Before each ``add`` it copies ``mask_source.step_valid`` (an :class:`SB3VecEnv`; attach it
    with :func:`attach_masks`), and ``get`` yields minibatches of valid rows only, in the
    order of one ``np.random.permutation`` (SB3's own source of minibatch order, seeded by the
    model's seed). Without a mask source every row is valid, as in ``RolloutBuffer``.
    """

    mask_source: Any = None

    def reset(self) -> None:
        """Empty the buffer; every row valid until told otherwise."""
        super().reset()
        self.valid = np.ones((self.buffer_size, self.n_envs), dtype=bool)

    def add(self, *args: Any, **kwargs: Any) -> None:
        """Store a row and, first, which of its entries acted (``mask_source.step_valid``)."""
        if self.mask_source is not None:
            self.valid[self.pos] = self.mask_source.step_valid
        super().add(*args, **kwargs)

    def valid_fraction(self) -> float:
        """Share of the buffer's rows that are trained on."""
        return float(self.valid.mean())

    def get(self, batch_size: int | None = None) -> Generator[RolloutBufferSamples, None, None]:
        """Minibatches of the valid rows, in the order of one ``np.random.permutation``."""
        assert self.full, ""
        valid = self.valid.swapaxes(0, 1).reshape(-1)  # the order of swap_and_flatten
        indices = np.random.permutation(np.flatnonzero(valid))
        if not self.generator_ready:
            for tensor in ("observations", "actions", "values", "log_probs", "advantages",
                           "returns"):
                self.__dict__[tensor] = self.swap_and_flatten(self.__dict__[tensor])
            self.generator_ready = True
        if batch_size is None:
            batch_size = len(indices)
        for start in range(0, len(indices), batch_size):
            yield self._get_samples(indices[start:start + batch_size])


class MaskedReplayBuffer(ReplayBuffer):
    """A ``ReplayBuffer`` that samples the transitions of agents that acted, and no others.

    ``add`` stores ``mask_source.step_valid`` (see :func:`attach_masks`) in :attr:`valid` next
    to each transition; ``sample`` draws uniformly among the valid ones (with ``np.random``, as
    SB3 does). Without a mask source every transition is valid. ``optimize_memory_usage`` is
    not supported.
    """

    mask_source: Any = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.optimize_memory_usage:
            raise ValueError("MaskedReplayBuffer does not support optimize_memory_usage=True")
        self.valid = np.zeros((self.buffer_size, self.n_envs), dtype=bool)

    def add(self, obs: Any, next_obs: Any, action: Any, reward: Any, done: Any,
            infos: list[dict]) -> None:
        """Store a transition with its validity (``mask_source.step_valid``)."""
        self.valid[self.pos] = True if self.mask_source is None else self.mask_source.step_valid
        super().add(obs, next_obs, action, reward, done, infos)

    def sample(self, batch_size: int, env: VecNormalize | None = None) -> ReplayBufferSamples:
        """``batch_size`` transitions drawn uniformly among the valid ones."""
        upper = self.buffer_size if self.full else self.pos
        flat = np.flatnonzero(self.valid[:upper].reshape(-1))  # row-major: pos * n_envs + env
        if flat.size == 0:
            raise ValueError("MaskedReplayBuffer: no valid transition stored yet")
        rows, envs = np.divmod(flat[np.random.randint(0, flat.size, size=batch_size)],
                               self.n_envs)
        data = (self._normalize_obs(self.observations[rows, envs, :], env),
                self.actions[rows, envs, :],
                self._normalize_obs(self.next_observations[rows, envs, :], env),
                (self.dones[rows, envs] * (1 - self.timeouts[rows, envs])).reshape(-1, 1),
                self._normalize_reward(self.rewards[rows, envs].reshape(-1, 1), env))
        return ReplayBufferSamples(*tuple(map(self.to_torch, data)))


class MaskedVecNormalize(VecNormalize):
    """``VecNormalize`` whose statistics see real observations and valid rewards only.

    The observation statistics are updated with the rows the adapter marks in ``obs_real``
    (finished agents' zero rows are left out), the return statistics with the rows in
    ``step_valid``. On any other ``VecEnv`` it is ``VecNormalize``.
    """

    def _masks(self) -> tuple[np.ndarray | None, np.ndarray | None]:
        base = self.venv.unwrapped
        return getattr(base, "obs_real", None), getattr(base, "step_valid", None)

    def _update_obs(self, obs: np.ndarray, real: np.ndarray | None) -> None:
        if self.training and self.norm_obs:
            self.obs_rms.update(obs if real is None else obs[real])

    def step_wait(self) -> VecEnvStepReturn:
        """Step, update the statistics with the masked rows left out, normalise."""
        obs, rewards, dones, infos = self.venv.step_wait()
        real, valid = self._masks()
        self.old_obs = obs
        self.old_reward = rewards
        self._update_obs(obs, real)
        obs = self.normalize_obs(obs)
        if self.training:
            self.returns = self.returns * self.gamma + rewards
            self.ret_rms.update(self.returns if valid is None else self.returns[valid])
        rewards = self.normalize_reward(rewards)
        for idx in np.flatnonzero(dones).tolist():
            if "terminal_observation" in infos[idx]:
                infos[idx]["terminal_observation"] = self.normalize_obs(
                    infos[idx]["terminal_observation"])
        self.returns[dones] = 0
        return obs, rewards, dones, infos

    def reset(self) -> np.ndarray:
        """Reset; the statistics see the real observations only."""
        obs = self.venv.reset()
        self.old_obs = obs
        self.returns = np.zeros(self.num_envs)
        self._update_obs(obs, self._masks()[0])
        return self.normalize_obs(obs)


def attach_masks(model: Any, base: SB3VecEnv) -> None:
    """Let ``model``'s masked buffer read ``base.step_valid`` at every step.

    The model must be built with ``rollout_buffer_class=MaskedRolloutBuffer`` (on-policy) or
    ``replay_buffer_class=MaskedReplayBuffer`` (off-policy). Buffers are not saved with the
    model, so call it after building or loading one.
    """
    buf = getattr(model, "rollout_buffer", None) or getattr(model, "replay_buffer", None)
    if not isinstance(buf, (MaskedRolloutBuffer, MaskedReplayBuffer)):
        raise ValueError(f"attach_masks needs a model built with rollout_buffer_class="
                         f"MaskedRolloutBuffer or replay_buffer_class=MaskedReplayBuffer, got "
                         f"a {type(buf).__name__}")
    buf.mask_source = base


def make_vec_env(config: Any = None, n_envs: int = 1, render_mode: str | None = None,
                 backend: str = "auto", bootstrap: str = "truncated",
                 torch_threads: int | str | None = "auto", **env_kwargs: Any) -> SB3VecEnv:
    """``n_envs`` worlds of ``config`` as one :class:`SB3VecEnv` (an entry per learned agent).

    Args:
        config: Env config (YAML path, shipped name, dict or ``EnvConfig``).
        n_envs: Number of worlds (``num_envs = n_envs * learned agents``); must be >= 1.
        render_mode: ``None`` or ``"rgb_array"`` (for ``VecVideoRecorder``; ``copies`` backend).
        backend: ``"vector"`` (one :class:`~orca_env.vector.OrcaVectorEnv`), ``"copies"``
            (``n_envs`` ``OrcaEnv`` copies) or ``"auto"`` (default: ``vector`` unless
            ``render_mode`` is set, which only the copies draw).
            Both give the same numbers for the same seeds.
        bootstrap: Which truncations SB3 bootstraps (:class:`SB3VecEnv`).
        torch_threads: torch's intra-op threads for this process, set here because the model
            that trains on this VecEnv is built next (default ``"auto"``:
            ``$ORCA_ENV_TORCH_THREADS`` if set, else 1; an integer wins over the variable;
            ``None`` leaves torch alone). On a busy 2-core machine torch's default of 2
            threads made PPO on ``circle_dense`` many times slower than 1
            (:func:`orca_env.training.model_files.set_torch_threads`).
        **env_kwargs: Overrides of config keys (and, for the copies, ``infos``: default
            ``"compact"``, the adapter reads only ``status``).

    Raises:
        ValueError: On a bad ``n_envs``, ``backend``, ``bootstrap``, ``torch_threads``, or
            ``backend="vector"`` with ``render_mode``.
    """
    if isinstance(n_envs, bool) or not isinstance(n_envs, int) or n_envs < 1:
        raise ValueError(f"n_envs must be a positive integer, got {n_envs!r}")
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    check_bootstrap(bootstrap)
    threads = resolve_torch_threads(torch_threads)  # checked before anything is built
    if backend != "copies":
        if backend == "vector" and render_mode is not None:
            raise ValueError("backend 'vector' cannot run this: render_mode is set; use "
                             "backend='copies'")
        if render_mode is None:
            kwargs = {k: v for k, v in env_kwargs.items() if k != "infos"}
            venv = SB3VecEnv(OrcaVectorEnv(config, n_envs, infos=True, **kwargs), bootstrap)
            set_torch_threads(threads)
            return venv
    if render_mode is not None:
        env_kwargs["render_mode"] = render_mode
    env_kwargs.setdefault("infos", "compact")
    venv = SB3VecEnv([lambda: parallel_env(config, **env_kwargs) for _ in range(n_envs)],
                     bootstrap)
    set_torch_threads(threads)
    return venv
