import numpy as np

import orca_env
from orca_env.core import Simulator
from orca_env.core.obstacles import query_visibility
from orca_env.guidance import Roadmap
from orca_env.scenarios.blocks import BLOCKS, ROADMAP_POINTS


def blocks_sim():
    sim = Simulator(0.25)
    for b in BLOCKS:
        sim.add_obstacle(b)
    sim.process_obstacles()
    return sim


def test_njit_visibility_on_the_exposed_index_matches_the_method():
    """Guidance calls the core's kernel from numba with ``sim.obstacle_index``."""
    sim = blocks_sim()
    pts = np.ascontiguousarray(sim.obstacle_points)
    nxt = np.ascontiguousarray(sim.obstacle_next)
    seg_order, boxes = sim.obstacle_index
    rng = np.random.default_rng(0)
    q = rng.uniform(-80, 80, (400, 4))
    for r in (0.0, 2.0):
        ours = [query_visibility(a, b, c, d, r, pts, nxt, seg_order, boxes) for a, b, c, d in q]
        core = [sim.query_visibility((a, b), (c, d), r) for a, b, c, d in q]
        assert ours == core
        assert 50 < sum(ours) < 350


def test_roadmap_blocks_matches_rvo2_example():
    sim = blocks_sim()
    rm = Roadmap(sim, 2.0, points=ROADMAP_POINTS)
    assert np.isfinite(rm.dist).all()  # the 16 points are connected around the blocks
    goals = np.array([[-75.0, -75.0]])
    costs = rm.goal_costs(goals, np.array([2.0]))
    t, d = rm.waypoints(np.array([0]), np.array([[55.0, 55.0]]), goals, np.array([2.0]), costs)
    # From the top-right grid the shortest way runs through the central cross.
    assert d[0] >= np.hypot(130, 130) - 1e-9 and np.isfinite(d[0])
    assert tuple(t[0]) in {tuple(p) for p in ROADMAP_POINTS}


def test_guidance_paths_around_a_wall():
    groups = [{"population": "learned", "count": 1}]
    env = orca_env.parallel_env(scenario="bottleneck_v0", groups=groups, guidance=True,
                                max_steps=200)
    env.reset(seed=0)
    env.sim.set_positions(np.array([[-4.0, 3.5]]))
    env.set_goals([(4.0, 3.5)], slots=[0])
    # The goal hides behind the wall: the waypoint is a door jamb corner, the path is longer
    # than the straight line.
    assert abs(env.targets[0, 0]) < 1.0 and abs(env.targets[0, 1]) < 1.0
    assert env.path_lengths[0] > 8.0 + 1.0
    status = None
    while env.agents:
        *_, infos = env.step(env.heuristic_actions())
        status = infos["agent_0"]["status"]
    assert status == "at_goal"


def test_corner_points_cover_convex_corners():
    sim = blocks_sim()
    rm = Roadmap(sim, 2.0)
    # Every block corner (all 16 are convex and walkable) pushed the corner offset (the
    # clearance plus 5 %) out along both of its edges' normals: diagonally away from its block.
    offset = 2.0 * 1.05
    want = {tuple(np.round(p + offset * np.sign(p - b.mean(axis=0)), 6)) for b in BLOCKS
            for p in np.asarray(b, dtype=np.float64)}
    assert len(want) == 16 and rm.vertices.shape == (16, 2)
    assert {tuple(np.round(p, 6)) for p in rm.vertices} == want
