"""CrowdNav's square-crossing scenario."""

from __future__ import annotations

import numpy as np

from .base import World, sample_pairs
from .crowdnav_circle import CrowdNavCircle


class CrowdNavSquare(CrowdNavCircle):
    """CrowdNav's ``square_crossing``.

    Each agent starts at ``x ~ U(0, w / 2) * sign``, ``y ~ U(-w / 2, w / 2)`` with a random sign,
    and heads for ``x ~ U(0, w / 2) * -sign``, ``y ~ U(-w / 2, w / 2)`` (``w = square_width``);
    draws overlapping another start or goal (with ``discomfort_dist``) are rejected. With
    ``robot_fixed`` slot 0 is CrowdNav's robot, ``(0, -4) -> (0, 4)``. Agent, observation and
    group defaults and the step limit are inherited from ``crowdnav_circle_v0``.

    Version History:
        v0: initial version.
    """

    name = "crowdnav_square_v0"
    PARAMS = dict(square_width=10.0, discomfort_dist=0.2, robot_fixed=True, robot_dist=4.0)
    POSITIVE = ("square_width", "robot_dist")

    def check_params(self):
        """The robot starts inside the square."""
        self._require(self.robot_dist <= 0.5 * self.square_width, "robot_dist",
                      f"at most half of square_width ({self.square_width})")

    def build_world(self, rng):
        """An empty world sized to the square."""
        return World(extent=0.5 * self.square_width + 1.5)

    def place_agents(self, rng, sim, radii):
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
