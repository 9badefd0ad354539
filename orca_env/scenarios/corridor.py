"""A bidirectional corridor."""

from __future__ import annotations

import numpy as np

from .base import Scenario, World, rectangle, sample_pairs


class Corridor(Scenario):
    """Two opposing flows in a straight corridor.

    The corridor runs along x over ``[-length / 2, length / 2]`` between two walls (1 m thick
    rectangles) at ``y = +-width / 2``; its ends are open. Even slots start in the left end zone
    (``zone`` metres long) and head for a random point of the right end zone; odd slots the
    reverse. Crowd agents with ``on_goal: new_goal`` (the default for the crowd) get a new random
    goal in the zone at the other end, so the flows never end.

    Version History:
        v0: initial version.
    """

    name = "corridor_v0"
    PARAMS = dict(length=20.0, width=3.0, zone=5.0)
    POSITIVE = ("length", "width", "zone")
    MAX_STEPS = 200
    OBS_DEFAULTS = dict(num_agents=6, num_obstacles=2, range=5.0)
    DEFAULT_GROUPS = [dict(population="learned", count=2, on_goal="stop"),
                      dict(population="orca", count=10, on_goal="new_goal")]
    HAS_OBSTACLES = True

    def check_params(self):
        """The two end zones do not overlap."""
        self._require(self.zone <= 0.5 * self.length, "zone",
                      f"at most half of length ({self.length})")

    def build_world(self, rng):
        """The two walls along the corridor; its ends are open."""
        h, w = 0.5 * self.length, 0.5 * self.width
        return World(obstacles=[rectangle(-h, w, h, w + 1.0), rectangle(-h, -w - 1.0, h, -w)],
                     extent=h + 1.0)

    def _zone_points(self, rng, b, side):
        h, w = 0.5 * self.length, 0.5 * self.width
        x = side * (h - rng.random(b) * self.zone)
        y = (rng.random(b) - 0.5) * 2.0 * w
        return np.stack([x, y], axis=1)

    def place_agents(self, rng, sim, radii):
        """Even slots start in the left end zone, odd slots in the right; goals at the other end."""
        def sampler(rng, i, b):
            side = -1.0 if i % 2 == 0 else 1.0
            return self._zone_points(rng, b, side), self._zone_points(rng, b, -side)

        return sample_pairs(rng, sim, radii, sampler, max_tries=self.MAX_TRIES, scenario=self.name)

    def new_goals(self, rng, sim, ids, positions, starts, radii):
        """A random point in the end zone opposite each agent's current side."""
        side = -np.sign(positions[ids, 0])
        side[side == 0] = 1.0
        out = np.empty((len(ids), 2))
        for k in range(len(ids)):
            # Inset by the radius so the goal is walkable (clear of the walls).
            p = self._zone_points(rng, 1, side[k])[0]
            w = 0.5 * self.width - radii[ids[k]] - 0.05
            p[1] = np.clip(p[1], -w, w)
            out[k] = p
        return out
