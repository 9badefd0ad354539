"""A bottleneck: a wall with one doorway between two rooms."""

from __future__ import annotations

import numpy as np

from .base import Scenario, World, sample_pairs


class Bottleneck(Scenario):
    """Agents cross from the left room to the right room through one doorway.

    The walkable region is a boundary outline (``sim.add_boundary``): two ``room_length`` x
    ``room_width`` rooms either side of a ``wall_thickness`` wall at x = 0 pierced by a
    ``door_width`` doorway centred on y = 0. Agents start at random in the left room and head for
    random points in the right room. Guidance (``guidance: true``) routes through the door
    jambs, which matters when starts are far off the door's axis.

    Version History:
        v0: initial version.
    """

    name = "bottleneck_v0"
    PARAMS = dict(room_length=8.0, room_width=8.0, door_width=1.2, wall_thickness=0.4)
    POSITIVE = ("room_length", "room_width", "door_width", "wall_thickness")
    MAX_STEPS = 300
    OBS_DEFAULTS = dict(num_agents=6, num_obstacles=4, range=5.0)
    DEFAULT_GROUPS = [dict(population="learned", count=4, on_goal="stop"),
                      dict(population="orca", count=12, on_goal="stop")]
    HAS_OBSTACLES = True

    def check_params(self):
        """The doorway is narrower than the rooms."""
        self._require(self.door_width < self.room_width, "door_width",
                      f"below room_width ({self.room_width})")

    def build_world(self, rng):
        """Boundary outline of the two rooms joined by the doorway."""
        t, d = 0.5 * self.wall_thickness, 0.5 * self.door_width
        x1, h = t + self.room_length, 0.5 * self.room_width
        outline = np.array([[-x1, -h], [-t, -h], [-t, -d], [t, -d], [t, -h], [x1, -h],
                            [x1, h], [t, h], [t, d], [-t, d], [-t, h], [-x1, h]])
        return World(boundary=outline, extent=x1 + 0.5)

    def place_agents(self, rng, sim, radii):
        """Random starts in the left room, random goals in the right room."""
        t, L, h = 0.5 * self.wall_thickness, self.room_length, 0.5 * self.room_width

        def sampler(rng, i, b):
            s = np.stack([-t - rng.random(b) * L, (rng.random(b) - 0.5) * 2 * h], axis=1)
            g = np.stack([t + rng.random(b) * L, (rng.random(b) - 0.5) * 2 * h], axis=1)
            return s, g

        return sample_pairs(rng, sim, radii, sampler, max_tries=self.MAX_TRIES, scenario=self.name)
