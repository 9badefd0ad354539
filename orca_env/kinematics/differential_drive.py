"""``differential_drive``: a two-wheeled base with speed, turn-rate and acceleration limits.

State: heading, forward speed ``v`` (m/s, ``|v| <= max_speed``) and turn rate ``omega`` (rad/s,
``|omega| <= max_angular_speed``). Each step the commanded ``(v, omega)`` is reached as far as
``max_acceleration`` and ``max_angular_acceleration`` allow, then the base drives the exact arc
of its new ``(v, omega)`` for one time step. Defaults are the TurtleBot 2 (Kobuki base):
``max_angular_speed`` pi rad/s (Kobuki's 180 deg/s), ``max_acceleration`` 1.0 m/s^2 and
``max_angular_acceleration`` 2.0 rad/s^2 (turtlebot_bringup's velocity smoother defaults,
``accel_lim_v``, ``accel_lim_w``), ``wheel_base`` 0.23 m (kobuki_driver's parameters); its
top speed is 0.7 m/s, set ``max_speed`` to match.

Action (learned agents, ``Box(-1, 1, (2,))``): ``(a_v, a_omega)``, ``v = a_v * max_speed``
(negative: reverse) and ``omega = a_omega * max_angular_speed``; with ``wheel_actions: true``
the wheel speeds ``(v_left, v_right) = (a_0, a_1) * max_speed``, ``v = (v_left + v_right) / 2``,
``omega = (v_right - v_left) / wheel_base`` (clipped to ``max_angular_speed``).

* ``safety_layer: false``: the command above, acceleration-limited.
* ``safety_layer: true`` (NH-ORCA, :mod:`orca_env.kinematics.nh`): the command's velocity after
  one step, ``v * (cos, sin)(heading + omega dt)``, is ORCA's preferred velocity; ORCA picks a
  reference velocity within the set the base tracks within ``tracking_error`` over
  ``tracking_time`` (the paper's polygon from the speed and turn-rate limits), with
  its radius enlarged by ``tracking_error``; the base follows it with the paper's controls
  (forward only), acceleration-limited. Where an acceleration limit binds (a fast base that
  cannot brake within a step) the tracking error can exceed its bound: the bound is the paper's
  guarantee without acceleration limits.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .base import (
    P_MAX_ACCELERATION,
    P_MAX_ANGULAR_ACCELERATION,
    P_MAX_ANGULAR_SPEED,
    P_TRACKING_ERROR,
    P_TRACKING_TIME,
    P_WHEEL_ACTIONS,
    P_WHEEL_BASE,
    Kinematics,
    register_kinematics,
)
from .nh import POLYGON, arc, max_track_speed, track

DIFFERENTIAL_DRIVE = register_kinematics(Kinematics(
    name="differential_drive", doc="a two-wheeled base: heading, forward speed and turn rate "
                                   "with speed and acceleration limits (TurtleBot 2 defaults)"))


@njit(cache=True, no_cfunc_wrapper=True, inline="always")
def command(ax, ay, heading, max_speed, kp, dt):
    """Preferred velocity (m/s, world frame) and controls ``(v, omega)`` of action ``(ax, ay)``."""
    w_max = kp[P_MAX_ANGULAR_SPEED]
    if kp[P_WHEEL_ACTIONS] != 0.0:
        vl = ax * max_speed
        vr = ay * max_speed
        v = 0.5 * (vl + vr)
        w = min(max((vr - vl) / kp[P_WHEEL_BASE], -w_max), w_max)
    else:
        v = ax * max_speed
        w = ay * w_max
    h = heading + w * dt
    return v * np.cos(h), v * np.sin(h), v, w


@njit(cache=True, no_cfunc_wrapper=True, inline="always")
def _reach(lin_vel, ang_vel, kp, max_speed, dt):
    """This step's reachable forward speed and turn-rate bounds (v_lo, v_hi, w_lo, w_hi)."""
    a = kp[P_MAX_ACCELERATION] * dt
    al = kp[P_MAX_ANGULAR_ACCELERATION] * dt
    w_max = kp[P_MAX_ANGULAR_SPEED]
    return (max(lin_vel - a, -max_speed), min(lin_vel + a, max_speed), max(ang_vel - al, -w_max),
            min(ang_vel + al, w_max))


@njit(cache=True, no_cfunc_wrapper=True)
def polygon_speeds(heading, kp, max_speed, dt, lin_vel, ang_vel, out):
    """NH-ORCA's trackable speeds at the ``POLYGON`` angles into ``out`` (the paper's ``V``).

    From the speed and turn-rate limits, not this step's reach under the acceleration limits:
    with the reach the set shrinks to a sliver ahead of a base at rest and ORCA's closest
    velocity never turns it (measured: a TurtleBot-like base then overshot its goal in 17 of
    20 CrowdNav circle crossings).
    """
    for k in range(POLYGON):
        out[k] = max_track_speed(-np.pi + 2.0 * np.pi * k / POLYGON, kp[P_TRACKING_TIME],
                                 kp[P_TRACKING_ERROR], max_speed, kp[P_MAX_ANGULAR_SPEED])


@njit(cache=True, no_cfunc_wrapper=True, inline="always")
def move(i, safe, pos0, pos, vel, cmd, heading, lin_vel, ang_vel, kp, max_speed, dt):
    """Motion of slot ``i`` (module docstring); returns whether ORCA's result was replaced."""
    if safe:
        v, w = track(vel[i, 0], vel[i, 1], heading[i], kp[P_TRACKING_TIME], max_speed,
                     kp[P_MAX_ANGULAR_SPEED])
    else:
        v, w = cmd[i, 0], cmd[i, 1]
    v_lo, v_hi, w_lo, w_hi = _reach(lin_vel[i], ang_vel[i], kp, max_speed, dt)
    v = min(max(v, v_lo), v_hi)
    w = min(max(w, w_lo), w_hi)
    x, y, h = arc(pos0[i, 0], pos0[i, 1], heading[i], v, w, dt)
    pos[i, 0] = x
    pos[i, 1] = y
    heading[i] = h
    lin_vel[i] = v
    ang_vel[i] = w
    vel[i, 0] = (x - pos0[i, 0]) / dt  # the chord: what the others see it move by
    vel[i, 1] = (y - pos0[i, 1]) / dt
    return not safe
