"""The polygon self-intersection check: sort and sweep, the same answers as all pairs."""

import time

import numpy as np

from orca_env.core import Simulator
from orca_env.core.obstacles import _segments_intersect, _self_intersects


def _all_pairs(v):
    """The check over every pair of edges (the former O(m^2) implementation)."""
    k = v.shape[0]
    for i in range(k):
        i2 = (i + 1) % k
        for j in range(i + 1, k):
            j2 = (j + 1) % k
            if j == i2 or i == j2:
                a, b, c = (i, i2, j2) if j == i2 else (j, j2, i2)
                u, w = v[b] - v[a], v[c] - v[b]
                if u[0] * w[1] - u[1] * w[0] == 0.0 and u @ w < 0.0:
                    return True
                continue
            if _segments_intersect.py_func(*v[i], *v[i2], *v[j], *v[j2]):
                return True
    return False


def test_sweep_agrees_with_all_pairs_on_random_polygons():
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(400):
        k = int(rng.integers(3, 14))
        if rng.random() < 0.5:  # star-shaped: simple
            ang = np.sort(rng.uniform(0, 2 * np.pi, k))
            v = rng.uniform(0.5, 1.5, k)[:, None] * np.stack([np.cos(ang), np.sin(ang)], 1)
        else:  # random vertices on a small grid: crossings, touching and folded edges
            v = rng.integers(0, 4, (k, 2)).astype(float)
        want = _all_pairs(v)
        assert _self_intersects(v) == want, v.tolist()
        seen.add(want)
    assert seen == {True, False}


def test_a_polygon_of_100000_vertices_is_checked_quickly():
    # All pairs took 11-13 minutes at 10^5 vertices (issue 27, item 8); the sweep is O(m log m)
    # for a star polygon. No timing bound here: the figure is printed.
    ang = np.linspace(0.0, 2 * np.pi, 100_000, endpoint=False)
    r = 100.0 + np.where(np.arange(ang.size) % 2, 0.0, 1.0)
    v = r[:, None] * np.stack([np.cos(ang), np.sin(ang)], axis=1)
    sim = Simulator()
    t0 = time.perf_counter()
    sim.add_obstacle(v)
    print(f"add_obstacle, 100,000 vertices: {time.perf_counter() - t0:.2f} s")
    assert sim.num_obstacle_vertices == 100_000
