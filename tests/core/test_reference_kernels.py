"""The numba core against the plain-Python float64 port of RVO2 (``rvo2_reference``).

Both sides are float64 and follow the same operations, so one step from the same state must
agree to 1e-9 (differences come only from compiler reassociation / fused multiply-adds).
"""

import numpy as np
import pytest
from rvo2_reference import (
    Obstacles,
    Scene,
    agent_orca_lines,
    build_simulator,
    linear_program2,
    linear_program3,
    random_scene,
    reference_agent,
    reference_step,
)
from rvo2_reference import agent_neighbors as ref_agent_neighbors
from rvo2_reference import obstacle_neighbors as ref_obstacle_neighbors

from orca_env.core import Simulator

ATOL = 1e-9

VARIANTS = {
    "agents": dict(obstacles=False),
    "obstacles": dict(obstacles=True),
    "obstacles+boundary": dict(obstacles=True, boundary=True),
    "dense": dict(obstacles=True, half_width=5.0),
}


def _seg_key(p1, p2):
    return (float(p1[0]), float(p1[1]), float(p2[0]), float(p2[1]))


def _core_to_reference_ids(sim, obs):
    """Core vertex id -> reference vertex id, matching segments by their exact endpoints."""
    ref = {_seg_key(obs.points[v], obs.points[obs.next[v]]): v for v in range(len(obs))}
    pts = np.asarray(sim.obstacle_points)
    nxt = np.asarray(sim.obstacle_next)
    return {v: ref.get(_seg_key(pts[v], pts[nxt[v]]), -1) for v in range(len(pts))}


def _check_neighbour_order(label, i, core_ids, ref_pairs):
    """Same set as brute force, nearest first; ties may come in any order (RVO2: BSP order)."""
    ref_ids = [v for _, v in ref_pairs]
    dist = dict((v, d) for d, v in ref_pairs)
    assert sorted(core_ids) == sorted(ref_ids), (label, i, core_ids, ref_ids)
    d = [dist[v] for v in core_ids]
    assert all(a <= b for a, b in zip(d, d[1:], strict=False)), (label, i, core_ids, d)


def _check_scene(scene, label, line_agents=None):
    """One core step vs the reference, agent by agent.

    Neighbour lists must equal RVO2's brute-force rule as sets and be sorted by distance; the
    reference is then replayed with the core's order, because exact distance ties (an agent
    beyond a convex corner is equally far from both of its segments) are ordered by the
    spatial index in RVO2 (its BSP tree) as in the core, and the order changes the lines.
    """
    sim = build_simulator(scene, Simulator)
    params = scene.params()
    obs = params["obstacles"]
    _, details = reference_step(
        scene.positions, scene.velocities, scene.pref_velocities, return_details=True, **params
    )
    sim.step()
    got = np.asarray(sim.velocities)
    id_map = _core_to_reference_ids(sim, obs) if obs is not None else {}
    per_agent = dict(
        time_step=params["time_step"], radii=params["radius"],
        max_speeds=params["max_speed"], neighbor_dists=params["neighbor_dist"],
        max_neighbors=params["max_neighbors"], time_horizons=params["time_horizon"],
        time_horizons_obst=params["time_horizon_obst"],
        responsibilities=params["responsibility"], obstacles=obs,
    )
    bad = []
    for i in range(scene.n):
        core_agents = [int(j) for j in np.asarray(sim.agent_neighbors(i))]
        _check_neighbour_order(label, i, core_agents, ref_agent_neighbors(
            i, scene.positions, scene.neighbor_dist[i], scene.max_neighbors[i]))
        core_obst = None
        if obs is not None:
            core_obst = [id_map[int(v)] for v in np.asarray(sim.obstacle_neighbors(i))]
            rng = scene.time_horizon_obst[i] * scene.max_speed[i] + scene.radius[i]
            _check_neighbour_order(label, i, core_obst, ref_obstacle_neighbors(
                tuple(scene.positions[i]), rng * rng, obs))
        st = reference_agent(i, scene.positions, scene.velocities, scene.pref_velocities,
                             agent_neighbor_ids=core_agents, obstacle_neighbor_ids=core_obst,
                             **per_agent)
        if st.new_velocity != details[i].new_velocity:
            print(f"{label} agent {i}: neighbour tie order changes the result: brute-force "
                  f"order {details[i].new_velocity}, core order {st.new_velocity}")
        dev = float(np.abs(got[i] - np.asarray(st.new_velocity)).max())
        if dev > ATOL:
            bad.append(
                f"{label} agent {i}: core {got[i]} ref {st.new_velocity} |d|={dev:.3g}; "
                f"lp3 core={bool(sim.used_lp3[i])} ref={st.used_lp3}; "
                f"lines core={int(sim.num_orca_lines[i])} ref={len(st.lines)}"
            )
            continue
        assert bool(sim.used_lp3[i]) == st.used_lp3, (label, i)
        assert int(sim.num_orca_lines[i]) == len(st.lines), (label, i)
        if line_agents is None or i in line_agents:
            lines = np.asarray(sim.orca_lines(i), dtype=np.float64).reshape(-1, 4)
            want = np.array(st.lines, dtype=np.float64).reshape(-1, 4)
            assert lines.shape == want.shape, (label, i, lines, want)
            np.testing.assert_allclose(lines, want, rtol=0, atol=ATOL,
                                       err_msg=f"{label} agent {i}")
    assert not bad, f"{len(bad)}/{scene.n} agents differ:\n" + "\n".join(bad[:5])


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("seed", range(16))
def test_step_matches_reference(variant, seed):
    n = [1, 2, 7, 25, 40, 40, 33, 40][seed % 8]
    scene = random_scene(1000 + seed, n, **VARIANTS[variant])
    _check_scene(scene, f"{variant}/seed{seed}")


@pytest.mark.parametrize("seed", range(4))
def test_step_matches_reference_homogeneous(seed):
    scene = random_scene(2000 + seed, 40, obstacles=seed % 2 == 1, heterogeneous=False,
                         zero_responsibility=seed >= 2, half_width=6.0)
    _check_scene(scene, f"homogeneous/seed{seed}")


def _scene(positions, velocities, prefs, *, radius=0.5, polygons=(), boundaries=(), **kw):
    n = len(positions)
    full = lambda v, dt=float: np.full(n, v, dtype=dt)  # noqa: E731
    return Scene(
        np.array(positions, dtype=float).reshape(n, 2),
        np.array(velocities, dtype=float).reshape(n, 2),
        np.array(prefs, dtype=float).reshape(n, 2),
        full(radius), full(kw.get("max_speed", 2.0)), full(kw.get("neighbor_dist", 15.0)),
        full(kw.get("max_neighbors", 10), np.int64), full(kw.get("time_horizon", 5.0)),
        full(kw.get("time_horizon_obst", 5.0)), full(kw.get("responsibility", 1.0)),
        [list(p) for p in polygons], [list(b) for b in boundaries],
    )


SQUARE = [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)]
L_SHAPE = [(-2.0, -2.0), (2.0, -2.0), (2.0, 0.0), (0.0, 0.0), (0.0, 2.0), (-2.0, 2.0)]

SPECIAL = {
    # Perfectly symmetric head-on pair: det(relativePosition, w) == 0 picks the right leg.
    "head-on": _scene([(-3, 0), (3, 0)], [(1, 0), (-1, 0)], [(1, 0), (-1, 0)]),
    # Overlapping agents: the collision branch (cut-off circle of time time_step).
    "overlap": _scene([(0, 0), (0.6, 0.1)], [(0.5, 0), (-0.5, 0)], [(1, 0), (-1, 0)]),
    # Both responsibilities zero: RVO2's 0.5 each.
    "zero-zero": _scene([(-2, 0.1), (2, 0)], [(1, 0), (-1, 0)], [(1, 0), (-1, 0)],
                        responsibility=0.0),
    # max_neighbors = 0: no agent lines at all.
    "no-neighbours": _scene([(-1, 0), (1, 0)], [(1, 0), (-1, 0)], [(1, 0), (-1, 0)],
                            max_neighbors=0),
    # Agent overlapping an obstacle segment, a convex vertex, and a reflex vertex.
    "on-segment": _scene([(0.0, -1.3)], [(0, 1)], [(0, 1)], polygons=[SQUARE]),
    "on-vertex": _scene([(1.3, 1.3)], [(-1, -1)], [(-1, -1)], polygons=[SQUARE]),
    "reflex-vertex": _scene([(0.3, 0.3)], [(-1, -1)], [(-1, -1)], polygons=[L_SHAPE]),
    "oblique": _scene([(3.0, -1.2), (-4.0, 0.9)], [(-1, 0), (1, 0.1)], [(-2, 0), (2, 0)],
                      polygons=[SQUARE], time_horizon_obst=10.0),
    # Two-vertex obstacle seen from both sides.
    "wall": _scene([(0, -1), (0.2, 1.5)], [(0, 1.5), (0, -1.5)], [(0, 2), (0, -2)],
                   polygons=[[(-2.0, 0.0), (2.0, 0.0)]]),
    # Inside a boundary, pushing into its corner.
    "boundary-corner": _scene([(4.2, 4.3), (3.0, 4.4)], [(1, 1), (1, 0.5)], [(2, 2), (2, 1)],
                              boundaries=[[(-5, -5), (5, -5), (5, 5), (-5, 5)]]),
    # Crowded: LP infeasible, LP3 runs.
    "crowd": _scene([(np.cos(a) * 1.2, np.sin(a) * 1.2) for a in np.linspace(0, 6, 9)] + [(0, 0)],
                    [(0, 0)] * 10, [(np.cos(a), np.sin(a)) for a in np.linspace(0, 6, 10)],
                    radius=0.6),
}


@pytest.mark.parametrize("name", list(SPECIAL))
def test_special_cases_match_reference(name):
    _check_scene(SPECIAL[name], name)


def test_reference_lp_sanity():
    """The oracle's LPs on hand-checked inputs (guards the oracle, not the core)."""
    # One line y >= 1 (direction +x, feasible on its left): closest point to 0 is (0, 1).
    lines = [(0.0, 1.0, 1.0, 0.0)]
    fail, res = linear_program2(lines, 2.0, (0.0, 0.0), False)
    assert fail == 1 and np.allclose(res, (0.0, 1.0))
    # Contradictory lines y >= 1 and y <= -1: LP2 fails, LP3 splits the violation.
    lines = [(0.0, 1.0, 1.0, 0.0), (0.0, -1.0, -1.0, 0.0)]
    fail, res = linear_program2(lines, 2.0, (0.5, 0.0), False)
    assert fail == 1
    res = linear_program3(lines, 0, fail, 2.0, res)
    assert abs(res[1]) < 1e-12
    # Head-on agents: each takes half of the avoidance.
    la = agent_orca_lines((0.0, 0.0), (1.0, 0.0), 0.5, 5.0, 1.0,
                          [((3.0, 0.0), (-1.0, 0.0), 0.5, 1.0)], 0.25)
    lb = agent_orca_lines((3.0, 0.0), (-1.0, 0.0), 0.5, 5.0, 1.0,
                          [((0.0, 0.0), (1.0, 0.0), 0.5, 1.0)], 0.25)
    ua = np.subtract(la[0][:2], (1.0, 0.0))
    ub = np.subtract(lb[0][:2], (-1.0, 0.0))
    assert np.allclose(ua, -ub)
    # Zero share: the agent adds no line.
    assert agent_orca_lines((0.0, 0.0), (1.0, 0.0), 0.5, 5.0, 0.0,
                            [((3.0, 0.0), (-1.0, 0.0), 0.5, 1.0)], 0.25) == []
    # Convex flags: L shape has exactly one reflex vertex.
    obs = Obstacles.from_polygons([L_SHAPE])
    assert obs.convex == [True, True, True, False, True, True]


def test_core_obstacle_storage_matches_rvo2_add_obstacle():
    scene = random_scene(7, 5, obstacles=True, boundary=True)
    sim = build_simulator(scene, Simulator)
    obs = scene.obstacles()
    pts = np.asarray(sim.obstacle_points)
    # Same vertex positions (any order), same convexity, same unit directions per vertex.
    key = {tuple(np.round(p, 9)): v for v, p in enumerate(obs.points)}
    for v in range(len(pts)):
        k = tuple(np.round(pts[v], 9))
        assert k in key, f"core vertex {v} {pts[v]} unknown to the reference"
        r = key[k]
        nxt = tuple(np.round(pts[sim.obstacle_next[v]], 9))
        assert nxt == tuple(np.round(obs.points[obs.next[r]], 9)), v
        assert bool(sim.obstacle_convex[v]) == obs.convex[r], v
        np.testing.assert_allclose(sim.obstacle_unit_dirs[v], obs.unit_dirs[r], atol=1e-12)
