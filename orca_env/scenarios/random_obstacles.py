"""Random obstacles in a walled arena with random starts and goals."""

from __future__ import annotations

import numpy as np

from .base import DiscGrid, Scenario, SpawnError, World, sample_pairs


class RandomObstacles(Scenario):
    """Random rotated rectangles in a square arena; random starts and goals.

    The arena is the square ``[-half_size, half_size]^2`` (a boundary outline). ``num_obstacles``
    rectangles with sides ``U(min_side, max_side)`` and a random rotation are placed by rejection
    so that their bounding circles stay ``gap`` metres apart and from the walls (so every pair of
    obstacles leaves a passage). Starts and goals are drawn uniformly, walkable, non-overlapping,
    and at least ``min_goal_dist`` apart. Placement gives up with ``SpawnError`` after a bounded
    number of tries.

    Version History:
        v0: initial version.
    """

    name = "random_obstacles_v0"
    PARAMS = dict(half_size=8.0, num_obstacles=6, min_side=0.6, max_side=2.0, gap=1.0,
                  min_goal_dist=4.0)
    POSITIVE = ("half_size", "min_side", "max_side")
    MAX_STEPS = 300
    #: Consecutive rejected obstacle candidates before giving up: a saturated arena fails fast.
    MAX_REJECTS = 2000
    OBS_DEFAULTS = dict(num_agents=6, num_obstacles=4, range=5.0)
    DEFAULT_GROUPS = [dict(population="learned", count=4, on_goal="stop"),
                      dict(population="orca", count=6, on_goal="new_goal"),
                      dict(population="non_reactive", count=2, on_goal="new_goal")]
    HAS_OBSTACLES = True

    def check_params(self):
        """Side bounds in order; the obstacles can fit; a goal can be far enough."""
        self._require(self.min_side <= self.max_side, "min_side",
                      f"at most max_side ({self.max_side})")
        h, g = self.half_size, self.gap
        rad = self.min_side / np.sqrt(2.0)  # the smallest obstacle's circumradius
        self._require(rad + g < h, "half_size", f"above the smallest obstacle's circumradius "
                      f"plus gap ({rad + g:.3g})")
        # Circles of radius rad + gap/2 round the obstacles are disjoint and lie within the
        # arena: their area, at the densest packing of discs (pi / sqrt(12)), must fit.
        fit = np.pi / np.sqrt(12.0) * (2.0 * h) ** 2 / (np.pi * (rad + 0.5 * g) ** 2)
        self._require(self.num_obstacles <= fit, "num_obstacles",
                      f"at most {int(fit)} for this arena, side and gap (densest packing)")
        self._require(self.min_goal_dist < 2.0 * np.sqrt(2.0) * h, "min_goal_dist",
                      f"below the arena's diagonal ({2.0 * np.sqrt(2.0) * h:.3g})")

    def build_world(self, rng):
        """Random rotated rectangles ``gap`` apart inside the square arena's boundary."""
        h = self.half_size
        obstacles = []
        # The placed obstacles' circumcircles, to measure a candidate against the nearby ones
        # only (the same decisions as against all; O(m) for m obstacles, not O(m^2)).
        grid = DiscGrid(self.num_obstacles, 0.5 * np.hypot(self.max_side, self.max_side),
                        self.gap)
        rejects = 0
        while len(obstacles) < self.num_obstacles:
            if rejects >= self.MAX_REJECTS:
                raise SpawnError(f"{self.name}: placed {len(obstacles)} of "
                                 f"{self.num_obstacles} obstacles, then {rejects} candidates in "
                                 f"a row overlapped; use fewer or smaller obstacles, a smaller "
                                 f"gap or a larger arena")
            sx, sy = rng.uniform(self.min_side, self.max_side, size=2)
            rad = 0.5 * np.hypot(sx, sy)
            c = rng.uniform(-h + rad + self.gap, h - rad - self.gap, size=2)
            near = grid.near(c[0], c[1])
            if np.any(np.hypot(*(c - grid.xy[near]).T) < rad + grid.r[near] + self.gap):
                rejects += 1
                continue
            rejects = 0
            th = rng.uniform(0.0, np.pi)
            rot = np.array([[np.cos(th), -np.sin(th)], [np.sin(th), np.cos(th)]])
            local = 0.5 * np.array([[-sx, -sy], [sx, -sy], [sx, sy], [-sx, sy]])
            obstacles.append(local @ rot.T + c)
            grid.add(c[None, :], np.array([rad]))
        outline = np.array([[-h, -h], [h, -h], [h, h], [-h, h]])
        return World(obstacles=obstacles, boundary=outline, extent=h + 0.5)

    def _uniform(self, rng, b):
        return rng.uniform(-self.half_size, self.half_size, size=(b, 2))

    def place_agents(self, rng, sim, radii):
        """Uniform walkable, non-overlapping starts and goals, at least ``min_goal_dist`` apart."""
        def sampler(rng, i, b):
            return self._uniform(rng, b), self._uniform(rng, b)

        return sample_pairs(rng, sim, radii, sampler, min_goal_dist=self.min_goal_dist,
                            max_tries=self.MAX_TRIES, scenario=self.name)

    def new_goals(self, rng, sim, ids, positions, starts, radii):
        """A uniform walkable point at least ``min_goal_dist`` from the agent's position."""
        out = np.empty((len(ids), 2))
        for k, i in enumerate(ids):
            for _ in range(self.MAX_TRIES // 64 + 1):
                cand = self._uniform(rng, 64)
                ok = np.asarray(sim.is_walkable(cand, clearance=radii[i] + 0.05), dtype=bool)
                ok &= np.linalg.norm(cand - positions[i], axis=1) >= self.min_goal_dist
                idx = np.flatnonzero(ok)
                if idx.size:
                    out[k] = cand[idx[0]]
                    break
            else:
                raise SpawnError(f"{self.name}: no walkable new goal for agent slot {i}")
        return out
