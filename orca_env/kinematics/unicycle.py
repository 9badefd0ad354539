"""``unicycle``: CrowdNav's rotation-constrained robot (``kinematics: unicycle``).

CrowdNav (``crowd_sim/envs/utils/agent.py``, ``robot.py``, ``action.py``) moves a unicycle robot
by an ``ActionRot(v, r)``: the heading turns by ``r`` first, then the robot moves ``v * dt``
along the new heading; its policies sample ``r`` in ``[-pi/4, pi/4]`` per step and ``v`` in
``[0, v_pref]``. Here: ``max_rotation`` (rad per step, default pi/4) bounds ``r``, ``max_speed``
bounds ``v``, no backward motion, no acceleration limit.

Action (learned agents, ``Box(-1, 1, (2,))``): ``(a_v, a_r)``; speed ``v = (a_v + 1) / 2 *
max_speed``, rotation ``r = a_r * max_rotation``.

* ``safety_layer: false``: exactly CrowdNav's step above (the agent has responsibility 0).
* ``safety_layer: true`` (NH-ORCA, :mod:`orca_env.kinematics.nh`): the action's velocity ``v *
  (cos, sin)(heading + r)`` is ORCA's preferred velocity; ORCA picks a reference velocity ``u``
  among those the robot can follow within ``tracking_error`` ``E`` in one step, with its radius
  enlarged by ``E``; the robot then turns towards ``u`` (at most ``max_rotation``) and moves
  ``max(0, u . heading) * dt`` along the new heading. For this discrete model the trackable set
  is exact: any ``|u| <= max_speed`` within ``max_rotation`` of the heading (error 0), and
  beyond it ``|u| sin(theta - max_rotation) dt <= E`` (``|u| dt <= E`` past a right angle).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .base import P_MAX_ROTATION, P_TRACKING_ERROR, Kinematics, register_kinematics
from .nh import POLYGON, wrap

UNICYCLE = register_kinematics(Kinematics(
    name="unicycle", doc="CrowdNav's rotation-constrained robot: turn by at most max_rotation "
                         "per step, then move along the heading"))


@njit(cache=True, no_cfunc_wrapper=True, inline="always")
def command(ax, ay, heading, max_speed, kp, dt):
    """Preferred velocity (m/s, world frame) and controls ``(v, omega)`` of action ``(ax, ay)``."""
    v = 0.5 * (ax + 1.0) * max_speed
    r = ay * kp[P_MAX_ROTATION]
    h = heading + r
    return v * np.cos(h), v * np.sin(h), v, r / dt


@njit(cache=True, no_cfunc_wrapper=True, inline="always")
def max_track_speed(theta, E, dt, v_max, r_max):
    """Largest reference speed at angle ``theta`` followed within ``E`` in one step (m/s)."""
    th = abs(theta)
    if th <= r_max:
        return v_max
    off = th - r_max  # the angle left after the largest turn
    if off >= 0.5 * np.pi:
        return min(v_max, E / dt)
    s = np.sin(off)
    return v_max if s * v_max * dt <= E else E / (dt * s)


@njit(cache=True, no_cfunc_wrapper=True)
def polygon_speeds(heading, kp, max_speed, dt, out):
    """``max_track_speed`` at the ``POLYGON`` angles ``-pi + 2 pi k / POLYGON`` into ``out``."""
    for k in range(POLYGON):
        out[k] = max_track_speed(-np.pi + 2.0 * np.pi * k / POLYGON, kp[P_TRACKING_ERROR], dt,
                                 max_speed, kp[P_MAX_ROTATION])


@njit(cache=True, no_cfunc_wrapper=True, inline="always")
def move(i, safe, pos0, pos, vel, cmd, heading, lin_vel, ang_vel, kp, max_speed, dt):
    """Motion of slot ``i`` (module docstring); returns whether ORCA's result was replaced."""
    r_max = kp[P_MAX_ROTATION]
    if safe:
        ux, uy = vel[i, 0], vel[i, 1]  # ORCA's reference velocity
        if ux * ux + uy * uy < 1e-18:
            r, v = 0.0, 0.0
        else:
            r = min(max(wrap(np.arctan2(uy, ux) - heading[i]), -r_max), r_max)
            h = heading[i] + r
            v = min(max(ux * np.cos(h) + uy * np.sin(h), 0.0), max_speed)
    else:
        v, r = cmd[i, 0], cmd[i, 1] * dt
    h = wrap(heading[i] + r)
    heading[i] = h
    lin_vel[i] = v
    ang_vel[i] = r / dt
    vel[i, 0] = v * np.cos(h)
    vel[i, 1] = v * np.sin(h)
    pos[i, 0] = pos0[i, 0] + vel[i, 0] * dt
    pos[i, 1] = pos0[i, 1] + vel[i, 1] * dt
    return not safe
