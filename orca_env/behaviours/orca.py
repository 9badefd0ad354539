"""``orca``: crowd agents heading for their goals with pure ORCA and RVO2's noise."""

from __future__ import annotations

from .base import Behaviour, register_behaviour

ORCA = register_behaviour(Behaviour(
    name="orca", crowd_noise=True,
    doc="crowd agents steering to their goal at pref_speed with pure ORCA, plus RVO2's "
        "symmetry-breaking noise"))
