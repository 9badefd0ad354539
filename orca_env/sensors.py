"""What a robot senses: the LiDAR scan and the neighbour sensor's cone and line of sight.

Config: ``observation.lidar`` (:class:`orca_env.config.LidarConfig`), ``observation.fov`` and
``observation.occlusion``. The numba kernels here are called per world by
:func:`orca_env.stages.run_worlds` (phase B); they never validate.

The sensor's heading
--------------------
A sensor looks along its agent's heading: ``heading`` (rad, world frame) for agents whose
motion model has one (every ``kinematics`` but ``holonomic``). A holonomic agent has no heading
of its own (it moves in any direction at once, and its ``heading`` stays where it started), so
its sensor looks along the x axis of its observation frame: towards its goal (or waypoint)
with ``observation.frame: goal``, along the world's x axis with ``frame: world``. Either way the
scan is at fixed angles in the frame the policy sees.

LiDAR (as gym-collision-avoidance's ``LaserScanSensor`` and VMAS's ``Lidar``)
----------------------------------------------------------------------------
Beam ``k`` of ``N`` leaves the agent's centre at ``heading - fov/2 + (k + 1/2) fov / N`` (the
centres of ``N`` equal sectors: symmetric about the heading for every ``N``; over 360 degrees
beam ``k`` and beam ``k + N/2`` point opposite ways). It reads the distance from the centre to
the first point where it meets an obstacle segment (either side) or another active agent's disc
(radius ``radius``), or ``range`` when it meets nothing within range; an agent overlapping the
centre reads 0. Noise: ``N(0, noise^2)`` metres per beam, then clipped to ``[0, range]``.

The noise comes from a counter-based stream (splitmix64 on ``(key, step, slot, beam)``), whose
64-bit key each world draws from its own seeded generator at reset (only when ``noise > 0``): a
world of the vector env draws the same key as the single env with its seed, and the noise of a
step does not depend on the order in which agents or worlds are computed.

Neighbour cone and occlusion
----------------------------
An agent is observed (fills one of the K neighbour slots) when its centre lies within the
observation range, within ``fov / 2`` of the sensor's heading (``fov`` 360: everywhere), and,
with ``occlusion: true``, when no obstacle segment blocks the line between the two centres
(RVO2's ``queryVisibility`` rule with radius 0, :func:`orca_env.core.obstacles.query_visibility`).
The K slots hold the K nearest *sensed* agents. Rewards (the clearance of the discomfort term,
``nearest_separation`` in the infos) keep using the true nearest agents: what a robot senses
must not change what counts as being close to someone.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .core.obstacles import query_segments, query_visibility
from .frames import frame_axis
from .kinematics import HOLONOMIC
from .kinematics.base import P_MAX_ANGULAR_SPEED, P_MAX_ROTATION

__all__ = ["sensor_axes", "lidar_scan", "lidar_noise", "lidar_observe", "filter_sensed",
           "angular_bound", "ray_segment", "ray_disc", "sensor_view", "NO_CONE",
           "HEADING_FEATURES", "DEFAULT_ANGULAR_BOUND"]

#: ``cos(fov / 2)`` standing for a 360-degree cone: every direction passes (cosines >= -1).
NO_CONE = -2.0
#: Own-state features of non-holonomic agents: cos and sin of the heading in the observation
#: frame, and the angular velocity over its bound.
HEADING_FEATURES = 3
#: Angular speed bound (rad/s) of the angular-velocity feature when the model sets none.
DEFAULT_ANGULAR_BOUND = np.pi

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)
_INV_2_53 = 1.0 / 9007199254740992.0


@njit(cache=True, no_cfunc_wrapper=True)
def sensor_axes(live, pos, targets, heading, kin, world_frame, out):
    """Unit vector of each live agent's sensor heading (module docstring).

    Args:
        live: (nl,) int64 world-local slots.
        pos: (n, 2) float64 positions, m, world frame.
        targets: (n, 2) float64 goals or waypoints, m, world frame.
        heading: (n,) float64 headings, rad, world frame.
        kin: (n,) int64 kinematics codes.
        world_frame: the observation frame is the world's.
        out: (nl, 2) float64 output, world frame.
    """
    for q in range(live.shape[0]):
        i = live[q]
        if kin[i] == HOLONOMIC:
            out[q, 0], out[q, 1] = frame_axis(targets[i, 0] - pos[i, 0],
                                              targets[i, 1] - pos[i, 1], world_frame)
        else:
            out[q, 0] = np.cos(heading[i])
            out[q, 1] = np.sin(heading[i])


@njit(cache=True, no_cfunc_wrapper=True)
def ray_segment(px, py, dx, dy, ax, ay, bx, by):
    """Distance along the unit ray ``p + t d`` (t >= 0) to segment ab, inf if it misses."""
    ex = bx - ax
    ey = by - ay
    den = dx * ey - dy * ex
    if den == 0.0:  # parallel: a ray grazing along a wall meets its end segments instead
        return np.inf
    wx = ax - px
    wy = ay - py
    t = (wx * ey - wy * ex) / den
    s = (wx * dy - wy * dx) / den
    if t < 0.0 or s < 0.0 or s > 1.0:
        return np.inf
    return t


@njit(cache=True, no_cfunc_wrapper=True)
def ray_disc(px, py, dx, dy, cx, cy, r):
    """Distance along the unit ray ``p + t d`` (t >= 0) to the disc (c, r); 0 inside it."""
    mx = px - cx
    my = py - cy
    b = mx * dx + my * dy
    c = mx * mx + my * my - r * r
    if c <= 0.0:  # the ray starts inside the disc (overlap)
        return 0.0
    if b > 0.0:  # pointing away from a disc it is outside of
        return np.inf
    disc = b * b - c
    if disc < 0.0:
        return np.inf
    return -b - np.sqrt(disc)


@njit(cache=True, no_cfunc_wrapper=True)
def lidar_scan(live, pos, radius, active, axes, fov, max_range, points, next_ids, seg_order,
               boxes, out):
    """True ranges of each live agent's beams, m (no noise).

    Candidates are gathered once per agent (segments within range through the obstacle index,
    agents by a scan of the world's slots); each is tested only against the beams whose bearing
    falls in the arc it spans (a segment between its end points' bearings, a disc within
    ``asin(r / distance)`` of its centre's), so the cost grows with what the beams can hit,
    not with beams times candidates.

    Args:
        live: (nl,) int64 world-local slots of the scanning agents.
        pos: (n, 2) float64 positions, m, world frame.
        radius: (n,) float64 radii, m.
        active: (n,) bool, in the simulation.
        axes: (nl, 2) float64 sensor headings (:func:`sensor_axes`).
        fov: field of view, rad, in (0, 2 pi].
        max_range: farthest reading, m.
        points: (m, 2) float64 obstacle vertices of the world, m.
        next_ids: (m,) int64 next vertex of each vertex (segment s runs s -> next_ids[s]).
        seg_order: the world's obstacle index (``build_segment_index`` of the core).
        boxes: its node boxes.
        out: (nl, beams) float64 output, m, in [0, max_range].
    """
    nl = live.shape[0]
    beams = out.shape[1]
    n = pos.shape[0]
    m = points.shape[0]
    seg_ids = np.empty(max(m, 1), dtype=np.int64)
    seg_dsq = np.empty(max(m, 1))
    range_sq = max_range * max_range
    step = fov / beams
    # Beam directions relative to the heading, once per call.
    off_c = np.empty(beams)
    off_s = np.empty(beams)
    for k in range(beams):
        a = -0.5 * fov + (k + 0.5) * step
        off_c[k] = np.cos(a)
        off_s[k] = np.sin(a)
    dxs = np.empty(beams)
    dys = np.empty(beams)
    for q in range(nl):
        i = live[q]
        px = pos[i, 0]
        py = pos[i, 1]
        hx = axes[q, 0]
        hy = axes[q, 1]
        h = np.arctan2(hy, hx)
        for k in range(beams):
            dxs[k] = off_c[k] * hx - off_s[k] * hy
            dys[k] = off_c[k] * hy + off_s[k] * hx
            out[q, k] = max_range
        n_seg = 0
        if m > 0:
            n_seg = min(query_segments(px, py, range_sq, np.bool_(False), np.bool_(True), points,
                                       next_ids, seg_order, boxes, seg_ids, seg_dsq), m)
        for c in range(n_seg):
            s = seg_ids[c]
            t = next_ids[s]
            ax, ay = points[s, 0], points[s, 1]
            bx, by = points[t, 0], points[t, 1]
            # The segment spans the shorter arc between its end points' bearings.
            ta = _wrap(np.arctan2(ay - py, ax - px) - h)
            d = _wrap(np.arctan2(by - py, bx - px) - h - ta)
            lo = ta + min(d, 0.0)
            for k0, k1 in _beam_ranges(lo, lo + abs(d), fov, step, beams):
                for k in range(k0, k1 + 1):
                    x = ray_segment(px, py, dxs[k], dys[k], ax, ay, bx, by)
                    if x < out[q, k]:
                        out[q, k] = x
        for j in range(n):
            if j == i or not active[j]:
                continue
            cx = pos[j, 0] - px
            cy = pos[j, 1] - py
            dist_sq = cx * cx + cy * cy
            r = radius[j]
            reach = max_range + r
            if dist_sq > reach * reach:
                continue
            if dist_sq <= r * r:  # the agent's centre lies inside the disc: every beam reads 0
                for k in range(beams):
                    out[q, k] = 0.0
                continue
            # The disc spans asin(r / distance) either side of its centre's bearing.
            phi = _wrap(np.arctan2(cy, cx) - h)
            half = np.arcsin(r / np.sqrt(dist_sq))
            for k0, k1 in _beam_ranges(phi - half, phi + half, fov, step, beams):
                for k in range(k0, k1 + 1):
                    x = ray_disc(px, py, dxs[k], dys[k], pos[j, 0], pos[j, 1], r)
                    if x < out[q, k]:
                        out[q, k] = x


@njit(cache=True, no_cfunc_wrapper=True)
def _wrap(a):
    """An angle in [-pi, pi)."""
    return (a + np.pi) % (2.0 * np.pi) - np.pi


@njit(cache=True, no_cfunc_wrapper=True)
def _beam_ranges(lo, hi, fov, step, beams):
    """Index ranges ``(k0, k1)`` of the beams whose bearing may lie in the arc ``[lo, hi]``.

    Bearings are relative to the heading; the arc spans at most pi within (-2 pi, 2 pi). The
    ranges cover the arc and its copies a turn away, each widened by one beam against round-off
    (the exact ray tests decide).
    """
    out = []
    for shift in (-2.0 * np.pi, 0.0, 2.0 * np.pi):
        k0 = max(0, int(np.ceil((lo + shift + 0.5 * fov) / step - 0.5)) - 1)
        k1 = min(beams - 1, int(np.floor((hi + shift + 0.5 * fov) / step - 0.5)) + 1)
        if k0 <= k1:
            out.append((k0, k1))
    return out


@njit(cache=True, no_cfunc_wrapper=True)
def _mix64(x):
    """splitmix64's finaliser: a bijection of uint64 whose outputs pass BigCrush."""
    x = (x ^ (x >> _S30)) * _M1
    x = (x ^ (x >> _S27)) * _M2
    return x ^ (x >> _S31)


@njit(cache=True, no_cfunc_wrapper=True)
def lidar_noise(key, step, slot, beam):
    """One standard normal draw of the counter-based stream (Box-Muller on two uniforms).

    Args:
        key: uint64, the world's key (drawn from its generator at reset).
        step: steps since reset.
        slot: world-local slot of the agent.
        beam: beam index.
    """
    s = _mix64(key + np.uint64(step) * _GOLDEN)
    s = _mix64(s + np.uint64(slot) * _GOLDEN)
    s = _mix64(s + np.uint64(beam) * _GOLDEN)
    u1 = (np.float64(s >> _S11) + 1.0) * _INV_2_53  # in (0, 1]: the log is finite
    u2 = np.float64(_mix64(s + _GOLDEN) >> _S11) * _INV_2_53
    return np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)


@njit(cache=True, no_cfunc_wrapper=True)
def filter_sensed(live, pos, axes, cos_half, occlusion, nbr, kk, points, next_ids, seg_order,
                  boxes, out):
    """The ``kk`` nearest sensed neighbours of each live agent, from its true nearest ones.

    Args:
        live: (nl,) int64 world-local slots.
        pos: (n, 2) float64 positions, m, world frame.
        axes: (nl, 2) float64 sensor headings (:func:`sensor_axes`).
        cos_half: cosine of half the field of view (:data:`NO_CONE`: every direction).
        occlusion: drop agents whose centre an obstacle segment hides.
        nbr: (nl, c) int64 neighbours within range, nearest first, -1 padded.
        kk: neighbour slots of the observation.
        points: (m, 2) float64 obstacle vertices of the world, m.
        next_ids: (m,) int64 next vertex of each vertex (segment s runs s -> next_ids[s]).
        seg_order: the world's obstacle index (``build_segment_index`` of the core).
        boxes: its node boxes.
        out: (nl, kk) int64 output, nearest sensed first, -1 padded.
    """
    out[:] = -1
    for q in range(live.shape[0]):
        i = live[q]
        px = pos[i, 0]
        py = pos[i, 1]
        kept = 0
        for c in range(nbr.shape[1]):
            if kept == kk:
                break
            j = nbr[q, c]
            if j < 0:
                break
            rx = pos[j, 0] - px
            ry = pos[j, 1] - py
            if cos_half > -1.0:
                # Inside the cone: the angle to the heading is at most fov / 2.
                if rx * axes[q, 0] + ry * axes[q, 1] < cos_half * np.sqrt(rx * rx + ry * ry):
                    continue
            if occlusion and points.shape[0] > 0:
                if not query_visibility(px, py, pos[j, 0], pos[j, 1], 0.0, points, next_ids,
                                        seg_order, boxes):
                    continue
            out[q, kept] = j
            kept += 1


@njit(cache=True, no_cfunc_wrapper=True)
def lidar_observe(live, pos, radius, active, axes, fov, max_range, noise, key, step, points,
                  next_ids, seg_order, boxes, out):
    """The LiDAR readings of the observation: :func:`lidar_scan`, plus noise, clipped, m.

    Args:
        live: (nl,) int64 world-local slots of the scanning agents.
        pos: (n, 2) float64 positions, m, world frame.
        radius: (n,) float64 radii, m.
        active: (n,) bool, in the simulation.
        axes: (nl, 2) float64 sensor headings (:func:`sensor_axes`).
        fov: field of view, rad, in (0, 2 pi].
        max_range: farthest reading, m.
        noise: standard deviation, m (0: none, and the stream is not read).
        key: uint64 key of the world's noise stream.
        step: steps since reset (the stream's counter, with slot and beam).
        points: (m, 2) float64 obstacle vertices of the world, m.
        next_ids: (m,) int64 next vertex of each vertex (segment s runs s -> next_ids[s]).
        seg_order: the world's obstacle index (``build_segment_index`` of the core).
        boxes: its node boxes.
        out: (nl, beams) float64 output, m, in [0, max_range].
    """
    lidar_scan(live, pos, radius, active, axes, fov, max_range, points, next_ids, seg_order,
               boxes, out)
    if noise > 0.0:
        for q in range(live.shape[0]):
            for k in range(out.shape[1]):
                x = out[q, k] + noise * lidar_noise(key, step, live[q], k)
                out[q, k] = min(max(x, 0.0), max_range)


@njit(cache=True, no_cfunc_wrapper=True)
def angular_bound(kin_param, i, time_step):
    """The bound (rad/s) of slot ``i``'s angular-velocity feature (observations docstring)."""
    w = kin_param[i, P_MAX_ANGULAR_SPEED]
    if w > 0.0:
        return w
    w = kin_param[i, P_MAX_ROTATION] / time_step
    if w > 0.0:
        return w
    return DEFAULT_ANGULAR_BOUND


def sensor_view(env, slot: int) -> dict:
    """What slot ``slot`` of a single env senses now, for the renderer (render-data keys).

    Args:
        env: An :class:`~orca_env.environment.OrcaEnv` after ``reset``.
        slot: The agent's slot.

    Returns:
        ``{}`` without sensors; else ``scan_agent`` (the slot), and with ``observation.lidar``
        ``scan_points`` ((beams, 2) float64, m, world frame: where each beam ends, noise-free)
        and ``scan_range`` (m); with a neighbour cone ``sensor_cone``: ``(heading, half angle,
        range)`` (rad, rad, m).
    """
    wc = env.world_config
    if not (wc.lidar_beams or wc.nbr_cos > -1.0):
        return {}
    b, sim = env._batch, env.sim
    sl = b.slots
    s = b._world_slice(0)
    pos, live = np.ascontiguousarray(sl.pos[s]), np.array([slot], dtype=np.int64)
    axes = np.empty((1, 2))
    sensor_axes(live, pos, np.ascontiguousarray(sl.targets[s]), sl.heading[s], sl.kinematics[s],
                bool(env.episode_config.observation.frame == "world"), axes)
    heading = float(np.arctan2(axes[0, 1], axes[0, 0]))
    out: dict = {"scan_agent": int(slot)}
    if wc.lidar_beams:
        order, boxes = sim.obstacle_index
        dist = np.empty((1, wc.lidar_beams))
        # Writable C arrays, as the env's step passes them: the kernel the step compiled.
        lidar_scan(live, pos, np.ascontiguousarray(sl.radius[s]), np.ascontiguousarray(
            sl.active[s]), axes, float(wc.lidar_fov), float(wc.lidar_range),
            np.array(sim.obstacle_points, order="C"), np.array(sim.obstacle_next, order="C"),
            np.array(order, order="C"), np.array(boxes, order="C"), dist)
        k = np.arange(wc.lidar_beams)
        ang = heading - 0.5 * wc.lidar_fov + (k + 0.5) * wc.lidar_fov / wc.lidar_beams
        out["scan_points"] = pos[slot] + dist[0, :, None] * np.stack([np.cos(ang), np.sin(ang)],
                                                                     axis=1)
        out["scan_range"] = float(wc.lidar_range)
    if wc.nbr_cos > -1.0:
        out["sensor_cone"] = (heading, float(np.arccos(wc.nbr_cos)), float(wc.obs_range))
    return out
