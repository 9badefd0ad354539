"""The env's integer codes in one place: populations, goal behaviours, statuses, state layout.

Per-slot arrays (``render_data()["populations"]``, ``["statuses"]``, episode logs) and the numba
step kernels carry these codes as integers; everything else names them through the enums below,
never as literal numbers. ``IntEnum`` members compare equal to their integers, so
``populations == Population.LEARNED`` works on arrays, and numba compiles them as constants.

Config strings map to codes by name: ``Population["learned".upper()]``, or :func:`code_of`.
"""

from __future__ import annotations

from enum import IntEnum

from .behaviours import REGISTRY

__all__ = ["Population", "GoalBehavior", "Status", "STATUSES", "Hit", "StateField",
           "STATE_FEATURES", "code_of"]


#: Codes of the built-in behaviours (config ``groups[i].population``), named by the behaviour
#: registry (:mod:`orca_env.behaviours`, where each one is documented): LEARNED, ORCA,
#: NON_REACTIVE, LINEAR. A behaviour registered later gets the next code.
Population = IntEnum("Population", {name.upper(): b.code for name, b in REGISTRY.items()})
Population.__doc__ = "Who sets an agent's preferred velocity (config ``groups[i].population``)."


class GoalBehavior(IntEnum):
    """What an agent does at its goal (config ``groups[i].on_goal``)."""

    #: Leaves the simulation.
    STOP = 0
    #: Parks at the goal and stays an obstacle that yields.
    STAY = 1
    #: Crowd only: gets a new goal from the scenario.
    NEW_GOAL = 2


class Status(IntEnum):
    """An agent's status.

    ``infos[agent]["status"]`` is the lower-case name; numeric infos (``infos="numeric"``) and
    the vector env's ``info["status"]`` hold the code.
    """

    ACTIVE = 0
    AT_GOAL = 1
    COLLIDED = 2
    DEADLOCKED = 3
    TIMED_OUT = 4


#: Status names in code order: ``STATUSES[code]`` is the string reported in infos.
STATUSES: tuple[str, ...] = tuple(s.name.lower() for s in Status)


class Hit(IntEnum):
    """What an agent collided with on a step (``infos[agent]["collided_with"]``).

    Full infos name it (``None``, ``"agent"``, ``"obstacle"``); numeric infos and the vector
    env report the code.
    """

    #: No collision.
    NONE = 0
    #: Another agent.
    AGENT = 1
    #: A static obstacle.
    OBSTACLE = 2


class StateField(IntEnum):
    """Columns of the global state, ``env.state().reshape(-1, STATE_FEATURES)``."""

    PX = 0
    PY = 1
    VX = 2
    VY = 3
    GX = 4
    GY = 5
    RADIUS = 6
    MAX_SPEED = 7
    ACTIVE = 8
    LEARNED = 9


#: Per-slot features of ``env.state()``.
STATE_FEATURES = len(StateField)


def code_of(enum: type[IntEnum], name: str) -> IntEnum:
    """The member of ``enum`` for a config string such as ``"non_reactive"``."""
    return enum[name.upper()]
