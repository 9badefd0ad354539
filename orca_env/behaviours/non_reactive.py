"""``non_reactive``: dynamic obstacles walking their path, avoided fully by everyone else."""

from __future__ import annotations

from .base import Behaviour, register_behaviour

NON_REACTIVE = register_behaviour(Behaviour(
    name="non_reactive", responsibility=0.0,
    doc="dynamic obstacles (responsibility 0) walking their path at pref_speed; the others "
        "avoid them fully"))
