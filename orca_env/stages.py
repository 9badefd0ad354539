"""The pipeline's numba stages on world-local views, and the named bundles they pass.

Each ``_world_*`` function runs one stage of one world ``b`` (slots ``off[b]:off[b + 1]``,
rows ``b * L:(b + 1) * L``) by calling the stage kernels of :mod:`orca_env.step`,
:mod:`orca_env.collisions`, :mod:`orca_env.observations`, :mod:`orca_env.rewards`,
:mod:`orca_env.kinematics` and the core; the ``*_worlds`` kernels loop over worlds inside
numba and release the GIL (threads take disjoint blocks of worlds). Bundles are named tuples
of arrays (:class:`Slots`: per slot; :class:`Rows`: per agent row; :class:`Settings`: per
world; :class:`Work`: scratch and the values phase A hands to phase B). Kernels never validate:
:mod:`orca_env.pipeline` and the envs do.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence
from typing import Any

import numpy as np
from numba import njit

from .collisions import agent_collisions, agent_collisions_crowdnav, obstacle_collisions
from .core import Simulator
from .core.batch import query_world_neighbors, step_world
from .core.obstacles import query_many as query_obstacles
from .kinematics import move
from .observations import (
    build_observations,
    build_observations_universal,
    nearest_clearances,
    time_fraction,
)
from .rewards import progress, reward_terms
from .step import goals_and_stalls, outcomes, preferred_velocities

__all__ = ["Slots", "Rows", "Settings", "Spec", "Work", "Obstacles", "WorldEpisode", "StepResult",
           "concat_obstacles", "step_worlds",
           "phase_a_worlds", "phase_b_worlds", "observe_worlds"]

#: Per-slot arrays, concatenated over worlds. The ``orca_*`` parameters, ``pos`` .. ``kd`` and
#: the telemetry are the worlds' ``Simulator`` storage; ``radius`` is the agent's own (collisions,
#: observations), ``orca_radius`` adds ``orca_padding``.
Slots = namedtuple("Slots", (
    "pos", "vel", "pref", "active", "kd", "orca_radius", "orca_max_speed", "neighbor_dist",
    "max_neighbors", "time_horizon", "time_horizon_obst", "responsibility", "layer",
    "avoid_mask", "n_lines", "lp3", "intervention", "corrected", "radius", "max_speed",
    "pref_speed", "goal_tol", "path_len", "d0", "d_prev", "noise", "goals", "targets", "starts",
    "population", "kinematics", "on_goal", "group", "safe", "crowd", "external_steer", "parked",
    "stall", "slot_status", "noise_ang", "noise_mag"))
#: Per agent row (B * L): inputs (alive, learned, act, the hooks' extra_obs / extra_terms) and
#: outputs (obs .. hit).
Rows = namedtuple("Rows", ("alive", "learned", "act", "obs", "reward", "term", "trunc",
                           "status", "weighted", "sep", "hit", "extra_obs", "extra_terms"))
#: Per world (B,) settings of its config (a mixture's worlds differ); ``weights`` (B, T0).
Settings = namedtuple("Settings", (
    "time_step", "last_step", "timeout_first", "crowdnav_collisions", "tol", "tol_rel",
    "terminate", "speed_fraction", "window", "end_episode", "range_sq", "obs_range",
    "discomfort", "world_frame", "residual", "noisy", "straight", "weights"))
#: The observation layout every world shares, and the largest ``max_neighbors``.
Spec = namedtuple("Spec", ("kk", "mm", "universal", "time_obs", "n_extra", "low", "high",
                           "max_nbr"))
#: Scratch, and what phase A leaves for phase B (per slot: at_goal .. dist; per row: hit ..).
Work = namedtuple("Work", ("nodes_begin", "nodes_end", "nodes_left", "nodes_right", "nodes_box",
                           "new_vel", "at_goal", "moving", "stalled", "renew", "dist", "hit",
                           "reached", "crash"))
#: The worlds' ``Obstacles`` fields concatenated, with vertex and index-box offsets (B + 1,).
Obstacles = namedtuple("Obstacles", ("points", "next_ids", "prev_ids", "unit_dirs", "convex",
                                     "seg_order", "seg_boxes", "off", "box_off"))


class WorldEpisode:
    """One world's episode as the env layer builds it at reset (:mod:`orca_env.episode`).

    Attributes:
        settings: dict of the per-world :data:`_SETTINGS` values.
        table: its :class:`~orca_env.agents.AgentTable`.
        sim: its ``Simulator`` (obstacles added, agents added, not yet bound).
        scenario, world, rng: the scenario object, its ``World`` and the world's generator.
        starts, goals, radius, max_speed, pref_speed, goal_tol: (n, ...) float64 arrays.
        roadmap, goal_costs: guidance (None without).
        max_steps: the step limit; hooks: ``(scenario, n_extra_obs, n_extra_terms, weights)``.
    """

    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)


class StepResult:
    """What one step returns, per agent row (``(B * L, ...)`` arrays) and per world.

    Attributes:
        obs: (B*L, D) float32; reward, sep: (B*L,) float64; term, trunc: (B*L,) bool;
        status: (B*L,) int64 ``Status`` codes; weighted: (B*L, T) float64 weighted reward
        terms; hit: (B*L,) int8 (0 none, 1 agent, 2 obstacle); acted: (B*L,) bool, rows that
        acted on this step; world_done: (B,) bool, worlds with no live agent left.
    """

    __slots__ = ("obs", "reward", "term", "trunc", "status", "weighted", "sep", "hit", "acted",
                 "world_done")

    def __init__(self, **fields: Any) -> None:
        for k, v in fields.items():
            setattr(self, k, v)


def concat_obstacles(sims: Sequence[Simulator | None]) -> Obstacles:
    """The worlds' obstacle storage and index, concatenated with offsets."""
    parts = []
    for sim in sims:
        if sim is None:
            parts.append((np.zeros((0, 2)), np.zeros(0, np.int64), np.zeros(0, np.int64),
                          np.zeros((0, 2)), np.zeros(0, bool), np.zeros(0, np.int64),
                          np.zeros((0, 4))))
            continue
        order, boxes = sim.obstacle_index
        parts.append((sim.obstacle_points, sim.obstacle_next, sim.obstacle_prev,
                      sim.obstacle_unit_dirs, sim.obstacle_convex, order, boxes))
    fields = [np.ascontiguousarray(np.concatenate([p[f] for p in parts])) for f in range(7)]
    off = np.zeros(len(parts) + 1, dtype=np.int64)
    off[1:] = np.cumsum([p[0].shape[0] for p in parts])
    box_off = np.zeros(len(parts) + 1, dtype=np.int64)
    box_off[1:] = np.cumsum([p[6].shape[0] for p in parts])
    return Obstacles(*fields, off, box_off)


@njit(cache=True, inline="always")
def _world_obstacles(o, b):
    o0, o1 = o.off[b], o.off[b + 1]
    return (o.points[o0:o1], o.next_ids[o0:o1], o.prev_ids[o0:o1], o.unit_dirs[o0:o1],
            o.convex[o0:o1], o.seg_order[o0:o1], o.seg_boxes[o.box_off[b]:o.box_off[b + 1]])


@njit(cache=True, inline="always")
def _nodes(w, node_off, b):
    t0, t1 = node_off[b], node_off[b + 1]
    return (w.nodes_begin[t0:t1], w.nodes_end[t0:t1], w.nodes_left[t0:t1], w.nodes_right[t0:t1],
            w.nodes_box[t0:t1])


@njit(cache=True, inline="always")
def _live(alive, learned, b, L):
    """World-local slots and rows of world ``b``'s live learned agents, in agent order."""
    nl = 0
    for k in range(L):
        if alive[b * L + k]:
            nl += 1
    live = np.empty(nl, dtype=np.int64)
    rows = np.empty(nl, dtype=np.int64)
    q = 0
    for k in range(L):
        r = b * L + k
        if alive[r]:
            live[q] = learned[r]
            rows[q] = r
            q += 1
    return live, rows


@njit(cache=True, error_model="numpy", inline="always")
def _world_phase_a(b, off, node_off, L, sl, st, spec, obst, w, rows_b, step_count, clock):
    """Actions -> preferred velocities -> ORCA -> motion -> collisions -> goals and stalls."""
    a0, a1 = off[b], off[b + 1]
    live, rows = _live(rows_b.alive, rows_b.learned, b, L)
    nl = live.shape[0]
    dt = st.time_step[b]
    pos, vel, pref, active = sl.pos[a0:a1], sl.vel[a0:a1], sl.pref[a0:a1], sl.active[a0:a1]
    radius, targets = sl.radius[a0:a1], sl.targets[a0:a1]
    act = np.empty((nl, rows_b.act.shape[1]))
    for q in range(nl):
        for c in range(act.shape[1]):
            act[q, c] = rows_b.act[rows[q], c]

    # Actions -> preferred velocities (behaviours and kinematics).
    pos0 = pos.copy()
    vel0 = vel.copy() if st.crowdnav_collisions[b] else np.empty((0, 2))
    preferred_velocities(pos0, targets, sl.pref_speed[a0:a1], sl.max_speed[a0:a1],
                         sl.noise_ang[a0:a1], sl.noise_mag[a0:a1], st.noisy[b],
                         sl.external_steer[a0:a1], sl.kinematics[a0:a1], live, act,
                         st.world_frame[b], st.residual[b], pref)
    active0 = active.copy()

    # ORCA (the core's doStep on the world's views).
    params = (sl.orca_radius[a0:a1], sl.orca_max_speed[a0:a1], sl.neighbor_dist[a0:a1],
              sl.max_neighbors[a0:a1], sl.time_horizon[a0:a1], sl.time_horizon_obst[a0:a1],
              sl.responsibility[a0:a1], sl.layer[a0:a1], sl.avoid_mask[a0:a1])
    tele = (np.empty((0, 2)), sl.n_lines[a0:a1], sl.lp3[a0:a1], sl.corrected[a0:a1],
            sl.intervention[a0:a1])
    ob = _world_obstacles(obst, b)
    step_world(pos, vel, pref, active, sl.kd[a0:a1], params, dt, ob, spec.max_nbr, tele,
               _nodes(w, node_off, b), w.new_vel[a0:a1])
    step_count[b] += 1
    clock[b] += dt

    # Motion: each learned agent's model realises ORCA's velocity or its own command; ORCA's
    # telemetry describes a discarded velocity where the command won.
    safe, kin = sl.safe[a0:a1], sl.kinematics[a0:a1]
    for q in range(nl):
        i = live[q]
        if move(kin[i], i, safe[i], pos0, pos, vel, pref, dt):
            tele[4][i] = 0.0
            tele[1][i] = 0
            tele[2][i] = False
            tele[3][i] = False

    # Swept collisions of the live agents.
    hit_a = np.zeros(nl, dtype=np.bool_)
    tol, tol_rel = st.tol[b], st.tol_rel[b]
    if st.crowdnav_collisions[b]:
        agent_collisions_crowdnav(live, pos0, pos, vel0, dt, radius, active0, tol, hit_a,
                                  tol_rel)
    else:
        agent_collisions(live, pos0, pos, radius, active0, tol, hit_a, tol_rel)
    hit_w = np.zeros(nl, dtype=np.bool_)
    if ob[0].shape[0] > 0:
        obstacle_collisions(live, pos0, pos, radius, ob[0], ob[1], tol, hit_w, tol_rel)
    timeout_wins = step_count[b] >= st.last_step[b] and st.timeout_first[b]

    # Goals and stalls of every slot.
    at_goal, stalled = w.at_goal[a0:a1], w.stalled[a0:a1]
    goals_and_stalls(pos, vel, active, sl.parked[a0:a1], sl.goals[a0:a1], sl.goal_tol[a0:a1],
                     sl.max_speed[a0:a1], st.speed_fraction[b], st.window[b], sl.stall[a0:a1],
                     at_goal, w.moving[a0:a1], stalled, w.dist[a0:a1])
    if st.straight[b]:
        sl.path_len[a0:a1] = w.dist[a0:a1]  # the remaining path is the straight line
    for q in range(nl):
        r = rows[q]
        if timeout_wins:  # CrowdNav's rule: the time-out decides the last step
            hit_a[q] = False
            hit_w[q] = False
        w.hit[r] = 1 if hit_a[q] else (2 if hit_w[q] else 0)
        w.crash[r] = (hit_a[q] or hit_w[q]) and st.terminate[b]
        w.reached[r] = at_goal[live[q]] and not w.crash[r] and not timeout_wins


@njit(cache=True, error_model="numpy", inline="always")
def _world_proximity(b, off, node_off, live, sl, st, spec, obst, w):
    """Nearest agents and segments of the live agents: one query, for observations and rewards.

    Returns:
        ``(nbr (nl, K) int64, seg (nl, M) int64, closest (nl, M, 2), sep_agents (nl,), sep
        (nl,))``: neighbour ids, segment ids and closest points, the clearance to the nearest
        agent and to the nearest agent or obstacle, m.
    """
    a0, a1 = off[b], off[b + 1]
    nl = live.shape[0]
    pos, radius = sl.pos[a0:a1], sl.radius[a0:a1]
    kk, mm = spec.kk, spec.mm
    kq = max(kk, 1)
    nbr = np.full((nl, kq), -1, dtype=np.int64)
    nbr_dsq = np.full((nl, kq), np.inf)
    query_world_neighbors(live, pos, sl.active[a0:a1], sl.kd[a0:a1], st.range_sq[b], kq,
                          _nodes(w, node_off, b), nbr, nbr_dsq)
    sep_a = np.empty(nl)
    nearest_clearances(live, nbr, nbr_dsq, radius, sep_a)
    sep = sep_a.copy()
    ob = _world_obstacles(obst, b)
    if ob[0].shape[0] > 0 and nl:
        mq = max(mm, 1)
        pts = np.empty((nl, 2))
        for q in range(nl):
            pts[q, 0] = pos[live[q], 0]
            pts[q, 1] = pos[live[q], 1]
        seg_q = np.full((nl, mq), -1, dtype=np.int64)
        dsq_q = np.full((nl, mq), np.inf)
        closest_q = np.full((nl, mq, 2), np.nan)
        query_obstacles(pts, st.range_sq[b], ob[0], ob[1], ob[5], ob[6], seg_q, dsq_q,
                        closest_q)
        for q in range(nl):
            sep[q] = min(sep_a[q], np.sqrt(dsq_q[q, 0]) - radius[live[q]])
        seg = np.ascontiguousarray(seg_q[:, :mm])
        closest = np.ascontiguousarray(closest_q[:, :mm])
    else:
        seg = np.full((nl, mm), -1, dtype=np.int64)
        closest = np.zeros((nl, mm, 2))
    return np.ascontiguousarray(nbr[:, :kk]), seg, closest, sep_a, sep


@njit(cache=True, error_model="numpy", inline="always")
def _world_observe(b, off, live, rows, sl, st, spec, obst, prox, step_count, extra_obs,
                   obs_out):
    """Observations of the live agents into their rows of ``obs_out``."""
    a0, a1 = off[b], off[b + 1]
    nl = live.shape[0]
    nbr, seg, closest = prox[0], prox[1], prox[2]
    low, high = spec.low, spec.high
    targets = np.empty((nl, 2))
    path_rem = np.empty(nl)
    for q in range(nl):
        i = a0 + live[q]
        targets[q, 0] = sl.targets[i, 0]
        targets[q, 1] = sl.targets[i, 1]
        path_rem[q] = sl.path_len[i]
    obs = np.empty((nl, low.shape[0]), dtype=np.float32)
    pos, vel, radius, max_speed = sl.pos[a0:a1], sl.vel[a0:a1], sl.radius[a0:a1], \
        sl.max_speed[a0:a1]
    dirs = obst.unit_dirs[obst.off[b]:obst.off[b + 1]]
    if spec.universal:
        build_observations_universal(live, pos, vel, radius, max_speed, targets, path_rem, nbr,
                                     seg, closest, dirs, st.world_frame[b], st.obs_range[b],
                                     st.time_step[b], low, high, obs)
    else:
        build_observations(live, pos, vel, radius, max_speed, targets, path_rem, nbr, seg,
                           closest, dirs, st.world_frame[b], low, high, obs)
    d = low.shape[0]
    e0 = d - spec.n_extra - (1 if spec.time_obs else 0)
    for q in range(nl):
        for j in range(spec.n_extra):  # the scenario's features, clipped to their bounds
            v = np.float32(extra_obs[rows[q], j])
            obs[q, e0 + j] = min(max(v, low[e0 + j]), high[e0 + j])
    if spec.time_obs:
        tf = time_fraction(step_count[b], st.last_step[b])
        for q in range(nl):
            obs[q, d - 1] = tf
    for q in range(nl):
        r = rows[q]
        for c in range(d):
            obs_out[r, c] = obs[q, c]


@njit(cache=True, error_model="numpy", inline="always")
def _world_phase_b(b, off, node_off, L, sl, st, spec, obst, w, rows_b, step_count, world_done):
    """Proximity -> observations -> progress and rewards -> outcomes, then the row outputs."""
    a0, a1 = off[b], off[b + 1]
    n = a1 - a0
    live, rows = _live(rows_b.alive, rows_b.learned, b, L)
    nl = live.shape[0]
    prox = _world_proximity(b, off, node_off, live, sl, st, spec, obst, w)
    _world_observe(b, off, live, rows, sl, st, spec, obst, prox, step_count, rows_b.extra_obs,
                   rows_b.obs)
    sep_a = prox[3]

    reached = np.empty(nl, dtype=np.bool_)
    crash = np.empty(nl, dtype=np.bool_)
    collided = np.empty(nl, dtype=np.bool_)
    for q in range(nl):
        reached[q] = w.reached[rows[q]]
        crash[q] = w.crash[rows[q]]
        collided[q] = w.hit[rows[q]] != 0
    prog = np.empty(nl)
    progress(live, sl.d_prev[a0:a1], sl.path_len[a0:a1], sl.d0[a0:a1], prog)
    t0 = st.weights.shape[1]
    weighted = np.empty((nl, t0))
    reward = np.empty(nl)
    reward_terms(live, prog, reached, collided, w.stalled[a0:a1], sl.intervention[a0:a1],
                 sl.max_speed[a0:a1], st.time_step[b], sep_a, st.discomfort[b], st.weights[b],
                 weighted, reward)

    term = np.empty(nl, dtype=np.bool_)
    trunc = np.empty(nl, dtype=np.bool_)
    status = np.empty(nl, dtype=np.int64)
    leave = np.empty(n, dtype=np.bool_)
    outcomes(live, reached, crash, w.stalled[a0:a1], w.moving[a0:a1], w.at_goal[a0:a1],
             sl.crowd[a0:a1], sl.on_goal[a0:a1], step_count[b] >= st.last_step[b],
             st.end_episode[b], term, trunc, status, leave, sl.parked[a0:a1],
             sl.slot_status[a0:a1], w.renew[a0:a1])
    active = sl.active[a0:a1]
    for i in range(n):
        if leave[i]:
            active[i] = False

    any_alive = False
    n_extra = rows_b.extra_terms.shape[1]
    for q in range(nl):
        r = rows[q]
        for t in range(t0):
            rows_b.weighted[r, t] = weighted[q, t]
        if n_extra:  # the scenario's terms, weighted in Python; their sum is added once
            extra = rows_b.extra_terms[r, 0]
            rows_b.weighted[r, t0] = extra
            for t in range(1, n_extra):
                rows_b.weighted[r, t0 + t] = rows_b.extra_terms[r, t]
                extra += rows_b.extra_terms[r, t]
            rows_b.reward[r] = reward[q] + extra
        else:
            rows_b.reward[r] = reward[q]
        rows_b.term[r] = term[q]
        rows_b.trunc[r] = trunc[q]
        rows_b.status[r] = status[q]
        rows_b.sep[r] = prox[4][q]
        rows_b.hit[r] = w.hit[r]
        rows_b.alive[r] = not (term[q] or trunc[q])
        any_alive = any_alive or rows_b.alive[r]
    world_done[b] = not any_alive


@njit(cache=True, nogil=True, error_model="numpy")
def step_worlds(worlds, off, node_off, L, sl, st, spec, obst, w, rows, step_count, clock,
                world_done):
    """Phases A and B of every world in ``worlds`` ((k,) int64), world by world."""
    for j in range(worlds.shape[0]):
        b = worlds[j]
        _world_phase_a(b, off, node_off, L, sl, st, spec, obst, w, rows, step_count, clock)
        _world_phase_b(b, off, node_off, L, sl, st, spec, obst, w, rows, step_count,
                       world_done)


@njit(cache=True, nogil=True, error_model="numpy")
def phase_a_worlds(worlds, off, node_off, L, sl, st, spec, obst, w, rows, step_count, clock,
                   world_done):
    """Phase A of every world in ``worlds``."""
    for j in range(worlds.shape[0]):
        _world_phase_a(worlds[j], off, node_off, L, sl, st, spec, obst, w, rows, step_count,
                       clock)


@njit(cache=True, nogil=True, error_model="numpy")
def phase_b_worlds(worlds, off, node_off, L, sl, st, spec, obst, w, rows, step_count, clock,
                   world_done):
    """Phase B of every world in ``worlds``."""
    for j in range(worlds.shape[0]):
        _world_phase_b(worlds[j], off, node_off, L, sl, st, spec, obst, w, rows, step_count,
                       world_done)


@njit(cache=True, error_model="numpy")
def observe_worlds(worlds, off, node_off, L, sl, st, spec, obst, w, alive, learned, step_count,
                   extra_obs, obs_out, sep_out):
    """Observations and clearances of the live rows of ``worlds`` (at reset)."""
    for j in range(worlds.shape[0]):
        b = worlds[j]
        live, rows = _live(alive, learned, b, L)
        prox = _world_proximity(b, off, node_off, live, sl, st, spec, obst, w)
        _world_observe(b, off, live, rows, sl, st, spec, obst, prox, step_count, extra_obs,
                       obs_out)
        for q in range(live.shape[0]):
            sep_out[rows[q]] = prox[4][q]
