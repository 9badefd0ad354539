"""RVO2's Blocks example: four groups cross between four square blocks."""

from __future__ import annotations

import numpy as np

from .base import Scenario, World

#: The four counter-clockwise blocks of ``examples/Blocks.cc``.
BLOCKS = [
    np.array([[-10.0, 40.0], [-40.0, 40.0], [-40.0, 10.0], [-10.0, 10.0]]),
    np.array([[10.0, 40.0], [10.0, 10.0], [40.0, 10.0], [40.0, 40.0]]),
    np.array([[10.0, -40.0], [40.0, -40.0], [40.0, -10.0], [10.0, -10.0]]),
    np.array([[-10.0, -40.0], [-10.0, -10.0], [-40.0, -10.0], [-40.0, -40.0]]),
]

#: The 16 roadmap vertices of ``examples/Roadmap.cc`` (the goals are added per agent).
ROADMAP_POINTS = np.array([[x, y] for x in (-42.0, -8.0, 8.0, 42.0)
                           for y in (-42.0, -8.0, 8.0, 42.0)])


class Blocks(Scenario):
    """RVO2 2.0's ``examples/Blocks.cc`` (and, with ``guidance: true``, ``Roadmap.cc``).

    100 agents in four 5x5 grids at ``(+-(55 + 10 i), +-(55 + 10 j))`` head for the opposite
    corner ``(-+75, -+75)``, between four blocks. Defaults are the example's: time step 0.25,
    neighbor_dist 15, max_neighbors 10, time_horizon 5, time_horizon_obst 5, radius 2,
    max_speed 2, preferred velocity normalised to 1 (pref_speed 1) plus noise U(0, 1e-4) in a
    random direction each step; goal reached within 20 m. Slots are created in the example's
    order (for i, for j: the four quadrants), so with fewer than 100 agents the first slots are
    used and with more it is an error. The default groups put one learned agent in each
    quadrant's grid (slots 0-3); agents leave at their goal (``stop``): the example ends the run
    once all are within 20 m, and parked agents would pile up on the shared goal point.

    Version History:
        v0: initial version.
    """

    name = "blocks_v0"
    PARAMS = dict()
    AGENT_DEFAULTS = dict(radius=2.0, max_speed=2.0, pref_speed=1.0, neighbor_dist=15.0,
                          max_neighbors=10, time_horizon=5.0, time_horizon_obst=5.0)
    MAX_STEPS = 3000
    OBS_DEFAULTS = dict(num_agents=6, num_obstacles=4, range=15.0)
    DEFAULT_GROUPS = [dict(population="learned", count=4, on_goal="stop"),
                      dict(population="orca", count=96, on_goal="stop")]
    HAS_OBSTACLES = True

    def build_world(self, rng):
        """The four blocks of Blocks.cc, with Roadmap.cc's 16 roadmap vertices."""
        return World(obstacles=[b.copy() for b in BLOCKS], roadmap_points=ROADMAP_POINTS.copy(),
                     extent=110.0)

    def place_agents(self, rng, sim, radii):
        """The example's four 5x5 grids, each heading for the opposite corner."""
        n = len(radii)
        if n > 100:
            raise ValueError(f"blocks_v0 has 100 agent slots, the groups ask for {n}")
        starts, goals = [], []
        for i in range(5):
            for j in range(5):
                a, b = 55.0 + 10.0 * i, 55.0 + 10.0 * j
                starts += [(a, b), (-a, b), (a, -b), (-a, -b)]
                goals += [(-75.0, -75.0), (75.0, -75.0), (-75.0, 75.0), (75.0, 75.0)]
        return np.array(starts[:n], dtype=np.float64), np.array(goals[:n], dtype=np.float64)

    def goal_tolerance(self, radii):
        """20 m for every agent, as in the example."""
        return np.full(len(radii), 20.0)
