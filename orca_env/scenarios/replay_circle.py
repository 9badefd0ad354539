"""``replay_circle_v0``: CrowdNav's circle-crossing robot among replayed pedestrians."""

from __future__ import annotations

import numpy as np

from .base import Scenario, World

__all__ = ["ReplayCircle"]


class ReplayCircle(Scenario):
    """A robot crosses a circle while recorded pedestrians (population ``replay``) walk by.

    Description:
        Slot 0 (the robot) starts at ``(0, -circle_radius)`` and heads for ``(0,
        circle_radius)``, CrowdNav's robot task. Every other slot waits inactive-to-be in a
        row ``park_distance`` metres below the scene, 1 m apart: its behaviour places it
        (``replay`` puts each slot on its track and makes it active while the track runs), so
        the scenario never has to fit a dataset's pedestrians into a spawn layout. Meant for
        ``replay`` groups; other crowd groups would walk in from the row. No obstacles.

    Episode End: as CrowdNav, 100 steps of 0.25 s.

    Version History:
        v0: initial version.
    """

    name = "replay_circle_v0"
    PARAMS = dict(circle_radius=4.0, park_distance=100.0)
    POSITIVE = ("circle_radius", "park_distance")
    AGENT_DEFAULTS = dict(radius=0.3, max_speed=1.0, pref_speed=1.0, neighbor_dist=10.0,
                          max_neighbors=10, time_horizon=5.0, time_horizon_obst=5.0)
    MAX_STEPS = 100
    OBS_DEFAULTS = dict(num_agents=5, num_obstacles=0, range=8.0)
    DEFAULT_GROUPS = [dict(population="learned", count=1, on_goal="stop"),
                      dict(population="replay", count=20, max_speed=3.0,
                           replay={"file": "replay_sample.txt"})]

    def build_world(self, rng):
        """An empty world sized to the circle."""
        return World(extent=self.circle_radius + 1.5)

    def place_agents(self, rng, sim, radii):
        """The robot on the circle; everyone else parked in a row far below."""
        n = len(radii)
        starts = np.zeros((n, 2))
        starts[:, 0] = np.arange(n) * max(1.0, 2.5 * float(radii.max()))
        starts[:, 1] = -self.circle_radius - self.park_distance
        starts[0] = (0.0, -self.circle_radius)
        goals = starts.copy()
        goals[0] = (0.0, self.circle_radius)
        return starts, goals
