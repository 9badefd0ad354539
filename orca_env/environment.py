"""The generic PettingZoo ``ParallelEnv`` on the ORCA core, driven by a scenario."""

from __future__ import annotations

import math
import numbers
import os
import sys
import warnings
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import ParallelEnv
from pettingzoo.utils.conversions import parallel_to_aec, parallel_to_aec_wrapper

from .codes import STATE_FEATURES, STATUSES, GoalBehavior, Population, StateField, code_of
from .collisions import agent_collisions, agent_collisions_crowdnav, obstacle_collisions
from .config import EnvConfig, GroupConfig, load_config, parse_section, tolerance_parts
from .core import Simulator
from .frames import frame_axes, world_to_frame
from .guidance import Roadmap
from .mixture import Mixture
from .observations import (
    TIME_FEATURE,
    UNIVERSAL_DEFAULTS,
    build_observations,
    build_observations_universal,
    make_space,
    make_universal_space,
    nearest_clearances,
    time_fraction,
)
from .rewards import TERMS, extra_weights, reward_terms, term_dicts
from .scenarios import SpawnError, make_scenario
from .scenarios.base import RANDOM_RADIUS, RANDOM_SPEED
from .step import clip_actions, goals_and_stalls, outcomes, preferred_velocities

__all__ = ["OrcaEnv", "parallel_env", "env", "raw_env", "INFO_LEVELS"]

#: What ``infos`` holds per agent after a step: ``full`` (everything, for evaluation and
#: logging) or ``compact`` (only ``status``, for training: building the per-agent dicts of
#: ``full`` costs about half a core step at 100 agents).
INFO_LEVELS = ("full", "compact")
#: Draws a mixture makes at one reset before a scenario's SpawnError ends it (see ``reset``).
MIXTURE_SPAWN_DRAWS = 10

#: Status names indexed by code, as an array: one fancy-indexing call names every agent's status.
_STATUS_NAMES = np.array(STATUSES, dtype=object)
_ORCA_PARAMS = ("neighbor_dist", "max_neighbors", "time_horizon", "time_horizon_obst")


_announced = False


def _announce_compilation() -> None:
    """Say once per process, on stderr, that numba is about to compile (15-20 s of silence).

    numba compiles the kernels on first use and caches them on disk (``__pycache__`` beside the
    package, or ``NUMBA_CACHE_DIR``); later processes load them in a fraction of a second. The
    cache check reads numba's index file of the core's step kernel, a numba internal: when it
    cannot be read, nothing is said.
    """
    global _announced
    if _announced:
        return
    _announced = True
    try:
        from .core import kernels  # noqa: PLC0415

        # The single env's step kernel, and the vector env's when it is in use (a process that
        # only steps worlds through OrcaVectorEnv never compiles the single env's).
        entries = [kernels.compute_velocities_serial]
        vector = sys.modules.get("orca_env.vector")
        if vector is not None:
            entries.append(vector._step_worlds)
        indexes = [k._cache._cache_file._index_path for k in entries]
        cached = any(os.path.exists(i) for i in indexes)
        where = os.path.dirname(indexes[0])
    except Exception:  # noqa: BLE001  (numba internals differ between versions)
        return
    if not cached:
        print(f"orca-env: compiling numba kernels, once per machine and version (about 20 s); "
              f"cache: {where} (set NUMBA_CACHE_DIR to move it, e.g. for containers or "
              f"cluster workers)", file=sys.stderr, flush=True)


class OrcaEnv(ParallelEnv):
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

    ## Action Space

    ``Box(-1, 1, (2,), float32)`` per agent: the preferred velocity (or velocity, without the
    safety layer) in units of the agent's max speed, in the same frame as the observation
    (``observation.frame``): goal-aligned by default, so ``(1, 0)`` is full speed towards the goal
    (or waypoint) and ``(0, 1)`` full speed to its left; world frame with ``frame: world``. A
    policy that sees a rotation-invariant observation must act in that frame too, or it could not
    know where its goal lies. The norm is clipped to 1.
    NaN or inf is a ``ValueError`` naming the agent; a finite action outside the box is clipped,
    with one warning per episode. The action dict must hold exactly the live agents.

    ## Observation Space

    ``Box(float32)`` of size ``8 + 6 K + 5 M``, see :mod:`orca_env.observations` for the index
    table (goal or waypoint vector and distance, remaining path length, own velocity, radius and
    max speed, K nearest agents within ``range`` and M nearest obstacle segments). Vectors are in
    the goal-aligned frame (``observation.frame: goal``) or the world frame. With
    ``observation.layout: universal`` the same indices are scaled (lengths in units of the
    observation range, speeds in units of the agent's max speed, goal distances squashed) and
    the ``Box`` depends on K and M only (default 6 and 4), the same in every scenario, so one
    policy runs in all of them (:mod:`orca_env.observations`). ``state()`` returns a
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

    ## Arguments

    ``OrcaEnv(config=None, *, infos="full", **kwargs)``: ``config`` is a YAML path, a dict or an
    ``EnvConfig``; every config key can be passed as a keyword (nested sections merge). See
    :mod:`orca_env.config`. ``infos`` is ``"full"`` or ``"compact"`` (see Infos): it changes what
    is reported, never the episode.

    ## Version History

    * v0: initial version.
    """

    metadata = {"name": "orca_v0", "render_modes": ["human", "rgb_array"],
                "is_parallelizable": True, "render_fps": 4}

    def __init__(self, config: Any = None, *, infos: str = "full", **kwargs: Any) -> None:
        if infos not in INFO_LEVELS:
            raise ValueError(f"infos must be one of {list(INFO_LEVELS)}, got {infos!r}")
        #: The config as given (a mixture config holds only ``mixture``; see ``episode_config``).
        self.config: EnvConfig = load_config(config, **kwargs)
        #: ``"full"`` or ``"compact"``: see the Infos section of the class docstring.
        self.infos = infos
        self._full_infos = infos == "full"
        self._mixture: Mixture | None = None
        #: Index of this episode's mixture entry and its drawn ``{key: value}`` (mixtures only).
        self.mixture_entry: int | None = None
        self.mixture_values: dict = {}
        #: Mixture draws made again since the env was built because their agents could not be
        #: placed (see ``reset``).
        self.mixture_redraws = 0
        cfg = self.config
        if cfg.mixture is not None:
            # Every entry at both ends of its ranges: one agent list, one observation space.
            self._mixture = Mixture(cfg.mixture)
            cfg = self._mixture.check(OrcaEnv, infos)[0].config
        self._configure(cfg)
        self.render_mode = cfg.render_mode

        self.possible_agents = [f"agent_{k}" for k in range(self._learned_slots.size)]
        v_max = self._speed_max
        r_max = self._radius_max
        if self.universal_layout:
            space = make_universal_space(self.num_obs_agents, self.num_obs_obstacles,
                                         self._obs_features)
            self.observation_spaces = {a: space for a in self.possible_agents}
        else:
            self.observation_spaces = {
                a: make_space(self.num_obs_agents, self.num_obs_obstacles, self.obs_range, v_max,
                              r_max, self._obs_features) for a in self.possible_agents}
        self.action_spaces = {a: spaces.Box(-1.0, 1.0, (2,), dtype=np.float32)
                              for a in self.possible_agents}
        self._obs_low = self.observation_spaces[self.possible_agents[0]].low
        self._obs_high = self.observation_spaces[self.possible_agents[0]].high
        self.agents: list[str] = []
        self.np_random: np.random.Generator | None = None
        self.np_random_seed: int | None = None
        #: Episodes since ``np_random`` was last seeded (0 after ``reset(seed=s)``): with
        #: ``np_random_seed`` it identifies the episode's random stream (scripted policies key
        #: their own noise on it).
        self.seed_episode = 0
        self.sim: Simulator | None = None
        self._renderer = None
        #: Slot whose ORCA half-planes the renderer draws in an inset (None: no inset).
        self.debug_agent: int | None = None

    # -- construction ----------------------------------------------------------------------
    def _configure(self, cfg: EnvConfig) -> None:
        """Set up the scenario, slots and settings of one config (a mixture: at each reset)."""
        self._cfg = cfg
        self.scenario = make_scenario(cfg.scenario, **cfg.scenario_kwargs)
        sc = self.scenario
        groups = cfg.groups
        if groups is None:
            groups = [parse_section(GroupConfig, g, f"{sc.name}.groups[{i}].")
                      for i, g in enumerate(sc.DEFAULT_GROUPS)]
        self.groups: list[GroupConfig] = groups
        self._setup_slots(groups)
        self.time_step = cfg.time_step if cfg.time_step is not None else sc.TIME_STEP
        self.max_steps = cfg.max_steps if cfg.max_steps is not None else sc.MAX_STEPS
        # The step that times out, and whether the time-out overrides that step's goals and
        # collisions (config key time_limit_rule).
        self._last_step, self._timeout_first = self.max_steps, False
        if cfg.time_limit_rule == "crowdnav":
            self._last_step, self._timeout_first = crowdnav_last_step(self.max_steps,
                                                                      self.time_step)
        self._crowdnav_collisions = cfg.collision_check == "crowdnav"
        ob = cfg.observation
        #: Whether observations use the universal layout (``observation.layout``).
        self.universal_layout = ob.layout == "universal"
        obs_defaults = UNIVERSAL_DEFAULTS if self.universal_layout else sc.OBS_DEFAULTS
        self.num_obs_agents = ob.num_agents if ob.num_agents is not None \
            else obs_defaults["num_agents"]
        self.num_obs_obstacles = ob.num_obstacles if ob.num_obstacles is not None \
            else obs_defaults["num_obstacles"]
        self.obs_range = ob.range if ob.range is not None else sc.OBS_DEFAULTS["range"]
        self._world_frame = ob.frame == "world"
        self._residual = cfg.action == "residual"
        if cfg.guidance and not sc.HAS_OBSTACLES:
            raise ValueError(f"config key 'guidance' needs a scenario with obstacles; "
                             f"{sc.name} has none")
        rw = cfg.rewards
        self._weights = np.array([getattr(rw, t) for t in TERMS], dtype=np.float64)
        # The scenario's own reward terms and observation features (its hooks).
        self._extra_terms = tuple(sc.EXTRA_REWARDS)
        self._extra_weights = extra_weights(sc.EXTRA_REWARDS, rw.extra, sc.name)
        #: Names of the reward terms, built-in then the scenario's, as in ``reward_terms``.
        self.reward_term_names = TERMS + self._extra_terms
        self._extra_obs = tuple(sc.EXTRA_OBSERVATIONS)
        # Features after the agents and segments: the scenario's, then the time (observation.time).
        self._time_obs = bool(ob.time)
        self._obs_features = self._extra_obs + ((TIME_FEATURE,) if self._time_obs else ())
        self.state_space = spaces.Box(-np.inf, np.inf, (self._n * STATE_FEATURES,),
                                      dtype=np.float32)

    @property
    def episode_config(self) -> EnvConfig:
        """The config of the current episode: ``config``, or the mixture entry drawn at reset.

        Before the first reset of a mixture it is entry 0 at the low end of its ranges.
        """
        return self._cfg

    @property
    def mixture_weights(self) -> list[float] | None:
        """The mixture's entry weights (``None`` without a mixture); see ``set_mixture_weights``."""
        return None if self._mixture is None else self._mixture.weights

    def set_mixture_weights(self, weights: Any) -> None:
        """Draw the mixture's entries with new weights from the next ``reset`` on.

        For schedules and curricula (the training config's ``stages``): the episode under way
        is not touched, and the entries, their ranges, the agents and the spaces stay as they
        are. ``config`` keeps the weights the env was built with.

        Args:
            weights: One finite number > 0 per mixture entry, in entry order.

        Raises:
            ValueError: If the env has no mixture, or on a bad list (nothing changes then).
        """
        if self._mixture is None:
            raise ValueError("set_mixture_weights: this env's config has no mixture")
        self._mixture.set_weights(weights)

    def _setup_slots(self, groups: list[GroupConfig]) -> None:
        sc = self.scenario
        if not groups:
            raise ValueError("config key 'groups' must list at least one group")
        pop, goal_b, gid, names = [], [], [], []
        params = {k: [] for k in ("radius", "max_speed", "pref_speed", *_ORCA_PARAMS)}
        noise, resp, padding, randomized, pref_given = [], [], [], [], []
        for g_idx, g in enumerate(groups):
            where = f"groups[{g_idx}]"
            if g.population == "learned" and g.on_goal == "new_goal":
                raise ValueError(f"config key '{where}.on_goal': new_goal is for crowd groups "
                                 f"(orca, non_reactive, linear); a learned agent terminates at "
                                 f"its goal, use stop or stay")
            if g.population != "learned" and not g.safety_layer:
                raise ValueError(f"config key '{where}.safety_layer' applies to learned groups "
                                 f"only, got false for population {g.population!r}")
            if g.population == "learned" and g.noise is not None:
                raise ValueError(f"config key '{where}.noise' applies to scripted groups (orca, "
                                 f"non_reactive, linear); a learned agent's preferred velocity "
                                 f"is its action, got noise={g.noise!r}")
            if g.population == "linear" and g.avoids is not None:
                raise ValueError(f"config key '{where}.avoids': linear agents avoid no one "
                                 f"(CrowdNav's linear humans); use population orca to choose "
                                 f"whom they avoid, got avoids={g.avoids!r}")
            if g.randomize_attributes:
                for key in ("radius", "max_speed"):
                    if getattr(g, key) is not None:
                        raise ValueError(f"config key '{where}.{key}' cannot be set with "
                                         f"randomize_attributes: true, which draws it each "
                                         f"episode; got {key}={getattr(g, key)!r}")
            default_noise = sc.CROWD_NOISE if g.population == "orca" else 0.0
            nz = g.noise if g.noise is not None else default_noise
            names.append(g.name or f"{g.population}_{g_idx}")
            for _ in range(g.count):
                pop.append(code_of(Population, g.population))
                goal_b.append(code_of(GoalBehavior, g.on_goal))
                gid.append(g_idx)
                for k in params:
                    v = getattr(g, k)
                    params[k].append(sc.AGENT_DEFAULTS[k] if v is None else v)
                noise.append(nz)
                unsafe = g.population == "non_reactive" or (g.population == "learned"
                                                            and not g.safety_layer)
                resp.append(0.0 if unsafe else 1.0)
                padding.append(g.orca_padding)
                randomized.append(g.randomize_attributes)
                pref_given.append(g.pref_speed is not None)
        self._pop = np.array(pop, dtype=np.int64)
        if not np.any(self._pop == Population.LEARNED):
            raise ValueError("config key 'groups' must contain at least one learned agent "
                             "(population: learned, count >= 1)")
        self._n = self._pop.size
        self._on_goal = np.array(goal_b, dtype=np.int64)
        self._group = np.array(gid, dtype=np.int64)
        self.group_names = names
        # The config's attributes; slots with randomize_attributes draw theirs at every reset
        # (see reset), the others keep these.
        self._base_radius = np.array(params["radius"], dtype=np.float64)
        self._base_max_speed = np.array(params["max_speed"], dtype=np.float64)
        self._base_pref_speed = np.array(params["pref_speed"], dtype=np.float64)
        self._randomized = np.array(randomized, dtype=bool)
        self._any_randomized = bool(self._randomized.any())
        #: Randomized slots whose pref_speed is their drawn v_pref (the group left it unset).
        self._pref_is_vpref = self._randomized & ~np.array(pref_given, dtype=bool)
        self._radius = self._base_radius.copy()
        self._max_speed = self._base_max_speed.copy()
        self._pref_speed = self._base_pref_speed.copy()
        # Bounds over every episode (observation spaces, the tolerance check).
        lo_r, hi_r = RANDOM_RADIUS
        self._radius_min = float(np.where(self._randomized, lo_r, self._base_radius).min())
        self._radius_max = float(np.where(self._randomized, hi_r, self._base_radius).max())
        self._speed_max = float(np.where(self._randomized, RANDOM_SPEED[1],
                                         self._base_max_speed).max())
        self._padding = np.array(padding, dtype=np.float64)
        self._any_padding = bool(np.any(self._padding > 0.0))
        self._layers, self._avoid_masks = _visibility(groups, names, self._group, self._pop)
        self._orca = {k: np.array(params[k]) for k in _ORCA_PARAMS}
        self._orca["max_neighbors"] = self._orca["max_neighbors"].astype(np.int64)
        self._noise = np.array(noise, dtype=np.float64)
        self._any_noise = bool(np.any(self._noise > 0.0))
        self._no_noise = np.zeros(0)
        self._no_slots = np.zeros(0, dtype=np.int64)
        self._resp = np.array(resp, dtype=np.float64)
        self._unsafe = (self._pop == Population.LEARNED) & (self._resp == 0.0)
        self._learned_slots = np.flatnonzero(self._pop == Population.LEARNED)
        tol = self._cfg.collision_tolerance
        #: Tolerated overlap: ``_tol_abs`` metres plus ``_tol_rel`` times the smaller radius.
        self._tol_abs, self._tol_rel = tolerance_parts(tol)
        if self._tol_abs + self._tol_rel * self._radius_min >= self._radius_min:
            raise ValueError(f"config key 'collision_tolerance' must be below the smallest agent "
                             f"radius ({self._radius_min!r} m), or contacts with walls would "
                             f"never count; got {tol!r}")
        self._crowd = self._pop != Population.LEARNED

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
            options: Unused.

        Returns:
            ``(observations, infos)`` dicts keyed by agent.
        """
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral)
                                 or seed < 0):
            raise ValueError(f"seed must be None or a non-negative integer, got {seed!r}")
        if options is not None and not isinstance(options, dict):
            raise ValueError(f"options must be None or a dict, got {options!r}")
        _announce_compilation()
        if seed is not None or self.np_random is None:
            self.np_random, self.np_random_seed = seeding.np_random(
                None if seed is None else int(seed))
            self.seed_episode = 0
        else:
            self.seed_episode += 1
        if self._renderer is not None:
            self._renderer.new_episode()
        rng = self.np_random
        # A mixture draws its entry and ranges first from the seeded generator. A draw whose
        # agents cannot be placed (a corner of the ranges too crowded for the scenario's zones:
        # SpawnError) is drawn again from the same generator, up to MIXTURE_SPAWN_DRAWS times,
        # so a training run does not die on a rare draw; episodes that place at the first draw
        # are unchanged. A plain config raises at once. SpawnError covers the scenario's
        # placement and the env's start-overlap check.
        draws = MIXTURE_SPAWN_DRAWS if self._mixture is not None else 1
        for attempt in range(draws):
            if self._mixture is not None:
                k, cfg, values = self._mixture.draw(rng)
                self._configure(cfg)
                if self._learned_slots.size != len(self.possible_agents):
                    raise RuntimeError(f"mixture entry {k} with {values} has "
                                       f"{self._learned_slots.size} learned agents, not "
                                       f"{len(self.possible_agents)}")
                self.mixture_entry, self.mixture_values = k, values
            try:
                world, sim, starts, goals = self._build_world(rng)
                break
            except SpawnError as exc:
                if attempt == draws - 1:
                    if self._mixture is None:
                        raise
                    raise SpawnError(f"mixture: {draws} draws in a row could not place their "
                                     f"agents; the last, entry {k} with {values}: {exc}"
                                     ) from exc
                # Redraws bias the mixture towards what can be placed: count them, say so once.
                self.mixture_redraws += 1
                if self.mixture_redraws == 1:
                    warnings.warn(f"mixture entry {k} with {values} could not place its agents "
                                  f"({exc}); drawn again. Such draws are left out of training, "
                                  f"so the entries and ranges trained on differ from the "
                                  f"config's; env.mixture_redraws counts them", stacklevel=2)
        sc = self.scenario
        self.world = world
        self.sim = sim
        self._starts = starts
        self._goals = goals.copy()
        self._goal_tol = np.asarray(sc.goal_tolerance(self._radius), dtype=np.float64)
        self._obst_points = np.ascontiguousarray(sim.obstacle_points, dtype=np.float64)
        self._obst_next = np.ascontiguousarray(sim.obstacle_next, dtype=np.int64)
        self._obst_dirs = np.ascontiguousarray(sim.obstacle_unit_dirs, dtype=np.float64)
        self._has_obstacles = self._obst_points.shape[0] > 0
        self._roadmap = None
        if self._cfg.guidance:
            self._roadmap = Roadmap(sim, float(self._radius.max()),
                                    points=world.roadmap_points)
            self._goal_costs = self._roadmap.goal_costs(self._goals, self._radius)
        self._parked = np.zeros(self._n, dtype=bool)
        self._stall = np.zeros(self._n, dtype=np.int64)
        # Index into STATUSES per slot: a learned slot keeps its last reported status after it
        # leaves; crowd slots are at_goal once they reached a final goal, deadlocked while stalled.
        self._slot_status = np.zeros(self._n, dtype=np.int8)
        self._step_count = 0
        self._warned_clip = False
        self._all = np.arange(self._n, dtype=np.int64)
        self._update_targets()
        self._d0 = np.maximum(self._path_len.copy(), 1e-9)
        self._d_prev = self._path_len.copy()
        self.agents = self.possible_agents[:]
        self._agent_set = set(self.agents)
        self._live = self._learned_slots.copy()
        obs, sep_a, sep = self._observe(self._live)
        zero_terms = dict.fromkeys(TERMS, 0.0)
        infos = {}
        for k, a in enumerate(self.agents):
            i = self._live[k]
            infos[a] = {"status": "active", "group": self.group_names[self._group[i]],
                        "reward_terms": dict(zero_terms), "intervention": 0.0,
                        "num_orca_lines": 0, "used_lp3": False, "position_corrected": False,
                        "distance_to_goal": float(self._path_len[i]),
                        "nearest_separation": float(sep[k]), "collided_with": None}
        return dict(zip(self.agents, obs, strict=True)), infos

    def _build_world(self, rng: np.random.Generator) -> tuple:
        """The episode's world, its simulator with the obstacles, and the starts and goals."""
        sc = self.scenario
        sc.start_episode(int(self.np_random_seed), int(self.seed_episode))
        world = sc.build_world(rng)
        ad = sc.AGENT_DEFAULTS
        sim = Simulator(self.time_step, neighbor_dist=ad["neighbor_dist"],
                        max_neighbors=ad["max_neighbors"], time_horizon=ad["time_horizon"],
                        time_horizon_obst=ad["time_horizon_obst"], radius=ad["radius"],
                        max_speed=ad["max_speed"], num_threads=self._cfg.num_threads or 1)
        for poly in world.obstacles:
            sim.add_obstacle(np.asarray(poly, dtype=np.float64))
        if world.boundary is not None:
            sim.add_boundary(np.asarray(world.boundary, dtype=np.float64))
        sim.process_obstacles()
        starts, goals = self._populate(rng, sim)
        orca_radius = self._radius + self._padding if self._any_padding else self._radius
        sim.add_agents(starts, radius=orca_radius, max_speed=self._max_speed,
                       responsibility=self._resp, layer=self._layers,
                       avoid_mask=self._avoid_masks, **self._orca)
        self._check_spawns(sim, starts)
        return world, sim, starts, goals

    def _populate(self, rng: np.random.Generator, sim: Simulator):
        """Starts and goals from the scenario, and this episode's radii and speeds.

        Slots of groups with ``randomize_attributes`` get the radius and v_pref the scenario
        drew (:meth:`Scenario.populate`): v_pref becomes their max speed, and their preferred
        speed unless their group sets ``pref_speed``. The others keep the config's values.
        """
        sc = self.scenario
        out = sc.populate(rng, sim, self._base_radius.copy(), self._base_max_speed.copy(),
                          self._randomized.copy())
        if not (isinstance(out, tuple) and len(out) == 4):
            raise RuntimeError(f"{sc.name}.populate must return (starts, goals, radii, "
                               f"max_speeds), got {type(out).__name__}")
        starts, goals, radii, speeds = (np.asarray(a, dtype=np.float64) for a in out)
        n = self._n
        if starts.shape != (n, 2) or goals.shape != (n, 2):
            raise RuntimeError(f"{sc.name}.place_agents returned shapes {starts.shape}, "
                               f"{goals.shape}; expected ({n}, 2)")
        fixed = ~self._randomized
        lo_r, hi_r = RANDOM_RADIUS
        lo_v, hi_v = RANDOM_SPEED
        ok = (radii.shape == (n,) and speeds.shape == (n,)
              and np.array_equal(radii[fixed], self._base_radius[fixed])
              and np.array_equal(speeds[fixed], self._base_max_speed[fixed])
              and bool(np.all((radii[~fixed] >= lo_r) & (radii[~fixed] <= hi_r)))
              and bool(np.all((speeds[~fixed] >= lo_v) & (speeds[~fixed] <= hi_v))))
        if not ok:
            raise RuntimeError(f"{sc.name}.populate must return radii and max speeds of shape "
                               f"({n},) that keep the config's values except for randomized "
                               f"slots, drawn within {RANDOM_RADIUS} m and {RANDOM_SPEED} m/s")
        if self._any_randomized:
            self._radius = radii
            self._max_speed = speeds
            self._pref_speed = np.where(self._pref_is_vpref, speeds, self._base_pref_speed)
        return starts, goals

    def _check_spawns(self, sim: Simulator, starts: np.ndarray) -> None:
        """Refuse a layout whose agents start overlapping each other or the obstacles.

        Whatever the scenario: a start that overlaps by more than ``collision_tolerance`` would
        count as a collision on the first step. Agents are checked against their 16 nearest
        neighbours (the core's kd-tree), walls with the core's walkability test.

        Raises:
            SpawnError: Naming the scenario, the first offending slot and what to change.
        """
        tol, rel = self._tol_abs, self._tol_rel
        r = self._radius
        nbr, dsq = sim.query_agent_neighbors(min(16, self._n - 1), 2.0 * float(r.max()))
        other = r[np.maximum(nbr, 0)]
        gap = np.sqrt(dsq) - r[:, None] - other
        pair_tol = tol + rel * np.minimum(r[:, None], other)  # rel 0: exactly tol
        bad = np.flatnonzero(((nbr >= 0) & (gap < -pair_tol)).any(axis=1))
        if bad.size:
            i = int(bad[0])
            raise SpawnError(f"{self.scenario.name}: agents start overlapping (slot {i} at "
                             f"{starts[i].tolist()} and its neighbours, radius {r[i]} m); use a "
                             f"larger layout (scenario_kwargs), fewer agents or smaller radii")
        if sim.num_obstacle_vertices:
            walkable = np.ones(self._n, dtype=bool)
            for radius in np.unique(r):
                sel = r == radius
                walkable[sel] = sim.is_walkable(starts[sel],
                                                clearance=max(radius - (tol + rel * radius), 0.0))
            if not walkable.all():
                i = int(np.flatnonzero(~walkable)[0])
                raise SpawnError(f"{self.scenario.name}: slot {i} starts at "
                                 f"{starts[i].tolist()}, inside or within its radius ({r[i]} m) "
                                 f"of an obstacle or outside the boundary")

    def _update_targets(self) -> None:
        """Waypoints (goal, or roadmap waypoint) and remaining path length of every slot."""
        pos = self.sim.positions
        if self._roadmap is None:
            self._targets = self._goals
            self._path_len = np.linalg.norm(self._goals - pos, axis=1)
        else:
            act = np.flatnonzero(self.sim.active)
            if not hasattr(self, "_targets") or self._targets is self._goals \
                    or self._targets.shape[0] != self._n:
                self._targets = self._goals.copy()
                self._path_len = np.linalg.norm(self._goals - pos, axis=1)
            t, d = self._roadmap.waypoints(act, pos, self._goals, self._radius, self._goal_costs)
            self._targets[act] = t
            self._path_len[act] = d

    def _observe(self, slots: np.ndarray):
        """Observations ``(k, obs_size)`` float32 plus agent and overall clearances ``(k,)``."""
        sim = self.sim
        k = len(slots)
        kk, mm = self.num_obs_agents, self.num_obs_obstacles
        pos = sim.positions
        # The env's slots and ranges are valid by construction: skip the public validation.
        nbr, nbr_dsq = sim.query_agent_neighbors_unchecked(slots, max(kk, 1),
                                                           self.obs_range ** 2)
        sep_a = np.empty(k)
        nearest_clearances(slots, nbr, nbr_dsq, self._radius, sep_a)
        sep = sep_a
        if self._has_obstacles and k:
            m_q = max(mm, 1)
            seg, closest, dsq = sim.query_obstacle_neighbors(pos[slots], self.obs_range, m_q)
            sep = np.minimum(sep_a, np.sqrt(dsq[:, 0]) - self._radius[slots])
            seg, closest = seg[:, :mm], closest[:, :mm]
        else:
            seg = np.full((k, mm), -1, dtype=np.int64)
            closest = np.zeros((k, mm, 2))
        out = np.empty((k, self._obs_low.shape[0]), dtype=np.float32)
        if self.universal_layout:
            build_observations_universal(
                slots, pos, sim.velocities, self._radius, self._max_speed, self._targets[slots],
                self._path_len[slots], np.ascontiguousarray(nbr[:, :kk]),
                np.ascontiguousarray(seg), np.ascontiguousarray(closest), self._obst_dirs,
                self._world_frame, float(self.obs_range), float(self.time_step), self._obs_low,
                self._obs_high, out)
        else:
            build_observations(slots, pos, sim.velocities, self._radius,
                               self._max_speed, self._targets[slots], self._path_len[slots],
                               np.ascontiguousarray(nbr[:, :kk]), np.ascontiguousarray(seg),
                               np.ascontiguousarray(closest), self._obst_dirs, self._world_frame,
                               self._obs_low, self._obs_high, out)
        if self._extra_obs:
            f = self._hook_output("observation_features", slots, len(self._extra_obs))
            b = self._obs_low.shape[0] - len(self._obs_features)
            e = b + len(self._extra_obs)
            out[:, b:e] = np.clip(f.astype(np.float32), self._obs_low[b:e], self._obs_high[b:e])
        if self._time_obs:
            out[:, -1] = time_fraction(self._step_count, self._last_step)
        return out, sep_a, sep

    def _hook_output(self, hook: str, slots: np.ndarray, width: int) -> np.ndarray:
        """Call the scenario hook ``hook(env, slots)`` and check its ``(k, width)`` result."""
        out = np.asarray(getattr(self.scenario, hook)(self, slots), dtype=np.float64)
        if out.shape != (len(slots), width) or not np.isfinite(out).all():
            raise RuntimeError(f"{self.scenario.name}.{hook} must return finite values of shape "
                               f"({len(slots)}, {width}); got shape {out.shape}")
        return out

    def _actions_to_array(self, actions: dict) -> np.ndarray:
        if not isinstance(actions, dict):
            raise ValueError(f"actions must be a dict keyed by agent, got {type(actions)}")
        if len(actions) != len(self.agents) or actions.keys() != self._agent_set:
            live = set(self.agents)
            unknown = [a for a in actions if a not in live]
            if unknown:
                raise ValueError(f"action for unknown or finished agent {unknown[0]!r}; live "
                                 f"agents: {self.agents}")
            missing = [a for a in self.agents if a not in actions]
            raise ValueError(f"no action for live agent {missing[0]!r}")
        try:
            raw = np.array(list(map(actions.__getitem__, self.agents)))
        except (ValueError, TypeError):
            raw = None
        # Real numbers only: numpy would turn "1" into 1.0, True into 1.0 and drop the
        # imaginary part of complex numbers.
        if raw is None or raw.shape != (len(self.agents), 2) or raw.dtype.kind not in "iuf":
            for a in self.agents:
                try:
                    one = np.asarray(actions[a])
                except (ValueError, TypeError):
                    one = None
                if one is None or one.shape != (2,) or one.dtype.kind not in "iuf":
                    raise ValueError(f"action of agent {a!r} must be 2 real numbers, got "
                                     f"{actions[a]!r}")
        act = raw.astype(np.float64)
        bad, clipped = clip_actions(act)  # clips to the box, then the norm to 1
        if bad >= 0:
            names = [self.agents[i] for i in np.flatnonzero(~np.isfinite(act).all(axis=1))]
            raise ValueError(f"non-finite action (NaN or inf) for agent(s) {names}: "
                             f"{actions[names[0]]!r}")
        if clipped and not self._warned_clip:
            self._warned_clip = True
            warnings.warn("actions outside the box [-1, 1] were clipped (warned once per "
                          "episode)", stacklevel=3)
        return act

    def step(self, actions: dict):
        """Advance one time step.

        Args:
            actions: ``{agent: (2,) array}`` for exactly the live agents.

        Returns:
            ``(observations, rewards, terminations, truncations, infos)``, dicts keyed by the
            agents that acted.

        Raises:
            RuntimeError: Before ``reset`` or after the episode ended.
            ValueError: On a bad action dict (see the class docstring).
        """
        if self.sim is None:
            raise RuntimeError("step() called before reset()")
        if not self.agents:
            raise RuntimeError("step() called after the episode ended; call reset()")
        act = self._actions_to_array(actions)
        sim = self.sim
        rng = self.np_random
        live = self._live
        n = self._n

        # Preferred velocities: scripted agents steer to their target, learned ones act.
        pos0 = sim.positions.copy()
        vel0 = sim.velocities.copy() if self._crowdnav_collisions else None
        if self._any_noise:
            ang = rng.uniform(0.0, 2.0 * np.pi, n)
            mag = rng.uniform(0.0, 1.0, n) * self._noise
        else:
            ang = mag = self._no_noise
        pref = np.empty((n, 2))
        preferred_velocities(pos0, self._targets, self._pref_speed, self._max_speed, ang, mag, live,
                         act, self._world_frame, self._residual, pref)
        sim.set_pref_velocities(pref)
        active0 = sim.active.copy()
        sim.step()
        self._step_count += 1
        unsafe = live[self._unsafe[live]]
        if unsafe.size:
            # Without the safety layer the action is the velocity: the core would still share
            # avoidance between two zero-responsibility agents and keep them off walls, so
            # override its result (collisions are then detected and penalised, not prevented).
            p = sim.positions.copy()
            v = sim.velocities.copy()
            v[unsafe] = pref[unsafe]
            p[unsafe] = pos0[unsafe] + pref[unsafe] * self.time_step
            sim.set_positions(p)
            sim.set_velocities(v)
        # ORCA telemetry; agents without the safety layer moved as commanded, so ORCA changed
        # nothing for them (the core's figures describe a velocity that was discarded).
        tele_inter = sim.intervention
        tele_lines = sim.num_orca_lines
        tele_lp3 = sim.used_lp3
        tele_corr = sim.position_corrected
        if unsafe.size:
            tele_inter, tele_lines = tele_inter.copy(), tele_lines.copy()
            tele_lp3, tele_corr = tele_lp3.copy(), tele_corr.copy()
            tele_inter[unsafe] = 0.0
            tele_lines[unsafe] = 0
            tele_lp3[unsafe] = False
            tele_corr[unsafe] = False
        pos = sim.positions
        vel = sim.velocities

        # Collisions along the travelled segments, for the live learned agents.
        tol, rel = self._tol_abs, self._tol_rel
        hit_a = np.zeros(live.size, dtype=bool)
        if self._crowdnav_collisions:
            agent_collisions_crowdnav(live, pos0, pos, vel0, self.time_step, self._radius,
                                      active0, tol, hit_a, rel)
        else:
            agent_collisions(live, pos0, pos, self._radius, active0, tol, hit_a, rel)
        hit_o = np.zeros(live.size, dtype=bool)
        if self._has_obstacles:
            obstacle_collisions(live, pos0, pos, self._radius, self._obst_points,
                                self._obst_next, tol, hit_o, rel)
        timed_out = self._step_count >= self._last_step
        if timed_out and self._timeout_first:
            # CrowdNav's rule: the time-out decides the last step, whatever else happened.
            hit_a[:] = False
            hit_o[:] = False
        collided = hit_a | hit_o

        # Goals, guidance and stall detection for every slot.
        st = self._cfg.stall
        at_goal = np.empty(n, dtype=bool)
        moving = np.empty(n, dtype=bool)
        stalled = np.empty(n, dtype=bool)
        dist = np.empty(n)
        goals_and_stalls(pos, vel, sim.active, self._parked, self._goals, self._goal_tol,
                         self._max_speed, st.speed_fraction, st.window, self._stall, at_goal,
                         moving, stalled, dist)
        if self._roadmap is None:
            self._path_len = dist  # the remaining path is the straight line
        else:
            self._update_targets()

        # Outcomes: with on_collision 'terminate' a collision ends the agent's episode as a
        # failure, even on the step it reaches its goal (CrowdNav's precedence); with 'continue'
        # the collision is penalised and reported, and reaching the goal still succeeds.
        crash = collided & (self._cfg.on_collision == "terminate")
        reached = at_goal[live] & ~crash
        if timed_out and self._timeout_first:
            reached[:] = False

        # Reward terms of the live agents.
        d_now = self._path_len[live]
        obs, sep_a, sep = self._observe(live)
        weighted = np.empty((live.size, len(TERMS)))
        reward = np.empty(live.size)
        reward_terms(live, self._d_prev, self._path_len, self._d0, reached, collided, stalled,
                     tele_inter, self._max_speed, self.time_step, sep_a,
                     self._cfg.rewards.discomfort_dist, self._weights, weighted, reward)
        if self._extra_terms:
            extra = self._hook_output("reward_terms", live, len(self._extra_terms))
            extra = extra * self._extra_weights + 0.0  # + 0.0 turns -0.0 into 0.0
            reward += extra.sum(axis=1)
            weighted = np.concatenate([weighted, extra], axis=1)

        # Terminations, truncations, statuses and goal behaviours.
        term = np.empty(live.size, dtype=bool)
        trunc = np.empty(live.size, dtype=bool)
        status = np.empty(live.size, dtype=np.int64)
        leave = np.empty(n, dtype=bool)
        renew_mask = np.empty(n, dtype=bool)
        outcomes(live, reached, crash, stalled, moving, at_goal, self._crowd, self._on_goal,
                 timed_out, st.end_episode, term, trunc, status, leave,
                 self._parked, self._slot_status, renew_mask)
        renew = np.flatnonzero(renew_mask) if renew_mask.any() else self._no_slots
        if renew.size:
            self._goals[renew] = self.scenario.new_goals(rng, sim, renew, pos, self._starts,
                                                         self._radius)
            if self._roadmap is not None:
                self._goal_costs[renew] = self._roadmap.goal_costs(self._goals[renew],
                                                                   self._radius[renew])
                self._update_targets()
            self._stall[renew] = 0
        if leave.any():
            sim.deactivate_agents(np.flatnonzero(leave))
        if not self._roadmap and renew.size:
            self._path_len = np.linalg.norm(self._goals - pos, axis=1)

        # Output dicts (the only per-agent Python work: the API wants dicts).
        agents = self.agents
        obs_d = dict(zip(agents, obs, strict=True))
        rew_d = dict(zip(agents, reward.tolist(), strict=True))
        done = term | trunc
        term_d = dict(zip(agents, term.tolist(), strict=True))
        trunc_d = dict(zip(agents, trunc.tolist(), strict=True))
        stat = _STATUS_NAMES[status].tolist()
        if not self._full_infos:
            infos = {a: {"status": st_} for a, st_ in zip(agents, stat, strict=True)}
            self._drop_done(done)
            return obs_d, rew_d, term_d, trunc_d, infos
        w_dicts = term_dicts(weighted, self.reward_term_names)
        inter = tele_inter[live].tolist()
        lines = tele_lines[live].tolist()
        lp3 = tele_lp3[live].tolist()
        corr = tele_corr[live].tolist()
        dist = d_now.tolist()
        seps = sep.tolist()
        gnames = [self.group_names[g] for g in self._group[live].tolist()]
        with_what = np.where(hit_a, 1, np.where(hit_o, 2, 0)).tolist()
        names = (None, "agent", "obstacle")
        names = [names[w] for w in with_what]
        infos = {a: {"status": st_, "group": g_, "reward_terms": w_,
                     "intervention": i_, "num_orca_lines": l_, "used_lp3": u_,
                     "position_corrected": c_, "distance_to_goal": d_,
                     "nearest_separation": s_, "collided_with": n_}
                 for a, st_, g_, w_, i_, l_, u_, c_, d_, s_, n_ in zip(
                     agents, stat, gnames, w_dicts, inter, lines, lp3, corr, dist, seps, names,
                     strict=True)}
        self._drop_done(done)
        return obs_d, rew_d, term_d, trunc_d, infos

    def _drop_done(self, done: np.ndarray) -> None:
        """Remove the agents that terminated or were truncated on this step."""
        if done.any():
            keep = ~done
            self.agents = [a for a, kp in zip(self.agents, keep.tolist(), strict=True) if kp]
            self._agent_set = set(self.agents)
            self._live = self._live[keep]

    def _to_obs_frame(self, vec: np.ndarray, slots: np.ndarray) -> np.ndarray:
        """World-frame vectors ``(k, 2)`` of agents ``slots`` in their observation frames."""
        axes = frame_axes(self._targets[slots] - self.sim.positions[slots], self._world_frame)
        return world_to_frame(vec, axes)

    # -- public read-only state (scenario hooks, policies, tests) ---------------------------
    def _episode_array(self, name: str) -> np.ndarray:
        if self.sim is None:
            raise RuntimeError(f"{name} is defined after reset()")
        return _readonly(getattr(self, "_" + name))

    @property
    def radii(self) -> np.ndarray:
        """``(n_slots,)`` float64 radius of every slot, metres (read-only)."""
        return _readonly(self._radius)

    @property
    def max_speeds(self) -> np.ndarray:
        """``(n_slots,)`` float64 max speed of every slot, m/s; actions are in its units."""
        return _readonly(self._max_speed)

    @property
    def populations(self) -> np.ndarray:
        """``(n_slots,)`` int64 :class:`~orca_env.codes.Population` code of every slot."""
        return _readonly(self._pop)

    @property
    def learned_slots(self) -> np.ndarray:
        """``(L,)`` int64 slot of ``possible_agents[k]`` (``agent_k``)."""
        return _readonly(self._learned_slots)

    @property
    def live_slots(self) -> np.ndarray:
        """``(len(agents),)`` int64 slot of each live agent, in the order of ``agents``."""
        return self._episode_array("live")

    @property
    def starts(self) -> np.ndarray:
        """``(n_slots, 2)`` float64 start of every slot this episode, metres, world frame."""
        return self._episode_array("starts")

    @property
    def goals(self) -> np.ndarray:
        """``(n_slots, 2)`` float64 current goal of every slot, metres, world frame."""
        return self._episode_array("goals")

    @property
    def targets(self) -> np.ndarray:
        """``(n_slots, 2)`` float64 goal, or roadmap waypoint with guidance, of every slot.

        The x axis of an agent's goal-aligned frame points there.
        """
        return self._episode_array("targets")

    @property
    def path_lengths(self) -> np.ndarray:
        """``(n_slots,)`` float64 remaining distance to the goal (roadmap path with guidance)."""
        return self._episode_array("path_len")

    @property
    def goal_tolerances(self) -> np.ndarray:
        """``(n_slots,)`` float64 distance within which a slot has reached its goal, metres."""
        return self._episode_array("goal_tol")

    @property
    def step_count(self) -> int:
        """Steps since ``reset``."""
        return self._step_count if self.sim is not None else 0

    def set_goals(self, goals: Any, slots: Any = None) -> None:
        """Give agents new goals mid-episode (also after moving them with ``sim.set_positions``).

        Waypoints and remaining path lengths of every slot are recomputed from the current
        positions; for the changed slots the progress term restarts from the new remaining
        distance and the stall counter from zero.

        Args:
            goals: ``(k, 2)`` finite goals, metres, world frame.
            slots: ``(k,)`` distinct slot ids in ``0 .. n_slots - 1`` (default: every slot).

        Raises:
            RuntimeError: Before ``reset``.
            ValueError: On bad ``goals`` or ``slots`` (nothing is changed).
        """
        if self.sim is None:
            raise RuntimeError("set_goals() called before reset()")
        ids = np.arange(self._n) if slots is None else np.asarray(slots)
        if ids.ndim != 1 or ids.dtype.kind not in "iu" or np.unique(ids).size != ids.size \
                or not np.all((ids >= 0) & (ids < self._n)):
            raise ValueError(f"slots must be distinct integers in 0 .. {self._n - 1}, "
                             f"got {slots!r}")
        try:
            g = np.asarray(goals, dtype=np.float64)
        except (TypeError, ValueError):
            g = None
        if g is None or g.shape != (ids.size, 2) or not np.isfinite(g).all():
            raise ValueError(f"goals must be {ids.size} finite (x, y) pairs, got {goals!r}")
        self._goals[ids] = g
        if self._roadmap is not None:
            self._goal_costs[ids] = self._roadmap.goal_costs(g, self._radius[ids])
        self._update_targets()
        self._d_prev[ids] = self._path_len[ids]
        self._stall[ids] = 0

    def state(self) -> np.ndarray:
        """Global state of every slot, world frame, SI units.

        Returns:
            ``(n_slots * 10,)`` float32: per slot px, py, vx, vy, gx, gy, radius, max_speed,
            active, learned.

        Raises:
            RuntimeError: Before ``reset``.
        """
        if self.sim is None:
            raise RuntimeError("state() called before reset()")
        s = np.empty((self._n, STATE_FEATURES), dtype=np.float32)
        f = StateField
        s[:, f.PX:f.PY + 1] = self.sim.positions
        s[:, f.VX:f.VY + 1] = self.sim.velocities
        s[:, f.GX:f.GY + 1] = self._goals
        s[:, f.RADIUS] = self._radius
        s[:, f.MAX_SPEED] = self._max_speed
        s[:, f.ACTIVE] = self.sim.active
        s[:, f.LEARNED] = self._pop == Population.LEARNED
        return s.reshape(-1)

    def heuristic_actions(self) -> dict:
        """Pure-ORCA actions for the live agents.

        Each action is the goal-directed preferred velocity (towards the waypoint with guidance)
        at ``pref_speed``, in action units and frame; with ``action: residual`` it is zero (the
        residual on that velocity). With the safety layer, stepping with these actions is
        exactly an ORCA crowd agent without the noise.

        Returns:
            ``{agent: (2,) float32 action}`` for the live agents.

        Raises:
            RuntimeError: Before ``reset``.
        """
        if self.sim is None:
            raise RuntimeError("heuristic_actions() called before reset()")
        live = self._live
        if self._residual:
            return {a: np.zeros(2, dtype=np.float32) for a in self.agents}
        to_t = self._targets[live] - self.sim.positions[live]
        d = np.linalg.norm(to_t, axis=1)
        v = to_t * np.minimum(1.0, self._pref_speed[live] / np.maximum(d, 1e-12))[:, None]
        a = self._to_obs_frame(v / self._max_speed[live, None], live)
        return dict(zip(self.agents, a.astype(np.float32), strict=True))

    def render_data(self) -> dict:
        """Arrays a renderer needs (the hook for ``orca_env/render.py``).

        Returns:
            A dict of positions, velocities, preferred velocities, radii, max speeds, goals,
            targets, populations, statuses (index into ``STATUSES`` per slot), active flags,
            obstacle polygons, boundary, extent, time and step; with ``debug_agent`` set, also
            ``selected`` and its ``orca_lines`` (last step).

        Raises:
            RuntimeError: Before ``reset``.
        """
        if self.sim is None:
            raise RuntimeError("render_data() called before reset()")
        data = {"positions": self.sim.positions.copy(), "velocities": self.sim.velocities.copy(),
                "pref_velocities": self.sim.pref_velocities.copy(),
                "radii": self._radius.copy(), "max_speeds": self._max_speed.copy(),
                "goals": self._goals.copy(), "targets": np.array(self._targets, copy=True),
                "populations": self._pop.copy(), "statuses": self._slot_status.copy(),
                "active": self.sim.active.copy(), "obstacles": list(self.world.obstacles),
                "boundary": self.world.boundary, "extent": self.world.extent,
                "time": self.sim.global_time, "step": self._step_count}
        if self.debug_agent is not None:
            data["selected"] = int(self.debug_agent)
            data["orca_lines"] = self.sim.orca_lines(int(self.debug_agent))
        return data

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
        # The renderer holds pygame surfaces (not picklable); a copy draws with a new one,
        # created on its first render().
        state = self.__dict__.copy()
        state["_renderer"] = None
        return state

    def close(self) -> None:
        """Release the renderer, if any."""
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None


def crowdnav_last_step(max_steps: int, time_step: float) -> tuple[int, bool]:
    """The last step under CrowdNav's time-limit rule (config ``time_limit_rule: crowdnav``).

    CrowdNav's ``step()`` ends the episode as a time-out when ``global_time >= time_limit - 1``
    holds at the start of a step, before it looks at collisions and goals; here ``time_limit
    = max_steps * time_step``. Step ``k`` (from 1) starts at ``(k - 1) * time_step`` (CrowdNav
    adds ``time_step`` up step by step; for binary fractions such as its 0.25 s both are exact).

    Returns:
        ``(k, True)`` for that step ``k``, or ``(max_steps, False)`` when it would come after
        ``max_steps`` (then the episode ends there by the ordinary rule).
    """
    bound = max_steps * time_step - 1.0
    m = max(0, math.ceil(bound / time_step))  # steps before the last one
    while m > 0 and (m - 1) * time_step >= bound:
        m -= 1
    while m * time_step < bound:
        m += 1
    if m + 1 > max_steps:
        return max_steps, False
    return m + 1, True


def _visibility(groups: list[GroupConfig], names: list[str], group: np.ndarray,
                pop: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-slot core ``layer`` and ``avoid_mask`` from the groups' ``avoids`` / ``visible_to``.

    Without either key anywhere every slot has layer 1 and avoid mask -1 (RVO2, bit for bit),
    except linear slots (mask 0: they avoid no one). Otherwise group ``g`` is layer bit ``g``,
    and a group's mask holds the bit of every group it avoids that can be seen by it.

    Raises:
        ValueError: On a name that is no group's, or more than 63 groups with visibility.
    """
    linear = pop == Population.LINEAR
    if all(g.avoids is None and g.visible_to is None for g in groups):
        masks = np.full(group.size, -1, dtype=np.int64)
        masks[linear] = 0
        return np.ones(group.size, dtype=np.int64), masks
    if len(groups) > 63:
        raise ValueError(f"config key 'groups': avoids and visible_to give each group one of 63 "
                         f"layer bits; got {len(groups)} groups")
    for g_idx, g in enumerate(groups):
        for key in ("avoids", "visible_to"):
            for k, name in enumerate(getattr(g, key) or ()):
                if name not in names:
                    raise ValueError(f"config key 'groups[{g_idx}].{key}[{k}]' names no group: "
                                     f"{name!r}; group names: {names}")
    masks = []
    for a, ga in enumerate(groups):
        m = 0
        if ga.population != "linear":
            for b, gb in enumerate(groups):
                if (ga.avoids is None or names[b] in ga.avoids) and \
                        (gb.visible_to is None or names[a] in gb.visible_to):
                    m |= 1 << b
        masks.append(m)
    layers = np.array([1 << g for g in range(len(groups))], dtype=np.int64)
    return layers[group], np.array(masks, dtype=np.int64)[group]


def _readonly(a: np.ndarray) -> np.ndarray:
    v = a.view()
    v.flags.writeable = False
    return v


def parallel_env(config: Any = None, **kwargs: Any) -> OrcaEnv:
    """The parallel env: ``parallel_env("configs/circle.yaml", max_steps=500)``."""
    return OrcaEnv(config, **kwargs)


def raw_env(config: Any = None, **kwargs: Any):
    """The AEC version without PettingZoo's order-enforcing wrapper."""
    return parallel_to_aec_wrapper(OrcaEnv(config, **kwargs))


def env(config: Any = None, **kwargs: Any):
    """The AEC version (PettingZoo's ``parallel_to_aec``, with its order-enforcing wrapper)."""
    return parallel_to_aec(OrcaEnv(config, **kwargs))

