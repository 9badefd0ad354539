"""Observation layout, bounds and the numba kernel that fills them.

Layout of one agent's observation (float32), ``K = num_agents``, ``M = num_obstacles``, all
vectors in the agent's frame (goal-aligned: x towards its goal or waypoint; or world):

=================  ==========================================================  =======  ======
index              meaning                                                     min      max
=================  ==========================================================  =======  ======
0, 1               vector to the goal (or next waypoint), m                    -inf     inf
2                  distance to the goal (or next waypoint), m                  0        inf
3                  remaining distance to the goal (path length with guidance)  0        inf
4, 5               own velocity, m/s                                           -V       V
6                  own radius, m                                               0        R
7                  own max speed, m/s                                          0        V
8 + 6k + (0, 1)    k-th nearest agent: relative position, m                    -range   range
8 + 6k + (2, 3)    k-th nearest agent: relative velocity, m/s                  -2V      2V
8 + 6k + 4         k-th nearest agent: radius, m                               0        R
8 + 6k + 5         k-th nearest agent: present (1) or padding (0)              0        1
8 + 6K + 5m + 0,1  m-th nearest obstacle segment: closest point, relative, m   -range   range
8 + 6K + 5m + 2,3  m-th nearest obstacle segment: unit direction               -1       1
8 + 6K + 5m + 4    m-th nearest obstacle segment: present (1) or padding (0)   0        1
S + 0, 1           heading (non-holonomic only): cos, sin in the obs. frame     -1       1
S + 2              angular velocity / its bound ω (non-holonomic only)          -1       1
S + H + b          LiDAR beam b (``observation.lidar``): range reading, m      0        ρ_L
S + H + B + j      the scenario's j-th own feature (``EXTRA_OBSERVATIONS``)    low_j    high_j
S + H + B + E      own stall time (stall: true), slow steps / stall window     0        1
last (time: true)  elapsed fraction of the time limit, step / last step        0        1
=================  ==========================================================  =======  ======

``S = 8 + 6K + 5M`` is where the sensor block starts; ``H`` is 3 when a learned agent's motion
model is not ``holonomic`` (its heading and angular velocity, see below), else 0; ``B`` is the
number of LiDAR beams (0 without ``observation.lidar``) and ``ρ_L`` the LiDAR range; ``E`` is
the number of the scenario's own features. The stall time (``observation.stall: true``) is the
last feature without ``time``, the one before it with ``time``. Without these options (the
default) the layout is exactly the one of earlier versions.

``V`` is the largest max speed and ``R`` the largest radius among all agents of the env.
Padding entries are all zero. Values are clipped to the bounds after the cast to float32, so
every observation lies in its space whatever the round-off.

The universal layout (``observation.layout: universal``)
--------------------------------------------------------
The same indices, scaled so that every scenario gives the same ranges and the same ``Box``: one
policy runs in every scenario (the layout above has scenario-dependent bounds, infinite ones for
the goal, and K and M from the scenario). Lengths are in units of the observation range ``ρ``
(``observation.range``, metres), speeds in units of the agent's own max speed ``v``; ``Δt`` is
the time step. K and M default to :data:`UNIVERSAL_DEFAULTS` (6 agents, 4 segments) whatever the
scenario, and the bounds depend on K and M only, so a world with every length and speed ten
times larger observes the same numbers (up to round-off). Distances to the goal are squashed to
``d / (d + ρ)``: 0 at the goal, 0.5 one range away, towards 1 far away; no information is lost
and the bound is finite.

=================  ==========================================================  =======  ======
index              meaning                                                     min      max
=================  ==========================================================  =======  ======
0, 1               unit vector to the goal (or waypoint); (0, 0) on it         -1       1
2                  distance to the goal (or waypoint) d, as d / (d + ρ)        0        1
3                  remaining distance p (path length with guidance), p/(p+ρ)   0        1
4, 5               own velocity / v                                            -1       1
6                  own radius / ρ                                              0        1
7                  own max speed * Δt / ρ (range fraction per step at v)       0        1
8 + 6k + (0, 1)    k-th nearest agent: relative position / ρ                   -1       1
8 + 6k + (2, 3)    k-th nearest agent: relative velocity / v                   -U       U
8 + 6k + 4         k-th nearest agent: radius / ρ                              0        1
8 + 6k + 5         k-th nearest agent: present (1) or padding (0)              0        1
8 + 6K + 5m + 0,1  m-th nearest obstacle segment: closest point, relative / ρ  -1       1
8 + 6K + 5m + 2,3  m-th nearest obstacle segment: unit direction               -1       1
8 + 6K + 5m + 4    m-th nearest obstacle segment: present (1) or padding (0)   0        1
S + 0, 1           heading (non-holonomic only): cos, sin in the obs. frame     -1       1
S + 2              angular velocity / its bound ω (non-holonomic only)          -1       1
S + H + b          LiDAR beam b: range reading / LiDAR range ρ_L (1: no hit)   0        1
S + H + B + j      the scenario's j-th own feature (``EXTRA_OBSERVATIONS``)    low_j    high_j
S + H + B + E      own stall time (stall: true), slow steps / stall window     0        1
last (time: true)  elapsed fraction of the time limit, step / last step        0        1
=================  ==========================================================  =======  ======

The LiDAR block has ``B`` entries whatever the scenario, so the universal ``Box`` stays fixed
for a given K, M and ``B``; the scan is in units of the LiDAR's own range (a fraction of what
the sensor can see), not of ρ, so its bounds do not depend on the scenario either.

``U`` = :data:`UNIVERSAL_REL_SPEED` = 4: neighbours up to three times as fast as the agent
(CrowdNav's humans reach 1.5 m/s) stay inside it; faster ones are clipped. The scenario's own
features keep their own units and bounds.

Heading and angular velocity (either layout)
--------------------------------------------
When the motion model of a learned group is not ``holonomic`` (``groups[i].kinematics``), three
features follow the segments: the agent's heading as a unit vector in its observation frame
(``(1, 0)``: facing its goal with ``frame: goal``), and its angular velocity over its bound ω
(the model's ``max_angular_speed``; else its rotation per step over the time step; else
:data:`~orca_env.sensors.DEFAULT_ANGULAR_BOUND`), clipped to [-1, 1]. Holonomic agents have no
heading of their own, so their observations do not change.

Sensors (either layout)
-----------------------
``observation.lidar`` appends a scan (:mod:`orca_env.sensors`); ``observation.fov`` and
``observation.occlusion`` restrict which agents fill the K neighbour slots (the K nearest
*sensed* ones). Neither changes any other index.

Stall time (``observation.stall: true``, either layout)
-------------------------------------------------------
One more feature before the time (last without it): how long the agent has been slow, its
stall detector's count of consecutive steps below ``stall.speed_fraction`` of its max speed away
from its goal (0 again once it moves or arrives), over ``stall.window``, clipped to [0, 1]
(:data:`STALL_FEATURE`): 0 while it moves, 1 once the detector flags it stalled. The rest of
the observation shows the agent's speed now, not how long it has been stuck, which decides
whether waiting is still worth it. Off by default, so existing policies keep their observation.

K and M (the universal layout's slots, ``observation.num_agents`` and ``num_obstacles``) may be
anything up to :data:`~orca_env.config.MAX_OBSERVED` (1024) each; the K nearest observed agents
fill the slots nearest first, and a crowd smaller than K leaves the rest as padding (present
flag 0, every entry 0). The crowd-navigation networks of :mod:`orca_env.training.networks` pool
over the present slots only, so one network reads any crowd size up to K.

Time (``observation.time: true``, either layout)
------------------------------------------------
One more feature after everything else: the step count over the step on which the episode
times out (``max_steps``, or CrowdNav's rule with ``time_limit_rule: crowdnav``), 0 at reset
and 1 on the last step (:data:`TIME_FEATURE`). An episode with a time limit is not stationary:
whether to wait for a crowd to pass or to push through depends on the time left, which the
rest of the observation does not tell (Pardo et al. 2018, "Time Limits in Reinforcement
Learning"). Off by default, so existing policies keep their observation.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from gymnasium import spaces
from numba import njit

from .config import UNIVERSAL_DEFAULTS
from .frames import AT_GOAL_EPS, frame_axis, to_frame

__all__ = ["obs_size", "obs_bounds", "make_space", "build_observations", "OWN", "PER_AGENT",
           "PER_SEGMENT", "UNIVERSAL_DEFAULTS", "UNIVERSAL_REL_SPEED",
           "universal_bounds", "make_universal_space", "build_observations_universal",
           "TIME_FEATURE", "STALL_FEATURE", "time_fraction", "sensor_features", "fill_sensors"]

OWN = 8
PER_AGENT = 6
PER_SEGMENT = 5
#: The ``observation.time`` feature as an extra feature ``(name, low, high)``: appended last.
TIME_FEATURE = ("time", 0.0, 1.0)
#: The ``observation.stall`` feature ``(name, low, high)``: just before the time feature.
STALL_FEATURE = ("stall", 0.0, 1.0)
#: Bound of the universal layout's relative velocities, in units of the agent's max speed.
UNIVERSAL_REL_SPEED = 4.0


def sensor_features(heading: bool, beams: int, lidar_range: float, universal: bool
                    ) -> tuple[tuple[str, float, float], ...]:
    """The sensor block (module docstring) as features ``(name, low, high)``, in order.

    Args:
        heading: The learned agents' model has a heading (not ``holonomic``).
        beams: LiDAR beams (0: no scan).
        lidar_range: LiDAR range, m.
        universal: The universal layout (beams over their range) or the metric one (metres).
    """
    out = []
    if heading:
        out += [("heading_cos", -1.0, 1.0), ("heading_sin", -1.0, 1.0),
                ("angular_velocity", -1.0, 1.0)]
    hi = 1.0 if universal else float(lidar_range)
    out += [(f"lidar_{b}", 0.0, hi) for b in range(beams)]
    return tuple(out)


def obs_size(k: int, m: int, extra: int = 0) -> int:
    """Length of the observation vector for ``k`` agents, ``m`` segments, ``extra`` features."""
    return OWN + PER_AGENT * k + PER_SEGMENT * m + extra


def obs_bounds(k: int, m: int, obs_range: float, max_speed: float, max_radius: float,
               extra: Sequence[tuple[str, float, float]] = ()) -> tuple[np.ndarray, np.ndarray]:
    """``(low, high)`` float32 bound vectors of the layout above.

    Args:
        k: Observed agents.
        m: Observed obstacle segments.
        obs_range: Observation range, m.
        max_speed: Largest max speed of the env, m/s.
        max_radius: Largest radius of the env, m.
        extra: Features after the segments, ``(name, low, high)`` each, appended in order:
            the sensors' (:func:`sensor_features`), the scenario's own, the time.
    """
    n = obs_size(k, m, len(extra))
    lo = np.zeros(n, dtype=np.float64)
    hi = np.zeros(n, dtype=np.float64)
    v = max_speed * 1.001 + 1e-9
    r = max_radius
    lo[0:2], hi[0:2] = -np.inf, np.inf
    lo[2:4], hi[2:4] = 0.0, np.inf
    lo[4:6], hi[4:6] = -v, v
    lo[6], hi[6] = 0.0, r
    lo[7], hi[7] = 0.0, v
    for j in range(k):
        b = OWN + PER_AGENT * j
        lo[b:b + 2], hi[b:b + 2] = -obs_range, obs_range
        lo[b + 2:b + 4], hi[b + 2:b + 4] = -2 * v, 2 * v
        lo[b + 4], hi[b + 4] = 0.0, r
        lo[b + 5], hi[b + 5] = 0.0, 1.0
    for j in range(m):
        b = OWN + PER_AGENT * k + PER_SEGMENT * j
        lo[b:b + 2], hi[b:b + 2] = -obs_range, obs_range
        lo[b + 2:b + 4], hi[b + 2:b + 4] = -1.0, 1.0
        lo[b + 4], hi[b + 4] = 0.0, 1.0
    b = obs_size(k, m)
    for j, (_, low, high) in enumerate(extra):
        lo[b + j], hi[b + j] = low, high
    return lo.astype(np.float32), hi.astype(np.float32)


def make_space(k: int, m: int, obs_range: float, max_speed: float, max_radius: float,
               extra: Sequence[tuple[str, float, float]] = ()) -> spaces.Box:
    """The observation ``Box`` of the layout above."""
    lo, hi = obs_bounds(k, m, obs_range, max_speed, max_radius, extra)
    return spaces.Box(lo, hi, dtype=np.float32)


def universal_bounds(k: int, m: int, extra: Sequence[tuple[str, float, float]] = ()
                     ) -> tuple[np.ndarray, np.ndarray]:
    """``(low, high)`` float32 bounds of the universal layout (module docstring): K, M only."""
    n = obs_size(k, m, len(extra))
    lo = np.zeros(n, dtype=np.float64)
    hi = np.ones(n, dtype=np.float64)
    lo[0:2] = -1.0
    lo[4:6] = -1.0
    for j in range(k):
        b = OWN + PER_AGENT * j
        lo[b:b + 2] = -1.0
        lo[b + 2:b + 4], hi[b + 2:b + 4] = -UNIVERSAL_REL_SPEED, UNIVERSAL_REL_SPEED
    for j in range(m):
        b = OWN + PER_AGENT * k + PER_SEGMENT * j
        lo[b:b + 4] = -1.0
    b = obs_size(k, m)
    for j, (_, low, high) in enumerate(extra):
        lo[b + j], hi[b + j] = low, high
    return lo.astype(np.float32), hi.astype(np.float32)


def make_universal_space(k: int, m: int, extra: Sequence[tuple[str, float, float]] = ()
                         ) -> spaces.Box:
    """The observation ``Box`` of the universal layout: the same for every scenario."""
    lo, hi = universal_bounds(k, m, extra)
    return spaces.Box(lo, hi, dtype=np.float32)


@njit(cache=True, no_cfunc_wrapper=True)
def time_fraction(step, last_step):
    """The ``observation.time`` feature: ``step / last_step``, at most 1 (float64)."""
    return min(step / last_step, 1.0)


@njit(cache=True, no_cfunc_wrapper=True)
def nearest_clearances(slots, nbr_ids, nbr_dsq, radii, out):
    """Clearance (m) of each agent ``slots`` to its nearest neighbour: distance minus radii.

    Args:
        slots: (k,) int64 simulator ids.
        nbr_ids: (k, K) int64 neighbour ids, -1 padded.
        nbr_dsq: (k, K) float64 squared centre distances, inf padded.
        radii: (n,) float64 radii, m.
        out: (k,) float64 output; inf without neighbours.
    """
    for r in range(slots.shape[0]):
        best = np.inf
        for c in range(nbr_ids.shape[1]):
            j = nbr_ids[r, c]
            if j >= 0:
                best = min(best, np.sqrt(nbr_dsq[r, c]) - radii[slots[r]] - radii[j])
        out[r] = best


@njit(cache=True, no_cfunc_wrapper=True)
def _fill_others(out, r, px, py, vx, vy, ex, ey, positions, velocities, radii, nbr_ids,
                 seg_ids, seg_closest, unit_dirs, inv_r, inv_v, low, high):
    """Fill row ``r``'s neighbour and segment entries, then clip the layout to its bounds.

    Lengths are multiplied by ``inv_r`` and speeds by ``inv_v``: 1.0 in the metric layout, where
    the products are exact, so both layouts share this code bit for bit.
    """
    kk = nbr_ids.shape[1]
    mm = seg_ids.shape[1]
    for k in range(kk):
        b = OWN + PER_AGENT * k
        j = nbr_ids[r, k]
        if j < 0:
            for c in range(PER_AGENT):
                out[r, b + c] = 0.0
            continue
        rx = (positions[j, 0] - px) * inv_r
        ry = (positions[j, 1] - py) * inv_r
        wx = (velocities[j, 0] - vx) * inv_v
        wy = (velocities[j, 1] - vy) * inv_v
        out[r, b], out[r, b + 1] = to_frame(rx, ry, ex, ey)
        out[r, b + 2], out[r, b + 3] = to_frame(wx, wy, ex, ey)
        out[r, b + 4] = radii[j] * inv_r
        out[r, b + 5] = 1.0
    for m in range(mm):
        b = OWN + PER_AGENT * kk + PER_SEGMENT * m
        s = seg_ids[r, m]
        if s < 0:
            for c in range(PER_SEGMENT):
                out[r, b + c] = 0.0
            continue
        cx = (seg_closest[r, m, 0] - px) * inv_r
        cy = (seg_closest[r, m, 1] - py) * inv_r
        out[r, b], out[r, b + 1] = to_frame(cx, cy, ex, ey)
        out[r, b + 2], out[r, b + 3] = to_frame(unit_dirs[s, 0], unit_dirs[s, 1], ex, ey)
        out[r, b + 4] = 1.0
    # The scenario's own features (after the layout) are filled and clipped by the env.
    for c in range(OWN + PER_AGENT * kk + PER_SEGMENT * mm):
        x = out[r, c]
        if x < low[c]:
            out[r, c] = low[c]
        elif x > high[c]:
            out[r, c] = high[c]


@njit(cache=True, no_cfunc_wrapper=True)
def build_observations(slots, positions, velocities, radii, max_speeds, targets, path_rem,
                       nbr_ids, seg_ids, seg_closest, unit_dirs, world_frame, low, high, out):
    """Fill ``out`` (len(slots), obs_size) float32 for the agents ``slots``.

    Args:
        slots: (k,) int64 simulator ids of the observing agents.
        positions: (n, 2) float64 positions of all agents, metres, world frame.
        velocities: (n, 2) float64 velocities of all agents, m/s, world frame.
        radii: (n,) float64 radii of all agents, metres.
        max_speeds: (n,) float64 maximum speeds of all agents, m/s.
        targets: (k, 2) float64 goal or waypoint of each observing agent.
        path_rem: (k,) float64 remaining distance to the goal.
        nbr_ids: (k, K) int64 neighbour ids, nearest first, -1 padded.
        seg_ids: (k, M) int64 obstacle vertex ids, -1 padded.
        seg_closest: (k, M, 2) float64 closest points on the segments.
        unit_dirs: (s, 2) float64 segment unit directions of the core.
        world_frame: True for world-frame vectors, False for goal-aligned.
        low: (obs_size,) float32 lower bounds to clip to.
        high: (obs_size,) float32 upper bounds to clip to.
        out: (k, obs_size) float32 output.
    """
    for r in range(slots.shape[0]):
        i = slots[r]
        px = positions[i, 0]
        py = positions[i, 1]
        vx = velocities[i, 0]
        vy = velocities[i, 1]
        gx = targets[r, 0] - px
        gy = targets[r, 1] - py
        ex, ey = frame_axis(gx, gy, world_frame)
        out[r, 0], out[r, 1] = to_frame(gx, gy, ex, ey)
        out[r, 2] = np.sqrt(gx * gx + gy * gy)
        out[r, 3] = path_rem[r]
        out[r, 4], out[r, 5] = to_frame(vx, vy, ex, ey)
        out[r, 6] = radii[i]
        out[r, 7] = max_speeds[i]
        _fill_others(out, r, px, py, vx, vy, ex, ey, positions, velocities, radii, nbr_ids,
                     seg_ids, seg_closest, unit_dirs, 1.0, 1.0, low, high)


@njit(cache=True, no_cfunc_wrapper=True)
def build_observations_universal(slots, positions, velocities, radii, max_speeds, targets,
                                 path_rem, nbr_ids, seg_ids, seg_closest, unit_dirs, world_frame,
                                 obs_range, time_step, low, high, out):
    """Fill ``out`` with the universal layout (module docstring) for the agents ``slots``.

    Arguments as :func:`build_observations`, plus ``obs_range`` (the observation range ρ,
    metres: the unit of lengths) and ``time_step`` (seconds). Speeds are in units of each
    observing agent's max speed.
    """
    inv_r = 1.0 / obs_range
    for r in range(slots.shape[0]):
        i = slots[r]
        px = positions[i, 0]
        py = positions[i, 1]
        vx = velocities[i, 0]
        vy = velocities[i, 1]
        inv_v = 1.0 / max_speeds[i]
        gx = targets[r, 0] - px
        gy = targets[r, 1] - py
        ex, ey = frame_axis(gx, gy, world_frame)
        d = np.sqrt(gx * gx + gy * gy)
        if d > AT_GOAL_EPS:
            out[r, 0], out[r, 1] = to_frame(gx / d, gy / d, ex, ey)
        else:
            out[r, 0] = 0.0
            out[r, 1] = 0.0
        out[r, 2] = d / (d + obs_range)
        p = max(path_rem[r], 0.0)
        out[r, 3] = p / (p + obs_range)
        out[r, 4], out[r, 5] = to_frame(vx * inv_v, vy * inv_v, ex, ey)
        out[r, 6] = radii[i] * inv_r
        out[r, 7] = max_speeds[i] * time_step * inv_r
        _fill_others(out, r, px, py, vx, vy, ex, ey, positions, velocities, radii, nbr_ids,
                     seg_ids, seg_closest, unit_dirs, inv_r, inv_v, low, high)


@njit(cache=True, no_cfunc_wrapper=True)
def fill_sensors(obs, q, col, heading_obs, px, py, tx, ty, heading, ang_vel, w_bound, world_frame,
                 scan, inv_range, low, high):
    """Row ``q``'s sensor block at ``col`` (module docstring), clipped to its bounds.

    Args:
        obs: (nl, D) float32 observations.
        q: row.
        col: first column of the block, ``8 + 6K + 5M``.
        heading_obs: write the heading features (3 columns).
        px: the agent's x, m, world frame.
        py: its y.
        tx: its goal's (or waypoint's) x, m, world frame.
        ty: its y.
        heading: the agent's heading, rad, world frame.
        ang_vel: its angular velocity, rad/s.
        w_bound: the angular-velocity bound, rad/s (> 0).
        world_frame: the observation frame is the world's.
        scan: (nl, beams) float64 LiDAR readings, m.
        inv_range: 1 (metric layout: metres) or 1 / the LiDAR range (universal).
        low: (D,) float32 lower bounds.
        high: (D,) float32 upper bounds.
    """
    c = col
    if heading_obs:
        ex, ey = frame_axis(tx - px, ty - py, world_frame)
        obs[q, c], obs[q, c + 1] = to_frame(np.cos(heading), np.sin(heading), ex, ey)
        obs[q, c + 2] = ang_vel / w_bound
        c += 3
    for b in range(scan.shape[1]):
        obs[q, c + b] = scan[q, b] * inv_range
    for j in range(col, c + scan.shape[1]):
        x = obs[q, j]
        if x < low[j]:
            obs[q, j] = low[j]
        elif x > high[j]:
            obs[q, j] = high[j]
