"""Beyond RVO2: responsibility, lifecycle, boundary, obstacle index, queries, telemetry."""

import numpy as np
import pytest

from orca_env.core import Simulator
from orca_env.core import obstacles as obs


def head_on(resp_a, resp_b, steps=40):
    """Two agents head-on, slightly offset; returns their lateral (y) displacements."""
    sim = Simulator(time_step=0.1, neighbor_dist=10.0, max_neighbors=5, time_horizon=3.0,
                    radius=0.5, max_speed=1.0)
    sim.add_agent((-4.0, 0.0), responsibility=resp_a)
    sim.add_agent((4.0, 0.05), responsibility=resp_b)
    start = sim.positions.copy()
    for _ in range(steps):
        sim.set_pref_velocities([(1.0, 0.0), (-1.0, 0.0)])
        sim.step()
    return np.abs(sim.positions[:, 1] - start[:, 1]), sim


def test_equal_responsibility_shares_evenly():
    dy, _ = head_on(1.0, 1.0)
    assert dy[0] > 0.1 and abs(dy[0] - dy[1]) < 0.05 * dy.max()


def test_responsibility_shares_follow_weights():
    dy, _ = head_on(3.0, 1.0)
    assert dy[0] > 1.5 * dy[1]


def test_zero_responsibility_is_non_reactive():
    dy, sim = head_on(0.0, 1.0)
    # The dynamic obstacle keeps its line exactly; the other agent avoids it fully.
    assert dy[0] == 0.0
    assert dy[1] > 0.3
    d = np.linalg.norm(sim.positions[0] - sim.positions[1])
    assert d > 0.0


def test_two_zero_weights_share_half():
    dy0, _ = head_on(0.0, 0.0)
    dy1, _ = head_on(1.0, 1.0)
    np.testing.assert_allclose(dy0, dy1, rtol=1e-12)


def test_deactivated_agent_is_frozen_and_invisible():
    sim = Simulator(time_step=0.25, neighbor_dist=10.0, radius=0.5, max_speed=1.0)
    sim.add_agents([(0.0, 0.0), (2.0, 0.0)])
    sim.deactivate_agents([1])
    before = sim.positions[1].copy()
    sim.set_pref_velocities([(1.0, 0.0), (1.0, 0.0)])
    for _ in range(12):
        sim.step()
    np.testing.assert_array_equal(sim.positions[1], before)
    # Agent 0 walked through the inactive agent's position as if it were not there.
    assert sim.positions[0, 0] == pytest.approx(3.0)
    assert sim.agent_neighbors(0).size == 0 and sim.agent_neighbors(1).size == 0
    assert sim.num_orca_lines[1] == 0 and not sim.used_lp3[1]
    sim.activate_agents([1])
    sim.step()
    assert 1 in sim.agent_neighbors(0)


def test_add_agents_mid_run_and_clear_keeps_obstacles():
    sim = Simulator(time_step=0.25, radius=0.5, max_speed=1.0)
    sim.add_obstacle([(5.0, -1.0), (6.0, -1.0), (6.0, 1.0), (5.0, 1.0)])
    sim.add_agent((0.0, 0.0))
    sim.step()
    new = sim.add_agents([(0.0, 3.0), (0.0, -3.0)])
    assert new.tolist() == [1, 2] and sim.num_agents == 3
    sim.step()
    sim.clear_agents()
    assert sim.num_agents == 0 and sim.num_obstacle_vertices == 4
    sim.step()  # no agents: fine
    sim.add_agent((4.0, 0.0))
    sim.set_pref_velocities([(1.0, 0.0)])
    for _ in range(20):
        sim.step()
    assert sim.positions[0, 0] < 4.5 + 1e-6  # the kept obstacle still blocks


def test_boundary_keeps_agents_inside_under_pressure():
    """A crowd pushed against the boundary by its preferred velocities never leaves."""
    sim = Simulator(time_step=0.25, neighbor_dist=5.0, max_neighbors=10, time_horizon=2.0,
                    time_horizon_obst=1.0, radius=0.4, max_speed=2.0)
    outline = [(-5.0, -5.0), (5.0, -5.0), (5.0, 5.0), (-5.0, 5.0)]
    sim.add_boundary(outline)
    sim.add_obstacle([(-1.0, -1.0), (1.0, -1.0), (0.0, 1.0)])
    rng = np.random.default_rng(3)
    pts = rng.uniform(-4.5, 4.5, (200, 2))
    pts = pts[sim.is_walkable(pts, clearance=0.45)][:60]
    sim.add_agents(pts)
    for step in range(200):
        # Everyone pushes outward-right and into the triangle in turns, at full speed.
        pref = np.tile([2.0, 0.3], (pts.shape[0], 1)) if step % 50 < 25 else -sim.positions
        sim.set_pref_velocities(pref)
        sim.step()
        assert np.all(sim.is_walkable(sim.positions)), f"left the walkable region at step {step}"
        assert np.all(np.abs(sim.positions) < 5.0)


def test_correction_stops_agent_at_wall_when_forced():
    """A step longer than the obstacle horizon lets ORCA (and RVO2) jump through a wall.

    The wall is out of the obstacle query range (time_horizon_obst * max_speed + radius =
    0.15 m), so ORCA adds no line, and the 5 m move would cross it; the correction stops it.
    """
    sim = Simulator(time_step=1.0, neighbor_dist=5.0, max_neighbors=10, time_horizon=1.0,
                    time_horizon_obst=0.01, radius=0.1, max_speed=5.0)
    sim.add_obstacle([(0.0, -10.0), (0.0, 10.0)])
    sim.add_agents([(-0.5, y) for y in np.linspace(-5, 5, 11)])
    sim.set_pref_velocities(np.tile([5.0, 0.0], (11, 1)))
    sim.step()
    assert np.all(sim.positions[:, 0] < 0.0)
    assert np.all(sim.positions[:, 0] > -1e-5)  # stopped right at the wall
    assert np.all(sim.position_corrected)
    np.testing.assert_allclose(sim.velocities[:, 0], (sim.positions[:, 0] + 0.5) / 1.0)


def brute_segments(points, next_ids, x, y, range_sq):
    a = points
    b = points[next_ids]
    left = (a[:, 0] - x) * (b[:, 1] - a[:, 1]) - (a[:, 1] - y) * (b[:, 0] - a[:, 0])
    ab = b - a
    r = np.clip(((x - a[:, 0]) * ab[:, 0] + (y - a[:, 1]) * ab[:, 1]) / (ab**2).sum(1), 0, 1)
    d = (x - (a[:, 0] + r * ab[:, 0])) ** 2 + (y - (a[:, 1] + r * ab[:, 1])) ** 2
    keep = np.where((left < 0) & (d < range_sq))[0]
    return keep[np.argsort(d[keep], kind="stable")], np.sort(d[keep])


def random_world(rng, n_poly=60):
    sim = Simulator()
    for _ in range(n_poly):
        c = rng.uniform(-50, 50, 2)
        k = rng.integers(2, 7)
        ang = np.sort(rng.uniform(0, 2 * np.pi, k))
        r = rng.uniform(0.5, 4.0, k)
        v = c + np.c_[r * np.cos(ang), r * np.sin(ang)]
        if k == 2:
            sim.add_obstacle(v)
            continue
        try:
            sim.add_obstacle(v)
        except ValueError:
            pass
    sim.process_obstacles()
    return sim


def test_index_query_matches_brute_force():
    rng = np.random.default_rng(0)
    sim = random_world(rng)
    pts = rng.uniform(-55, 55, (300, 2))
    seg, closest, dsq = sim.query_obstacle_neighbors(pts, 12.0, 400)
    for q in range(pts.shape[0]):
        ids, d = brute_segments(sim.obstacle_points, sim.obstacle_next, *pts[q], 144.0)
        got = seg[q][seg[q] >= 0]
        np.testing.assert_array_equal(np.sort(got), np.sort(ids))
        np.testing.assert_allclose(dsq[q][: got.size], d)
        np.testing.assert_allclose(((closest[q][: got.size] - pts[q]) ** 2).sum(1), d)


def test_query_obstacle_neighbors_keeps_nearest_when_capped():
    rng = np.random.default_rng(1)
    sim = random_world(rng)
    pts = rng.uniform(-55, 55, (100, 2))
    seg_all, _, d_all = sim.query_obstacle_neighbors(pts, 30.0, 500)
    seg3, _, d3 = sim.query_obstacle_neighbors(pts, 30.0, 3)
    np.testing.assert_array_equal(d3, d_all[:, :3])


def test_query_agent_neighbors_matches_brute_force():
    rng = np.random.default_rng(2)
    sim = Simulator()
    pos = rng.uniform(-30, 30, (500, 2))
    sim.add_agents(pos)
    sim.deactivate_agents(np.arange(0, 500, 7))
    ids, dsq = sim.query_agent_neighbors(6, 5.0)
    d = ((pos[:, None] - pos[None]) ** 2).sum(2)
    np.fill_diagonal(d, np.inf)
    d[:, np.arange(0, 500, 7)] = np.inf
    for i in range(500):
        want = np.sort(d[i][d[i] < 25.0])[:6]
        got = dsq[i][ids[i] >= 0]
        np.testing.assert_allclose(got, want)
        np.testing.assert_allclose(d[i, ids[i][ids[i] >= 0]], got)


def test_query_agent_neighbors_unchecked_matches_checked():
    rng = np.random.default_rng(5)
    sim = Simulator()
    sim.add_agents(rng.uniform(-20, 20, (300, 2)))
    sim.deactivate_agents(np.arange(0, 300, 5))
    q = np.array([0, 3, 299, 3, 150], dtype=np.int64)
    for k, max_range in ((0, 4.0), (1, 0.0), (7, 4.0), (400, 100.0)):
        want = sim.query_agent_neighbors(k, max_range, ids=q)
        got = sim.query_agent_neighbors_unchecked(q, k, max_range**2)
        for a, b in zip(got, want, strict=True):
            np.testing.assert_array_equal(a, b)


def test_visibility_simple_cases():
    sim = Simulator()
    sim.add_obstacle([(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)])
    assert not sim.query_visibility((-5.0, 0.0), (5.0, 0.0))
    assert sim.query_visibility((-5.0, 2.0), (5.0, 2.0))
    assert not sim.query_visibility((-5.0, 1.5), (5.0, 1.5), radius=1.0)
    assert sim.query_visibility((-5.0, 3.0), (5.0, 3.0), radius=1.0)
    wall = Simulator()
    wall.add_obstacle([(0.0, -1.0), (0.0, 1.0)])
    assert not wall.query_visibility((-1.0, 0.0), (1.0, 0.0))
    assert not wall.query_visibility((1.0, 0.0), (-1.0, 0.0))


def test_is_walkable():
    sim = Simulator()
    sim.add_boundary([(-10.0, -10.0), (10.0, -10.0), (10.0, 10.0), (-10.0, 10.0)])
    sim.add_obstacle([(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)])
    pts = [(0.0, 0.0), (5.0, 5.0), (11.0, 0.0), (1.5, 0.0), (9.8, 0.0)]
    np.testing.assert_array_equal(sim.is_walkable(pts), [False, True, False, True, True])
    np.testing.assert_array_equal(
        sim.is_walkable(pts, clearance=0.6), [False, True, False, False, False]
    )


def test_index_of_51000_segments_bounds_every_segment():
    """The segment index at scale: every leaf's box holds its segments, every parent's box its
    children's, and the leaf order is a permutation. (Its O(m log m) build, a Morton-code sort
    and reductions, was a timing test; under load its ratio drifted past the bound, and timings
    belong in benchmarks/, not tests.)"""
    cells = np.arange(113) * 3.0
    x, y = np.meshgrid(cells, cells)
    c = np.c_[x.ravel(), y.ravel()]
    sq = np.array([(0, 0), (1, 0), (1, 1), (0, 1)], float)
    pts = (c[:, None] + sq[None]).reshape(-1, 2)
    idx = np.arange(pts.shape[0]).reshape(-1, 4)
    nxt = np.roll(idx, -1, axis=1).ravel()
    order, boxes = obs.build_segment_index(pts, nxt)
    m = pts.shape[0]
    assert np.array_equal(np.sort(order), np.arange(m))
    n_slots = boxes.shape[0] // 2
    leaf = n_slots + np.arange(m) // obs.LEAF_SIZE  # the leaf of each position in leaf order
    a, b = pts[order], pts[nxt[order]]
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    assert (boxes[leaf, 0] <= lo[:, 0]).all() and (boxes[leaf, 1] >= hi[:, 0]).all()
    assert (boxes[leaf, 2] <= lo[:, 1]).all() and (boxes[leaf, 3] >= hi[:, 1]).all()
    p = np.arange(1, n_slots)
    for child in (2 * p, 2 * p + 1):
        full = np.isfinite(boxes[child, 0])
        assert (boxes[p[full], 0] <= boxes[child[full], 0]).all()
        assert (boxes[p[full], 1] >= boxes[child[full], 1]).all()
        assert (boxes[p[full], 2] <= boxes[child[full], 2]).all()
        assert (boxes[p[full], 3] >= boxes[child[full], 3]).all()


def test_telemetry():
    sim = Simulator(time_step=0.25, radius=0.5, max_speed=1.0, time_horizon=5.0)
    sim.add_agents([(-2.0, 0.0), (2.0, 0.0), (0.0, 20.0)])
    sim.set_pref_velocities([(1.0, 0.0), (-1.0, 0.0), (0.0, 1.0)])
    sim.step()
    # One ORCA line per agent neighbour within neighbor_dist (15 m by default), no obstacles:
    # agents 0 and 1 (4 m apart) see each other, agent 2 (20.1 m from both) sees nobody.
    assert sim.num_orca_lines.tolist() == [1, 1, 0]
    assert sim.intervention[0] > 0.0 and sim.intervention[2] == 0.0
    assert sim.used_lp3.dtype == bool and sim.position_corrected.dtype == bool
    np.testing.assert_allclose(
        sim.intervention, np.linalg.norm(sim.velocities - sim.pref_velocities, axis=1)
    )


@pytest.mark.parametrize("n", [7, 40, 100, 1000])
def test_step_telemetry_flags_survive_apply(n):
    """used_lp3 / position_corrected of active agents are what the velocity kernel wrote.

    Guards against a numba/LLVM miscompilation of the inactive-agent reset in
    ``apply_velocities`` (a vectorised conditional bool store that also cleared active agents).
    """
    from orca_env.core import kernels

    rng = np.random.default_rng(n)
    active = rng.random(n) < 0.7
    pos = rng.uniform(-10, 10, (n, 2))
    new_vel = np.zeros((n, 2))
    out = kernels.StepOutput(
        new_vel, np.ones(n, dtype=np.int64), np.ones(n, dtype=bool), np.ones(n, dtype=bool),
        np.ones(n),
    )
    sim = Simulator()
    obst = sim._index()
    ids = np.flatnonzero(active).astype(np.int64)
    kernels.apply_velocities(
        ids, active, pos, np.zeros((n, 2)), np.zeros((n, 2)), 0.25, tuple(obst), tuple(out)
    )
    np.testing.assert_array_equal(out.used_lp3, active)
    np.testing.assert_array_equal(out.n_lines, active.astype(np.int64))
    assert not out.corrected.any()  # zero moves are never corrected
    np.testing.assert_array_equal(out.intervention, np.zeros(n))
