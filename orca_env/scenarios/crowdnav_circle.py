"""CrowdNav's circle-crossing scenario."""

from __future__ import annotations

import numpy as np

from .base import Scenario, World, sample_pairs


class CrowdNavCircle(Scenario):
    """CrowdNav's ``circle_crossing`` (Chen et al. 2019, ``crowd_sim.py``).

    Each agent starts at ``circle_radius * (cos a, sin a) + noise`` with ``a ~ U(0, 2 pi)`` and
    noise ``U(-0.5, 0.5) * pref_speed`` per axis, and heads for the point opposite the origin
    (goal = -start); a draw is rejected when it comes within ``r_i + r_j + discomfort_dist`` of
    another start or goal. With ``robot_fixed`` (default) slot 0 is CrowdNav's robot: start
    ``(0, -circle_radius)``, goal ``(0, circle_radius)``. Defaults are CrowdNav's: time step 0.25,
    time limit 25 s (100 steps), radius 0.3, pref speed 1, max speed 1, and its ORCA humans'
    neighbor_dist 10, max_neighbors 10, time_horizon 5, time_horizon_obst 5. Default groups: one
    learned robot that stops at its goal and 5 ORCA humans that stay at theirs.

    Version History:
        v0: initial version.
    """

    name = "crowdnav_circle_v0"
    PARAMS = dict(circle_radius=4.0, discomfort_dist=0.2, robot_fixed=True)
    POSITIVE = ("circle_radius",)
    AGENT_DEFAULTS = dict(radius=0.3, max_speed=1.0, pref_speed=1.0, neighbor_dist=10.0,
                          max_neighbors=10, time_horizon=5.0, time_horizon_obst=5.0)
    MAX_STEPS = 100
    OBS_DEFAULTS = dict(num_agents=5, num_obstacles=0, range=8.0)
    DEFAULT_GROUPS = [dict(population="learned", count=1, on_goal="stop"),
                      dict(population="orca", count=5, on_goal="stay")]

    def build_world(self, rng):
        """An empty world sized to the circle."""
        return World(extent=self.circle_radius + 1.5)

    def place_agents(self, rng, sim, radii):
        """Noisy starts on the circle with antipodal goals; slot 0 fixed if ``robot_fixed``."""
        r = self.circle_radius

        def sampler(rng, i, b):
            if i == 0 and self.robot_fixed:
                s = np.tile([0.0, -r], (b, 1))
                return s, -s
            ang = rng.random(b) * 2.0 * np.pi
            noise = rng.random((b, 2)) - 0.5  # CrowdNav: (U - 0.5) * v_pref, with v_pref = 1
            s = r * np.stack([np.cos(ang), np.sin(ang)], axis=1) + noise
            return s, -s

        return sample_pairs(rng, sim, radii, sampler, margin=self.discomfort_dist,
                            max_tries=self.MAX_TRIES, scenario=self.name)
