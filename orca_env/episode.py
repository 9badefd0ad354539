"""The episode lifecycle of one world: its resolved config, mixture draws, building at reset.

:class:`WorldConfig` resolves one ``EnvConfig`` against its scenario (the agent table, time
step, step limit, observation and reward settings); :func:`build_episode` builds a world's
episode from it at reset (the scenario's obstacles and placement, the simulator, this
episode's radii and speeds, the start-overlap check, guidance); :func:`draw_episode` adds a
mixture's draws and redraws. The step pipeline (:mod:`orca_env.pipeline`) takes the result.
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

import numpy as np
from numba import njit

from .agents import AgentTable, build_agent_table
from .behaviours import behaviour
from .config import EnvConfig, GroupConfig, parse_section, tolerance_parts
from .core import Simulator, families
from .guidance import Roadmap
from .kinematics import HOLONOMIC
from .observations import STALL_FEATURE, TIME_FEATURE, UNIVERSAL_DEFAULTS, sensor_features
from .rewards import TERMS, extra_weights
from .scenarios import SpawnError, make_scenario
from .scenarios.base import RANDOM_RADIUS, RANDOM_SPEED
from .sensors import NO_CONE
from .stages import WorldEpisode

__all__ = ["WorldConfig", "build_episode", "draw_episode", "crowdnav_last_step",
           "MIXTURE_SPAWN_DRAWS", "announce_compilation", "check_seed"]

#: Draws a mixture makes at one reset before a scenario's SpawnError ends it.
MIXTURE_SPAWN_DRAWS = 10


def announce_compilation() -> None:
    """Compile the env's kernels if the numba cache lacks them, saying so first (on stderr).

    Called at every reset; the work happens once per process: the env family of
    :mod:`orca_env.core.families` (the step pipeline for every scenario, kinematics model and
    sensor, the obstacle kernels, guidance, social force, the heuristic actions) is checked in
    numba's cache and what is missing is compiled now, after one line saying what, about how
    long and where the cache is. With a warm cache nothing is said (the kernels load lazily).
    """
    families.ensure("env")


def _env_kernels() -> list:
    """The kernels the env calls from Python, with the argument types its call sites pass.

    ``run_worlds`` (the step pipeline: every scenario, kinematics model, sensor and reward in
    one specialisation) takes its types from an empty batch; the others are written out, and
    their call sites hand exactly these (writable C arrays of these dtypes, Python scalars).
    """
    from numba import types as nt  # noqa: PLC0415  (the env layer imports numba already)

    from . import frames, guidance, sensors, step  # noqa: PLC0415
    from .behaviours import social_force  # noqa: PLC0415
    from .core import discgrid  # noqa: PLC0415
    from .core.simulator import core_kernels  # noqa: PLC0415
    from .pipeline import WorldBatch  # noqa: PLC0415
    from .stages import await_job, await_workers, hand_off, run_worlds, wait_threads  # noqa: PLC0415

    f8, i8, b1 = nt.float64, nt.int64, nt.boolean

    def arr(dtype, ndim, readonly=False):
        return nt.Array(dtype, ndim, "C", readonly=readonly)

    F1, F2, I1, I2, B1 = arr(f8, 1), arr(f8, 2), arr(i8, 1), arr(i8, 2), arr(b1, 1)
    F1r, F2r = arr(f8, 1, True), arr(f8, 2, True)  # WorldBatch's read-only properties
    return core_kernels(step=False) + [
        (run_worlds, WorldBatch.kernel_types()),
        (wait_threads, (I1, i8, i8, i8)),  # two or more threads: a kernel call's start, end
        (hand_off, (I1, i8, I1, i8, i8, i8)),  # the pool's hand-offs (pipeline.Workers)
        (await_job, (I1, i8, i8, i8)),
        (await_workers, (I1, i8, i8)),
        (step.clip_actions, (F2, b1)),
        (step.masked_actions, (F2, B1, b1, F2)),
        (_first_overlap, (F2, F1, f8, f8)),  # the start check of small worlds
        # the scenarios' placement (core.discgrid.DiscGrid)
        (discgrid._grid_add, (F2, F1, f8, I1, I1, F2, F1, I2, i8)),
        (discgrid._grid_clear, (F2, f8, f8, f8, I1, I1, F2, F1, I2, B1)),
        (discgrid._grid_near, (f8, f8, f8, I1, I1, I2)),
        (discgrid.pairs_overlap, (F2, F1)),
        # heuristic actions (EnvState.heuristic_actions)
        (step.goal_velocities, (I1, F2r, F2r, F1r, F2)),
        (frames._axes, (F2, b1, F2)),
        (frames._to_frames, (F2, F2, F2)),
        # guidance (Roadmap)
        (guidance._all_pairs, (F2,)),
        (guidance._goal_costs, (F2, F1, F2, F2, F2, I1, I1, F2)),
        (guidance._select, (I1, F2, F2, F1, F2, F2, F2, I1, I1, F2, F2, F1)),
        # social-force humans (their steer function, every world at once)
        (social_force.social_forces,
         (I1, I1, I1, F2, F2, B1, I1, I1, F2, F2, F1, F1, F2, F1r, F2, I1, I1, F2)),
        (social_force.sub_stepped,
         (I1, I1, I1, F2, F2, B1, I1, I1, F2, F2, F1, F1, F2, F1, F1r, F2, I1, I1, F2)),
        (social_force._integrate, (I1, I1, F2, F2, F2, F1, F1, F1r, F2)),
        # what the renderer shows of a sensor (sensors.sensor_view)
        (sensors.sensor_axes, (I1, F2, F2, F1, I1, b1, F2)),
        (sensors.lidar_scan, (I1, F2, F1, B1, F2, f8, f8, F2, I1, I1, F2, F2)),
    ]


families.register_family(
    "env", "the env's step pipeline (every scenario, kinematics model, sensor and reward), "
    "its placement, obstacle, guidance and social-force kernels and the core's", 40.0,
    _env_kernels)


def check_seed(name: str, seed: Any, allow_list: bool = True) -> None:
    """Refuse a seed that is not None or a non-negative integer."""
    if seed is None:
        return
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        what = "None, a non-negative integer or a list of them" if allow_list else \
            "None or a non-negative integer"
        raise ValueError(f"{name} must be {what}, got {seed!r}")


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


class WorldConfig:
    """One ``EnvConfig`` resolved against its scenario (what does not change within it).

    Raises:
        ValueError: On a config the scenario or the agent table refuses (naming the key).
    """

    def __init__(self, cfg: EnvConfig) -> None:
        self.config = cfg
        self.scenario = sc = make_scenario(cfg.scenario, **cfg.scenario_kwargs)
        groups = cfg.groups
        if groups is None:
            groups = [parse_section(GroupConfig, g, f"{sc.name}.groups[{i}].")
                      for i, g in enumerate(sc.DEFAULT_GROUPS)]
        self.groups: list[GroupConfig] = groups
        self.time_step = cfg.time_step if cfg.time_step is not None else sc.TIME_STEP
        self.table: AgentTable = build_agent_table(groups, sc.AGENT_DEFAULTS, sc.CROWD_NOISE,
                                                   self.time_step, cfg.learned_orca_padding)
        self.n = self.table.size
        kins = sorted({g.kinematics for g in groups
                       if behaviour(g.population).learned and g.count > 0})
        if len(kins) > 1:
            raise ValueError(f"config key 'groups': every learned group must have the same "
                             f"kinematics (one action space); got {kins}")
        #: The learned agents' motion model (their action space).
        self.learned_kinematics = kins[0] if kins else "holonomic"
        if cfg.action == "residual" and self.learned_kinematics != "holonomic":
            raise ValueError(f"config key 'action': residual actions correct a holonomic "
                             f"preferred velocity; the learned agents' kinematics is "
                             f"{self.learned_kinematics!r}, use action: velocity")
        self.max_steps = cfg.max_steps if cfg.max_steps is not None else sc.MAX_STEPS
        # The step that times out, and whether the time-out overrides that step's goals and
        # collisions (config key time_limit_rule).
        self.last_step, self.timeout_first = self.max_steps, False
        if cfg.time_limit_rule == "crowdnav":
            self.last_step, self.timeout_first = crowdnav_last_step(self.max_steps,
                                                                    self.time_step)
        ob = cfg.observation
        self.universal = ob.layout == "universal"
        obs_defaults = UNIVERSAL_DEFAULTS if self.universal else sc.OBS_DEFAULTS
        self.num_obs_agents = ob.num_agents if ob.num_agents is not None \
            else obs_defaults["num_agents"]
        self.num_obs_obstacles = ob.num_obstacles if ob.num_obstacles is not None \
            else obs_defaults["num_obstacles"]
        self.obs_range = ob.range if ob.range is not None else sc.OBS_DEFAULTS["range"]
        if cfg.guidance and not sc.HAS_OBSTACLES:
            raise ValueError(f"config key 'guidance' needs a scenario with obstacles; "
                             f"{sc.name} has none")
        rw = cfg.rewards
        self.weights = np.array([getattr(rw, t) for t in TERMS], dtype=np.float64)
        self.extra_terms = tuple(sc.EXTRA_REWARDS)
        self.extra_weights = extra_weights(sc.EXTRA_REWARDS, rw.extra, sc.name)
        self.reward_term_names = TERMS + self.extra_terms
        self.extra_obs = tuple(sc.EXTRA_OBSERVATIONS)
        self.time_obs = bool(ob.time)
        self.stall_obs = bool(ob.stall)
        # Sensors (orca_env.sensors): heading features where a learned agent's model has a
        # heading, the LiDAR scan, the neighbour sensor's cone (cosine of its half angle).
        t = self.table
        self.heading_obs = bool(np.any(t.kinematics[t.learned_slots] != HOLONOMIC))
        lid = ob.lidar
        self.lidar_beams = 0 if lid is None else lid.beams
        self.lidar_range = self.obs_range if lid is None or lid.range is None else lid.range
        self.lidar_noise = 0.0 if lid is None else lid.noise
        self.lidar_fov = math.radians(360.0 if lid is None else lid.fov)
        self.nbr_cos = NO_CONE if ob.fov >= 360.0 else math.cos(math.radians(ob.fov) / 2.0)
        self.occlusion = bool(ob.occlusion)
        self.sensor_features = sensor_features(self.heading_obs, self.lidar_beams,
                                               self.lidar_range, self.universal)
        # Features after the agents and segments: the sensors', the scenario's, the stall
        # time, the time.
        self.obs_features = self.sensor_features + self.extra_obs + \
            ((STALL_FEATURE,) if self.stall_obs else ()) + \
            ((TIME_FEATURE,) if self.time_obs else ())
        tol = cfg.collision_tolerance
        #: Tolerated overlap: ``tol_abs`` metres plus ``tol_rel`` times the smaller radius.
        self.tol_abs, self.tol_rel = tolerance_parts(tol)
        #: Whether any slot draws its radius and speed at reset (``randomize_attributes``).
        self.randomized = bool(self.table.randomized.any())
        #: Whether any slot's ORCA radius is padded (``orca_padding``).
        self.padded = bool(np.any(self.table.padding > 0.0))
        #: The episodes' core simulator without agents, and the table's per-agent parameters
        #: validated by the core (set at the first reset: :func:`build_episode`).
        self.sim_template: Simulator | None = None
        self.agent_params: dict | None = None
        #: Without randomized attributes, ``agent_params`` with the radii (ORCA's, padded) and
        #: max speeds every episode has (validated once, at the first reset).
        self.fixed_params: dict | None = None
        self._settings: dict = {}  # settings(guided), by guided
        r_min = self.table.radius_min
        if self.tol_abs + self.tol_rel * r_min >= r_min:
            raise ValueError(f"config key 'collision_tolerance' must be below the smallest agent "
                             f"radius ({r_min!r} m), or contacts with walls would never count; "
                             f"got {tol!r}")

    def settings(self, guided: bool) -> dict:
        """The pipeline's per-world settings (:data:`orca_env.pipeline._SETTINGS`).

        A fresh dict each call (made once per ``guided`` value: nothing in it changes
        between episodes).
        """
        made = self._settings.get(guided)
        if made is None:
            made = self._settings[guided] = self._make_settings(guided)
        return dict(made)

    def _make_settings(self, guided: bool) -> dict:
        cfg = self.config
        return {"time_step": float(self.time_step), "last_step": int(self.last_step),
                "timeout_first": self.timeout_first,
                "crowdnav_collisions": cfg.collision_check == "crowdnav", "tol": self.tol_abs,
                "tol_rel": self.tol_rel, "terminate": cfg.on_collision == "terminate",
                "speed_fraction": float(cfg.stall.speed_fraction),
                "window": int(cfg.stall.window), "end_episode": bool(cfg.stall.end_episode),
                "range_sq": float(self.obs_range) ** 2, "obs_range": float(self.obs_range),
                "discomfort": float(cfg.rewards.discomfort_dist),
                "world_frame": cfg.observation.frame == "world",
                "residual": cfg.action == "residual",
                "noisy": bool(np.any(self.table.noise > 0.0)), "straight": not guided,
                "nonholonomic": bool(np.any(self.table.kinematics != HOLONOMIC)),
                "lidar_range": float(self.lidar_range), "lidar_noise": float(self.lidar_noise),
                "lidar_fov": float(self.lidar_fov), "nbr_cos": float(self.nbr_cos),
                "occlusion": self.occlusion, "weights": self.weights}


def build_episode(wc: WorldConfig, rng: np.random.Generator, seed: int, episode: int
                  ) -> WorldEpisode:
    """World, simulator, starts, goals and this episode's attributes (at reset).

    Raises:
        SpawnError: When the scenario cannot place the agents, or they start overlapping.
    """
    sc, t, cfg = wc.scenario, wc.table, wc.config
    sc.start_episode(int(seed), int(episode))
    world = sc.build_world(rng)
    if wc.sim_template is None:  # validated once per resolved config, at its first reset
        ad = sc.AGENT_DEFAULTS
        wc.sim_template = Simulator(wc.time_step, neighbor_dist=ad["neighbor_dist"],
                                    max_neighbors=ad["max_neighbors"],
                                    time_horizon=ad["time_horizon"],
                                    time_horizon_obst=ad["time_horizon_obst"],
                                    radius=ad["radius"], max_speed=ad["max_speed"],
                                    num_threads=1)
    sim = wc.sim_template.new_like()
    for poly in world.obstacles:
        sim.add_obstacle(np.asarray(poly, dtype=np.float64))
    if world.boundary is not None:
        sim.add_boundary(np.asarray(world.boundary, dtype=np.float64))
    sim.process_obstacles()
    starts, goals, radius, max_speed, pref_speed = _populate(wc, rng, sim)
    orca_radius = radius + t.padding if wc.padded else radius
    agent_state = None
    if wc.agent_params is None:  # the table's parameters, validated at the first reset
        sim.add_agents(starts, radius=orca_radius, max_speed=max_speed,
                       responsibility=t.responsibility, layer=t.layers,
                       avoid_mask=t.avoid_masks, **t.orca)
        wc.agent_params = sim.check_agent_params(
            wc.n, responsibility=t.responsibility, layer=t.layers, avoid_mask=t.avoid_masks,
            **t.orca)
        del wc.agent_params["radius"], wc.agent_params["max_speed"]
        if not wc.randomized:  # every episode's radii and speeds are these (see _populate)
            both = sim.check_agent_params(wc.n, radius=orca_radius, max_speed=max_speed)
            wc.fixed_params = {**wc.agent_params, "radius": both["radius"],
                               "max_speed": both["max_speed"]}
    else:
        fixed = wc.fixed_params
        per_episode = {} if fixed is not None else {"radius": orca_radius,
                                                    "max_speed": max_speed}
        validated = fixed if fixed is not None else wc.agent_params
        if wc.n <= _SPAWN_NEIGHBORS + 1:
            # Small worlds (the start check measures every pair itself, needing no agent in
            # the simulator): the agents' state goes straight to the batch, which hands it to
            # the simulator when it loads the world (WorldBatch.load:
            # Simulator.new_agents_state, bind_storage(num_agents=...)), so the simulator
            # allocates and copies no agent arrays.
            agent_state = sim.new_agents_state(starts, validated=validated, **per_episode)
        else:
            sim.add_agents(starts, validated=validated, **per_episode)
    _check_spawns(wc, sim, starts, radius)
    roadmap = goal_costs = None
    if cfg.guidance:
        roadmap = Roadmap(sim, float(radius.max()), points=world.roadmap_points)
        goal_costs = roadmap.goal_costs(goals, radius)
    return WorldEpisode(settings=wc.settings(roadmap is not None), table=t, sim=sim,
                        scenario=sc, world=world, rng=rng, starts=starts, goals=goals.copy(),
                        radius=radius, max_speed=max_speed, pref_speed=pref_speed,
                        goal_tol=np.asarray(sc.goal_tolerance(radius), dtype=np.float64),
                        roadmap=roadmap, goal_costs=goal_costs, max_steps=wc.max_steps,
                        config=wc, agent_state=agent_state)


def draw_episode(wc: WorldConfig | None, mixture: Any, configs: dict, rng: np.random.Generator,
                 seed: int, episode: int, on_redraw: Any = None
                 ) -> tuple[WorldEpisode, int | None, dict]:
    """One world's episode at reset: a plain config's, or a mixture draw's.

    A mixture draws its entry and ranges first from the seeded generator. A draw whose agents
    cannot be placed (a corner of the ranges too crowded for the scenario's zones: SpawnError)
    is drawn again from the same generator, up to :data:`MIXTURE_SPAWN_DRAWS` times, so a
    training run does not die on a rare draw; episodes placed at the first draw are unchanged.

    Args:
        wc: The resolved config (None with a mixture).
        mixture: The :class:`~orca_env.mixture.Mixture`, or None.
        configs: Cache of resolved mixture entries, ``{id(EnvConfig): WorldConfig}``.
        rng: The world's generator.
        seed: Its seed.
        episode: Episodes since it was seeded.
        on_redraw: ``on_redraw(k, values, exc)`` called at each redraw.

    Returns:
        ``(episode, mixture entry or None, drawn values)``.

    Raises:
        SpawnError: A plain config's at once; a mixture's after the last draw.
    """
    if mixture is None:
        return build_episode(wc, rng, seed, episode), None, {}
    for attempt in range(MIXTURE_SPAWN_DRAWS):
        k, cfg, values = mixture.draw(rng)
        key = id(cfg) if not values else None
        entry = configs.get(key) if key is not None else None
        if entry is None:
            entry = WorldConfig(cfg)
            if key is not None:
                configs[key] = entry
        try:
            return build_episode(entry, rng, seed, episode), k, values
        except SpawnError as exc:
            if attempt == MIXTURE_SPAWN_DRAWS - 1:
                raise SpawnError(f"mixture: {MIXTURE_SPAWN_DRAWS} draws in a row could not "
                                 f"place their agents; the last, entry {k} with {values}: {exc}"
                                 ) from exc
            if on_redraw is not None:
                on_redraw(k, values, exc)
    raise AssertionError("unreachable")


def redraw_warning(count: int, k: int, values: dict, exc: Exception) -> None:
    """Say once per env that a mixture draw was made again (redraws bias the mixture)."""
    if count == 1:
        warnings.warn(f"mixture entry {k} with {values} could not place its agents ({exc}); "
                      f"drawn again. Such draws are left out of training, so the entries and "
                      f"ranges trained on differ from the config's; env.mixture_redraws counts "
                      f"them", stacklevel=4)


def _populate(wc: WorldConfig, rng: np.random.Generator, sim: Simulator):
    """Starts and goals from the scenario, and this episode's radii and speeds.

    Slots of groups with ``randomize_attributes`` get the radius and v_pref the scenario drew
    (:meth:`Scenario.populate`): v_pref becomes their max speed, and their preferred speed
    unless their group sets ``pref_speed``. The others keep the config's values.
    """
    sc, t = wc.scenario, wc.table
    out = sc.populate(rng, sim, t.base_radius.copy(), t.base_max_speed.copy(),
                      t.randomized.copy())
    if not (isinstance(out, tuple) and len(out) == 4):
        raise RuntimeError(f"{sc.name}.populate must return (starts, goals, radii, "
                           f"max_speeds), got {type(out).__name__}")
    starts, goals, radii, speeds = (np.asarray(a, dtype=np.float64) for a in out)
    n = wc.n
    if starts.shape != (n, 2) or goals.shape != (n, 2):
        raise RuntimeError(f"{sc.name}.place_agents returned shapes {starts.shape}, "
                           f"{goals.shape}; expected ({n}, 2)")
    randomized = wc.randomized
    if not randomized:  # every slot keeps the config's values (the same test, in two calls)
        ok = (radii.shape == (n,) and speeds.shape == (n,)
              and bool((radii == t.base_radius).all())
              and bool((speeds == t.base_max_speed).all()))
    else:
        fixed = ~t.randomized
        lo_r, hi_r = RANDOM_RADIUS
        lo_v, hi_v = RANDOM_SPEED
        ok = (radii.shape == (n,) and speeds.shape == (n,)
              and np.array_equal(radii[fixed], t.base_radius[fixed])
              and np.array_equal(speeds[fixed], t.base_max_speed[fixed])
              and bool(np.all((radii[~fixed] >= lo_r) & (radii[~fixed] <= hi_r)))
              and bool(np.all((speeds[~fixed] >= lo_v) & (speeds[~fixed] <= hi_v))))
    if not ok:
        raise RuntimeError(f"{sc.name}.populate must return radii and max speeds of shape "
                           f"({n},) that keep the config's values except for randomized "
                           f"slots, drawn within {RANDOM_RADIUS} m and {RANDOM_SPEED} m/s")
    if randomized:
        return starts, goals, radii, speeds, np.where(t.pref_is_vpref, speeds,
                                                      t.base_pref_speed)
    return starts, goals, t.base_radius.copy(), t.base_max_speed.copy(), \
        t.base_pref_speed.copy()


#: Neighbours of each agent :func:`_check_spawns` measures.
_SPAWN_NEIGHBORS = 16


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
def _first_overlap(starts, r, tol, rel):
    """The first slot that overlaps another by more than the tolerance, or -1 (every pair).

    What the kd-tree check of :func:`_check_spawns` decides when every other agent is among
    the nearest it measures, to the last bit: the same ``dx * dx + dy * dy`` within the
    query's range ``2 * max(r)``, the same gap ``sqrt(dsq) - r_i - r_j`` against
    ``-(tol + rel * min(r_i, r_j))`` (a small world's reset: one call, not some 15 numpy ones).
    """
    n = starts.shape[0]
    r_max = 0.0
    for i in range(n):
        r_max = max(r_max, r[i])
    lim = (2.0 * r_max) * (2.0 * r_max)
    for i in range(n):
        for j in range(n):
            if j == i:
                continue
            dx = starts[i, 0] - starts[j, 0]
            dy = starts[i, 1] - starts[j, 1]
            dsq = dx * dx + dy * dy
            if dsq < lim and np.sqrt(dsq) - r[i] - r[j] < -(tol + rel * min(r[i], r[j])):
                return i
    return -1


def _check_spawns(wc: WorldConfig, sim: Simulator, starts: np.ndarray, r: np.ndarray) -> None:
    """Refuse a layout whose agents start overlapping each other or the obstacles.

    Whatever the scenario: a start that overlaps by more than ``collision_tolerance`` would
    count as a collision on the first step. Agents are checked against their 16 nearest
    neighbours (the core's kd-tree), walls with the core's walkability test.

    Raises:
        SpawnError: Naming the scenario, the first offending slot and what to change.
    """
    tol, rel, n, name = wc.tol_abs, wc.tol_rel, wc.n, wc.scenario.name
    if n <= _SPAWN_NEIGHBORS + 1:
        # Every other agent is among the 16 nearest: every pair, in one kernel call.
        i = int(_first_overlap(np.ascontiguousarray(starts), np.ascontiguousarray(r),
                               float(tol), float(rel)))
    else:
        nbr, dsq = sim.query_agent_neighbors(_SPAWN_NEIGHBORS, 2.0 * float(r.max()))
        near = nbr >= 0
        other = r[np.maximum(nbr, 0)]
        gap = np.sqrt(dsq) - r[:, None] - other
        pair_tol = tol + rel * np.minimum(r[:, None], other)  # rel 0: exactly tol
        bad = np.flatnonzero((near & (gap < -pair_tol)).any(axis=1))
        i = int(bad[0]) if bad.size else -1
    if i >= 0:
        raise SpawnError(f"{name}: agents start overlapping (slot {i} at {starts[i].tolist()} "
                         f"and its neighbours, radius {r[i]} m); use a larger layout "
                         f"(scenario_kwargs), fewer agents or smaller radii")
    if sim.num_obstacle_vertices:
        walkable = np.ones(n, dtype=bool)
        for radius in np.unique(r):
            sel = r == radius
            walkable[sel] = sim.is_walkable(starts[sel],
                                            clearance=max(radius - (tol + rel * radius), 0.0))
        if not walkable.all():
            i = int(np.flatnonzero(~walkable)[0])
            raise SpawnError(f"{name}: slot {i} starts at {starts[i].tolist()}, inside or "
                             f"within its radius ({r[i]} m) of an obstacle or outside the "
                             f"boundary")
