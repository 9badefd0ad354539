"""``linear``: CrowdNav's linear humans, who avoid no agent but are avoided as ORCA agents."""

from __future__ import annotations

from .base import Behaviour, register_behaviour


def _check(g, where: str) -> None:
    if g.avoids is not None:
        raise ValueError(f"config key '{where}.avoids': linear agents avoid no one (CrowdNav's "
                         f"linear humans); use population orca to choose whom they avoid, got "
                         f"avoids={g.avoids!r}")


LINEAR = register_behaviour(Behaviour(
    name="linear", avoids_agents=False, check=_check,
    doc="CrowdNav's linear humans: straight to the goal at pref_speed, avoiding no agent, "
        "while the others avoid them as ORCA agents"))
