"""A single-agent Gymnasium env for configs with one learned agent (one robot in a crowd).

:class:`SingleAgentEnv` is a ``gymnasium.Env`` around :class:`orca_env.OrcaEnv` whose config
has exactly one learned agent (CrowdNav's robot); every other agent is crowd (``orca`` or
``non_reactive``) and part of the environment. Single-agent libraries (stable-baselines3,
CleanRL, ...) then work unchanged::

    import gymnasium
    import orca_env  # registers the ids below, before or after import gymnasium

    env = gymnasium.make("orca_env/CrowdNavCircle-v0", render_mode="rgb_array")
    obs, info = env.reset(seed=0)
    terminated = truncated = False
    while not (terminated or truncated):
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
    print(info["status"])  # at_goal, collided, timed_out or deadlocked
    frame = env.render()   # (H, W, 3) uint8

Registered ids (:data:`GYM_IDS`) and the shipped config each one makes:

* ``orca_env/CrowdNavCircle-v0``: ``crowdnav_circle`` (CrowdNav's circle crossing, the crowd
  sees the robot);
* ``orca_env/CrowdNavSquare-v0``: ``crowdnav_square`` (square crossing, robot visible);
* ``orca_env/CrowdNavCircleInvisible-v0``: ``crowdnav_circle_invisible`` (the crowd does not
  see the robot, CrowdNav's default);
* ``orca_env/CrowdNavSquareInvisible-v0``: ``crowdnav_square_invisible`` (robot invisible);
* ``orca_env/SingleAgent-v0`` (:data:`GENERIC_ID`): any config with one learned agent,
  ``gymnasium.make("orca_env/SingleAgent-v0", config="my_robot.yaml")`` (a path or a shipped
  name).

``gymnasium.make(id, **kwargs)`` passes every keyword to the env: config keys
(``max_steps=200``, ``observation={"num_agents": 3}``), ``infos="compact"`` and
``render_mode``.

``gymnasium.make_vec(id, num_envs=N)`` returns an :class:`orca_env.vector.OrcaVectorEnv` of N
worlds stepped in one call (the ids' ``vector_entry_point``,
:func:`orca_env.vector.make_vector_env`; Gymnasium's ``NEXT_STEP`` autoreset), and
``make_vec(id, num_envs=N, vectorization_mode="sync")`` a ``SyncVectorEnv`` of
:class:`SingleAgentEnv` copies.

Registration
------------
Gymnasium needs the ids registered before ``make``. ``import orca_env`` registers them in either
import order, without importing gymnasium itself (it stays light: the command line starts
without numpy):

* when gymnasium is already imported, at once (this module is imported);
* otherwise as soon as ``import gymnasium`` finishes (a finder on ``sys.meta_path``, removed
  once gymnasium is imported; Gymnasium 1.x has no plugin entry points that could do it).

``import orca_env.single`` and Gymnasium's ``module:id`` syntax
(``gymnasium.make("orca_env:orca_env/CrowdNavCircle-v0")``) register too. Registration uses
entry-point strings: neither it nor importing this module imports the env or the ORCA core
(numba); the first ``make`` does.

Episode end and time limit
--------------------------
``terminated`` and ``truncated`` are the robot's: the episode ends when the robot reaches its
goal (status ``at_goal``), collides (``collided``, with ``on_collision: terminate``), runs out of
time (``timed_out``, config ``max_steps``: 100 steps of 0.25 s for the CrowdNav configs) or
deadlocks (``deadlocked``), whatever the crowd still does. The ids are registered without
``max_episode_steps``, so ``make`` adds no ``TimeLimit`` wrapper: the env truncates itself and
reports why in ``info["status"]``. Change the limit with ``make(id, max_steps=N)``;
``make(id, max_episode_steps=N)`` would add a second, outer limit (a ``TimeLimit`` that cuts at
step ``N`` without the ``timed_out`` status), and ``env.spec.max_episode_steps`` is ``None``.

Seeding
-------
``reset(seed=s)`` seeds the underlying env (whose ``np_random`` is the only generator of an
episode: scenario layout and crowd noise); ``reset()`` continues that generator. ``np_random``
of this env *is* the underlying env's, so Gymnasium's seeding checks see the real generator.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import numpy as np
from gymnasium import Env, spaces
from gymnasium.envs.registration import register, registry

if TYPE_CHECKING:
    from .environment import OrcaEnv

__all__ = ["SingleAgentEnv", "GYM_IDS", "GENERIC_ID", "register_envs"]

#: Gymnasium id -> shipped config name (:mod:`orca_env.configs`).
GYM_IDS = {
    "orca_env/CrowdNavCircle-v0": "crowdnav_circle",
    "orca_env/CrowdNavSquare-v0": "crowdnav_square",
    "orca_env/CrowdNavCircleInvisible-v0": "crowdnav_circle_invisible",
    "orca_env/CrowdNavSquareInvisible-v0": "crowdnav_square_invisible",
}
#: The id for any config with one learned agent: ``make(GENERIC_ID, config=...)``.
GENERIC_ID = "orca_env/SingleAgent-v0"
_ENTRY_POINT = "orca_env.single:SingleAgentEnv"
#: ``gymnasium.make_vec(id, num_envs=N)``: N worlds stepped in one call (an ``OrcaVectorEnv``).
_VECTOR_ENTRY_POINT = "orca_env.vector:make_vector_env"


class SingleAgentEnv(Env):
    """The one learned agent of an :class:`orca_env.OrcaEnv` as a ``gymnasium.Env``.

    See the module docstring for the registered ids, episode end and seeding. The spaces are
    the learned agent's: ``observation_space`` is its ``Box(float32)`` observation (index table
    in :mod:`orca_env.observations`), ``action_space`` is ``Box(-1, 1, (2,), float32)``, the
    preferred velocity in units of max speed in the observation's (goal-aligned) frame. ``info``
    is the agent's info dict (``status``, ``reward_terms``, ORCA telemetry, ...; only
    ``status`` after a step with ``infos="compact"``).

    Example::

        from orca_env.single import SingleAgentEnv
        env = SingleAgentEnv("crowdnav_square", max_steps=50)
        obs, info = env.reset(seed=0)
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())

    Args:
        config: A config path or shipped name, a dict, an ``EnvConfig``, ``None`` (the code
            defaults), or an ``OrcaEnv`` to wrap as it is (then no other argument).
        render_mode: ``None``, ``"rgb_array"`` (``render()`` returns ``(H, W, 3)`` uint8) or
            ``"human"`` (a pygame window drawn on every ``reset`` and ``step``, paced at
            ``metadata["render_fps"]``). ``None`` keeps the config's own ``render_mode``.
        infos: ``"full"`` or ``"compact"``, as for :class:`~orca_env.OrcaEnv`.
        **kwargs: Config keys, as for :func:`orca_env.parallel_env`.

    Attributes:
        parallel_env: The wrapped PettingZoo ``OrcaEnv`` (its state, ``heuristic_actions()``,
            ``sim``, ...).
        agent: The learned agent's name, ``"agent_0"``.

    Raises:
        ValueError: If the config does not have exactly one learned agent (the message names the
            config and its count), or on any config error of ``OrcaEnv``.
    """

    #: As :attr:`orca_env.OrcaEnv.metadata` (``tests/wrappers/test_single_agent.py`` checks it);
    #: written out so that importing this module does not import the env.
    metadata = {"render_modes": ["human", "rgb_array"], "render_fps": 4}

    def __init__(self, config: Any = None, *, render_mode: str | None = None,
                 infos: str = "full", **kwargs: Any) -> None:
        from .environment import OrcaEnv  # noqa: PLC0415  (registration stays numba-free)

        if isinstance(config, OrcaEnv):
            if render_mode is not None or kwargs or infos != "full":
                raise ValueError("SingleAgentEnv(OrcaEnv instance) takes no other argument; "
                                 "configure the OrcaEnv itself")
            penv = config
        else:
            if render_mode is not None:
                kwargs["render_mode"] = render_mode
            penv = OrcaEnv(config, infos=infos, **kwargs)
        n_learned = len(penv.possible_agents)
        if n_learned != 1:
            penv.close()
            raise ValueError(f"SingleAgentEnv needs a config with exactly one learned agent; "
                             f"config {_describe(config, penv)} has {n_learned} "
                             f"(groups: {_groups(penv)}); use orca_env.parallel_env for "
                             f"several learned agents")
        self.parallel_env: OrcaEnv = penv
        self.agent: str = penv.possible_agents[0]
        self.observation_space: spaces.Box = penv.observation_space(self.agent)
        self.action_space: spaces.Box = penv.action_space(self.agent)
        self.render_mode: str | None = penv.render_mode
        # An instance copy (a wrapped OrcaEnv may have other render fps than the class's).
        self.metadata = {"render_modes": list(penv.metadata["render_modes"]),
                         "render_fps": penv.metadata["render_fps"]}

    # One generator: Gymnasium's np_random (and its checks, which read _np_random) is the
    # underlying env's, which draws the layout and the crowd noise.
    @property
    def _np_random(self) -> np.random.Generator | None:
        return self.parallel_env.np_random

    @_np_random.setter
    def _np_random(self, value: np.random.Generator | None) -> None:
        self.parallel_env.np_random = value

    @property
    def _np_random_seed(self) -> int | None:
        return self.parallel_env.np_random_seed

    @_np_random_seed.setter
    def _np_random_seed(self, value: int | None) -> None:
        self.parallel_env.np_random_seed = value

    def reset(self, *, seed: int | None = None,
              options: dict | None = None) -> tuple[np.ndarray, dict]:
        """Start an episode.

        Args:
            seed: Seeds the underlying env (non-negative integer); ``None`` continues its
                generator (seeded from entropy the first time).
            options: Passed to :meth:`orca_env.OrcaEnv.reset` (unused).

        Returns:
            ``(observation, info)`` of the learned agent.
        """
        obs, infos = self.parallel_env.reset(seed=seed, options=options)
        if self.render_mode == "human":
            self.parallel_env.render()
        return obs[self.agent], infos[self.agent]

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        """Advance one time step with the learned agent's action.

        Args:
            action: ``(2,)`` preferred velocity in units of max speed, in the observation's
                frame (see :class:`orca_env.OrcaEnv`, Action Space).

        Returns:
            ``(observation, reward, terminated, truncated, info)`` of the learned agent. Once
            ``terminated`` or ``truncated`` is true, ``step`` raises ``RuntimeError`` until
            ``reset``.

        Raises:
            RuntimeError: Before ``reset`` or after the episode ended.
            ValueError: On a NaN/inf or malformed action.
        """
        a = self.agent
        obs, rew, term, trunc, infos = self.parallel_env.step({a: action})
        if self.render_mode == "human":
            self.parallel_env.render()
        return obs[a], rew[a], term[a], trunc[a], infos[a]

    def render(self) -> np.ndarray | None:
        """Draw the world (``rgb_array``: the frame; ``human``: draws it, returns ``None``)."""
        return self.parallel_env.render()

    def close(self) -> None:
        """Release the renderer, if any; safe to call twice."""
        self.parallel_env.close()


def _describe(config: Any, penv: OrcaEnv) -> str:
    """How the error message names a config: its name or path, else its scenario."""
    if isinstance(config, (str, os.PathLike)):
        return repr(os.fspath(config))
    what = "None (the code defaults)" if config is None else f"from a {type(config).__name__}"
    return f"{what}, scenario {penv.config.scenario!r},"


def _groups(penv: OrcaEnv) -> str:
    """The groups of ``penv``, e.g. ``robot: learned x1, humans: orca x5``."""
    return ", ".join(f"{g.name or f'{g.population}_{i}'}: {g.population} x{g.count}"
                     for i, g in enumerate(penv.groups))


def register_envs() -> None:
    """Register :data:`GYM_IDS` and :data:`GENERIC_ID` with Gymnasium (idempotent).

    Called when this module is imported; ``import orca_env`` imports it when gymnasium is
    imported (before or after orca_env). Registers entry-point strings only (no env, no numba).
    """
    for env_id, config in GYM_IDS.items():
        if env_id not in registry:
            register(env_id, entry_point=_ENTRY_POINT, vector_entry_point=_VECTOR_ENTRY_POINT,
                     kwargs={"config": config})
    if GENERIC_ID not in registry:
        register(GENERIC_ID, entry_point=_ENTRY_POINT, vector_entry_point=_VECTOR_ENTRY_POINT)


register_envs()
