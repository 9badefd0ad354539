"""The pipeline's numba stages on world-local views, and the named bundles they pass.

:func:`run_worlds` runs the stages of each world ``b`` (slots ``off[b]:off[b + 1]``, rows
``b * L:(b + 1) * L``) by calling the stage kernels of :mod:`orca_env.step`,
:mod:`orca_env.collisions`, :mod:`orca_env.observations`, :mod:`orca_env.rewards`,
:mod:`orca_env.kinematics` and the core, looping over worlds inside numba with the GIL
released (threads claim chunks of worlds as they go). Bundles are named tuples
of arrays (:class:`Slots`: per slot; :class:`Rows`: per agent row; :class:`Settings`: per
world; :class:`Work`: scratch and the values phase A hands to phase B). Kernels never validate:
:mod:`orca_env.pipeline` and the envs do.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence
from typing import Any

import numpy as np
from numba import njit, typeof, types
from numba.core import cgutils
from numba.extending import intrinsic

from .collisions import agent_collisions_crowdnav_into, agent_collisions_into, obstacle_collisions
from .core import Simulator
from .core.batch import query_world_neighbors, step_world
from .core.obstacles import query_many as query_obstacles
from .frames import frame_axis
from .kinematics import HOLONOMIC, constraints, move
from .observations import (
    OWN,
    PER_AGENT,
    PER_SEGMENT,
    build_observations,
    build_observations_universal,
    fill_sensors,
    nearest_clearances,
    time_fraction,
)
from .rewards import progress, reward_terms
from .sensors import angular_bound, filter_sensed, lidar_observe, sensor_axes
from .step import goals_and_stalls, outcomes, preferred_velocities

__all__ = ["Slots", "Rows", "Settings", "Spec", "Work", "Obstacles", "WorldEpisode", "StepResult",
           "concat_obstacles", "run_worlds", "run_worlds_entry", "wait_threads",
           "hand_off", "await_job", "await_workers", "BOTH", "PHASE_A",
           "PHASE_B", "OBSERVE"]

#: Per-slot arrays, concatenated over worlds. The ``orca_*`` parameters, ``pos`` .. ``kd`` and
#: the telemetry are the worlds' ``Simulator`` storage; ``radius`` is the agent's own (collisions,
#: observations), ``orca_radius`` adds ``orca_padding``. ``heading`` (rad, world frame),
#: ``lin_vel`` (m/s along the heading) and ``ang_vel`` (rad/s) are the motion model's state and
#: ``kin_param`` (n, KIN_PARAMS) its parameters (:mod:`orca_env.kinematics.base`).
Slots = namedtuple("Slots", (
    "pos", "vel", "pref", "active", "kd", "orca_radius", "orca_max_speed", "neighbor_dist",
    "max_neighbors", "time_horizon", "time_horizon_obst", "responsibility", "layer",
    "avoid_mask", "n_lines", "lp3", "intervention", "corrected", "radius", "max_speed",
    "pref_speed", "goal_tol", "path_len", "d0", "d_prev", "noise", "goals", "targets", "starts",
    "population", "kinematics", "on_goal", "group", "safe", "crowd", "external_steer", "parked",
    "stall", "slot_status", "noise_ang", "noise_mag", "heading", "lin_vel", "ang_vel",
    "kin_param"))
#: Per agent row (B * L): inputs (alive, learned, act, the hooks' extra_obs / extra_terms) and
#: outputs (obs .. hit).
Rows = namedtuple("Rows", ("alive", "learned", "act", "obs", "reward", "term", "trunc",
                           "status", "weighted", "sep", "hit", "extra_obs", "extra_terms"))
#: Per world (B,) settings of its config (a mixture's worlds differ); ``weights`` (B, T0);
#: the sensors' (:mod:`orca_env.sensors`): LiDAR range (m), noise (m), field of view (rad), the
#: neighbour cone's ``cos(fov / 2)``, occlusion, and the LiDAR noise stream's uint64 key.
Settings = namedtuple("Settings", (
    "time_step", "last_step", "timeout_first", "crowdnav_collisions", "tol", "tol_rel",
    "terminate", "speed_fraction", "window", "end_episode", "range_sq", "obs_range",
    "discomfort", "world_frame", "residual", "noisy", "straight", "nonholonomic", "lidar_range",
    "lidar_noise", "lidar_fov", "nbr_cos", "occlusion", "weights", "sensor_key"))
#: The observation layout every world shares (with the sensor block: heading features, LiDAR
#: beams), and the largest ``max_neighbors``.
Spec = namedtuple("Spec", ("kk", "mm", "universal", "time_obs", "n_extra", "low", "high",
                           "max_nbr", "heading_obs", "beams", "stall_obs"))
#: Scratch, and what phase A leaves for phase B (per slot: at_goal .. dist; per row: hit ..).
#: ``cmd`` (per slot): the commanded (v, omega) of non-holonomic models; ``vlines`` and
#: ``n_vlines``: NH-ORCA's velocity polygons handed to the core. The rest is the stages' scratch,
#: allocated once (an allocation per world and step costs more than a small world's work):
#: per slot (``pos0`` .. ``tmp``: world ``b``'s are ``off[b]:off[b + 1]``) and per agent row
#: (``live`` ..: world ``b``'s live agents use ``b * L:b * L + nl``, in agent order); ``q_*``
#: are the live agents' values a stage hands to the next, ``nbr``/``nbr_dsq`` (R, max(kk, 1)),
#: ``seg``/``seg_dsq``/``closest`` (R, max(mm, 1)), ``nbr0``/``seg0``/``closest0`` zero-width
#: (kk or mm of 0), ``obs`` (R, D) float32 (rows not in agent order), ``scan`` (R, beams).
Work = namedtuple("Work", ("nodes_begin", "nodes_end", "nodes_left", "nodes_right", "nodes_box",
                           "new_vel", "at_goal", "moving", "stalled", "renew", "dist", "hit",
                           "reached", "crash", "cmd", "vlines", "n_vlines",
                           "pos0", "vel0", "active0", "leave", "tmp",
                           "live", "rr", "q_reached", "q_crash", "q_collided", "q_hit_a",
                           "q_hit_w", "q_sep_a", "q_sep", "q_prog", "q_reward", "q_term",
                           "q_trunc", "q_status", "q_path", "q_targets", "q_axes", "q_pts",
                           "q_weighted",
                           "nbr", "nbr_dsq", "seg", "seg_dsq", "closest", "nbr0", "seg0",
                           "closest0", "obs", "scan", "c_key", "c_order", "c_start", "c_fill",
                           "c_q1"))
#: The worlds' ``Obstacles`` fields concatenated, with vertex and index-box offsets (B + 1,).
Obstacles = namedtuple("Obstacles", ("points", "next_ids", "prev_ids", "unit_dirs", "convex",
                                     "seg_order", "seg_boxes", "off", "box_off"))


class WorldEpisode:
    """One world's episode as the env layer builds it at reset (:mod:`orca_env.episode`).

    Attributes:
        settings: dict of the per-world :data:`_SETTINGS` values.
        table: its :class:`~orca_env.agents.AgentTable`.
        sim: its ``Simulator`` (obstacles added, agents added, not yet bound; or, with
            ``agent_state``, agents still to come: the batch's load hands them over).
        agent_state: None, or the agents' ``Simulator.new_agents_state`` (cleared at load).
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


@njit(cache=True, no_cfunc_wrapper=True)
def _live(alive, learned, b, L, live_all, rows_all):
    """World-local slots and rows of world ``b``'s live learned agents, in agent order.

    Written to ``live_all`` and ``rows_all`` (per row scratch) at ``b * L``; returns views.
    """
    r0 = b * L
    q = 0
    for k in range(L):
        r = r0 + k
        if alive[r]:
            live_all[r0 + q] = learned[r]
            rows_all[r0 + q] = r
            q += 1
    return live_all[r0:r0 + q], rows_all[r0:r0 + q]


@intrinsic
def _unmanaged(typingctx, x):
    """``x`` (an array, or a tuple or named tuple of arrays and scalars) without reference counts.

    The same arrays (same data, shapes and strides) with a null meminfo, as numba's constant
    arrays have: numba then skips the atomic reference-count increment and decrement of every
    view taken of them and every call they are passed to, which cost a third of a small world's
    step (hundreds per world and step). Only for arrays that outlive the call using them: the
    caller's arguments, which Python holds until the call returns.
    """
    def null_meminfo(context, builder, ty, value):
        arr = context.make_array(ty)(context, builder, value=value)
        arr.meminfo = cgutils.get_null_value(arr.meminfo.type)
        return arr._getvalue()

    def codegen(context, builder, sig, args):
        ty, value = sig.args[0], args[0]
        if isinstance(ty, types.Array):
            return null_meminfo(context, builder, ty, value)
        out = value
        for i, t in enumerate(ty.types):
            if isinstance(t, types.Array):
                e = builder.extract_value(value, i)
                out = builder.insert_value(out, null_meminfo(context, builder, t, e), i)
        return out

    return x(x), codegen


@intrinsic
def _fetch_add(typingctx, arr, index, value):
    """``arr[index] += value`` atomically (sequentially consistent); returns the old value.

    ``arr``: int64 array; ``value`` 0 reads ``arr[index]`` atomically.
    """
    if not (isinstance(arr, types.Array) and arr.dtype == types.int64):
        return None

    def codegen(context, builder, sig, args):
        ty = sig.args[0]
        a = context.make_array(ty)(context, builder, value=args[0])
        i = context.cast(builder, args[1], sig.args[1], types.intp)
        ptr = cgutils.get_item_pointer(context, builder, ty, a, [i])
        v = context.cast(builder, args[2], sig.args[2], types.int64)
        return builder.atomic_rmw("add", ptr, v, "seq_cst")

    return types.int64(arr, index, value), codegen


@njit(cache=True, no_cfunc_wrapper=True, nogil=True)
def wait_threads(claim, field, expected, spins):
    """Wait, without the GIL, until ``claim[field]`` reaches ``expected`` (:func:`run_worlds`).

    ``claim[2]`` counts the threads that entered a :func:`run_worlds` call (each adds 1 as it
    starts). Spins at most ``spins`` atomic reads (about 5 ns each where no other core writes
    the line).

    Returns:
        Whether the count was reached (False: the caller waits some other way, or not at all).
    """
    for _ in range(spins):
        if _fetch_add(claim, field, 0) >= expected:
            return True
    return False


# The pool's hand-offs (:class:`orca_env.pipeline.Workers`): ``ctrl`` is the pool's (2 + 2W,)
# int64 control array: ``ctrl[0]`` the number of the last job published (written by the
# Python thread only), ``ctrl[1]`` the workers' spin budget, ``ctrl[2 + k]`` the last job
# worker ``k`` finished (written by that worker only: it is back waiting), ``ctrl[2 + W + k]``
# 1 from when worker ``k`` starts spinning for a job until it gives up (0: it sleeps, or is on
# its way to sleep; written by that worker only). They spin without the GIL, so that the
# other side's Python (a worker reading its job, the Python thread going on after a call) runs
# while this side holds no lock it needs: a thread woken from a sleep takes 50-100 us on a VM.


@njit(cache=True, no_cfunc_wrapper=True, nogil=True)
def hand_off(ctrl, job, claim, others, spins, wake_spins):
    """Publish job ``job`` (``ctrl[0] = job``) and wait until ``others`` threads entered its call.

    The Python thread calls it with the job's arguments already stored where the workers read
    them. Waits at most ``spins`` atomic reads (:func:`wait_threads`) if every worker was
    spinning, else ``wake_spins``.

    Returns:
        1 if they entered; 0 if not although every worker was spinning when the job was
        published (so each finds it without a wake-up: a spinning worker came late, its core
        busy elsewhere); -1 if not and some worker was not spinning (asleep, or on its way:
        it needs a wake-up, and says nothing about the cores).
    """
    _fetch_add(ctrl, 0, job - _fetch_add(ctrl, 0, 0))  # ctrl[0] = job, atomically
    W = (ctrl.shape[0] - 2) // 2
    spinning = True
    for k in range(W):  # read after the publication: a worker up here sees the job spinning
        if _fetch_add(ctrl, 2 + W + k, 0) == 0:
            spinning = False
    if wait_threads(claim, 2, others, spins if spinning else wake_spins):
        return 1
    return 0 if spinning else -1


@njit(cache=True, no_cfunc_wrapper=True, nogil=True)
def await_job(ctrl, k, done, spins):
    """Worker ``k``: mark job ``done`` finished, then wait for a later job (``ctrl[0] > done``).

    Raises its spin flag while it spins (:func:`hand_off`); lowers it before it gives up, then
    looks once more, so that a job published while the flag was up is never missed.

    Returns whether one was published within ``spins`` atomic reads.
    """
    W = (ctrl.shape[0] - 2) // 2
    flag = 2 + W + k
    _fetch_add(ctrl, 2 + k, done - _fetch_add(ctrl, 2 + k, 0))  # ctrl[2 + k] = done
    if spins > 0:
        _fetch_add(ctrl, flag, 1 - _fetch_add(ctrl, flag, 0))  # up: spinning
        for _ in range(spins):
            if _fetch_add(ctrl, 0, 0) > done:
                return True
    _fetch_add(ctrl, flag, -_fetch_add(ctrl, flag, 0))  # down: giving up
    return _fetch_add(ctrl, 0, 0) > done


@njit(cache=True, no_cfunc_wrapper=True, nogil=True)
def await_workers(ctrl, job, spins):
    """Wait until every worker finished job ``job`` (``ctrl[2:2 + W] >= job``).

    Returns whether they did within ``spins`` rounds of atomic reads.
    """
    for _ in range(spins):
        idle = True
        for k in range(2, 2 + (ctrl.shape[0] - 2) // 2):
            if _fetch_add(ctrl, k, 0) < job:
                idle = False
                break
        if idle:
            return True
    return False


# No function takes the bundles per world: numba increfs every array of a tuple passed to a
# function (or inlined into one), which costs more than a small world's work. The world loop
# (:func:`run_worlds`) slices each world's views from the bundles once and writes the phases
# out in its own body; it first drops the reference counts of every array it was given
# (:func:`_unmanaged`), so that those views and the calls they are passed to cost no atomic
# operations either.


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
def _proximity(live, pos, active, kd, radius, ob, nodes, range_sq, kk, mm, axes, nbr_cos,
               occlusion, tmp, nbr_s, nbr_dsq_s, sep_a, sep, pts, seg_s, seg_dsq_s, closest_s,
               nbr0, seg0, closest0):
    """Nearest agents and segments of the live agents: one query, for observations and rewards.

    With a neighbour cone (``nbr_cos``) or ``occlusion``, the query returns every agent within
    range; the clearances (rewards) come from the true nearest ones, the observation's
    neighbours are the nearest sensed ones (:func:`orca_env.sensors.filter_sensed`).

    Scratch (the live agents' rows of :data:`Work`): ``tmp`` (n,), ``nbr_s``/``nbr_dsq_s``
    (nl, max(kk, 1)), ``pts`` (nl, 2), ``seg_s``/``seg_dsq_s``/``closest_s`` (nl, max(mm, 1)),
    ``nbr0``/``seg0``/``closest0`` (nl, 0); outputs ``sep_a`` (clearance to the nearest agent)
    and ``sep`` (to the nearest agent or obstacle), (nl,) m.

    Returns:
        (nbr (nl, kk), seg (nl, mm), closest (nl, mm, 2)): views of the scratch.
    """
    nl = live.shape[0]
    kq = max(kk, 1)
    sensed = kk > 0 and (nbr_cos > -1.0 or occlusion)
    if sensed:
        kall = max(pos.shape[0], kq)
        nbr_all = np.full((nl, kall), -1, dtype=np.int64)
        dsq_all = np.full((nl, kall), np.inf)
        query_world_neighbors(live, pos, active, kd, range_sq, kall, nodes, nbr_all, dsq_all,
                              tmp)
        nearest_clearances(live, np.ascontiguousarray(nbr_all[:, :kq]),
                           np.ascontiguousarray(dsq_all[:, :kq]), radius, sep_a)
        filter_sensed(live, pos, axes, nbr_cos, occlusion, nbr_all, kk, ob[0], ob[1], ob[5],
                      ob[6], nbr_s)
    else:
        for q in range(nl):
            for c in range(kq):
                nbr_s[q, c] = -1
                nbr_dsq_s[q, c] = np.inf
        query_world_neighbors(live, pos, active, kd, range_sq, kq, nodes, nbr_s, nbr_dsq_s,
                              tmp)
        nearest_clearances(live, nbr_s, nbr_dsq_s, radius, sep_a)
    for q in range(nl):
        sep[q] = sep_a[q]
    mq = max(mm, 1)
    if ob[0].shape[0] > 0 and nl:
        for q in range(nl):
            pts[q, 0] = pos[live[q], 0]
            pts[q, 1] = pos[live[q], 1]
            for c in range(mq):
                seg_s[q, c] = -1
                seg_dsq_s[q, c] = np.inf
                closest_s[q, c, 0] = np.nan
                closest_s[q, c, 1] = np.nan
        query_obstacles(pts, range_sq, ob[0], ob[1], ob[5], ob[6], seg_s, seg_dsq_s, closest_s)
        for q in range(nl):
            sep[q] = min(sep_a[q], np.sqrt(seg_dsq_s[q, 0]) - radius[live[q]])
    else:
        for q in range(nl):
            for c in range(mq):
                seg_s[q, c] = -1
                closest_s[q, c, 0] = 0.0
                closest_s[q, c, 1] = 0.0
    nbr = nbr_s if kk > 0 else nbr0
    if mm > 0:
        return nbr, seg_s, closest_s
    return nbr, seg0, closest0


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
def _observe(live, rows, pos, vel, radius, max_speed, targets_all, path_len, dirs, nbr, seg,
             closest, universal, world_frame, obs_range, time_step, low, high, n_extra,
             time_obs, step, last_step, extra_obs, obs_out, heading_obs, heading, ang_vel,
             kin_param, kin, scan, lidar_range, stall_obs, stall, window, targets, path_rem, obs,
             direct):
    """Observations of the live agents into their rows of ``obs_out``.

    ``scan`` (nl, beams) holds the LiDAR readings (m) of the live agents (beams 0: none);
    with ``stall_obs``, ``stall`` (the world's slots) are their consecutive slow steps and
    ``window`` the stall window (:data:`~orca_env.observations.STALL_FEATURE`). In a
    layout with heading features, a holonomic learner (beside non-holonomic ones) reports its
    sensor's heading, the frame's x axis, and no rotation. ``targets`` (nl, 2), ``path_rem``
    (nl,) and ``obs`` (nl, D) are scratch; with ``direct``, ``obs`` is the rows of ``obs_out``
    themselves (the live agents are the world's rows in order), else they are copied there.
    """
    nl = live.shape[0]
    for q in range(nl):
        i = live[q]
        targets[q, 0] = targets_all[i, 0]
        targets[q, 1] = targets_all[i, 1]
        path_rem[q] = path_len[i]
    if universal:
        build_observations_universal(live, pos, vel, radius, max_speed, targets, path_rem, nbr,
                                     seg, closest, dirs, world_frame, obs_range, time_step, low,
                                     high, obs)
    else:
        build_observations(live, pos, vel, radius, max_speed, targets, path_rem, nbr, seg,
                           closest, dirs, world_frame, low, high, obs)
    if heading_obs or scan.shape[1]:
        col = OWN + PER_AGENT * nbr.shape[1] + PER_SEGMENT * seg.shape[1]
        inv_range = 1.0 / lidar_range if universal else 1.0
        for q in range(nl):
            i = live[q]
            w = angular_bound(kin_param, i, time_step)
            h, av = heading[i], ang_vel[i]
            if kin[i] == HOLONOMIC:
                ex, ey = frame_axis(targets[q, 0] - pos[i, 0], targets[q, 1] - pos[i, 1],
                                    world_frame)
                h, av = np.arctan2(ey, ex), 0.0
            fill_sensors(obs, q, col, heading_obs, pos[i, 0], pos[i, 1], targets[q, 0],
                         targets[q, 1], h, av, w, world_frame, scan, inv_range, low, high)
    d = low.shape[0]
    e0 = d - n_extra - (1 if time_obs else 0) - (1 if stall_obs else 0)
    for q in range(nl):
        for j in range(n_extra):  # the scenario's features, clipped to their bounds
            v = np.float32(extra_obs[rows[q], j])
            obs[q, e0 + j] = min(max(v, low[e0 + j]), high[e0 + j])
    if stall_obs:  # just before the time
        c = d - 1 - (1 if time_obs else 0)
        for q in range(nl):
            obs[q, c] = min(stall[live[q]] / window, 1.0)
    if time_obs:
        tf = time_fraction(step, last_step)
        for q in range(nl):
            obs[q, d - 1] = tf
    if not direct:
        for q in range(nl):
            r = rows[q]
            for c in range(d):
                obs_out[r, c] = obs[q, c]


#: :func:`run_worlds` modes.
BOTH, PHASE_A, PHASE_B, OBSERVE = 0, 1, 2, 3


@njit(cache=True, no_cfunc_wrapper=True, nogil=True, error_model="numpy")
def run_worlds(mode, worlds, off, node_off, L, sl, st, spec, obst, w, rows, step_count, clock,
               world_done, claim):
    """The pipeline's numba part for the worlds ``worlds`` ((k,) int64), world by world.

    ``mode``: :data:`BOTH` (phase A then B), :data:`PHASE_A`, :data:`PHASE_B` (Python ran
    between them), or :data:`OBSERVE` (observations and clearances only, at reset). Releases
    the GIL. ``claim`` ((3,) int64: worlds claimed so far, chunk divisor ``d`` >= 1, threads
    in): the call steps chunks of ``worlds`` claimed one after another by an atomic add on
    ``claim[0]``, so threads calling it with the same ``claim`` share the worlds, each taking
    the next chunk as it finishes the last; a chunk is ``1/d`` of the worlds not yet claimed
    (at least one), so chunks shrink towards the end and the threads finish together (one
    thread alone: ``[0, 1, 0]``, one chunk); it adds 1 to ``claim[2]`` as it starts
    (:func:`wait_threads`). Worlds write disjoint slots, rows and
    scratch, so results do not depend on the number of threads nor on which thread stepped a
    world. The two phases are written out here, not as functions: a call would hand on several
    dozen arrays, which costs more than a small world's work.
    """
    # Views without reference counts (:func:`_unmanaged`): Python holds every argument.
    worlds, off, node_off = _unmanaged(worlds), _unmanaged(off), _unmanaged(node_off)
    sl, st, spec, obst, w = _unmanaged(sl), _unmanaged(st), _unmanaged(spec), \
        _unmanaged(obst), _unmanaged(w)
    rows, step_count, clock = _unmanaged(rows), _unmanaged(step_count), _unmanaged(clock)
    world_done, claim = _unmanaged(world_done), _unmanaged(claim)
    _fetch_add(claim, 2, 1)  # this thread is in (wait_threads)
    n_worlds = worlds.shape[0]
    j = j_end = 0
    while True:
        if j == j_end:  # the next chunk (threads share ``claim``): 1/claim[1] of what is left
            left = n_worlds - _fetch_add(claim, 0, 0)
            if left <= 0:
                break
            size = max(1, left // claim[1])
            j = _fetch_add(claim, 0, size)  # claim[0] += size (another thread may have too)
            if j >= n_worlds:
                break
            j_end = min(j + size, n_worlds)
        b = worlds[j]
        j += 1
        a0, a1 = off[b], off[b + 1]
        n = a1 - a0
        t0, t1 = node_off[b], node_off[b + 1]
        o0, o1 = obst.off[b], obst.off[b + 1]
        ob = (obst.points[o0:o1], obst.next_ids[o0:o1], obst.prev_ids[o0:o1],
              obst.unit_dirs[o0:o1], obst.convex[o0:o1], obst.seg_order[o0:o1],
              obst.seg_boxes[obst.box_off[b]:obst.box_off[b + 1]])
        nodes = (w.nodes_begin[t0:t1], w.nodes_end[t0:t1], w.nodes_left[t0:t1],
                 w.nodes_right[t0:t1], w.nodes_box[t0:t1])
        live, rr = _live(rows.alive, rows.learned, b, L, w.live, w.rr)  # kept by phase A
        nl = live.shape[0]
        r0, r1 = b * L, b * L + nl  # the live agents' scratch rows
        pos, vel, active, kd = sl.pos[a0:a1], sl.vel[a0:a1], sl.active[a0:a1], sl.kd[a0:a1]
        radius, max_speed, targets = sl.radius[a0:a1], sl.max_speed[a0:a1], sl.targets[a0:a1]
        path_len, dt = sl.path_len[a0:a1], st.time_step[b]
        at_goal, moving, stalled = w.at_goal[a0:a1], w.moving[a0:a1], w.stalled[a0:a1]
        kin = sl.kinematics[a0:a1]
        # What phase A hands to phase B, per live agent (kept here when both run, else read
        # back from the agent rows of ``w``).
        reached, crash, collided = w.q_reached[r0:r1], w.q_crash[r0:r1], w.q_collided[r0:r1]

        if mode == BOTH or mode == PHASE_A:
            # Phase A. Actions -> preferred velocities (behaviours and kinematics).
            pref = sl.pref[a0:a1]
            pos0, vel0, active0 = w.pos0[a0:a1], w.vel0[a0:a1], w.active0[a0:a1]
            crowdnav_collisions = st.crowdnav_collisions[b]
            for i in range(n):
                pos0[i, 0] = pos[i, 0]
                pos0[i, 1] = pos[i, 1]
                active0[i] = active[i]
            if crowdnav_collisions:
                for i in range(n):
                    vel0[i, 0] = vel[i, 0]
                    vel0[i, 1] = vel[i, 1]
            heading, kp, cmd = sl.heading[a0:a1], sl.kin_param[a0:a1], w.cmd[a0:a1]
            preferred_velocities(pos0, targets, sl.pref_speed[a0:a1], max_speed,
                                 sl.noise_ang[a0:a1], sl.noise_mag[a0:a1], st.noisy[b],
                                 sl.external_steer[a0:a1], kin, live, rows.act, rr,
                                 st.world_frame[b], st.residual[b], heading, kp, dt, cmd, pref)
            # NH-ORCA's velocity polygons of the non-holonomic slots (none: plain ORCA).
            nh = st.nonholonomic[b]
            lin_vel, ang_vel, safe = sl.lin_vel[a0:a1], sl.ang_vel[a0:a1], sl.safe[a0:a1]
            vlines, n_vl = w.vlines[a0:a1], w.n_vlines[a0:a0]
            if nh and constraints(kin, active, safe, heading, lin_vel, ang_vel, kp, max_speed,
                                  dt, vlines, w.n_vlines[a0:a1]):
                n_vl = w.n_vlines[a0:a1]

            # ORCA (the core's doStep on the world's views).
            params = (sl.orca_radius[a0:a1], sl.orca_max_speed[a0:a1], sl.neighbor_dist[a0:a1],
                      sl.max_neighbors[a0:a1], sl.time_horizon[a0:a1],
                      sl.time_horizon_obst[a0:a1], sl.responsibility[a0:a1], sl.layer[a0:a1],
                      sl.avoid_mask[a0:a1])
            tele = (w.new_vel[0:0], sl.n_lines[a0:a1], sl.lp3[a0:a1], sl.corrected[a0:a1],
                    sl.intervention[a0:a1])
            step_world(pos, vel, pref, active, kd, params, dt, ob, spec.max_nbr, tele, nodes,
                       w.new_vel[a0:a1], vlines, n_vl)
            step_count[b] += 1
            clock[b] += dt

            # Motion: each learned agent's model realises ORCA's velocity or its own command;
            # ORCA's telemetry describes a discarded velocity where the command won.
            for q in range(nl):
                i = live[q]
                if kin[i] == HOLONOMIC and move(kin[i], i, safe[i], pos0, pos, vel, pref, cmd,
                                                heading, lin_vel, ang_vel, kp, max_speed[i],
                                                dt):
                    tele[4][i] = 0.0
                    tele[1][i] = 0
                    tele[2][i] = False
                    tele[3][i] = False
            if nh:  # every active non-holonomic slot, scripted ones included
                for i in range(n):
                    if kin[i] != HOLONOMIC and active0[i] and move(
                            kin[i], i, safe[i], pos0, pos, vel, pref, cmd, heading, lin_vel,
                            ang_vel, kp, max_speed[i], dt):
                        tele[4][i] = 0.0
                        tele[1][i] = 0
                        tele[2][i] = False
                        tele[3][i] = False

            # Swept collisions of the live agents.
            tol, tol_rel = st.tol[b], st.tol_rel[b]
            hit_a, hit_w = w.q_hit_a[r0:r1], w.q_hit_w[r0:r1]
            for q in range(nl):
                hit_a[q] = False
                hit_w[q] = False
            grid = (w.c_key[a0:a1], w.c_start[4 * a0 + 65 * b:4 * a1 + 65 * (b + 1)],
                    w.c_fill[4 * a0 + 64 * b:4 * a1 + 64 * (b + 1)], w.c_order[a0:a1])
            if crowdnav_collisions:
                agent_collisions_crowdnav_into(live, pos0, pos, vel0, dt, radius, active0, tol,
                                               hit_a, tol_rel, w.c_q1[a0:a1], grid)
            else:
                agent_collisions_into(live, pos0, pos, radius, active0, tol, hit_a, tol_rel,
                                      grid)
            if ob[0].shape[0] > 0:
                obstacle_collisions(live, pos0, pos, radius, ob[0], ob[1], tol, hit_w, tol_rel)
            timeout_wins = step_count[b] >= st.last_step[b] and st.timeout_first[b]

            # Goals and stalls of every slot.
            dist = w.dist[a0:a1]
            goals_and_stalls(pos, vel, active, sl.parked[a0:a1], sl.goals[a0:a1],
                             sl.goal_tol[a0:a1], max_speed, st.speed_fraction[b], st.window[b],
                             sl.stall[a0:a1], at_goal, moving, stalled, dist)
            if st.straight[b]:
                for i in range(n):  # the remaining path is the straight line
                    path_len[i] = dist[i]
            terminate = st.terminate[b]
            for q in range(nl):
                r = rr[q]
                if timeout_wins:  # CrowdNav's rule: the time-out decides the last step
                    hit_a[q] = False
                    hit_w[q] = False
                collided[q] = hit_a[q] or hit_w[q]
                crash[q] = collided[q] and terminate
                reached[q] = at_goal[live[q]] and not crash[q] and not timeout_wins
                w.hit[r] = 1 if hit_a[q] else (2 if hit_w[q] else 0)
                w.crash[r] = crash[q]
                w.reached[r] = reached[q]
        if mode == PHASE_A:
            continue

        # Proximity (one query for observations and rewards), the sensors, the observations.
        axes = w.q_axes[r0:r1]
        nbr_cos, occlusion = st.nbr_cos[b], st.occlusion[b]
        if spec.beams or nbr_cos > -1.0 or occlusion:
            sensor_axes(live, pos, targets, sl.heading[a0:a1], kin, st.world_frame[b], axes)
        sep_a, sep = w.q_sep_a[r0:r1], w.q_sep[r0:r1]
        nbr, seg, closest = _proximity(
            live, pos, active, kd, radius, ob, nodes, st.range_sq[b], spec.kk, spec.mm, axes,
            nbr_cos, occlusion, w.tmp[a0:a1], w.nbr[r0:r1], w.nbr_dsq[r0:r1], sep_a, sep,
            w.q_pts[r0:r1], w.seg[r0:r1], w.seg_dsq[r0:r1], w.closest[r0:r1], w.nbr0[r0:r1],
            w.seg0[r0:r1], w.closest0[r0:r1])
        scan = w.scan[r0:r1]
        if spec.beams:
            lidar_observe(live, pos, radius, active, axes, st.lidar_fov[b], st.lidar_range[b],
                          st.lidar_noise[b], st.sensor_key[b], step_count[b], ob[0], ob[1],
                          ob[5], ob[6], scan)
        direct = nl == L  # the live agents are the world's rows, in order
        obs_q = rows.obs[r0:r1] if direct else w.obs[r0:r1]
        _observe(live, rr, pos, vel, radius, max_speed, targets, path_len, ob[3], nbr, seg,
                 closest, spec.universal, st.world_frame[b], st.obs_range[b], dt,
                 spec.low, spec.high, spec.n_extra, spec.time_obs, step_count[b],
                 st.last_step[b], rows.extra_obs, rows.obs, spec.heading_obs, sl.heading[a0:a1],
                 sl.ang_vel[a0:a1], sl.kin_param[a0:a1], kin, scan, st.lidar_range[b],
                 spec.stall_obs, sl.stall[a0:a1], st.window[b], w.q_targets[r0:r1],
                 w.q_path[r0:r1], obs_q, direct)
        if mode == OBSERVE:
            for q in range(nl):
                rows.sep[rr[q]] = sep[q]
            continue

        # Phase B. Progress and rewards.
        if mode == PHASE_B:
            for q in range(nl):
                reached[q] = w.reached[rr[q]]
                crash[q] = w.crash[rr[q]]
                collided[q] = w.hit[rr[q]] != 0
        prog = w.q_prog[r0:r1]
        progress(live, sl.d_prev[a0:a1], path_len, sl.d0[a0:a1], prog)
        weights = st.weights[b]
        nt = weights.shape[0]
        weighted, reward = w.q_weighted[r0:r1], w.q_reward[r0:r1]
        reward_terms(live, prog, reached, collided, stalled, sl.intervention[a0:a1], max_speed,
                     dt, sep_a, st.discomfort[b], weights, weighted, reward)

        # Outcomes: terminations, truncations, statuses, goal behaviours.
        term, trunc, status = w.q_term[r0:r1], w.q_trunc[r0:r1], w.q_status[r0:r1]
        leave = w.leave[a0:a1]
        outcomes(live, reached, crash, stalled, moving, at_goal, sl.crowd[a0:a1],
                 sl.on_goal[a0:a1], step_count[b] >= st.last_step[b], st.end_episode[b], term,
                 trunc, status, leave, sl.parked[a0:a1], sl.slot_status[a0:a1], w.renew[a0:a1])
        for i in range(n):
            if leave[i]:
                active[i] = False

        # The row outputs.
        any_alive = False
        n_extra = rows.extra_terms.shape[1]
        for q in range(nl):
            r = rr[q]
            for t in range(nt):
                rows.weighted[r, t] = weighted[q, t]
            if n_extra:  # the scenario's terms, weighted in Python; their sum is added once
                extra = rows.extra_terms[r, 0]
                rows.weighted[r, nt] = extra
                for t in range(1, n_extra):
                    rows.weighted[r, nt + t] = rows.extra_terms[r, t]
                    extra += rows.extra_terms[r, t]
                rows.reward[r] = reward[q] + extra
            else:
                rows.reward[r] = reward[q]
            rows.term[r] = term[q]
            rows.trunc[r] = trunc[q]
            rows.status[r] = status[q]
            rows.sep[r] = sep[q]
            rows.hit[r] = w.hit[r]
            rows.alive[r] = not (term[q] or trunc[q])
            any_alive = any_alive or rows.alive[r]
        world_done[b] = not any_alive


#: The compiled ``run_worlds`` once resolved (see :func:`run_worlds_entry`).
_RUN_WORLDS_ENTRY: list = []


def run_worlds_entry(*args: Any) -> Any:
    """``run_worlds``'s compiled entry point, resolved once per process from real arguments.

    numba's dispatcher types every argument on every call, which for the pipeline's bundles
    (about 100 arrays in named tuples) costs about 10 us, as much as a small world's step.
    :mod:`orca_env.pipeline` builds the bundles with fixed dtypes and layouts, and the envs make
    the one array from outside, the actions, C-contiguous float64, so every call has the same
    argument types: the first call goes through the dispatcher (compiling or loading the
    cache), later ones call the compiled entry point directly.
    """
    if not _RUN_WORLDS_ENTRY:
        run_worlds(args[0], args[1][:0], *args[2:-1], np.zeros(3, dtype=np.int64))  # no world
        sig = tuple(typeof(a) for a in args)
        _RUN_WORLDS_ENTRY.append(run_worlds.overloads[sig].entry_point)
    return _RUN_WORLDS_ENTRY[0]
