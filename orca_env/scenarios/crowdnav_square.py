"""CrowdNav's square-crossing scenario."""

from __future__ import annotations

import numpy as np

from .base import Scenario, World, sample_pairs


class CrowdNavSquare(Scenario):
    """CrowdNav's ``square_crossing``.

    Each agent starts at ``x ~ U(0, w / 2) * sign``, ``y ~ U(-w / 2, w / 2)`` with a random sign,
    and heads for ``x ~ U(0, w / 2) * -sign``, ``y ~ U(-w / 2, w / 2)`` (``w = square_width``);
    draws overlapping another start or goal (with ``discomfort_dist``) are rejected. With
    ``robot_fixed`` slot 0 is CrowdNav's robot, ``(0, -4) -> (0, 4)``. Other defaults as
    ``crowdnav_circle_v0``.

    Version History:
        v0: initial version.
    """

    name = "crowdnav_square_v0"
    PARAMS = dict(square_width=10.0, discomfort_dist=0.2, robot_fixed=True, robot_dist=4.0)
    AGENT_DEFAULTS = dict(radius=0.3, max_speed=1.0, pref_speed=1.0, neighbor_dist=10.0,
                          max_neighbors=10, time_horizon=5.0, time_horizon_obst=5.0)
    MAX_STEPS = 100
    OBS_DEFAULTS = dict(num_agents=5, num_obstacles=0, range=8.0)
    DEFAULT_GROUPS = [dict(population="learned", count=1, on_goal="stop"),
                      dict(population="orca", count=5, on_goal="stay")]

    def build_world(self, rng):
        """An empty world sized to the square."""
        return World(extent=0.5 * self.square_width + 1.5)

    def place_agents(self, rng, sim, radii, groups):
        """Random starts and goals in opposite halves; slot 0 is the robot if ``robot_fixed``."""
        w = self.square_width

        def sampler(rng, i, b):
            if i == 0 and self.robot_fixed:
                s = np.tile([0.0, -self.robot_dist], (b, 1))
                return s, -s
            sign = np.where(rng.random(b) > 0.5, -1.0, 1.0)
            s = np.stack([rng.random(b) * w * 0.5 * sign, (rng.random(b) - 0.5) * w], axis=1)
            g = np.stack([rng.random(b) * w * 0.5 * -sign, (rng.random(b) - 0.5) * w], axis=1)
            return s, g

        return sample_pairs(rng, sim, radii, sampler, margin=self.discomfort_dist,
                            max_tries=self.MAX_TRIES, scenario=self.name)
