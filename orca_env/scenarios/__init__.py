"""Scenario registry: one versioned scenario per file.

``SCENARIOS`` maps each name (``circle_v0``) to its class; ``make_scenario(name, **kwargs)``
builds one, validating its keyword arguments strictly; ``register_scenario(cls)`` adds a
scenario defined outside the package (see ``docs/extending.md``).
"""

from __future__ import annotations

import re
from typing import Any

from .base import Scenario, SpawnError, World, rectangle, sample_pairs
from .blocks import Blocks
from .bottleneck import Bottleneck
from .circle import Circle
from .corridor import Corridor, CorridorV1
from .crowdnav_circle import CrowdNavCircle
from .crowdnav_square import CrowdNavSquare
from .doorway import Doorway
from .intersection import Intersection, IntersectionV1
from .random_obstacles import RandomObstacles
from .replay_circle import ReplayCircle

SCENARIOS: dict[str, type[Scenario]] = {
    cls.name: cls
    for cls in (Circle, Blocks, CrowdNavCircle, CrowdNavSquare, Corridor, CorridorV1, Bottleneck,
                Intersection, IntersectionV1, RandomObstacles, Doorway, ReplayCircle)
}

__all__ = ["SCENARIOS", "Scenario", "SpawnError", "World", "make_scenario", "register_scenario",
           "rectangle", "sample_pairs"]

#: A scenario name: lower-case words joined by underscores, then its version (``corridor_v0``).
_NAME = re.compile(r"^[a-z][a-z0-9_]*_v\d+$")


def register_scenario(cls: type[Scenario], *, replace: bool = False) -> type[Scenario]:
    """Register a scenario class under its ``name`` so configs can use it.

    Usable as a class decorator. Names are versioned (``my_task_v0``): bump the version when a
    change alters episodes, rather than replacing a registered name.

    Args:
        cls: A subclass of :class:`Scenario`.
        replace: Allow replacing a class already registered under the same name.

    Returns:
        ``cls``.

    Raises:
        TypeError: If ``cls`` is not a ``Scenario`` subclass.
        ValueError: If its name is not versioned or is taken (without ``replace``).
    """
    if not (isinstance(cls, type) and issubclass(cls, Scenario)):
        raise TypeError(f"register_scenario expects a Scenario subclass, got {cls!r}")
    name = cls.name
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"scenario name must look like 'my_task_v0' (lower case, versioned), "
                         f"got {name!r}")
    if name in SCENARIOS and SCENARIOS[name] is not cls and not replace:
        raise ValueError(f"scenario name {name!r} is already registered by "
                         f"{SCENARIOS[name].__module__}.{SCENARIOS[name].__qualname__}; pick "
                         f"another name or pass replace=True")
    SCENARIOS[name] = cls
    return cls


def make_scenario(name: str, **kwargs: Any) -> Scenario:
    """Build the registered scenario ``name``.

    Raises:
        ValueError: If ``name`` is not registered (the message lists the names) or a keyword
            argument is unknown or of the wrong type.
    """
    if name not in SCENARIOS:
        raise ValueError(f"unknown scenario {name!r}; registered: {sorted(SCENARIOS)}")
    return SCENARIOS[name](**kwargs)
