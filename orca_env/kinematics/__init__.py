"""Motion models, one module each on one interface (:mod:`orca_env.kinematics.base`).

The numba step calls :func:`command`, :func:`constraints` and :func:`move` with a slot's
kinematics code; each dispatches to the model's own functions. Adding a model: its module (a
registered :class:`Kinematics` plus ``command``, ``move`` and, for a non-holonomic one,
``polygon_speeds``), imported here, and one branch in each dispatcher below.
"""
# isort: skip_file
# The import order below is the registration order, so the codes (holonomic 0, unicycle 1,
# differential_drive 2): episode logs and the kernels carry them.

from __future__ import annotations

import numpy as np
from numba import njit

from . import holonomic
from . import unicycle
from . import differential_drive
from .base import (
    REGISTRY,
    Kinematics,
    kinematics,
    kinematics_names,
    register_kinematics,
)
from .nh import POLYGON, velocity_polygon

__all__ = ["Kinematics", "register_kinematics", "kinematics", "kinematics_names", "REGISTRY",
           "command", "constraints", "move", "HOLONOMIC", "UNICYCLE", "DIFFERENTIAL_DRIVE",
           "POLYGON"]

HOLONOMIC = holonomic.HOLONOMIC.code
UNICYCLE = unicycle.UNICYCLE.code
DIFFERENTIAL_DRIVE = differential_drive.DIFFERENTIAL_DRIVE.code


@njit(cache=True, no_cfunc_wrapper=True, inline="always")
def command(kin, i, ax, ay, ex, ey, goal_vx, goal_vy, max_speed, residual, heading, kp, dt,
            cmd):
    """Preferred velocity of slot ``i``'s action under model ``kin``; its controls into ``cmd[i]``.

    ``cmd[i]`` gets the commanded ``(v, omega)`` of a non-holonomic model (what ``move``
    executes without the safety layer).
    """
    if kin == UNICYCLE:
        px, py, cmd[i, 0], cmd[i, 1] = unicycle.command(ax, ay, heading[i], max_speed, kp[i], dt)
        return px, py
    if kin == DIFFERENTIAL_DRIVE:
        px, py, cmd[i, 0], cmd[i, 1] = differential_drive.command(ax, ay, heading[i], max_speed,
                                                                  kp[i], dt)
        return px, py
    return holonomic.command(ax, ay, ex, ey, goal_vx, goal_vy, max_speed, residual)


@njit(cache=True, no_cfunc_wrapper=True)
def constraints(kin, active, safe, heading, lin_vel, ang_vel, kp, max_speed, dt, vlines,
                n_vlines):
    """NH-ORCA's velocity polygons of a world's non-holonomic slots into ``vlines``.

    Returns whether any slot has one (otherwise the core runs plain ORCA).
    """
    speeds = np.empty(POLYGON)
    anyv = False
    for i in range(kin.shape[0]):
        n_vlines[i] = 0
        if kin[i] == HOLONOMIC or not active[i] or not safe[i]:
            continue
        if kin[i] == UNICYCLE:
            unicycle.polygon_speeds(heading[i], kp[i], max_speed[i], dt, speeds)
        else:
            differential_drive.polygon_speeds(heading[i], kp[i], max_speed[i], dt, lin_vel[i],
                                              ang_vel[i], speeds)
        n_vlines[i] = velocity_polygon(heading[i], speeds, vlines, i)
        anyv = True
    return anyv


@njit(cache=True, no_cfunc_wrapper=True, inline="always")
def move(kin, i, safe, pos0, pos, vel, pref, cmd, heading, lin_vel, ang_vel, kp, max_speed,
         time_step):
    """Motion of slot ``i`` under model ``kin`` after ORCA (see the models' ``move``)."""
    if kin == UNICYCLE:
        return unicycle.move(i, safe, pos0, pos, vel, cmd, heading, lin_vel, ang_vel, kp[i],
                             max_speed, time_step)
    if kin == DIFFERENTIAL_DRIVE:
        return differential_drive.move(i, safe, pos0, pos, vel, cmd, heading, lin_vel, ang_vel,
                                       kp[i], max_speed, time_step)
    return holonomic.move(i, safe, pos0, pos, vel, pref, time_step)

