"""core/batch.py: B worlds in concatenated arrays, each stepped by ``step_world`` on its own views
(as ``orca_env.vector`` does), are bit-identical to one Simulator per world."""

import numpy as np

from orca_env.core import Simulator
from orca_env.core.batch import step_world, world_obstacles


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
