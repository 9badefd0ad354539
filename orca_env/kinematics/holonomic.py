"""``holonomic``: a disc that takes any velocity up to its max speed at once (RVO2's agent).

Action (learned agents): ``(a_x, a_y)`` in the agent's observation frame (goal-aligned by
default: ``(1, 0)`` is full speed towards the goal), norm clipped to 1, in units of the max
speed. With ``action: residual`` it is a correction, times twice the max speed, to the
goal-directed preferred velocity, the sum shortened to the max speed (action 0 is pure ORCA).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..frames import from_frame
from .base import Kinematics, register_kinematics

HOLONOMIC = register_kinematics(Kinematics(
    name="holonomic", doc="any velocity up to max_speed at once (RVO2's agent)"))


@njit(cache=True, no_cfunc_wrapper=True, inline="always")
def command(ax, ay, ex, ey, goal_vx, goal_vy, max_speed, residual):
    """The preferred velocity (world frame, m/s) of action ``(ax, ay)`` in frame ``(ex, ey)``."""
    wx, wy = from_frame(ax, ay, ex, ey)
    if not residual:
        return wx * max_speed, wy * max_speed
    vx = goal_vx + 2.0 * wx * max_speed
    vy = goal_vy + 2.0 * wy * max_speed
    norm = np.sqrt(vx * vx + vy * vy)
    if norm > max_speed:
        vx *= max_speed / norm
        vy *= max_speed / norm
    return vx, vy


@njit(cache=True, no_cfunc_wrapper=True, inline="always")
def move(i, safe, pos0, pos, vel, pref, time_step):
    """Motion of slot ``i`` after ORCA; returns whether ORCA's result was replaced.

    With the safety layer ORCA's velocity is realised exactly (the core already moved the
    agent); without it the agent moves with its command.
    """
    if safe:
        return False
    vel[i, 0] = pref[i, 0]
    vel[i, 1] = pref[i, 1]
    pos[i, 0] = pos0[i, 0] + pref[i, 0] * time_step
    pos[i, 1] = pos0[i, 1] + pref[i, 1] * time_step
    return True
