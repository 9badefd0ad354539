"""RVO2's Circle example: agents on a circle walk to the antipode."""

from __future__ import annotations

import functools

import numpy as np

from .base import Scenario, SpawnError, World, any_overlap


@functools.lru_cache(maxsize=64)
def _angles(n: int, interleave: bool) -> np.ndarray:
    """(n,) each slot's angle on the circle (read-only; the same for every episode)."""
    k = np.arange(n)
    if interleave and n > 1:
        stride = max(1, int(round(np.sqrt(n))))
        while np.gcd(stride, n) != 1:
            stride += 1
        k = (k * stride) % n
    ang = k * 2.0 * np.pi / n
    ang.flags.writeable = False
    return ang


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

    ``jitter`` (metres, default 0: RVO2's exact layout) moves each start by up to ``jitter``
    along the circle and up to ``jitter`` radially, drawn from the env's ``np_random``, so that
    episodes of different seeds differ; goals stay the antipodes of the starts, so every path
    still crosses the centre; it may be at most half of ``circle_radius``. Layouts in which two
    agents would overlap are redrawn (at most 100 tries, then ``SpawnError``).

    Version History:
        v0: initial version (``jitter`` added later with a default that keeps the layout; crowd
            noise 0 by default, as in Circle.cc).
    """

    name = "circle_v0"
    PARAMS = dict(circle_radius=200.0, interleave=False, jitter=0.0)
    POSITIVE = ("circle_radius",)
    AGENT_DEFAULTS = dict(radius=1.5, max_speed=2.0, pref_speed=1.0, neighbor_dist=15.0,
                          max_neighbors=10, time_horizon=10.0, time_horizon_obst=10.0)
    MAX_STEPS = 4000  # 400 m at 1 m/s is 1600 steps, plus the jam at the centre
    OBS_DEFAULTS = dict(num_agents=6, num_obstacles=0, range=15.0)
    CROWD_NOISE = 0.0  # Circle.cc sets no noise (Blocks.cc and Roadmap.cc do)
    DEFAULT_GROUPS = [dict(population="learned", count=25, on_goal="stay"),
                      dict(population="orca", count=225, on_goal="stay")]

    def check_params(self) -> None:
        """``jitter`` at most half of ``circle_radius``: each start stays on its side of the centre.

        (A radial jitter past the radius would put starts across the centre or far outside the
        world the circle sizes.)
        """
        self._require(self.jitter <= 0.5 * self.circle_radius, "jitter",
                      f"at most half of circle_radius ({0.5 * self.circle_radius:g} m)")

    def build_world(self, rng):
        """An empty world sized to the circle."""
        return World(extent=1.1 * self.circle_radius)

    def place_agents(self, rng, sim, radii):
        """Starts evenly spaced on the circle (optionally interleaved), goals antipodal."""
        n = len(radii)
        ang = _angles(n, bool(self.interleave))
        radius, jitter = self.circle_radius, self.jitter
        for _ in range(100):
            if jitter > 0.0:
                a = ang + rng.uniform(-1.0, 1.0, n) * jitter / radius
                r = radius + rng.uniform(-1.0, 1.0, n) * jitter
            else:
                a, r = ang, np.full(n, radius)
            starts = np.empty((n, 2))
            np.multiply(r, np.cos(a), out=starts[:, 0])
            np.multiply(r, np.sin(a), out=starts[:, 1])
            if jitter == 0.0 or n < 2:
                return starts, -starts
            if not any_overlap(starts, radii):
                return starts, -starts
        raise SpawnError(f"{self.name}: no overlap-free layout with jitter={self.jitter} m in "
                         f"100 tries; lower jitter or enlarge circle_radius")
