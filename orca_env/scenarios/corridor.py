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
        v1: :class:`CorridorV1`, closed halls at both ends instead of an open world.
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


class CorridorV1(Corridor):
    """:class:`Corridor` between two closed halls: nothing walks around the corridor.

    The walkable region is a boundary outline (``sim.add_boundary``): the corridor ``[-length /
    2, length / 2] x [-width / 2, width / 2]`` with a hall at each end, ``hall`` metres deep and
    ``width + 2 * hall`` wide, closed all round. As in v0, agents may step out of an end (into a
    hall), but in v0 the world outside the two walls was walkable: a learned agent could walk
    along the outside of a wall, where no crowd is, and come back in at the other end, bypassing
    the task, or get stuck outside with its goal behind a wall. Starts and goals are drawn as
    in v0.

    Version History:
        v1: the halls' and corridor's outline replaces v0's two wall rectangles.
    """

    name = "corridor_v1"
    PARAMS = dict(Corridor.PARAMS, hall=2.0)
    POSITIVE = Corridor.POSITIVE + ("hall",)

    def build_world(self, rng):
        """The outline of the corridor and its two end halls."""
        h, w, d = 0.5 * self.length, 0.5 * self.width, self.hall
        y = w + d
        outline = np.array([[-h - d, -y], [-h, -y], [-h, -w], [h, -w], [h, -y], [h + d, -y],
                            [h + d, y], [h, y], [h, w], [-h, w], [-h, y], [-h - d, y]])
        return World(boundary=outline, extent=h + d + 0.5)
