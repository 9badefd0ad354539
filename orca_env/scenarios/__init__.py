"""Scenario registry: one versioned scenario per file.

``SCENARIOS`` maps each name (``circle_v0``) to its class; ``make_scenario(name, **kwargs)``
builds one, validating its keyword arguments strictly.
"""

from __future__ import annotations

from typing import Any

from .base import Scenario, SpawnError, World, rectangle, sample_pairs
from .blocks import Blocks
from .bottleneck import Bottleneck
from .circle import Circle
from .corridor import Corridor
from .crowdnav_circle import CrowdNavCircle
from .crowdnav_square import CrowdNavSquare
from .intersection import Intersection
from .random_obstacles import RandomObstacles

SCENARIOS: dict[str, type[Scenario]] = {
    cls.name: cls
    for cls in (Circle, Blocks, CrowdNavCircle, CrowdNavSquare, Corridor, Bottleneck,
                Intersection, RandomObstacles)
}

__all__ = ["SCENARIOS", "Scenario", "SpawnError", "World", "make_scenario", "rectangle",
           "sample_pairs"]


def make_scenario(name: str, **kwargs: Any) -> Scenario:
    """Build the registered scenario ``name``.

    Raises:
        ValueError: If ``name`` is not registered (the message lists the names) or a keyword
            argument is unknown or of the wrong type.
    """
    if name not in SCENARIOS:
        raise ValueError(f"unknown scenario {name!r}; registered: {sorted(SCENARIOS)}")
    return SCENARIOS[name](**kwargs)
