"""BenchMARL tasks for orca-env's scenarios, on the native TorchRL env (:mod:`.torchrl`).

``OrcaTask.CIRCLE_DENSE.get_task(config={...})`` (or ``OrcaTask.CIRCLE_DENSE.get_task()`` for
the config's own settings) is a BenchMARL ``TaskClass`` that an ``Experiment`` takes as it
takes a VMAS task: ``num_envs`` worlds of the config as one batched
:class:`~orca_env.wrappers.torchrl.OrcaTorchRLEnv`, every learned agent in one group
``"agents"``, continuous actions. The task's ``config`` holds ``OrcaTorchRLEnv`` keywords
(``finished_agents``, ``infos``) and config keys (``max_steps`` ...). Any config name, path or
dict works through ``OrcaClass(name, config)``; the enum lists the shipped multi-agent ones.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from benchmarl.environments.common import Task, TaskClass
from torchrl.data import Composite
from torchrl.envs import EnvBase

from .torchrl import GROUP, OrcaTorchRLEnv

__all__ = ["OrcaClass", "OrcaTask"]

#: Evaluation rollouts of a config without a step limit stop after this many steps.
DEFAULT_MAX_STEPS = 1000


def _only(env: EnvBase, key: str) -> Composite:
    """The env's unbatched observation spec with only ``("agents", key)``."""
    spec = env.full_observation_spec_unbatched.clone()
    for k in list(spec.keys()):
        if k != GROUP:
            del spec[k]
    for k in list(spec[GROUP].keys()):
        if k != key:
            del spec[(GROUP, k)]
    return spec


class OrcaClass(TaskClass):
    """A BenchMARL task: an orca-env config (``name``) with keyword overrides (``config``)."""

    def __init__(self, name: str, config: dict[str, Any] | None = None,
                 scenario: Any = None) -> None:
        super().__init__(name=name, config=dict(config or {}))
        #: What the env is built from: a config name (the default: ``name`` lowercased), a
        #: path or a dict.
        self.scenario = name.lower() if scenario is None else scenario

    def get_env_fun(self, num_envs: int, continuous_actions: bool, seed: int | None,
                    device: Any) -> Callable[[], EnvBase]:
        """A function building ``num_envs`` worlds as one batched :class:`OrcaTorchRLEnv`."""
        if not continuous_actions:
            raise ValueError("orca-env tasks have continuous actions only "
                             "(continuous_actions=False was asked for)")
        config, scenario = copy.deepcopy(self.config), self.scenario
        return lambda: OrcaTorchRLEnv(scenario, num_envs, seed=seed, device=device, **config)

    def supports_continuous_actions(self) -> bool:
        """True: the agents' actions are continuous."""
        return True

    def supports_discrete_actions(self) -> bool:
        """False: no discrete actions."""
        return False

    def has_render(self, env: EnvBase) -> bool:
        """False: BenchMARL's video logging is not wired (orca-env renders with its viewer)."""
        return False

    def max_steps(self, env: EnvBase) -> int:
        """The config's ``max_steps`` (evaluation rollouts' length), or 1000 without one."""
        steps = env.vector_env.config.max_steps
        return int(steps) if steps is not None else DEFAULT_MAX_STEPS

    def group_map(self, env: EnvBase) -> dict[str, list[str]]:
        """One group, ``"agents"``, of every learned agent (``agent_0`` ...)."""
        return env.group_map

    def observation_spec(self, env: EnvBase) -> Composite:
        """The agents' observations only (not their mask or infos: no model input)."""
        return _only(env, "observation")

    def info_spec(self, env: EnvBase) -> Composite | None:
        """The numeric infos, ``("agents", "info", key)`` (None without them)."""
        if "info" not in env.full_observation_spec_unbatched[GROUP].keys():
            return None
        return _only(env, "info")

    def state_spec(self, env: EnvBase) -> Composite | None:
        """None: no global state (MAPPO's critic sees the agents' observations)."""
        return None

    def action_spec(self, env: EnvBase) -> Composite:
        """``("agents", "action")``: ``[L, 2]`` in ``[-1, 1]``."""
        return env.full_action_spec_unbatched

    def action_mask_spec(self, env: EnvBase) -> Composite | None:
        """None: continuous actions have no action mask."""
        return None

    @staticmethod
    def env_name() -> str:
        """``"orca_env"``, BenchMARL's name of the environment (in its logs and folders)."""
        return "orca_env"


class OrcaTask(Task):
    """The shipped multi-agent configs as BenchMARL tasks (member name = config name)."""

    CIRCLE = None
    CIRCLE_DENSE = None
    BOTTLENECK = None
    CORRIDOR = None
    CORRIDOR_HEADON = None
    DOORWAY = None
    INTERSECTION = None
    INTERSECTION_DENSE = None
    BLOCKS = None
    RANDOM_OBSTACLES = None
    NH_CIRCLE_SWAP = None

    @staticmethod
    def associated_class():
        """:class:`OrcaClass`."""
        return OrcaClass

    def get_task(self, config: dict[str, Any] | None = None) -> OrcaClass:
        """The task with ``config`` (keyword overrides; none: the config's own settings).

        BenchMARL's default reads a YAML file from its own package, which orca-env's tasks do
        not have: their defaults are the shipped configs'.
        """
        return OrcaClass(name=self.name, config=config)

    def get_from_yaml(self, path: str | None = None) -> OrcaClass:
        """The task with the overrides of a YAML file (``path``), or none."""
        if path is None:
            return self.get_task()
        from benchmarl.utils import _read_yaml_config

        return self.get_task(dict(_read_yaml_config(path)))
