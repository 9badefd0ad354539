"""Swept-disc collision checks (numba).

Collisions are checked along the segment each agent travelled during the step, not only at its
end: two agents collide when the distance between them, both moving linearly from their old to
their new positions, drops below the sum of their radii (minus the tolerated overlap) at some
time of the step; an agent collides with an obstacle when the segment it travelled comes within
its radius (minus the tolerance) of an obstacle or boundary segment.

The tolerated overlap is ``tol + tol_rel * min(r_i, r_j)`` for a pair of agents and ``tol +
tol_rel * r_i`` against walls (config ``collision_tolerance``: ``tol`` metres, ``tol_rel`` a
fraction of the smaller radius); ``tol_rel`` defaults to 0, which is exactly the absolute
tolerance.

:func:`agent_collisions_crowdnav` is CrowdNav's check instead (config ``collision_check:
crowdnav``): the checked agent moves as it did, every other agent at its velocity of the
previous step, as CrowdNav's ``step()`` tests the robot's new velocity against the humans'
last velocities before it moves them.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["agent_collisions", "agent_collisions_crowdnav", "agent_collisions_into",
           "agent_collisions_crowdnav_into", "obstacle_collisions"]


@njit(cache=True, no_cfunc_wrapper=True)
def _sweep_dist_sq(ax, ay, bx, by):
    """Squared distance from the origin to the segment a -> b."""
    ex = bx - ax
    ey = by - ay
    ee = ex * ex + ey * ey
    t = 0.0
    if ee > 0.0:
        t = -(ax * ex + ay * ey) / ee
        t = min(1.0, max(0.0, t))
    x = ax + t * ex
    y = ay + t * ey
    return x * x + y * y


@njit(cache=True, no_cfunc_wrapper=True)
def agent_collisions(check, p0, p1, radii, active, tol, hit, tol_rel=0.0):
    """Swept-disc agent-agent collisions of the agents ``check`` against all active agents.

    A uniform grid over the new positions (cell = twice the largest radius plus twice the largest
    displacement, so every pair that can touch during the step sits in neighbouring cells) keeps
    this O(n).

    Args:
        check: (k,) int64 ids to test.
        p0: (n, 2) float64 positions before the step, metres, world frame.
        p1: (n, 2) float64 positions after the step, metres, world frame.
        radii: (n,) float64 radii, metres.
        active: (n,) bool, agents present during the step.
        tol: Tolerated overlap (m).
        hit: (k,) bool output.
        tol_rel: Tolerated overlap as a fraction of the smaller radius of the pair, added to
            ``tol``.
    """
    _collisions(check, p0, p1, p1, radii, active, tol, tol_rel, hit)


@njit(cache=True, no_cfunc_wrapper=True)
def agent_collisions_into(check, p0, p1, radii, active, tol, hit, tol_rel, scratch):
    """:func:`agent_collisions` with the grid's scratch given (the pipeline's: no allocation).

    ``scratch``: ``(key (n,), start (4n + 65,), fill (4n + 64,), order (n,))`` int64 arrays
    (:func:`_collisions_into`).
    """
    _collisions_into(check, p0, p1, p1, radii, active, tol, tol_rel, hit, scratch[0],
                     scratch[1], scratch[2], scratch[3])


@njit(cache=True, no_cfunc_wrapper=True)
def agent_collisions_crowdnav(check, p0, p1, v0, dt, radii, active, tol, hit, tol_rel=0.0):
    """CrowdNav's robot-human collision check, for the agents ``check`` against all active ones.

    In CrowdNav's ``step()``, the robot (here: each checked agent) moves from its position at
    the start of the step at its new velocity, and each human (here: every other active agent)
    from its position at its velocity of the *previous* step (``human.vx``, updated only after
    the check); a collision is a closest surface-to-surface distance below ``-tol`` during the
    step (CrowdNav: below 0, ``tol = 0``).

    Args:
        check: (k,) int64 ids to test.
        p0: (n, 2) float64 positions before the step, metres.
        p1: (n, 2) float64 positions after the step, metres (the checked agents' motion).
        v0: (n, 2) float64 velocities before the step, m/s (the others' motion).
        dt: Time step (s).
        radii: (n,) float64 radii, metres.
        active: (n,) bool, agents present during the step.
        tol: Tolerated overlap (m).
        hit: (k,) bool output.
        tol_rel: Tolerated overlap as a fraction of the smaller radius of the pair, added to
            ``tol``.
    """
    q1 = np.empty_like(p0)
    for j in range(p0.shape[0]):
        q1[j, 0] = p0[j, 0] + v0[j, 0] * dt
        q1[j, 1] = p0[j, 1] + v0[j, 1] * dt
    _collisions(check, p0, p1, q1, radii, active, tol, tol_rel, hit)


@njit(cache=True, no_cfunc_wrapper=True)
def agent_collisions_crowdnav_into(check, p0, p1, v0, dt, radii, active, tol, hit, tol_rel, q1,
                                   scratch):
    """:func:`agent_collisions_crowdnav` with its scratch given.

    ``q1``: (n, 2) float64; ``scratch``: the grid's (:func:`agent_collisions_into`).
    """
    for j in range(p0.shape[0]):
        q1[j, 0] = p0[j, 0] + v0[j, 0] * dt
        q1[j, 1] = p0[j, 1] + v0[j, 1] * dt
    _collisions_into(check, p0, p1, q1, radii, active, tol, tol_rel, hit, scratch[0],
                     scratch[1], scratch[2], scratch[3])


@njit(cache=True, no_cfunc_wrapper=True)
def _collisions(check, p0, p1, q1, radii, active, tol, tol_rel, hit):
    """:func:`_collisions_into` with scratch of its own."""
    n = p1.shape[0]
    _collisions_into(check, p0, p1, q1, radii, active, tol, tol_rel, hit,
                     np.empty(n, dtype=np.int64), np.empty(4 * n + 65, dtype=np.int64),
                     np.empty(4 * n + 64, dtype=np.int64), np.empty(n, dtype=np.int64))


@njit(cache=True, no_cfunc_wrapper=True)
def _collisions_into(check, p0, p1, q1, radii, active, tol, tol_rel, hit, key, start, fill,
                     order):
    """Checked agent ``i`` moves ``p0[i] -> p1[i]``, every other agent ``j`` ``p0[j] -> q1[j]``.

    The grid bins the others by ``q1``; its cell is twice the largest radius plus the largest
    displacement of each kind, so a checked agent's end and the end of any agent it can touch
    lie in neighbouring cells. ``q1 is p1`` is the swept check of :func:`agent_collisions`.
    Scratch: ``key``, ``order`` (n,), ``start`` (4n + 65,), ``fill`` (4n + 64,) int64 (the grid
    has at most ``4 * na + 64`` cells).
    """
    n = p1.shape[0]
    max_r = 0.0
    max_d = 0.0
    max_q = 0.0
    na = 0
    x0 = np.inf
    y0 = np.inf
    x1 = -np.inf
    y1 = -np.inf
    for i in range(n):
        if not active[i]:
            continue
        na += 1
        max_r = max(max_r, radii[i])
        dx, dy = p1[i, 0] - p0[i, 0], p1[i, 1] - p0[i, 1]
        max_d = max(max_d, dx * dx + dy * dy)  # squared here, the root once below
        qx, qy = q1[i, 0] - p0[i, 0], q1[i, 1] - p0[i, 1]
        max_q = max(max_q, qx * qx + qy * qy)
        x0 = min(x0, p1[i, 0], q1[i, 0])
        y0 = min(y0, p1[i, 1], q1[i, 1])
        x1 = max(x1, p1[i, 0], q1[i, 0])
        y1 = max(y1, p1[i, 1], q1[i, 1])
    for r in range(check.shape[0]):
        hit[r] = False
    if na < 2:
        return
    # Any cell of at least the reach works (the pair tests are exact): the roots' rounding
    # (not hypot's) is far inside the 1 nm margin.
    cell = 2.0 * max_r + np.sqrt(max_d) + np.sqrt(max_q) + 1e-9
    nx = int((x1 - x0) / cell) + 1
    ny = int((y1 - y0) / cell) + 1
    while nx * ny > 4 * na + 64:
        cell *= 2.0
        nx = int((x1 - x0) / cell) + 1
        ny = int((y1 - y0) / cell) + 1
    # Counting sort of the active agents by the cell of their end q1.
    for i in range(n):
        key[i] = -1
    for c in range(nx * ny + 1):
        start[c] = 0
    for i in range(n):
        if active[i]:
            cx = int((q1[i, 0] - x0) / cell)
            cy = int((q1[i, 1] - y0) / cell)
            key[i] = cx * ny + cy
            start[key[i] + 1] += 1
    for c in range(nx * ny):
        start[c + 1] += start[c]
    for c in range(nx * ny):
        fill[c] = start[c]
    for i in range(n):
        if key[i] >= 0:
            order[fill[key[i]]] = i
            fill[key[i]] += 1
    for r in range(check.shape[0]):
        i = check[r]
        cx = int((p1[i, 0] - x0) / cell)
        cy = int((p1[i, 1] - y0) / cell)
        found = False
        for gx in range(max(cx - 1, 0), min(cx + 2, nx)):
            for gy in range(max(cy - 1, 0), min(cy + 2, ny)):
                c = gx * ny + gy
                for q in range(start[c], start[c + 1]):
                    j = order[q]
                    if j == i:
                        continue
                    # tol_rel = 0 adds exactly 0.0: the absolute tolerance, bit for bit.
                    lim = radii[i] + radii[j] - (tol + tol_rel * min(radii[i], radii[j]))
                    if lim <= 0.0:
                        continue
                    # Relative motion is linear within the step.
                    d_sq = _sweep_dist_sq(p0[i, 0] - p0[j, 0], p0[i, 1] - p0[j, 1],
                                          p1[i, 0] - q1[j, 0], p1[i, 1] - q1[j, 1])
                    if d_sq < lim * lim:
                        found = True
                        break
                if found:
                    break
            if found:
                break
        hit[r] = found


@njit(cache=True, no_cfunc_wrapper=True)
def _point_seg_dist_sq(px, py, ax, ay, bx, by):
    return _sweep_dist_sq(ax - px, ay - py, bx - px, by - py)


@njit(cache=True, no_cfunc_wrapper=True)
def _seg_seg_dist_sq(ax, ay, bx, by, cx, cy, dx, dy):
    """Squared distance between segments a-b and c-d (0 when they cross)."""
    d1 = (dx - cx) * (ay - cy) - (dy - cy) * (ax - cx)
    d2 = (dx - cx) * (by - cy) - (dy - cy) * (bx - cx)
    d3 = (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)
    d4 = (bx - ax) * (dy - ay) - (by - ay) * (dx - ax)
    if ((d1 > 0.0 and d2 < 0.0) or (d1 < 0.0 and d2 > 0.0)) and \
            ((d3 > 0.0 and d4 < 0.0) or (d3 < 0.0 and d4 > 0.0)):
        return 0.0
    best = _point_seg_dist_sq(ax, ay, cx, cy, dx, dy)
    best = min(best, _point_seg_dist_sq(bx, by, cx, cy, dx, dy))
    best = min(best, _point_seg_dist_sq(cx, cy, ax, ay, bx, by))
    best = min(best, _point_seg_dist_sq(dx, dy, ax, ay, bx, by))
    return best


@njit(cache=True, no_cfunc_wrapper=True)
def obstacle_collisions(check, p0, p1, radii, points, next_ids, tol, hit, tol_rel=0.0):
    """Swept-disc collisions of the agents ``check`` with every obstacle/boundary segment.

    Brute force over segments (maps here have tens to hundreds of segments), with a bounding-box
    reject. The tolerated overlap is ``tol + tol_rel * radius``.
    """
    m = points.shape[0]
    for r in range(check.shape[0]):
        i = check[r]
        lim = radii[i] - (tol + tol_rel * radii[i])
        hit[r] = False
        if lim <= 0.0 or m == 0:
            continue
        ax = p0[i, 0]
        ay = p0[i, 1]
        bx = p1[i, 0]
        by = p1[i, 1]
        lo_x = min(ax, bx) - lim
        hi_x = max(ax, bx) + lim
        lo_y = min(ay, by) - lim
        hi_y = max(ay, by) + lim
        for s in range(m):
            t = next_ids[s]
            cx = points[s, 0]
            cy = points[s, 1]
            dx = points[t, 0]
            dy = points[t, 1]
            if min(cx, dx) > hi_x or max(cx, dx) < lo_x or min(cy, dy) > hi_y \
                    or max(cy, dy) < lo_y:
                continue
            if _seg_seg_dist_sq(ax, ay, bx, by, cx, cy, dx, dy) < lim * lim:
                hit[r] = True
                break
