"""The PettingZoo ``ParallelEnv`` on the ORCA core: a one-world view of the step pipeline.

The step itself is :class:`orca_env.pipeline.WorldBatch` (shared with the vector env); the
episode lifecycle is :mod:`orca_env.episode`, the agent table :mod:`orca_env.agents`, the infos
:mod:`orca_env.infos`. This module turns dicts into arrays and back.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import ParallelEnv
from pettingzoo.utils.conversions import parallel_to_aec, parallel_to_aec_wrapper

from .codes import STATE_FEATURES
from .config import EnvConfig, load_config
from .env_state import EnvState
from .episode import (
    MIXTURE_SPAWN_DRAWS,
    WorldConfig,
    announce_compilation,
    check_seed,
    crowdnav_last_step,
    draw_episode,
    redraw_warning,
)
from .finished import FINISHED_ACTIONS, FINISHED_AGENTS, RowRecord, check_choice
from .infos import (
    INFO_LEVELS,
    compact_infos,
    info_columns,
    numeric_infos,
    reset_columns,
    reset_infos,
    step_infos,
)
from .kinematics import kinematics as kinematics_registry
from .mixture import Mixture
from .observations import make_space, make_universal_space
from .pipeline import WorldBatch
from .stages import WorldEpisode
from .step import clip_actions

__all__ = ["OrcaEnv", "parallel_env", "env", "raw_env", "INFO_LEVELS", "MIXTURE_SPAWN_DRAWS",
           "crowdnav_last_step", "make_batch"]

def make_batch(env: OrcaEnv, num_worlds: int, num_threads: int) -> WorldBatch:
    """The step pipeline for ``num_worlds`` worlds of ``env``'s config and spaces."""
    wc = env.world_config
    space = env.observation_spaces[env.possible_agents[0]]
    spec = {"kk": wc.num_obs_agents, "mm": wc.num_obs_obstacles, "universal": wc.universal,
            "time_obs": wc.time_obs, "stall_obs": wc.stall_obs, "extra_obs": len(wc.extra_obs),
            "heading_obs": wc.heading_obs, "beams": wc.lidar_beams}
    return WorldBatch(num_worlds, len(env.possible_agents), space.shape[0], space.low,
                      space.high, spec, len(wc.reward_term_names), num_threads)


class OrcaEnv(EnvState, ParallelEnv):
    """A crowd of ORCA agents in which some agents are learned.

    ## Description

    Every step runs the ORCA core (RVO2 2.0 semantics, ``orca_env.core``). Each agent belongs to
    a *group* (config ``groups``) with one of three populations:

    * ``learned``: the PettingZoo agents ``agent_0 .. agent_{L-1}`` (in group order). With
      ``safety_layer: true`` (default) the action is a preferred velocity that ORCA makes
      collision-free; with ``safety_layer: false`` it is the velocity itself, for ablations: the
      agent has responsibility 0 (the others avoid it fully) and its core result is overwritten
      by ``position + action * dt``, so it can hit agents and walls (detected, penalised).
    * ``orca``: crowd agents heading for their goals with pure ORCA: preferred velocity = vector
      to the goal (or waypoint), shortened to ``pref_speed`` when longer, plus RVO2's
      symmetry-breaking noise (``noise``, seeded from ``np_random``; default the scenario's
      ``CROWD_NOISE``: 1e-4 as in RVO2's Blocks and Roadmap, 0 for Circle whose RVO2 example
      has none).
    * ``non_reactive``: dynamic obstacles that follow their straight (or roadmap) path to their
      goal at ``pref_speed`` with responsibility 0: every agent with a positive responsibility
      avoids them fully and they avoid no such agent; two non-reactive agents share their mutual
      avoidance half and half (the core's rule), and static obstacles still bind them.
    * ``linear``: CrowdNav's linear humans: they head straight for their goal at ``pref_speed``
      and avoid no agent (core avoid mask 0), while the others avoid them as they would an ORCA
      agent, assuming they take half (responsibility 1); static obstacles still bind them.
      Unlike CrowdNav's, which walk at v_pref past their goal and back, they stop on it.

    Who avoids whom is set per group (``avoids``, ``visible_to``, see
    :class:`orca_env.config.GroupConfig`): CrowdNav's invisible robot is a learned group with
    ``visible_to: []``. ``orca_padding`` enlarges an agent's radius inside ORCA only, and
    ``randomize_attributes`` draws its radius and preferred speed every episode (CrowdNav's
    ``randomize_attributes``); ``env.radii`` and ``env.max_speeds`` are then this episode's.

    On reaching its goal a group either ``stop``s (the agent leaves the simulation), ``stay``s
    (parked: it keeps steering to its goal under ORCA, so it is still an obstacle that yields) or,
    for the crowd, gets a ``new_goal`` from the scenario. A learned agent terminates on reaching
    its goal whatever its group's ``on_goal`` (which only decides whether it leaves or parks).

    ## Agents

    ``possible_agents`` = ``agent_0 .. agent_{L-1}``, one per learned slot; crowd agents are part
    of the environment. At least one learned agent is required (to run a pure ORCA baseline,
    use learned agents with :meth:`heuristic_actions`, which is exactly ORCA with the safety
    layer).

    ``agents`` are the live agents: an agent that terminates or is truncated is in that step's
    dicts and gone from ``agents`` afterwards (``finished_agents="leave"``, PettingZoo's
    convention). With ``finished_agents="absorb"`` (the absorbing state, "black death") it
    stays in ``agents`` until the world ends: on later steps it reports an all-zero
    observation, reward 0 and ``terminated = truncated = False``, its infos say
    ``active: False`` and its action is ignored; on the world's last step every agent reports
    its end (``terminated`` if it terminated, ``truncated`` for every agent when the world ended
    by a time limit or a deadlock; :meth:`orca_env.finished.RowRecord.absorb`), and ``agents`` is
    empty. The episode itself is the same either way.

    ## Action Space

    ``Box(-1, 1, (2,), float32)`` per agent: the preferred velocity (or velocity, without the
    safety layer) in units of the agent's max speed, in the same frame as the observation
    (``observation.frame``): goal-aligned by default, so ``(1, 0)`` is full speed towards the goal
    (or waypoint) and ``(0, 1)`` full speed to its left; world frame with ``frame: world``. A
    policy that sees a rotation-invariant observation must act in that frame too, or it could not
    know where its goal lies. The norm is clipped to 1.
    NaN or inf is a ``ValueError`` naming the agent; a finite action outside the box is clipped,
    with one warning per episode. The action dict must hold exactly ``agents``
    (``finished_actions="error"``); with ``finished_actions="ignore"`` actions for agents that
    finished are ignored, given or not (an action for a name that is not an agent is still an
    error).

    ## Observation Space

    ``Box(float32)`` of size ``8 + 6 K + 5 M``, see :mod:`orca_env.observations` for the index
    table (goal or waypoint vector and distance, remaining path length, own velocity, radius and
    max speed, K nearest agents within ``range`` and M nearest obstacle segments). Vectors are in
    the goal-aligned frame (``observation.frame: goal``) or the world frame. With
    ``observation.layout: universal`` the same indices are scaled (lengths in units of the
    observation range, speeds in units of the agent's max speed, goal distances squashed) and
    the ``Box`` depends on K and M only (default 6 and 4), the same in every scenario, so one
    policy runs in all of them (:mod:`orca_env.observations`).

    Sensors (:mod:`orca_env.sensors`) add a block at ``S = 8 + 6 K + 5 M``, before the
    scenario's own features and the time: for a learned group whose ``kinematics`` is not
    ``holonomic``, ``S + 0, 1`` its heading (cos, sin in the observation frame, in [-1, 1]) and
    ``S + 2`` its angular velocity over its bound ([-1, 1]); then, with ``observation.lidar``,
    one entry per beam (``S + H + b``, H = 3 or 0): the range reading in metres ([0, range]),
    or over the range in the universal layout ([0, 1]), so the universal ``Box`` keeps a fixed
    size. ``observation.fov`` and ``observation.occlusion`` leave unseen agents out of the K
    neighbour slots (rewards still use the true neighbours). ``state()`` returns a
    global state for centralised critics: ``(n_slots * 10,)`` float32, per slot px, py, vx, vy,
    gx, gy, radius, max_speed, active, learned.

    ## Rewards

    A weighted sum of terms (see :class:`orca_env.config.RewardConfig` for definitions, default
    weights and their reasons): progress (potential-based, fraction of the initial distance or
    path length), goal, collision (swept along the step), deadlock (stalled), ORCA intervention,
    time, discomfort. ``infos[agent]['reward_terms']`` holds each weighted term; they sum to the
    reward.

    ## Starting State

    The scenario places agents (deterministic layouts such as RVO2's Circle, or rejection
    sampling that never overlaps agents, goals or obstacles and raises ``SpawnError`` after a
    bounded number of tries), with zero velocity.

    ## Episode End

    Termination (per agent): it reached its goal (status ``at_goal``), or it collided and
    ``on_collision`` is ``terminate`` (status ``collided``; a collision on the step the goal is
    reached still ends the episode as a collision, without the goal term, as in CrowdNav). With
    ``on_collision: continue`` collisions are penalised and reported (``collided_with``) but
    neither end the agent's episode nor change its status. Agents without the safety layer
    report no ORCA telemetry (intervention 0, no LP): they move exactly as commanded.
    Truncation (all live agents): ``max_steps`` reached (status ``timed_out``), or every
    remaining agent - live learned agents and crowd agents still heading for a goal - has been
    stalled for ``stall.window`` steps (status ``deadlocked``, when ``stall.end_episode``).
    CrowdNav's episode end is two options: ``time_limit_rule: crowdnav`` (the step that starts
    at ``max_steps * time_step - 1`` s is the last, and its time-out overrides a goal or a
    collision on it) and ``collision_check: crowdnav`` (the robot's new velocity against the
    others' velocity of the previous step; with ``collision_tolerance: 0``). A
    stalled agent that is not yet truncated reports status ``deadlocked`` and pays the deadlock
    term. Agents that leave the simulation on a step (at their goal, or after a collision) are
    still present in that step's observations and separations: they stood there at the end of
    the step; they are gone from the next step on.

    ## Infos

    ``status``, ``group``, ``reward_terms``, ``intervention`` (m/s, |safe - preferred velocity|),
    ``num_orca_lines``, ``used_lp3``, ``position_corrected``, ``distance_to_goal`` (path length
    with guidance), ``nearest_separation`` (clearance in m to the nearest agent or obstacle
    within the observation range; inf if none), ``collided_with`` (None, 'agent', 'obstacle').
    ``reward_terms`` holds the scenario's own terms too (``reward_term_names``). With
    ``infos="compact"`` the infos of a step hold only ``status`` (``reset`` still returns the full
    dicts); the training adapters use it, since the full dicts cost about half a core step.
    With ``infos="numeric"`` they hold numbers only, with the same keys at reset and on every
    step, for tensor libraries (:data:`orca_env.infos.NUMERIC_KEYS`): ``status`` and
    ``collided_with`` as integer codes (:class:`orca_env.codes.Status`,
    :class:`orca_env.codes.Hit`), ``group`` as an index into ``group_names``, one
    ``reward_<term>`` per reward term, and ``active``. With ``finished_agents="absorb"``
    full and compact infos hold ``active`` too.

    ## Arguments

    ``OrcaEnv(config=None, *, infos="full", finished_agents="leave", finished_actions="error",
    **kwargs)``: ``config`` is a YAML path, a dict or an ``EnvConfig``; every config key can be
    passed as a keyword (nested sections merge; ``max_cycles``, PettingZoo's name, is accepted
    for ``max_steps``). See :mod:`orca_env.config`. ``infos`` is ``"full"``, ``"compact"`` or
    ``"numeric"`` (see Infos); ``finished_agents`` and ``finished_actions`` are described under
    Agents and Action Space (:mod:`orca_env.finished`). The three change what is reported and
    accepted, never the episode.

    ## Version History

    * v0: initial version.
    """

    metadata = {"name": "orca_v0", "render_modes": ["human", "rgb_array"],
                "is_parallelizable": True, "render_fps": 4}

    def __init__(self, config: Any = None, *, infos: str = "full",
                 finished_agents: str = "leave", finished_actions: str = "error",
                 **kwargs: Any) -> None:
        check_choice("infos", infos, INFO_LEVELS)
        check_choice("finished_agents", finished_agents, FINISHED_AGENTS)
        check_choice("finished_actions", finished_actions, FINISHED_ACTIONS)
        #: The config as given (a mixture config holds only ``mixture``; see ``episode_config``).
        self.config: EnvConfig = load_config(config, **kwargs)
        #: ``"full"``, ``"compact"`` or ``"numeric"``: see the Infos section of the class
        #: docstring.
        self.infos = infos
        self._full_infos = infos == "full"
        #: ``"leave"`` or ``"absorb"`` (:mod:`orca_env.finished`).
        self.finished_agents = finished_agents
        #: ``"error"`` or ``"ignore"`` (:mod:`orca_env.finished`).
        self.finished_actions = finished_actions
        self._mixture: Mixture | None = None
        #: Index of this episode's mixture entry and its drawn ``{key: value}`` (mixtures only).
        self.mixture_entry: int | None = None
        self.mixture_values: dict = {}
        #: Mixture draws made again since the env was built because their agents could not be
        #: placed (see ``reset``).
        self.mixture_redraws = 0
        self._entry_configs: dict = {}
        cfg = self.config
        if cfg.mixture is not None:
            # Every entry at both ends of its ranges: one agent list, one observation space.
            self._mixture = Mixture(cfg.mixture)
            first, probes = self._mixture.check(OrcaEnv, infos)
            names = {p.reward_term_names for p in probes}
            if len(names) > 1:
                raise ValueError(f"config key 'mixture': every entry must have the same reward "
                                 f"terms (one reward matrix); got {sorted(names)}")
            cfg = first.config
        self._wc = WorldConfig(cfg)
        self.render_mode = cfg.render_mode
        wc = self._wc
        self.possible_agents = [f"agent_{k}" for k in range(wc.table.learned_slots.size)]
        if wc.universal:
            space = make_universal_space(wc.num_obs_agents, wc.num_obs_obstacles,
                                         wc.obs_features)
        else:
            space = make_space(wc.num_obs_agents, wc.num_obs_obstacles, wc.obs_range,
                               wc.table.speed_max, wc.table.radius_max, wc.obs_features)
        self.observation_spaces = {a: space for a in self.possible_agents}
        kin = kinematics_registry(wc.learned_kinematics)
        self.action_spaces = {a: kin.action_space() for a in self.possible_agents}
        self.state_space = spaces.Box(-np.inf, np.inf, (wc.n * STATE_FEATURES,),
                                      dtype=np.float32)
        self.agents: list[str] = []
        self.np_random: np.random.Generator | None = None
        self.np_random_seed: int | None = None
        #: Episodes since ``np_random`` was last seeded (0 after ``reset(seed=s)``): with
        #: ``np_random_seed`` it identifies the episode's random stream (scripted policies key
        #: their own noise on it).
        self.seed_episode = 0
        self._batch = make_batch(self, 1, 1)
        self._absorbing = RowRecord(1, len(self.possible_agents)) \
            if finished_agents == "absorb" else None
        #: The agents whose actions are used (``agents`` but the absorbing ones).
        self._acting: list[str] = []
        # The single env keeps each step's start for the ORCA-line inset (render, logs).
        self._batch.debug_world = 0
        self._ep: WorldEpisode | None = None
        self._renderer = None
        #: Slot whose ORCA half-planes the renderer draws in an inset (None: no inset).
        self.debug_agent: int | None = None

    # -- PettingZoo API --------------------------------------------------------------------
    def observation_space(self, agent: str) -> spaces.Box:
        """The observation space of ``agent`` (the same object on every call)."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Box:
        """The action space of ``agent`` (the same object on every call)."""
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None):
        """Start an episode; all randomness flows from ``np_random`` seeded here.

        Args:
            seed: Seeds ``np_random`` (and so the whole episode); ``None`` keeps the current
                generator (seeded from entropy the first time).
            options: ``None`` or a dict; the env reads no option, so a non-empty one is
                ignored with a ``UserWarning`` naming its keys (not silently).

        Returns:
            ``(observations, infos)`` dicts keyed by agent.
        """
        check_seed("seed", seed, allow_list=False)
        if options is not None and not isinstance(options, dict):
            raise ValueError(f"options must be None or a dict, got {options!r}")
        if options:  # no key is read: say so rather than ignore it silently
            # A warning, not an error: PettingZoo's API test resets with options={"options": 1}.
            warnings.warn(f"options: this env reads no reset options, ignoring "
                          f"{sorted(map(str, options))[:5]} (set them in the env config)",
                          UserWarning, stacklevel=2)
        announce_compilation()
        if seed is not None or self.np_random is None:
            self.np_random, self.np_random_seed = seeding.np_random(
                None if seed is None else int(seed))
            self.seed_episode = 0
        else:
            self.seed_episode += 1
        if self._renderer is not None:
            self._renderer.new_episode()
        ep = self._draw_episode()
        self._ep = ep
        self._wc = ep.config
        self._batch.load([0], [ep])
        self._warned_clip = False
        self.agents = self.possible_agents[:]
        self._agent_set = set(self.agents)
        self._acting = self.agents
        if self._absorbing is not None:
            self._absorbing.reset(slice(None))
        obs = np.zeros((len(self.agents), self._batch.obs_size), dtype=np.float32)
        sep = np.full(len(self.agents), np.inf)
        rows = np.arange(len(self.agents))
        if self._wc.extra_obs:
            self._batch.run_hooks(rows)
        self._batch.observe([0], obs, sep)
        if self.infos == "numeric":
            infos = numeric_infos(self.agents, reset_columns(
                self.live_slots, self._batch.slots, self.reward_term_names, sep))
        else:
            infos = reset_infos(self.agents, self._wc.table, self.live_slots,
                                self.path_lengths, sep)
            if self._absorbing is not None:
                for info in infos.values():
                    info["active"] = True
        return dict(zip(self.agents, obs, strict=True)), infos

    def _draw_episode(self) -> WorldEpisode:
        """This reset's episode: the config's, or a mixture draw's (with redraws)."""
        def redraw(k, values, exc):
            self.mixture_redraws += 1
            redraw_warning(self.mixture_redraws, k, values, exc)

        ep, k, values = draw_episode(self._wc, self._mixture, self._entry_configs,
                                     self.np_random, int(self.np_random_seed),
                                     int(self.seed_episode), redraw)
        if self._mixture is not None:
            if ep.table.learned_slots.size != len(self.possible_agents):
                raise RuntimeError(f"mixture entry {k} with {values} has "
                                   f"{ep.table.learned_slots.size} learned agents, not "
                                   f"{len(self.possible_agents)}")
            self.mixture_entry, self.mixture_values = k, values
        return ep

    def step(self, actions: dict):
        """Advance one time step.

        Args:
            actions: ``{agent: (2,) array}`` for exactly ``agents`` (see ``finished_actions``
                and ``finished_agents`` in the class docstring).

        Returns:
            ``(observations, rewards, terminations, truncations, infos)``, dicts keyed by the
            agents that acted.

        Raises:
            RuntimeError: Before ``reset`` or after the episode ended.
            ValueError: On a bad action dict (see the class docstring).
        """
        if self._ep is None:
            raise RuntimeError("step() called before reset()")
        if not self.agents:
            raise RuntimeError("step() called after the episode ended; call reset()")
        batch = self._batch
        live_rows = np.flatnonzero(batch.alive)
        act = np.zeros((batch.alive.size, self.action_spaces[self.possible_agents[0]].shape[0]))
        act[live_rows] = self._actions_to_array(actions)
        res = batch.step(act, batch.run_hooks if self._wc.extra_obs or self._wc.extra_terms
                         else None)
        agents = self.agents
        absorbing = self._absorbing
        if absorbing is None:
            r = live_rows
            acted = None
        else:
            absorbing.absorb(res)
            r = np.arange(batch.alive.size)  # every agent, until the world ends
            acted = res.acted
        obs_d = dict(zip(agents, res.obs[r], strict=True))
        rew_d = dict(zip(agents, res.reward[r].tolist(), strict=True))
        term_d = dict(zip(agents, res.term[r].tolist(), strict=True))
        trunc_d = dict(zip(agents, res.trunc[r].tolist(), strict=True))
        if self._full_infos:
            infos = step_infos(agents, res, r, batch.learned[r], batch.slots, self._wc.table,
                               self.reward_term_names, acted)
        elif self.infos == "numeric":
            infos = numeric_infos(agents, info_columns(
                res, r, batch.learned[r], batch.slots, self.reward_term_names,
                res.acted[r]))
        else:
            infos = compact_infos(agents, res.status[r])
            if acted is not None:
                for info, on in zip(infos.values(), acted.tolist(), strict=True):
                    info["active"] = on
        done = res.term[r] | res.trunc[r]
        if done.any():
            self.agents = [a for a, d in zip(agents, done.tolist(), strict=True) if not d]
            self._agent_set = set(self.agents)
        self._acting = self.agents if absorbing is None or not self.agents else \
            [a for a, on in zip(self.possible_agents, batch.alive.tolist(), strict=True) if on]
        return obs_d, rew_d, term_d, trunc_d, infos

    def _actions_to_array(self, actions: dict) -> np.ndarray:
        """The actions of the acting agents (``agents`` but the absorbing ones), checked."""
        if not isinstance(actions, dict):
            raise ValueError(f"actions must be a dict keyed by agent, got {type(actions)}")
        acting = self._acting
        if len(actions) != len(self.agents) or actions.keys() != self._agent_set:
            if self.finished_actions == "ignore":
                known = self.possible_agents
                where = "agents"
            else:
                known = self.agents
                where = "live agents"
            known_set = set(known)
            unknown = [a for a in actions if a not in known_set]
            if unknown:
                hint = "" if self.finished_actions == "ignore" else \
                    " (finished_actions='ignore' ignores the actions of finished agents)"
                raise ValueError(f"action for unknown or finished agent {unknown[0]!r}; "
                                 f"{where}: {known}{hint}")
            missing = [a for a in acting if a not in actions]
            if missing:
                raise ValueError(f"no action for live agent {missing[0]!r}")
            if self.finished_actions == "error":  # an absorbing agent without an action
                missing = [a for a in self.agents if a not in actions]
                raise ValueError(f"no action for agent {missing[0]!r}, which finished and "
                                 f"absorbs (its action is ignored; finished_actions='ignore' "
                                 f"lets it be left out)")
        try:
            raw = np.array(list(map(actions.__getitem__, acting)))
        except (ValueError, TypeError):
            raw = None
        size = self.action_spaces[self.possible_agents[0]].shape[0]
        # Real numbers only: numpy would turn "1" into 1.0, True into 1.0 and drop the
        # imaginary part of complex numbers.
        if raw is None or raw.shape != (len(acting), size) or raw.dtype.kind not in "iuf":
            for a in acting:
                try:
                    one = np.asarray(actions[a])
                except (ValueError, TypeError):
                    one = None
                if one is None or one.shape != (size,) or one.dtype.kind not in "iuf":
                    raise ValueError(f"action of agent {a!r} must be {size} real numbers, got "
                                     f"{actions[a]!r}")
        act = raw.astype(np.float64)
        # Clips to the box, then (holonomic) the norm to 1.
        bad, clipped = clip_actions(act, self._wc.learned_kinematics == "holonomic")
        if bad >= 0:
            names = [acting[i] for i in np.flatnonzero(~np.isfinite(act).all(axis=1))]
            raise ValueError(f"non-finite action (NaN or inf) for agent(s) {names}: "
                             f"{actions[names[0]]!r}")
        if clipped and not self._warned_clip:
            self._warned_clip = True
            warnings.warn("actions outside the box [-1, 1] were clipped (warned once per "
                          "episode)", stacklevel=3)
        return act

    def render(self):
        """Render per ``render_mode``; ``None`` warns and returns ``None`` (Gymnasium style)."""
        if self.render_mode is None:
            warnings.warn("render() called with render_mode=None", stacklevel=2)
            return None
        from . import render as _render  # pygame itself is imported on the first frame
        if self._renderer is None:
            self._renderer = _render.Renderer(self.render_mode, self.metadata["render_fps"],
                                              debug_agent=self.debug_agent)
        return self._renderer.draw(self.render_data())

    def __getstate__(self) -> dict:
        # The renderer holds pygame surfaces (not picklable) and the batch a thread pool; a
        # copy draws with a new renderer, created on its first render().
        state = self.__dict__.copy()
        state["_renderer"] = None
        return state

    def close(self) -> None:
        """Release the renderer, if any."""
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None


def parallel_env(config: Any = None, **kwargs: Any) -> OrcaEnv:
    """The parallel env: ``parallel_env("configs/circle.yaml", max_steps=500)``."""
    return OrcaEnv(config, **kwargs)


def raw_env(config: Any = None, **kwargs: Any):
    """The AEC version without PettingZoo's order-enforcing wrapper."""
    return parallel_to_aec_wrapper(OrcaEnv(config, **kwargs))


def env(config: Any = None, **kwargs: Any):
    """The AEC version (PettingZoo's ``parallel_to_aec``, with its order-enforcing wrapper)."""
    return parallel_to_aec(OrcaEnv(config, **kwargs))
