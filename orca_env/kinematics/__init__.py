"""Motion models, one module each on one interface (:mod:`orca_env.kinematics.base`).

The numba step calls :func:`command` and :func:`move` with a slot's kinematics code; each
dispatches to the model's own functions. Adding a model: its module (a registered
:class:`Kinematics` plus ``command`` and ``move``), imported here, and one branch in each
dispatcher below.
"""

from __future__ import annotations

from numba import njit

from . import holonomic
from .base import REGISTRY, Kinematics, kinematics, kinematics_names, register_kinematics

__all__ = ["Kinematics", "register_kinematics", "kinematics", "kinematics_names", "REGISTRY",
           "command", "move", "HOLONOMIC"]

HOLONOMIC = holonomic.HOLONOMIC.code


@njit(cache=True, inline="always")
def command(kin, ax, ay, ex, ey, goal_vx, goal_vy, max_speed, residual):
    """Preferred velocity of an action under model ``kin`` (see the models' ``command``)."""
    return holonomic.command(ax, ay, ex, ey, goal_vx, goal_vy, max_speed, residual)


@njit(cache=True, inline="always")
def move(kin, i, safe, pos0, pos, vel, pref, time_step):
    """Motion of slot ``i`` under model ``kin`` after ORCA (see the models' ``move``)."""
    return holonomic.move(i, safe, pos0, pos, vel, pref, time_step)
