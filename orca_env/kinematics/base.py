"""The kinematics interface: how an action becomes motion (config ``groups[i].kinematics``).

A motion model is one module with

* a :class:`Kinematics` record, registered by name (:func:`register_kinematics`): its action
  space for learned agents and what each action component means;
* two numba functions, wired into the dispatchers of :mod:`orca_env.kinematics` by its code:
  ``command`` (an action in the agent's frame -> the preferred velocity handed to ORCA, world
  frame) and ``move`` (after ORCA: the agent's new position and velocity, from ORCA's safe
  velocity with the safety layer, or from the command itself without it).

The safety layer's contract: with ``safety_layer: true`` ORCA may command any velocity up to
the max speed and ``move`` must realise it (holonomic: exactly); with ``false`` ``move``
follows the command and ORCA's result is discarded (the agent then has responsibility 0).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from gymnasium import spaces

from ..registry import Registry

__all__ = ["Kinematics", "register_kinematics", "kinematics", "kinematics_names", "REGISTRY",
           "KIN_PARAMS", "P_MAX_ROTATION", "P_MAX_ANGULAR_SPEED", "P_MAX_ACCELERATION",
           "P_MAX_ANGULAR_ACCELERATION", "P_WHEEL_BASE", "P_WHEEL_ACTIONS", "P_TRACKING_ERROR",
           "P_TRACKING_TIME"]

#: Columns of the per-slot ``kin_param`` array (the motion model's parameters; a model reads
#: the ones it has). Rotation per step (rad, unicycle); angular speed (rad/s); linear and
#: angular acceleration (m/s^2, rad/s^2); wheel base (m); wheel-speed actions (0/1); NH-ORCA's
#: tracking error bound (m) and tracking time (s).
(P_MAX_ROTATION, P_MAX_ANGULAR_SPEED, P_MAX_ACCELERATION, P_MAX_ANGULAR_ACCELERATION,
 P_WHEEL_BASE, P_WHEEL_ACTIONS, P_TRACKING_ERROR, P_TRACKING_TIME) = range(8)
KIN_PARAMS = 8


@dataclass(frozen=True)
class Kinematics:
    """One motion model: its name, its action space and the meaning of an action."""

    #: Config name (``groups[i].kinematics``).
    name: str
    #: One line for the config reference.
    doc: str
    #: Size of a learned agent's action (a ``Box(-1, 1, (action_size,), float32)``).
    action_size: int = 2
    #: Set by :func:`register_kinematics`: the integer code the numba dispatchers branch on.
    code: int = -1

    def action_space(self) -> spaces.Box:
        """The action space of a learned agent with this model."""
        return spaces.Box(-1.0, 1.0, (self.action_size,), dtype=np.float32)


#: Registered models by name, in code order.
REGISTRY = Registry("kinematics")


def register_kinematics(k: Kinematics, replace: bool = False) -> Kinematics:
    """Register ``k`` with the next code (its numba functions go into the dispatchers).

    Raises:
        ValueError: If the name is taken (without ``replace``).
    """
    return REGISTRY.register(k, replace)


def kinematics(name: str) -> Kinematics:
    """The registered model ``name``.

    Raises:
        ValueError: Naming the registered ones.
    """
    return REGISTRY.lookup(name, "kinematics")


def kinematics_names() -> tuple[str, ...]:
    """Names of the registered models, in code order."""
    return REGISTRY.names()
