"""core/batch.py: B worlds in concatenated arrays, each stepped by ``step_world`` on its own views
(as ``orca_env.vector`` does), are bit-identical to one Simulator per world."""

import numpy as np

from orca_env.core import Simulator
from orca_env.core.batch import (
    query_world_shared,
    shared_prefix,
    step_world,
    step_world_shared,
    world_obstacles,
)
from orca_env.core.kdtree import query_agent_neighbors


def make_world(seed, n):
    """A random crowd around a few random boxes and inside a boundary, some agents inactive."""
    rng = np.random.default_rng(seed)
    sim = Simulator(time_step=0.25, neighbor_dist=4.0, max_neighbors=6, time_horizon=3.0,
                    time_horizon_obst=2.0, radius=0.3, max_speed=1.2)
    sim.add_boundary([(-8, -8), (8, -8), (8, 8), (-8, 8)])
    for _ in range(seed % 3 + 1):  # a different number of obstacles per world
        cx, cy = rng.uniform(-5, 5, 2)
        w = rng.uniform(0.3, 1.0)
        sim.add_obstacle([(cx - w, cy - w), (cx + w, cy - w), (cx + w, cy + w), (cx - w, cy + w)])
    pts = []
    while len(pts) < n:
        p = rng.uniform(-7, 7, 2)
        if sim.is_walkable([p], clearance=0.35)[0] and all(
                np.hypot(*(p - q)) > 0.7 for q in pts):
            pts.append(p)
    sim.add_agents(np.array(pts), radius=rng.uniform(0.2, 0.35, n),
                   responsibility=(rng.uniform(size=n) > 0.2).astype(float))
    # Mixed visibility: a third of the agents in layer 2, ignored by the agents avoiding layer 1
    # only (core visibility, see Simulator's avoid_mask).
    sim.set_agent_params(np.arange(0, n, 3), layer=2)
    sim.set_agent_params(np.arange(1, n, 4), avoid_mask=1)
    sim.deactivate_agents([n - 1])
    sim.process_obstacles()
    return sim, rng.uniform(-7, 7, (n, 2))


def test_step_world_on_concatenated_worlds_matches_simulators():
    B, n = 4, 30
    worlds = [make_world(s, n) for s in range(B)]
    sims = [w[0] for w in worlds]
    goals = np.concatenate([w[1] for w in worlds])
    cat = lambda xs: np.ascontiguousarray(np.concatenate(xs))  # noqa: E731
    pos = cat([s.positions for s in sims])
    vel = cat([s.velocities for s in sims])
    active = cat([s.active for s in sims])
    kd = np.tile(np.arange(n, dtype=np.int64), B)
    params = tuple(cat([getattr(s, p) for s in sims]) for p in (
        "radii", "max_speeds", "neighbor_dists", "max_neighbors_arr", "time_horizons",
        "time_horizons_obst", "responsibilities", "layers", "avoid_masks"))
    idx = [s.obstacle_index for s in sims]
    obst = (cat([s.obstacle_points for s in sims]), cat([s.obstacle_next for s in sims]),
            cat([s.obstacle_prev for s in sims]), cat([s.obstacle_unit_dirs for s in sims]),
            cat([s.obstacle_convex for s in sims]), cat([i[0] for i in idx]),
            cat([i[1] for i in idx]))
    obst_off = np.concatenate([[0], np.cumsum([s.num_obstacle_vertices for s in sims])])
    box_off = np.concatenate([[0], np.cumsum([i[1].shape[0] for i in idx])])
    obst_off, box_off = obst_off.astype(np.int64), box_off.astype(np.int64)
    out = (np.zeros((0, 2)), np.zeros(B * n, dtype=np.int64), np.zeros(B * n, dtype=bool),
           np.zeros(B * n, dtype=bool), np.zeros(B * n))
    nn = 2 * n - 1
    nodes = tuple(np.zeros(B * nn, dtype=np.int64) for _ in range(4)) + (np.zeros((B * nn, 4)),)
    new_vel = np.zeros((B * n, 2))
    for _ in range(60):
        to_goal = goals - pos
        pref = to_goal / np.maximum(np.linalg.norm(to_goal, axis=1, keepdims=True), 1.0)
        for b, s in enumerate(sims):
            s.set_pref_velocities(pref[b * n:(b + 1) * n])
            s.step()
        for b in range(B):  # world b: its rows, kd-tree scratch and obstacles, as views
            a, t = slice(b * n, (b + 1) * n), slice(b * nn, (b + 1) * nn)
            step_world(pos[a], vel[a], pref[a], active[a], kd[a], tuple(p[a] for p in params),
                       0.25, world_obstacles(obst, obst_off, box_off, b), 6,
                       tuple(o[a] for o in out), tuple(x[t] for x in nodes), new_vel[a],
                       np.zeros((0, 0, 4)), np.zeros(0, dtype=np.int64))
        for b, s in enumerate(sims):
            w = slice(b * n, (b + 1) * n)
            assert np.array_equal(pos[w], s.positions)
            assert np.array_equal(vel[w], s.velocities)
            assert np.array_equal(out[1][w], s.num_orca_lines)
            assert np.array_equal(out[2][w], s.used_lp3)
            assert np.array_equal(out[3][w], s.position_corrected)
            assert np.array_equal(out[4][w], s.intervention)
    assert out[1].any()  # agents and walls constrained each other


def _own_search(pos, tree, i, k, range_sq):
    ids, dsq = np.full(max(k, 1), -1, dtype=np.int64), np.full(max(k, 1), np.inf)
    c = query_agent_neighbors(i, pos[i, 0], pos[i, 1], range_sq, k, pos, *tree,
                              np.empty(pos.shape[0] + 2, dtype=np.int64), ids, dsq, False,
                              np.int64(-1), np.empty(0, dtype=np.int64))
    return ids[:c], dsq[:c]


def test_shared_prefix_is_the_own_search_or_refuses():
    """A (k, r) search's result is the prefix shared_prefix gives of a (K, R) row, ties included.

    On a unit grid (every distance tied with three others or more) and random points, for
    every agent, k <= K and r <= R: the prefix equals the search of its own whenever
    shared_prefix gives one, and it refuses only at a tie with the row's last entry.
    """
    rng = np.random.default_rng(0)
    g = np.stack(np.meshgrid(np.arange(7.0), np.arange(6.0)), -1).reshape(-1, 2)
    refused = taken = 0
    for pos in (g, rng.uniform(0, 6, (40, 2)), np.round(rng.uniform(0, 6, (40, 2)))):
        pos = np.ascontiguousarray(pos)
        n = pos.shape[0]
        active = np.ones(n, dtype=bool)
        active[::9] = False
        kd = rng.permutation(n).astype(np.int64)
        for big_k, big_r2 in ((10, 9.0), (6, 25.0), (12, 4.0)):
            nodes = tuple(np.zeros(2 * n, dtype=np.int64) for _ in range(4)) + \
                (np.zeros((2 * n, 4)),)
            order = np.zeros(n, dtype=np.int64)
            nb_ids, nb_dsq = np.zeros((n, 12), dtype=np.int64), np.zeros((n, 12))
            nb_cnt = np.zeros(n, dtype=np.int64)
            kd0 = kd.copy()
            na = query_world_shared(pos, active, kd, big_k, big_r2, nodes, order, nb_ids,
                                    nb_dsq, nb_cnt)
            assert np.array_equal(kd, kd0)  # the persistent order is left alone
            m = 2 * na - 1
            tree = (order[:na],) + tuple(x[:m] for x in nodes)
            for i in np.flatnonzero(active):
                row_ids, row_dsq = _own_search(pos, tree, i, big_k, big_r2)
                assert np.array_equal(nb_ids[i, :nb_cnt[i]], row_ids)
                for k in range(big_k + 1):
                    for r2 in (1.0, 2.0, 4.0, 5.0, big_r2):
                        if r2 > big_r2:
                            continue
                        c = shared_prefix(nb_dsq[i], nb_cnt[i], big_k, k, r2)
                        ids, dsq = _own_search(pos, tree, i, k, r2)
                        if c < 0:
                            refused += 1
                            assert nb_dsq[i, k - 1] == nb_dsq[i, nb_cnt[i] - 1]
                            continue
                        taken += 1
                        assert np.array_equal(nb_ids[i, :c], ids), (i, k, r2)
                        assert np.array_equal(nb_dsq[i, :c], dsq)
    assert taken > 1000 and refused > 0  # the grid's ties made it refuse some


def test_step_world_shared_reuses_the_query_bit_for_bit():
    """ORCA from a shared query's tree and rows equals step_world's own build and searches.

    Mixed layers (filtered agents search the reused tree), an inactive agent, obstacles and a
    shared query of more neighbours and reach than ORCA's; the persistent order left for the
    next step is the same too.
    """
    n = 30
    for seed in range(3):
        sim, goals = make_world(seed, n)
        if seed:  # no agent outside a layer all share: only some search with a filter
            sim.set_agent_params(np.arange(n), layer=1, avoid_mask=-1)
            sim.set_agent_params(np.arange(0, n, 3), layer=3)
            sim.set_agent_params(np.arange(1, n, 4), avoid_mask=2)
        idx = sim.obstacle_index
        obst = (sim.obstacle_points, sim.obstacle_next, sim.obstacle_prev,
                sim.obstacle_unit_dirs, sim.obstacle_convex, idx[0], idx[1])
        params = tuple(np.ascontiguousarray(getattr(sim, p)) for p in (
            "radii", "max_speeds", "neighbor_dists", "max_neighbors_arr", "time_horizons",
            "time_horizons_obst", "responsibilities", "layers", "avoid_masks"))
        pos, vel = sim.positions.copy(), sim.velocities.copy()
        active = sim.active.copy()
        kd = np.random.default_rng(seed).permutation(n).astype(np.int64)
        states = []
        for shared in (False, True):
            p, v, a, order = pos.copy(), vel.copy(), active.copy(), kd.copy()
            out = (np.zeros((0, 2)), np.zeros(n, dtype=np.int64), np.zeros(n, dtype=bool),
                   np.zeros(n, dtype=bool), np.zeros(n))
            nodes = tuple(np.zeros(2 * n, dtype=np.int64) for _ in range(4)) + \
                (np.zeros((2 * n, 4)),)
            kd_next = np.zeros(n, dtype=np.int64)
            nb_ids, nb_dsq = np.zeros((n, 8), dtype=np.int64), np.zeros((n, 8))
            nb_cnt, pre_cnt = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
            for _ in range(40):
                to_goal = goals - p
                pref = to_goal / np.maximum(np.linalg.norm(to_goal, axis=1, keepdims=True), 1.0)
                meta = (False, 0, 0, 0.0)
                if shared:
                    na = query_world_shared(p, a, order, 8, 25.0, nodes, kd_next, nb_ids,
                                            nb_dsq, nb_cnt)
                    meta = (True, na, 8, 25.0)
                args = (p, v, pref, a, order, params, 0.25, obst, 8, out, nodes,
                        np.zeros((n, 2)), np.zeros((0, 0, 4)), np.zeros(0, dtype=np.int64))
                if shared:
                    step_world_shared(*args, np.zeros(n, dtype=np.int64), meta, kd_next,
                                      nb_ids, nb_dsq, nb_cnt, pre_cnt)
                else:
                    step_world(*args)
                states.append((p.copy(), v.copy(), order.copy(), out[1].copy(), out[2].copy()))
            if shared:  # some reused their rows, the filtered ones searched
                assert (pre_cnt[active] >= 0).any() == bool(seed)
                assert (pre_cnt[active] < 0).any()
        half = len(states) // 2
        for a_, b_ in zip(states[:half], states[half:], strict=True):
            for x, y in zip(a_, b_, strict=True):
                assert np.array_equal(x, y)
