"""``OrcaVectorEnv``: B independent worlds of one config, stepped in one numba call.

Each world is exactly an :class:`~orca_env.environment.OrcaEnv` with its own seed: the vector env
keeps one ``OrcaEnv`` per world for what is Python by design (the scenario's placement at reset,
its ``new_goals`` for crowd agents, the per-world random generators) and runs every step of
every world in one numba call (:func:`_step_worlds`) over the worlds' concatenated arrays. That
call is the single env's ``step`` (preferred velocities, the core's step, swept collisions,
goals and stalls, observations, reward terms, outcomes) on world-local views, calling the very
kernels ``OrcaEnv.step`` calls, so every world's observations, rewards, terminations and
truncations are bit-identical to a single env reset with that world's seed and stepped with the
same actions (``tests/vector``).

Between resets the per-world ``OrcaEnv`` objects are only holders of the scenario, the
generator and the world's obstacles (``sim`` for ``new_goals``); their agent state is stale.
With ``num_threads > 1`` the worlds are split into blocks stepped by a thread pool, the kernel
releasing the GIL: numba's ``prange`` cannot hand the kernels' tuple bundles to its parallel
loop body (a ``TypeError`` in numba 0.68).
"""

from __future__ import annotations

import numbers
import warnings
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from numba import njit

from .collisions import agent_collisions, agent_collisions_crowdnav, obstacle_collisions
from .core.batch import query_world_neighbors, step_world, world_obstacles
from .core.kernels import AgentParams
from .core.obstacles import query_many as query_obstacles
from .environment import OrcaEnv
from .observations import (
    build_observations,
    build_observations_universal,
    nearest_clearances,
    time_fraction,
)
from .rewards import TERMS, reward_terms
from .step import clip_actions, goals_and_stalls, outcomes, preferred_velocities

__all__ = ["OrcaVectorEnv"]

#: The ``Simulator`` property each ``kernels.AgentParams`` field is copied from, in field order
#: (see the checklist in ``orca_env/core/kernels.py``).
_ORCA_PARAM_PROPS = ("radii", "max_speeds", "neighbor_dists", "max_neighbors_arr", "time_horizons",
                     "time_horizons_obst", "responsibilities", "layers", "avoid_masks")
#: The integer (int64) ones among them; the others are float64.
_ORCA_INT_PARAM_PROPS = ("max_neighbors_arr", "layers", "avoid_masks")
if len(_ORCA_PARAM_PROPS) != len(AgentParams._fields):
    raise ImportError("_ORCA_PARAM_PROPS must name one Simulator property per AgentParams field")


@njit(cache=True, error_model="numpy")
def _world_step(b, n, nl_max, stat, params, state, tele, obst_all, obst_off, box_off, scratch,
                cfg, inputs, outs):
    """One env step of world ``b`` on world-local views (``OrcaEnv.step`` without the dicts).

    Argument tuples (all agent arrays concatenated over worlds, see :mod:`orca_env.core.batch`):
        stat: (radius, max_speed, pref_speed, crowd, on_goal, unsafe, learned) per slot
            (B * n,) arrays, ``learned`` (L,) int64 world-local learned slots.
        params: ``AgentParams`` fields, (B * n,) arrays.
        state: (pos (B*n, 2), vel, pref, active (B*n,), kd_order, goals (B*n, 2), goal_tol,
            path_len, d0, d_prev, parked, stall, slot_status (B*n,) int8, step_count (B,),
            alive (B*L,) bool), updated in place.
        tele: ``StepOutput`` fields (velocity unused), (B*n, ...) arrays.
        obst_all: concatenated ``Obstacles`` fields; obst_off, box_off: (B + 1,) int64.
        scratch: (nodes (begin, end, left, right, box) of B * max(2n - 1, 1) rows, new_vel).
        cfg: (time_step, max_nbr_cap, world_frame, tol, terminate, last_step, speed_fraction,
            window, end_episode, kk, mm, range_sq, discomfort_dist, weights, low, high,
            timeout_first, crowdnav_collisions, tol_rel, universal, obs_range, residual,
            time_obs):
            ``last_step`` and ``timeout_first`` as ``OrcaEnv._last_step`` and
            ``_timeout_first`` (config ``time_limit_rule``), ``crowdnav_collisions`` for
            ``collision_check: crowdnav``, ``residual`` for ``action: residual``, ``tol`` and
            ``tol_rel`` the absolute and relative parts of ``collision_tolerance``,
            ``universal`` for ``observation.layout: universal`` (``obs_range`` its unit, m),
            ``time_obs`` for ``observation.time`` (the last feature).
        inputs: (act (B*L, 2) float64 clipped, noise_ang, noise_mag ((B*n,) or empty)).
        outs: (obs (B*L, D) float32, reward, term, trunc, status, weighted (B*L, T), sep,
            hit (B*L,) int8 (0 none, 1 agent, 2 obstacle), renew (B*n,) bool, world_done (B,)),
            rows of agents that were not alive are left untouched.
    """
    radius_a, max_speed_a, pref_speed_a, crowd_a, on_goal_a, unsafe_a, learned = stat
    (pos_a, vel_a, pref_a, active_a, kd_a, goals_a, goal_tol_a, path_len_a, d0_a, d_prev_a,
     parked_a, stall_a, slot_status_a, step_count, alive) = state
    (time_step, max_nbr_cap, world_frame, tol, terminate, last_step, speed_fraction, window,
     end_episode, kk, mm, range_sq, discomfort_dist, weights, low, high, timeout_first,
     crowdnav_collisions, tol_rel, universal, obs_range, residual, time_obs) = cfg
    act_all, ang_all, mag_all = inputs
    obs_o, reward_o, term_o, trunc_o, status_o, weighted_o, sep_o, hit_o, renew_a, world_done = \
        outs
    nodes_all, new_vel_all = scratch
    a0 = b * n
    a1 = a0 + n
    r0 = b * nl_max
    nn = max(2 * n - 1, 1)
    t0 = b * nn
    t1 = t0 + nn
    pos = pos_a[a0:a1]
    vel = vel_a[a0:a1]
    pref = pref_a[a0:a1]
    active = active_a[a0:a1]
    radius = radius_a[a0:a1]
    max_speed = max_speed_a[a0:a1]
    goals = goals_a[a0:a1]
    path_len = path_len_a[a0:a1]
    intervention = tele[4][a0:a1]
    nodes = (nodes_all[0][t0:t1], nodes_all[1][t0:t1], nodes_all[2][t0:t1], nodes_all[3][t0:t1],
             nodes_all[4][t0:t1])
    obst = world_obstacles(obst_all, obst_off, box_off, b)
    o_points = obst[0]
    o_next = obst[1]
    has_obst = o_points.shape[0] > 0

    # The live learned agents, in agent order (the single env's ``live``).
    nl = 0
    for k in range(nl_max):
        if alive[r0 + k]:
            nl += 1
    live = np.empty(nl, dtype=np.int64)
    rows = np.empty(nl, dtype=np.int64)
    act = np.empty((nl, 2))
    q = 0
    for k in range(nl_max):
        if alive[r0 + k]:
            live[q] = learned[k]
            rows[q] = r0 + k
            act[q, 0] = act_all[r0 + k, 0]
            act[q, 1] = act_all[r0 + k, 1]
            q += 1

    # Preferred velocities, the core's step, the unsafe override.
    pos0 = pos.copy()
    vel0 = vel.copy() if crowdnav_collisions else np.empty((0, 2))
    # Without noise ang_all and mag_all are empty, and so are their slices (no noise).
    preferred_velocities(pos0, goals, pref_speed_a[a0:a1], max_speed, ang_all[a0:a1],
                         mag_all[a0:a1], live, act, world_frame, residual, pref)
    active0 = active.copy()
    wparams = (params[0][a0:a1], params[1][a0:a1], params[2][a0:a1], params[3][a0:a1],
               params[4][a0:a1], params[5][a0:a1], params[6][a0:a1], params[7][a0:a1],
               params[8][a0:a1])
    wtele = (tele[0][a0:a1], tele[1][a0:a1], tele[2][a0:a1], tele[3][a0:a1], intervention)
    step_world(pos, vel, pref, active, kd_a[a0:a1], wparams, time_step, obst, max_nbr_cap, wtele,
               nodes, new_vel_all[a0:a1])
    step_count[b] += 1
    unsafe = unsafe_a[a0:a1]
    for q in range(nl):
        i = live[q]
        if unsafe[i]:
            vel[i, 0] = pref[i, 0]
            vel[i, 1] = pref[i, 1]
            pos[i, 0] = pos0[i, 0] + pref[i, 0] * time_step
            pos[i, 1] = pos0[i, 1] + pref[i, 1] * time_step
            intervention[i] = 0.0
            wtele[1][i] = 0
            wtele[2][i] = False
            wtele[3][i] = False

    # Swept collisions of the live agents.
    hit_a = np.zeros(nl, dtype=np.bool_)
    if crowdnav_collisions:
        agent_collisions_crowdnav(live, pos0, pos, vel0, time_step, radius, active0, tol, hit_a,
                                  tol_rel)
    else:
        agent_collisions(live, pos0, pos, radius, active0, tol, hit_a, tol_rel)
    hit_w = np.zeros(nl, dtype=np.bool_)
    if has_obst:
        obstacle_collisions(live, pos0, pos, radius, o_points, o_next, tol, hit_w, tol_rel)
    timed_out = step_count[b] >= last_step
    if timed_out and timeout_first:
        for q in range(nl):
            hit_a[q] = False
            hit_w[q] = False
    collided = np.empty(nl, dtype=np.bool_)
    crash = np.empty(nl, dtype=np.bool_)
    for q in range(nl):
        collided[q] = hit_a[q] or hit_w[q]
        crash[q] = collided[q] and terminate

    # Goals and stalls of every slot.
    at_goal = np.empty(n, dtype=np.bool_)
    moving = np.empty(n, dtype=np.bool_)
    stalled = np.empty(n, dtype=np.bool_)
    goals_and_stalls(pos, vel, active, parked_a[a0:a1], goals, goal_tol_a[a0:a1], max_speed,
                     speed_fraction, window, stall_a[a0:a1], at_goal, moving, stalled, path_len)
    reached = np.empty(nl, dtype=np.bool_)
    for q in range(nl):
        reached[q] = at_goal[live[q]] and not crash[q] and not (timed_out and timeout_first)

    # Observations (``OrcaEnv._observe``).
    kq = max(kk, 1)
    nbr = np.full((nl, kq), -1, dtype=np.int64)
    nbr_dsq = np.full((nl, kq), np.inf)
    query_world_neighbors(live, pos, active, kd_a[a0:a1], range_sq, kq, nodes, nbr, nbr_dsq)
    sep_a = np.empty(nl)
    nearest_clearances(live, nbr, nbr_dsq, radius, sep_a)
    sep = sep_a.copy()
    if has_obst and nl:
        mq = max(mm, 1)
        pts = np.empty((nl, 2))
        for q in range(nl):
            pts[q, 0] = pos[live[q], 0]
            pts[q, 1] = pos[live[q], 1]
        seg_q = np.full((nl, mq), -1, dtype=np.int64)
        dsq_q = np.full((nl, mq), np.inf)
        closest_q = np.full((nl, mq, 2), np.nan)
        query_obstacles(pts, range_sq, o_points, o_next, obst[5], obst[6], seg_q, dsq_q,
                        closest_q)
        for q in range(nl):
            sep[q] = min(sep_a[q], np.sqrt(dsq_q[q, 0]) - radius[live[q]])
        seg = np.ascontiguousarray(seg_q[:, :mm])
        closest = np.ascontiguousarray(closest_q[:, :mm])
    else:
        seg = np.full((nl, mm), -1, dtype=np.int64)
        closest = np.zeros((nl, mm, 2))
    targets = np.empty((nl, 2))
    path_rem = np.empty(nl)
    for q in range(nl):
        targets[q, 0] = goals[live[q], 0]
        targets[q, 1] = goals[live[q], 1]
        path_rem[q] = path_len[live[q]]
    obs = np.empty((nl, low.shape[0]), dtype=np.float32)
    if universal:
        build_observations_universal(live, pos, vel, radius, max_speed, targets, path_rem,
                                     np.ascontiguousarray(nbr[:, :kk]), seg, closest, obst[3],
                                     world_frame, obs_range, time_step, low, high, obs)
    else:
        build_observations(live, pos, vel, radius, max_speed, targets, path_rem,
                           np.ascontiguousarray(nbr[:, :kk]), seg, closest, obst[3], world_frame,
                           low, high, obs)
    if time_obs:
        tf = time_fraction(step_count[b], last_step)
        for q in range(nl):
            obs[q, obs.shape[1] - 1] = tf

    # Rewards and outcomes.
    weighted = np.empty((nl, weights.shape[0]))
    reward = np.empty(nl)
    reward_terms(live, d_prev_a[a0:a1], path_len, d0_a[a0:a1], reached, collided, stalled,
                 intervention, max_speed, time_step, sep_a, discomfort_dist, weights, weighted,
                 reward)
    term = np.empty(nl, dtype=np.bool_)
    trunc = np.empty(nl, dtype=np.bool_)
    status = np.empty(nl, dtype=np.int64)
    leave = np.empty(n, dtype=np.bool_)
    outcomes(live, reached, crash, stalled, moving, at_goal, crowd_a[a0:a1], on_goal_a[a0:a1],
             timed_out, end_episode, term, trunc, status, leave,
             parked_a[a0:a1], slot_status_a[a0:a1], renew_a[a0:a1])
    for i in range(n):
        if leave[i]:
            active[i] = False

    # Scatter into the agent rows.
    any_alive = False
    for q in range(nl):
        r = rows[q]
        obs_o[r] = obs[q]
        reward_o[r] = reward[q]
        term_o[r] = term[q]
        trunc_o[r] = trunc[q]
        status_o[r] = status[q]
        weighted_o[r] = weighted[q]
        sep_o[r] = sep[q]
        hit_o[r] = 1 if hit_a[q] else (2 if hit_w[q] else 0)
        alive[r] = not (term[q] or trunc[q])
        any_alive = any_alive or alive[r]
    world_done[b] = not any_alive


@njit(cache=True, nogil=True, error_model="numpy")
def _step_worlds(worlds, n, nl_max, stat, params, state, tele, obst_all, obst_off, box_off,
                 scratch, cfg, inputs, outs):
    """:func:`_world_step` for every world in ``worlds`` ((w,) int64).

    Releases the GIL: with ``num_threads > 1`` the env calls it from that many threads on
    disjoint sets of worlds at once (worlds write disjoint rows, so results do not depend on
    the number of threads).
    """
    for w in range(worlds.shape[0]):
        _world_step(worlds[w], n, nl_max, stat, params, state, tele, obst_all, obst_off, box_off,
                    scratch, cfg, inputs, outs)


def _check_seed(name: str, seed: Any) -> None:
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"{name} must be None, a non-negative integer or a list of them, got "
                         f"{seed!r}")


class OrcaVectorEnv(VectorEnv):
    """``B`` independent worlds of one config, as arrays of agent rows, stepped in one call.

    Row ``b * L + k`` is ``agent_k`` of world ``b`` (``L`` learned agents per world); the vector
    env has ``num_envs = B * L`` rows. Per world it is bit-identical to
    ``orca_env.parallel_env(config)`` reset with that world's seed (then with ``seed=None`` at
    every autoreset) and stepped with the same actions.

    ## Finished agents and autoreset (Gymnasium's ``AutoresetMode.SAME_STEP``)

    Agents of a world finish at different steps. A row whose agent finished (terminated or
    truncated) is *not alive*: its action is ignored, and on later steps of its world it reports
    reward 0, ``terminated = truncated = False`` and an all-zero observation. ``info["alive"]``
    ((B*L,) bool) says which rows need an action on the next step, ``info["active"]`` which rows
    acted on this step (their reward, terminations and truncations are real). A world resets
    when none of its learned agents is alive, on the same step (``SAME_STEP``): the step returns
    the reward, termination and truncation of the last agents, the first observation of the new
    episode in ``obs``, and ``info["world_reset"]`` ((B,) bool) marks the worlds that reset.
    The observation a finished agent ended with is in ``info["final_obs"]`` ((B*L, D) float32,
    valid where ``info["_final_obs"]`` ((B*L,) bool) is True, i.e. for the rows that finished on
    this step), whether or not its world reset; bootstrap truncated rows from it.

    ## Arguments

    ``OrcaVectorEnv(config, num_worlds, *, seed=None, infos=False, **config_kwargs)``:
    ``config`` and ``config_kwargs`` as for :class:`~orca_env.environment.OrcaEnv`;
    ``num_worlds`` worlds (B >= 1); ``seed`` for the first ``reset`` when it is given none (an
    int: world ``b`` gets ``seed + b``; or a list of B ints); ``infos=True`` adds per-row arrays
    to ``info``: ``status`` ((B*L,) int64 :class:`~orca_env.codes.Status` codes),
    ``reward_terms`` ((B*L, len(TERMS)) float64 weighted terms), ``nearest_separation``
    ((B*L,) float64, m) and ``collided_with`` ((B*L,) int8: 0 none, 1 agent, 2 obstacle).
    ``num_threads`` (config key, default 1): above 1 the worlds are split into that many blocks,
    stepped at once by threads of a pool (the kernel releases the GIL; results are identical).

    Every config key of the single env's step is mirrored, including visibility (``avoids``,
    ``visible_to``), ``orca_padding``, ``randomize_attributes`` (each world's radii and speeds
    are reloaded at its reset), the ``linear`` population, ``time_limit_rule``,
    ``collision_check``, the size-aware ``collision_tolerance``, ``action: residual``,
    ``observation.layout: universal`` and ``observation.time``. Not supported (a
    ``ValueError`` says so): ``guidance: true`` (the roadmap is per world Python), scenarios
    with their own reward terms or observation features (Python hooks) and ``mixture`` configs
    (worlds of different sizes; the SB3 adapter runs them on ``OrcaEnv`` copies).
    Configs with crowd noise draw it from each world's generator in a Python loop over worlds.
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(self, config: Any = None, num_worlds: int = 1, *, seed: Any = None,
                 infos: bool = False, **config_kwargs: Any) -> None:
        if isinstance(num_worlds, bool) or not isinstance(num_worlds, numbers.Integral) \
                or num_worlds < 1:
            raise ValueError(f"num_worlds must be an integer >= 1, got {num_worlds!r}")
        if not isinstance(infos, bool):
            raise ValueError(f"infos must be True or False, got {infos!r}")
        self._seeds = self._world_seeds(seed, int(num_worlds))
        e = OrcaEnv(config, infos="compact", **config_kwargs)
        if e.config.mixture is not None:
            raise ValueError("config key 'mixture': OrcaVectorEnv steps worlds of one size and "
                             "layout, so it does not run mixtures; use OrcaEnv copies (the SB3 "
                             "adapter's backend 'copies', which make_vec_env picks for them)")
        self._envs = [e] + [OrcaEnv(config, infos="compact", **config_kwargs)
                            for _ in range(int(num_worlds) - 1)]
        cfg = e.config
        if cfg.guidance:
            raise ValueError("config key 'guidance': OrcaVectorEnv does not support guidance "
                             "(the roadmap is per-world Python); use OrcaEnv")
        if e.scenario.EXTRA_REWARDS or e.scenario.EXTRA_OBSERVATIONS:
            raise ValueError(f"scenario {e.scenario.name} has its own reward terms or "
                             f"observation features (Python hooks); OrcaVectorEnv does not "
                             f"support them, use OrcaEnv")
        self.config = cfg
        self.num_worlds = B = int(num_worlds)
        self.infos = infos
        self.num_agents_per_world = L = len(e.possible_agents)
        self.num_envs = B * L
        n = e._n
        self._n = n
        self._L = L
        self.single_observation_space = e.observation_spaces[e.possible_agents[0]]
        self.single_action_space = e.action_spaces[e.possible_agents[0]]
        d = self.single_observation_space.shape[0]
        self._d = d
        self.observation_space = spaces.Box(
            np.broadcast_to(self.single_observation_space.low, (B * L, d)),
            np.broadcast_to(self.single_observation_space.high, (B * L, d)), dtype=np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, (B * L, 2), dtype=np.float32)
        self._threads = min(int(cfg.num_threads or 1), B)
        self._pool = ThreadPoolExecutor(self._threads - 1) if self._threads > 1 else None
        # Contiguous blocks of worlds, one per thread.
        self._blocks = np.array_split(np.arange(B, dtype=np.int64), self._threads)

        # Per-slot constants of the config, tiled over the worlds.
        tile = lambda a: np.ascontiguousarray(np.tile(a, B))  # noqa: E731
        self._stat = (tile(e._radius), tile(e._max_speed), tile(e._pref_speed), tile(e._crowd),
                      tile(e._on_goal), tile(e._unsafe), e._learned_slots.astype(np.int64))
        self._noise = e._noise
        self._any_noise = e._any_noise
        st = cfg.stall
        self._cfg = (float(e.time_step), 0, bool(e._world_frame), float(e._tol_abs),
                     cfg.on_collision == "terminate", int(e._last_step),
                     float(st.speed_fraction), int(st.window), bool(st.end_episode),
                     int(e.num_obs_agents), int(e.num_obs_obstacles), float(e.obs_range) ** 2,
                     float(cfg.rewards.discomfort_dist), e._weights.copy(), e._obs_low.copy(),
                     e._obs_high.copy(), bool(e._timeout_first), bool(e._crowdnav_collisions),
                     float(e._tol_rel), bool(e.universal_layout), float(e.obs_range),
                     bool(e._residual), bool(e._time_obs))
        # State, (B * n, ...) rows.
        z = np.zeros
        self._pos, self._vel, self._pref = z((B * n, 2)), z((B * n, 2)), z((B * n, 2))
        self._active = z(B * n, dtype=bool)
        self._kd = np.tile(np.arange(n, dtype=np.int64), B)
        self._goals = z((B * n, 2))
        self._goal_tol, self._path_len = z(B * n), z(B * n)
        self._d0, self._d_prev = z(B * n), z(B * n)
        self._parked = z(B * n, dtype=bool)
        self._stall = z(B * n, dtype=np.int64)
        self._slot_status = z(B * n, dtype=np.int8)
        self._step_count = z(B, dtype=np.int64)
        self._alive = z(B * L, dtype=bool)
        self._starts = z((B * n, 2))
        self._params = tuple(z(B * n, dtype=np.int64 if name in _ORCA_INT_PARAM_PROPS else float)
                             for name in _ORCA_PARAM_PROPS)
        self._tele = (z((0, 2)), z(B * n, dtype=np.int64), z(B * n, dtype=bool),
                      z(B * n, dtype=bool), z(B * n))
        nn = max(2 * n - 1, 1)
        self._scratch = ((z(B * nn, dtype=np.int64), z(B * nn, dtype=np.int64),
                          z(B * nn, dtype=np.int64), z(B * nn, dtype=np.int64), z((B * nn, 4))),
                         z((B * n, 2)))
        self._world_obst: list[tuple] = [None] * B
        self._obst = None
        self._all_worlds = np.arange(B, dtype=np.int64)
        self._no_noise = np.zeros(0)
        self._warned_clip = False
        self._started = False

    # -- construction helpers ------------------------------------------------------------
    @staticmethod
    def _world_seeds(seed: Any, B: int) -> list:
        if seed is None:
            return [None] * B
        if isinstance(seed, (list, tuple, np.ndarray)):
            seeds = list(seed)
            if len(seeds) != B:
                raise ValueError(f"seed must list one seed per world ({B}), got {len(seeds)}")
            for s in seeds:
                _check_seed("seed", s)
            return [int(s) for s in seeds]
        _check_seed("seed", seed)
        return [int(seed) + b for b in range(B)]

    def _load_world(self, b: int, obs_d: dict, obs: np.ndarray) -> None:
        """Copy world ``b``'s freshly reset ``OrcaEnv`` into the batch arrays."""
        e = self._envs[b]
        n, L = self._n, self._L
        s = slice(b * n, (b + 1) * n)
        sim = e.sim
        self._pos[s] = sim.positions
        self._vel[s] = sim.velocities
        self._pref[s] = sim.pref_velocities
        # Radii and speeds change per episode with randomize_attributes.
        self._stat[0][s] = e._radius
        self._stat[1][s] = e._max_speed
        self._stat[2][s] = e._pref_speed
        self._active[s] = sim.active
        self._kd[s] = np.arange(n)  # a fresh Simulator's kd-tree order
        for arr, name in zip(self._params, _ORCA_PARAM_PROPS, strict=True):
            arr[s] = getattr(sim, name)
        for arr in self._tele[1:]:
            arr[s] = 0
        self._goals[s] = e.goals
        self._starts[s] = e.starts
        self._goal_tol[s] = e.goal_tolerances
        self._path_len[s] = e.path_lengths
        self._d0[s] = np.maximum(e.path_lengths, 1e-9)
        self._d_prev[s] = e.path_lengths
        self._parked[s] = False
        self._stall[s] = 0
        self._slot_status[s] = 0
        self._step_count[b] = 0
        self._alive[b * L:(b + 1) * L] = True
        seg_order, boxes = sim.obstacle_index
        self._world_obst[b] = (sim.obstacle_points, sim.obstacle_next, sim.obstacle_prev,
                               sim.obstacle_unit_dirs, sim.obstacle_convex, seg_order, boxes)
        obs[b * L:(b + 1) * L] = np.stack([obs_d[a] for a in e.possible_agents])

    def _concat_obstacles(self) -> None:
        """Concatenate the worlds' obstacle storage and index (after resets)."""
        wo = self._world_obst
        self._obst = tuple(np.ascontiguousarray(np.concatenate([w[f] for w in wo]))
                           for f in range(7))
        self._obst_off = np.zeros(len(wo) + 1, dtype=np.int64)
        self._obst_off[1:] = np.cumsum([w[0].shape[0] for w in wo])
        self._box_off = np.zeros(len(wo) + 1, dtype=np.int64)
        self._box_off[1:] = np.cumsum([w[6].shape[0] for w in wo])

    def _reset_worlds(self, worlds, seeds, obs: np.ndarray) -> None:
        old_m = [0 if w is None else w[0].shape[0] for w in (self._world_obst[b] for b in worlds)]
        for b, s in zip(worlds, seeds, strict=True):
            obs_d, _ = self._envs[b].reset(seed=s)
            self._load_world(b, obs_d, obs)
        new_m = [self._world_obst[b][0].shape[0] for b in worlds]
        if self._obst is None or any(old_m) or any(new_m):
            self._concat_obstacles()
        self._max_nbr = int(self._params[3].max())
        self._cfg = self._cfg[:1] + (self._max_nbr,) + self._cfg[2:]

    # -- Gymnasium VectorEnv API ---------------------------------------------------------
    def reset(self, *, seed: Any = None, options: dict | None = None):
        """Reset every world.

        Args:
            seed: None (the constructor's ``seed`` on the first reset, else continue each
                world's generator), an int (world ``b`` gets ``seed + b``) or a list of B ints.
            options: Unused.

        Returns:
            ``(obs, info)``: obs (B*L, D) float32; info with ``alive`` (B*L,) bool (all True).
        """
        if options is not None and not isinstance(options, dict):
            raise ValueError(f"options must be None or a dict, got {options!r}")
        seeds = self._world_seeds(seed, self.num_worlds)
        if seed is None and not self._started:
            seeds = self._seeds
        self._started = True
        obs = np.zeros((self.num_envs, self._d), dtype=np.float32)
        self._reset_worlds(range(self.num_worlds), seeds, obs)
        self._warned_clip = False
        return obs, {"alive": self._alive.copy()}

    def _actions(self, actions: Any) -> np.ndarray:
        try:
            raw = np.asarray(actions)
        except (TypeError, ValueError):
            raw = None
        if raw is None or raw.shape != (self.num_envs, 2) or raw.dtype.kind not in "iuf":
            shape = getattr(raw, "shape", None)
            raise ValueError(f"actions must be a ({self.num_envs}, 2) array of real numbers, "
                             f"got shape {shape} dtype {getattr(raw, 'dtype', None)}")
        act = raw.astype(np.float64)
        act[~self._alive] = 0.0  # rows of finished agents are ignored
        bad, clipped = clip_actions(act)
        if bad >= 0:
            raise ValueError(f"actions: non-finite value (NaN or inf) in row {bad}: "
                             f"{raw[bad].tolist()!r}")
        if clipped and not self._warned_clip:
            self._warned_clip = True
            warnings.warn("actions outside the box [-1, 1] were clipped (warned once)",
                          stacklevel=3)
        return act

    def step(self, actions: Any):
        """Step every world once.

        Args:
            actions: (B*L, 2) real actions (as for ``OrcaEnv``, in the agents' frames); rows of
                agents that are not alive are ignored.

        Returns:
            ``(obs (B*L, D) float32, rewards (B*L,) float64, terminations (B*L,) bool,
            truncations (B*L,) bool, info)``; see the class docstring for finished rows, the
            autoreset and ``info``.

        Raises:
            RuntimeError: Before ``reset``.
            ValueError: On actions of the wrong shape or type, or NaN/inf in an alive row.
        """
        if not self._started:
            raise RuntimeError("step() called before reset()")
        act = self._actions(actions)
        B, n, L = self.num_worlds, self._n, self._L
        if self._any_noise:
            ang = np.empty(B * n)
            mag = np.empty(B * n)
            for b, e in enumerate(self._envs):  # each world's own generator, as OrcaEnv draws
                ang[b * n:(b + 1) * n] = e.np_random.uniform(0.0, 2.0 * np.pi, n)
                mag[b * n:(b + 1) * n] = e.np_random.uniform(0.0, 1.0, n) * self._noise
        else:
            ang = mag = self._no_noise
        rows = B * L
        obs = np.zeros((rows, self._d), dtype=np.float32)
        reward = np.zeros(rows)
        term = np.zeros(rows, dtype=bool)
        trunc = np.zeros(rows, dtype=bool)
        status = np.zeros(rows, dtype=np.int64)
        weighted = np.zeros((rows, len(TERMS)))
        sep = np.full(rows, np.inf)
        hit = np.zeros(rows, dtype=np.int8)
        renew = np.zeros(B * n, dtype=bool)
        world_done = np.zeros(B, dtype=bool)
        active_rows = self._alive.copy()
        state = (self._pos, self._vel, self._pref, self._active, self._kd, self._goals,
                 self._goal_tol, self._path_len, self._d0, self._d_prev, self._parked,
                 self._stall, self._slot_status, self._step_count, self._alive)
        outs = (obs, reward, term, trunc, status, weighted, sep, hit, renew, world_done)
        args = (self._all_worlds, n, L, self._stat, self._params, state, self._tele, self._obst,
                self._obst_off, self._box_off, self._scratch, self._cfg, (act, ang, mag), outs)
        if self._pool is None:
            _step_worlds(*args)
        else:
            rest = args[1:]
            futures = [self._pool.submit(_step_worlds, blk, *rest) for blk in self._blocks[1:]]
            _step_worlds(self._blocks[0], *rest)  # this thread takes the first block
            for f in futures:
                f.result()
        if renew.any():
            self._renew_goals(renew)
        info: dict[str, Any] = {}
        fin = term | trunc
        if fin.any():
            info["final_obs"] = obs.copy()
            info["_final_obs"] = fin
            obs[fin] = 0.0
        reset = np.flatnonzero(world_done)
        if reset.size:
            self._reset_worlds(reset.tolist(), [None] * reset.size, obs)
        info["alive"] = self._alive.copy()
        info["active"] = active_rows
        info["world_reset"] = world_done
        if self.infos:
            info["status"] = status
            info["reward_terms"] = weighted
            info["nearest_separation"] = sep
            info["collided_with"] = hit
        return obs, reward, term, trunc, info

    def _renew_goals(self, renew: np.ndarray) -> None:
        """New goals for crowd slots that reached theirs (the scenario's Python, per world)."""
        n = self._n
        for b in np.flatnonzero(renew.reshape(self.num_worlds, n).any(axis=1)).tolist():
            e = self._envs[b]
            s = slice(b * n, (b + 1) * n)
            ids = np.flatnonzero(renew[s])
            pos = self._pos[s]
            goals = self._goals[s]
            goals[ids] = e.scenario.new_goals(e.np_random, e.sim, ids, pos, self._starts[s],
                                              e.radii)
            self._stall[s][ids] = 0
            self._path_len[s] = np.linalg.norm(goals - pos, axis=1)

    def close_extras(self, **kwargs: Any) -> None:
        """Release the worlds' envs and the thread pool (``close()`` calls it once)."""
        pool = getattr(self, "_pool", None)  # a constructor that raised left no pool
        if pool is not None:
            pool.shutdown()
            self._pool = None
        for e in getattr(self, "_envs", ()):
            e.close()
