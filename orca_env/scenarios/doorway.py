"""A two-way doorway: two crowds cross one doorway in opposite directions."""

from __future__ import annotations

import numpy as np

from .base import sample_pairs
from .bottleneck import Bottleneck


class Doorway(Bottleneck):
    """The bottleneck's two rooms and doorway, crossed in both directions at once.

    The world is :class:`~orca_env.scenarios.bottleneck.Bottleneck`'s (same parameters): two
    ``room_length`` x ``room_width`` rooms either side of a ``wall_thickness`` wall at x = 0,
    joined by a ``door_width`` doorway centred on y = 0. Even slots start at random in the left
    room and head for a random point in the right room, odd slots the reverse, so with groups of
    even sizes each group sends half its agents each way and the two flows meet in the doorway.
    Guidance (``guidance: true``) routes through the door jambs. Crowd agents with
    ``on_goal: new_goal`` go back to where they started (the base class's default).

    Version History:
        v0: initial version.
    """

    name = "doorway_v0"

    def place_agents(self, rng, sim, radii):
        """Even slots: left room to right room; odd slots: right room to left room."""
        t, L, h = 0.5 * self.wall_thickness, self.room_length, 0.5 * self.room_width

        def room(rng, b, side):
            return np.stack([side * (t + rng.random(b) * L), (rng.random(b) - 0.5) * 2 * h],
                            axis=1)

        def sampler(rng, i, b):
            side = -1.0 if i % 2 == 0 else 1.0
            return room(rng, b, side), room(rng, b, -side)

        return sample_pairs(rng, sim, radii, sampler, max_tries=self.MAX_TRIES, scenario=self.name)
