"""``learned``: the PettingZoo agents; the action sets the preferred velocity."""

from __future__ import annotations

from .base import Behaviour, register_behaviour


def _check(g, where: str) -> None:
    if g.on_goal == "new_goal":
        raise ValueError(f"config key '{where}.on_goal': new_goal is for crowd groups (orca, "
                         f"non_reactive, linear); a learned agent terminates at its goal, use "
                         f"stop or stay")
    if g.noise is not None:
        raise ValueError(f"config key '{where}.noise' applies to scripted groups (orca, "
                         f"non_reactive, linear); a learned agent's preferred velocity is its "
                         f"action, got noise={g.noise!r}")


LEARNED = register_behaviour(Behaviour(
    name="learned", learned=True, check=_check,
    doc="PettingZoo agents: the action is the preferred velocity that ORCA makes "
        "collision-free (or, with safety_layer: false, the velocity itself)"))
