"""CrowdNav's square-crossing scenario, with CrowdNav's own test cases as a layout."""

from __future__ import annotations

import numpy as np

from .base import SpawnError, World, sample_pairs
from .crowdnav_circle import CROWDNAV_TEST_SIZE, CROWDNAV_VAL_SIZE, CrowdNavCircle, _dist


class CrowdNavSquare(CrowdNavCircle):
    """CrowdNav's ``square_crossing``.

    Each agent starts at ``x ~ U(0, w / 2) * sign``, ``y ~ U(-w / 2, w / 2)`` with a random sign,
    and heads for ``x ~ U(0, w / 2) * -sign``, ``y ~ U(-w / 2, w / 2)`` (``w = square_width``);
    draws overlapping another start or goal (with ``discomfort_dist``) are rejected. With
    ``robot_fixed`` slot 0 is CrowdNav's robot, ``(0, -robot_dist) -> (0, robot_dist)``
    (CrowdNav places it at its ``circle_radius``, 4 m, in both crossings). Agent, observation
    and group defaults and the step limit are inherited from ``crowdnav_circle_v0``.

    Layouts (parameter ``layout``), as for ``crowdnav_circle_v0``: ``random`` (default) draws
    from the env's generator; ``crowdnav_test`` gives CrowdNav's test case
    ``(seed + episode) % test_cases`` (evaluation episode ``k`` is case ``k``), drawn as
    CrowdNav's ``generate_square_crossing_human`` draws it from
    ``np.random.RandomState(1000 + case)`` (with ``split: val`` its validation case ``(seed +
    episode) % val_cases`` from ``RandomState(case)``): for each slot after the robot, in slot
    order, ``v_pref`` and ``radius`` if its group has ``randomize_attributes``; then the side,
    ``sign = -1 if U > 0.5 else 1``; then ``(x, y)`` until the start is at least ``r_i + r_j +
    discomfort_dist`` from every earlier slot's *start*; then the goal, on the other side,
    until it is that far from every earlier slot's *goal* (CrowdNav checks starts against
    starts and goals against goals only, so a goal may lie on another agent's start).

    Version History:
        v0: initial version; the ``layout``, ``test_cases``, ``split`` and ``val_cases``
        parameters were added later, with defaults that keep the original layouts.
    """

    name = "crowdnav_square_v0"
    PARAMS = dict(square_width=10.0, discomfort_dist=0.2, robot_fixed=True, robot_dist=4.0,
                  layout="random", test_cases=CROWDNAV_TEST_SIZE, split="test",
                  val_cases=CROWDNAV_VAL_SIZE)
    POSITIVE = ("square_width", "robot_dist", "test_cases", "val_cases")

    def check_params(self):
        """The robot starts inside the square; the layout's rules (``crowdnav_circle_v0``)."""
        self._require(self.robot_dist <= 0.5 * self.square_width, "robot_dist",
                      f"at most half of square_width ({self.square_width})")
        super().check_params()

    def build_world(self, rng):
        """An empty world sized to the square."""
        return World(extent=0.5 * self.square_width + 1.5)

    def robot_start(self):
        """CrowdNav's robot start ``(0, -robot_dist)``; its goal is the opposite point."""
        return 0.0, -self.robot_dist

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

    def _crowdnav_human(self, rs, h, grid, radii, v_pref):
        """CrowdNav's ``generate_square_crossing_human`` for slot ``h`` against slots ``< h``.

        ``grid`` holds the starts (entry ``2j``) and goals (``2j + 1``) of the slots ``< h``
        (as for :class:`~orca_env.scenarios.crowdnav_circle.CrowdNavCircle`).
        """
        w = self.square_width
        sign = -1 if rs.random_sample() > 0.5 else 1
        start = self._draw_point(rs, h, grid, 0, radii, w, sign, "start")
        goal = self._draw_point(rs, h, grid, 1, radii, w, -sign, "goal")
        return start, goal

    def _draw_point(self, rs, h, grid, parity, radii, w, sign, what):
        """Draw ``(x, y)`` on the ``sign`` side until clear of earlier slots (CrowdNav's loop).

        Clear of the starts (``parity`` 0) or goals (1) of the slots ``< h``; only the nearby
        ones in ``grid`` are measured.
        """
        for _ in range(self.MAX_TRIES):
            x = rs.random_sample() * w * 0.5 * sign
            y = (rs.random_sample() - 0.5) * w
            for q in grid.near(x, y):
                if q % 2 == parity and _dist(x - grid.xy[q, 0], y - grid.xy[q, 1]) < \
                        radii[h] + radii[q // 2] + self.discomfort_dist:
                    break
            else:
                return x, y
        raise SpawnError(f"{self.name}: CrowdNav test case {self.case}: slot {h} found no "
                         f"{what} in {self.MAX_TRIES} draws; use fewer agents or smaller radii")
