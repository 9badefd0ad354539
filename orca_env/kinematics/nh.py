"""NH-ORCA: the safety layer for non-holonomic robots (numba helpers of the unicycle models).

Alonso-Mora, Breitenmoser, Rufli, Beardsley and Siegwart, "Optimal Reciprocal Collision
Avoidance for Multiple Non-Holonomic Robots", DARS 2010. A robot that cannot move sideways
tracks a *holonomic* reference velocity ``u`` instead of taking it: it turns at a constant rate
``omega = theta / T`` (``theta``: the angle from its heading to ``u``) while driving at

    v* = |u| * theta * sin(theta) / (2 * (1 - cos(theta))),

the speed that brings it, after the tracking time ``T``, closest to the reference point
``u * T``; then it drives straight along ``u``. Its largest distance from the reference
trajectory, the tracking error, is

    e(u) = |u| * T * sqrt(1 - sin(theta)^2 / (2 * (1 - cos(theta)))),

so the reference velocities it can track within an error bound ``E`` at angle ``theta`` have
``|u| <= V(theta)`` (:func:`max_track_speed`, which also honours the speed and turn-rate limits).
ORCA then runs as usual with two changes: every such robot's ORCA radius is enlarged by ``E``
(so the reference trajectories keep ``r_A + r_B + E_A + E_B`` apart, the robots ``r_A + r_B``),
and its velocity disc is replaced by the polygon through ``V(theta) * (cos, sin)(heading +
theta)`` (:func:`velocity_polygon`), hard constraints of the robot's linear program (the
``unicycle`` model has its own exact ``V`` for CrowdNav's discrete turn-then-move step). With
``E = 0`` the polygon is a segment along the heading; a holonomic agent has no polygon (plain
ORCA).

The robot re-plans every step from where it is (receding horizon): :func:`track` gives the
controls of one step, :func:`arc` integrates them exactly.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: Vertices of the tracking polygon (the allowed set's boundary sampled every 2 pi / POLYGON).
POLYGON = 16
_EPS = 1e-9


@njit(cache=True, no_cfunc_wrapper=True, inline="always")
def wrap(a):
    """``a`` (rad) wrapped to [-pi, pi)."""
    return (a + np.pi) % (2.0 * np.pi) - np.pi


@njit(cache=True, no_cfunc_wrapper=True, inline="always")
def max_track_speed(theta, T, E, v_max, w_max):
    """The largest reference speed trackable within error ``E`` at angle ``theta`` (m/s).

    Args:
        theta: angle from the heading to the reference velocity, rad, in [-pi, pi].
        T: tracking time, s (> 0).
        E: tracking error bound, m (>= 0).
        v_max: forward speed limit, m/s.
        w_max: turn-rate limit, rad/s.
    """
    th = abs(theta)
    if th < 1e-6:
        return v_max  # straight ahead: no tracking error
    if th / T > w_max:
        # Cannot turn within T: the robot turns on the spot at w_max for th / w_max > T while
        # the reference runs away, so |u| * th / w_max <= E.
        return min(v_max, E * w_max / th)
    one_c = 1.0 - np.cos(th)
    s = np.sin(th)
    k = np.sqrt(max(1.0 - s * s / (2.0 * one_c), 0.0))  # e(u) = |u| T k
    u = v_max if k * T <= _EPS else E / (k * T)
    if u * th * s / (2.0 * one_c) <= v_max:
        return min(u, v_max)
    # The arc speed v* would exceed v_max: drive the arc at v_max and solve
    # |v_max T a - u T b| = E for |u| (a: the unit-time arc chord direction, b: u's direction):
    # u^2 - 2 u v_max sin(th) / th + v_max^2 2 (1 - cos th) / th^2 - (E / T)^2 = 0.
    p = v_max * s / th
    q = v_max * v_max * 2.0 * one_c / (th * th) - (E / T) ** 2
    disc = p * p - q
    if disc < 0.0:
        return 0.0
    return max(0.0, min(p + np.sqrt(disc), v_max))


@njit(cache=True, no_cfunc_wrapper=True)
def velocity_polygon(heading, speeds, lines, i):
    """NH-ORCA's allowed reference velocities of slot ``i`` as lines in ``lines[i]``.

    The polygon through ``speeds[k] (cos, sin)(heading + theta_k)``, ``theta_k = -pi + 2 pi k /
    POLYGON`` (counter-clockwise), every edge a line whose left side is allowed (the core's
    convention). The set is star-shaped around the origin, so the edges' half-planes contain
    the origin (standing still is always allowed) and lie inside the polygon. Returns the
    number of lines written (edges of zero length, between two vertices at the origin, are
    left out).
    """
    n = POLYGON
    x0 = speeds[0] * np.cos(heading - np.pi)
    y0 = speeds[0] * np.sin(heading - np.pi)
    ax, ay = x0, y0  # the edge's start vertex (no arrays: this runs per robot per step)
    m = 0
    for k in range(n):
        if k + 1 < n:
            th = heading - np.pi + 2.0 * np.pi * (k + 1) / n
            bx = speeds[k + 1] * np.cos(th)
            by = speeds[k + 1] * np.sin(th)
        else:
            bx, by = x0, y0
        dx = bx - ax
        dy = by - ay
        d = np.sqrt(dx * dx + dy * dy)
        if d >= 1e-12:
            lines[i, m, 0] = ax
            lines[i, m, 1] = ay
            lines[i, m, 2] = dx / d
            lines[i, m, 3] = dy / d
            m += 1
        ax, ay = bx, by
    return m


@njit(cache=True, no_cfunc_wrapper=True, inline="always")
def track(ux, uy, heading, T, v_max, w_max):
    """Controls ``(v, omega)`` that follow the reference velocity ``(ux, uy)`` (m/s, rad/s)."""
    speed = np.sqrt(ux * ux + uy * uy)
    if speed < 1e-9:
        return 0.0, 0.0
    theta = wrap(np.arctan2(uy, ux) - heading)
    th = abs(theta)
    if th < 1e-6:
        return min(speed, v_max), 0.0
    w = theta / T
    if abs(w) > w_max:
        return 0.0, np.sign(theta) * w_max  # turn on the spot first (max_track_speed's case)
    v = speed * th * np.sin(th) / (2.0 * (1.0 - np.cos(th)))
    return min(max(v, 0.0), v_max), w


@njit(cache=True, no_cfunc_wrapper=True, inline="always")
def arc(x, y, heading, v, w, dt):
    """Pose after driving at ``(v, w)`` for ``dt`` from ``(x, y, heading)`` (exact arc)."""
    if abs(w) < 1e-9:
        return x + v * dt * np.cos(heading), y + v * dt * np.sin(heading), heading
    h1 = heading + w * dt
    r = v / w
    return (x + r * (np.sin(h1) - np.sin(heading)), y - r * (np.cos(h1) - np.cos(heading)),
            wrap(h1))
