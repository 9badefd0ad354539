"""RVO2's Circle example: agents on a circle walk to the antipode."""

from __future__ import annotations

import numpy as np

from .base import Scenario, World


class Circle(Scenario):
    """RVO2 2.0's ``examples/Circle.cc``.

    ``n`` agents (250 in the C++ example) start at ``circle_radius * (cos, sin)(2 pi i / n)`` and
    head for the antipode. Defaults are the example's: time step 0.25, neighbor_dist 15,
    max_neighbors 10, time_horizon 10, time_horizon_obst 10, radius 1.5, max_speed 2, preferred
    velocity = goal vector normalised when longer than 1 (pref_speed 1). Goal reached within the
    agent's radius; the example keeps agents at their goal, so the default groups ``stay``.

    Slots follow the circle in order, so the first group occupies a contiguous arc; set
    ``interleave: true`` to spread the groups round the circle instead (slot ``i`` sits at
    position ``(i * stride) mod n`` for a stride coprime with ``n``).

    Version History:
        v0: initial version.
    """

    name = "circle_v0"
    PARAMS = dict(circle_radius=200.0, interleave=False)
    AGENT_DEFAULTS = dict(radius=1.5, max_speed=2.0, pref_speed=1.0, neighbor_dist=15.0,
                          max_neighbors=10, time_horizon=10.0, time_horizon_obst=10.0)
    MAX_STEPS = 4000  # 400 m at 1 m/s is 1600 steps, plus the jam at the centre
    OBS_DEFAULTS = dict(num_agents=6, num_obstacles=0, range=15.0)
    DEFAULT_GROUPS = [dict(population="learned", count=25, on_goal="stay"),
                      dict(population="orca", count=225, on_goal="stay")]

    def build_world(self, rng):
        """An empty world sized to the circle."""
        return World(extent=1.1 * self.circle_radius)

    def place_agents(self, rng, sim, radii, groups):
        """Starts evenly spaced on the circle (optionally interleaved), goals antipodal."""
        n = len(radii)
        k = np.arange(n)
        if self.interleave and n > 1:
            stride = max(1, int(round(np.sqrt(n))))
            while np.gcd(stride, n) != 1:
                stride += 1
            k = (k * stride) % n
        ang = k * 2.0 * np.pi / n
        starts = self.circle_radius * np.stack([np.cos(ang), np.sin(ang)], axis=1)
        return starts, -starts
