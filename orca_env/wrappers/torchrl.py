"""``OrcaTorchRLEnv``: a native TorchRL ``EnvBase`` over :class:`~orca_env.vector.OrcaVectorEnv`.

B worlds of one config as one batched TorchRL env (``batch_size = [B]``), the learned agents of
a world as one TorchRL multi-agent group ``"agents"`` (entries ``[B, L, ...]``), with the
conventions of TorchRL's own multi-agent wrappers (``PettingZooWrapper(use_mask=True,
done_on_any=False)``, ``VmasEnv``)::

    observation: ("agents", "observation")  [B, L, D] float32
                 ("agents", "mask")         [B, L]    bool, the agents that act on the next step
                 ("agents", "info", key)    [B, L]    numeric infos (orca_env.infos.NUMERIC_KEYS)
    action:      ("agents", "action")       [B, L, 2] float32 in [-1, 1]
    reward:      ("agents", "reward")       [B, L, 1] float32
    done:        ("agents", "done" | "terminated" | "truncated")  [B, L, 1] bool, per agent
                 "done" | "terminated" | "truncated"               [B, 1]    bool, per world

An agent's done flags stay set once it has finished (its mask is then False), until its world
resets; a world is done once every agent of it is (``terminated`` when all of them terminated,
``truncated`` otherwise). With ``finished_agents="absorb"`` every agent of a world reports its
end on the world's last step and ``("agents", "info", "active")`` says which agents acted.

Resets follow TorchRL: the env never resets a world by itself; ``reset()`` with a ``"_reset"``
entry ([B, 1] bool) resets those worlds (collectors and ``rollout`` do it for done worlds),
without one it resets every world. Each step converts the vector env's arrays to tensors once
(``torch.from_numpy``, no per-agent or per-world loop): observations are the vector env's
bit for bit, rewards its float64 rewards as float32.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from tensordict import TensorDict, TensorDictBase
from torchrl.data import Bounded, Categorical, Composite, Unbounded
from torchrl.envs import EnvBase

from ..infos import NUMERIC_KEYS, numeric_keys
from ..vector import OrcaVectorEnv

__all__ = ["OrcaTorchRLEnv", "GROUP"]

#: The name of the agents' group (BenchMARL's and TorchRL's default, ``MarlGroupMapType``).
GROUP = "agents"

_TORCH_DTYPES = {bool: torch.bool, int: torch.int64, float: torch.float64}


def _info_dtype(key: str) -> torch.dtype:
    """The tensor dtype of a numeric info (``reward_<term>`` are floats)."""
    kind = NUMERIC_KEYS[key][0] if key in NUMERIC_KEYS else float
    return _TORCH_DTYPES[kind]


class OrcaTorchRLEnv(EnvBase):
    """``num_worlds`` worlds of ``config`` as a batched TorchRL env with one agent group.

    Args:
        config: as for :class:`~orca_env.vector.OrcaVectorEnv` (a name, a path or a dict).
        num_worlds: worlds B (the env's ``batch_size`` is ``[B]``).
        seed: seed of the first reset (world ``b`` gets ``seed + b``); ``set_seed`` sets the
            next one.
        infos: ``"numeric"`` (default) adds ``("agents", "info", key)`` entries; ``False``
            leaves them out.
        finished_agents: ``"leave"`` (default) or ``"absorb"``, as for ``OrcaVectorEnv``.
        device: where tensors are put (the simulator runs on the CPU).
        **config_kwargs: config keys, as for ``OrcaVectorEnv`` (``max_steps`` ...).
    """

    def __init__(self, config: Any = None, num_worlds: int = 1, *, seed: int | None = None,
                 infos: bool | str = "numeric", finished_agents: str = "leave",
                 device: Any = "cpu", **config_kwargs: Any) -> None:
        if infos not in (False, "numeric"):
            raise ValueError(f"infos must be 'numeric' or False, got {infos!r}")
        # NEXT_STEP: the vector env leaves a finished world's last observation in place until
        # it is reset, which this env does when TorchRL asks (``_reset``).
        self.vector_env = venv = OrcaVectorEnv(
            config, num_worlds, seed=seed, infos=infos, autoreset_mode="next_step",
            finished_agents=finished_agents, **config_kwargs)
        super().__init__(device=device, batch_size=torch.Size([venv.num_worlds]))
        self.num_worlds = B = venv.num_worlds
        self.num_agents = L = venv.num_agents_per_world
        self._infos = infos
        self._next_seed = seed
        self.agent_names = [f"agent_{k}" for k in range(L)]
        #: BenchMARL's and TorchRL's group map: one group of every learned agent.
        self.group_map = {GROUP: list(self.agent_names)}
        self._term = torch.zeros(B, L, 1, dtype=torch.bool)
        self._trunc = torch.zeros(B, L, 1, dtype=torch.bool)
        self._cpu = self.device is None or self.device.type == "cpu"
        #: The last observations and infos (None before the first reset).
        self._last: tuple | None = None
        self._make_specs()

    # -- specs ------------------------------------------------------------------------------
    def _make_specs(self) -> None:
        venv, B, L = self.vector_env, self.num_worlds, self.num_agents
        d = venv.single_observation_space.shape[0]
        a = venv.single_action_space.shape[0]
        dev = self.device
        group = {"observation": Unbounded(shape=(B, L, d), dtype=torch.float32, device=dev),
                 "mask": Categorical(n=2, shape=(B, L), dtype=torch.bool, device=dev)}
        if self._infos:
            self._info_keys = numeric_keys(venv._template.reward_term_names)
            group["info"] = Composite(
                {k: Unbounded(shape=(B, L), dtype=_info_dtype(k), device=dev)
                 for k in self._info_keys}, shape=(B, L), device=dev)
        self.observation_spec = Composite(
            {GROUP: Composite(group, shape=(B, L), device=dev)}, shape=(B,), device=dev)
        self.action_spec = Composite({GROUP: Composite(
            {"action": Bounded(-1.0, 1.0, shape=(B, L, a), dtype=torch.float32, device=dev)},
            shape=(B, L), device=dev)}, shape=(B,), device=dev)
        self.reward_spec = Composite({GROUP: Composite(
            {"reward": Unbounded(shape=(B, L, 1), dtype=torch.float32, device=dev)},
            shape=(B, L), device=dev)}, shape=(B,), device=dev)

        def flags(shape):
            return {k: Categorical(n=2, shape=shape, dtype=torch.bool, device=dev)
                    for k in ("done", "terminated", "truncated")}

        self.done_spec = Composite(
            {**flags((B, 1)), GROUP: Composite(flags((B, L, 1)), shape=(B, L), device=dev)},
            shape=(B,), device=dev)

    # -- helpers ----------------------------------------------------------------------------
    def _tensor(self, array: np.ndarray, shape: tuple) -> torch.Tensor:
        t = torch.from_numpy(np.ascontiguousarray(array)).reshape(shape)
        return t if self._cpu else t.to(self.device)

    def _td(self, source: dict, batch_size: tuple) -> TensorDictBase:
        # The entries are fresh tensors of the spec's shapes and dtypes, built here: skip
        # TensorDict's per-entry validation (a third of a step's cost at 16 worlds).
        return TensorDict._new_unsafe(source, batch_size=torch.Size(batch_size),
                                      device=self.device)

    def _output(self, obs, alive, info, reward: torch.Tensor | None = None) -> TensorDictBase:
        B, L = self.num_worlds, self.num_agents
        term, trunc = self._term.clone(), self._trunc.clone()
        done = term | trunc
        world_done = done.all(1)
        world_term = term.all(1)
        group = {"observation": self._tensor(obs, (B, L, -1)),
                 "mask": self._tensor(alive, (B, L))}
        if self._infos:
            group["info"] = self._td({k: self._tensor(info[k], (B, L))
                                      for k in self._info_keys}, (B, L))
        flags = {"done": done, "terminated": term, "truncated": trunc}
        if reward is not None:
            flags["reward"] = reward
        if not self._cpu:
            flags = {k: v.to(self.device) for k, v in flags.items()}
            world_done, world_term = world_done.to(self.device), world_term.to(self.device)
        return self._td({"done": world_done, "terminated": world_term,
                         "truncated": world_done & ~world_term,
                         GROUP: self._td({**group, **flags}, (B, L))}, (B,))

    # -- EnvBase ----------------------------------------------------------------------------
    def _set_seed(self, seed: int | None) -> None:
        self._next_seed = seed

    def _reset(self, tensordict: TensorDictBase | None = None, **kwargs: Any) -> TensorDictBase:
        venv = self.vector_env
        reset = None if tensordict is None else tensordict.get("_reset", None)
        if reset is None or bool(reset.all()) or self._last is None:
            obs, info = venv.reset(seed=self._next_seed)
            self._next_seed = None
            self._term.zero_()
            self._trunc.zero_()
        else:
            worlds = torch.nonzero(reset.reshape(-1).cpu()).reshape(-1).numpy()
            obs, info = self._last
            if worlds.size:
                obs, info = self._reset_worlds(worlds, info)
        self._last = (obs, info)
        return self._output(obs, info["alive"], info)

    def _reset_worlds(self, worlds: np.ndarray, info: dict):
        """New episodes of ``worlds`` only: the first observations and infos of their rows."""
        venv = self.vector_env
        # The vector env's partial reset, called now because TorchRL resets a done world
        # before its next step (the vector env's NEXT_STEP would do it on that step).
        mask = np.zeros(venv.num_envs, dtype=bool)
        mask.reshape(venv.num_worlds, -1)[worlds] = True
        obs, first = venv.reset(options={"reset_mask": mask})
        info = {k: v.copy() for k, v in info.items()}
        info["alive"] = first["alive"]
        if self._infos:
            for k in info:
                if k in first and k != "alive":
                    info[k][mask] = first[k][mask]
        w = torch.from_numpy(worlds)
        self._term[w] = False
        self._trunc[w] = False
        return obs, info

    def _step(self, tensordict: TensorDictBase) -> TensorDictBase:
        venv, B, L = self.vector_env, self.num_worlds, self.num_agents
        action = tensordict.get((GROUP, "action"))
        act = action.detach().cpu().reshape(B * L, -1).numpy()
        obs, reward, term, trunc, info = venv.step(act)
        restarted = info["world_reset"].reshape(B, L)[:, 0]  # stepped without a reset
        if restarted.any():
            self._term[torch.from_numpy(restarted)] = False
            self._trunc[torch.from_numpy(restarted)] = False
        self._term |= torch.from_numpy(term).reshape(B, L, 1)  # CPU, as the flags
        self._trunc |= torch.from_numpy(trunc).reshape(B, L, 1)
        self._last = (obs, info)
        rew = self._tensor(reward.astype(np.float32), (B, L, 1))
        return self._output(obs, info["alive"], info, rew)

    def close(self, *, raise_if_closed: bool = True) -> None:
        """Close the vector env (its thread pool), then the TorchRL env."""
        self.vector_env.close()
        super().close(raise_if_closed=raise_if_closed)
