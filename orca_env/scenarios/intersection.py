"""A four-way intersection of two corridors."""

from __future__ import annotations

import numpy as np

from .base import Scenario, World, rectangle, sample_pairs


class Intersection(Scenario):
    """Four flows cross at a four-way intersection.

    Two ``width``-wide corridors cross at the origin; four square blocks of side ``arm_length``
    fill the quadrants. Slot ``i`` starts in the end zone (``zone`` metres) of arm ``i mod 4``
    (east, north, west, south) and heads for a random point in the end zone of the opposite arm.
    Crowd agents with ``new_goal`` get a random goal at the end of a random other arm.

    Version History:
        v0: initial version.
        v1: :class:`IntersectionV1`, the arms closed at their ends instead of an open world.
    """

    name = "intersection_v0"
    PARAMS = dict(width=4.0, arm_length=8.0, zone=3.0)
    POSITIVE = ("width", "arm_length", "zone")
    MAX_STEPS = 300
    OBS_DEFAULTS = dict(num_agents=6, num_obstacles=4, range=5.0)
    DEFAULT_GROUPS = [dict(population="learned", count=4, on_goal="stop"),
                      dict(population="orca", count=12, on_goal="stop")]
    HAS_OBSTACLES = True

    def check_params(self):
        """The start and goal zones lie on the arms."""
        self._require(self.zone <= self.arm_length, "zone",
                      f"at most arm_length ({self.arm_length})")

    def build_world(self, rng):
        """The four square blocks that fill the quadrants."""
        w, a = 0.5 * self.width, 0.5 * self.width + self.arm_length
        blocks = [rectangle(w, w, a, a), rectangle(-a, w, -w, a), rectangle(-a, -a, -w, -w),
                  rectangle(w, -a, a, -w)]
        return World(obstacles=blocks, extent=a + 0.5)

    def _arm_points(self, rng, b, arm):
        w, a = 0.5 * self.width, 0.5 * self.width + self.arm_length
        along = a - rng.random(b) * self.zone
        across = (rng.random(b) - 0.5) * 2.0 * w
        ang = np.asarray(arm) * 0.5 * np.pi
        c, s = np.cos(ang), np.sin(ang)
        return np.stack([c * along - s * across, s * along + c * across], axis=1)

    def place_agents(self, rng, sim, radii):
        """Slot ``i`` starts at the end of arm ``i mod 4``, goal at the opposite arm's end."""
        def sampler(rng, i, b):
            arm = i % 4
            return self._arm_points(rng, b, arm), self._arm_points(rng, b, (arm + 2) % 4)

        return sample_pairs(rng, sim, radii, sampler, max_tries=self.MAX_TRIES, scenario=self.name)

    def new_goals(self, rng, sim, ids, positions, starts, radii):
        """A random point at the end of a random other arm, clear of the blocks."""
        ang = np.arctan2(positions[ids, 1], positions[ids, 0])
        here = np.round(ang / (0.5 * np.pi)).astype(int) % 4
        arms = (here + rng.integers(1, 4, size=len(ids))) % 4
        pts = self._arm_points(rng, len(ids), arms)
        w = 0.5 * self.width - radii[ids] - 0.05
        # Keep the goal clear of the blocks: clamp the across-arm coordinate.
        vertical = arms % 2 == 1
        pts[vertical, 0] = np.clip(pts[vertical, 0], -w[vertical], w[vertical])
        pts[~vertical, 1] = np.clip(pts[~vertical, 1], -w[~vertical], w[~vertical])
        return pts


class IntersectionV1(Intersection):
    """:class:`Intersection` with closed arms: nothing walks around the blocks.

    The walkable region is a boundary outline (``sim.add_boundary``): the plus shape of the two
    crossing corridors, each arm going on ``end_room`` metres past the blocks and closed there.
    In v0 the world outside the blocks was walkable: a learned agent could leave an arm through
    its open end and walk round a block, bypassing the crossing, and one that did so could stall
    at a block's outer corner with its goal on the far side (a deadlock of the agent's own
    making). Starts and goals are drawn as in v0 (the end zones reach the blocks' outer edge,
    which ``end_room`` keeps clear of the closing walls).

    Version History:
        v1: the plus-shaped outline replaces v0's four blocks in an open world.
    """

    name = "intersection_v1"
    PARAMS = dict(Intersection.PARAMS, end_room=1.0)
    POSITIVE = Intersection.POSITIVE + ("end_room",)

    def build_world(self, rng):
        """The outline of the two crossing corridors, closed ``end_room`` past the blocks."""
        w = 0.5 * self.width
        b = w + self.arm_length + self.end_room
        outline = np.array([[b, -w], [b, w], [w, w], [w, b], [-w, b], [-w, w], [-b, w],
                            [-b, -w], [-w, -w], [-w, -b], [w, -b], [w, -w]])
        return World(boundary=outline, extent=b + 0.5)
