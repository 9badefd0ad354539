import numpy as np
import pytest
from small_configs import SMALL

import orca_env
from orca_env.scenarios import SCENARIOS, SpawnError, make_scenario


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_spawns_never_overlap(name):
    env = orca_env.parallel_env(scenario=name, **SMALL.get(name, {}))
    for seed in range(3):
        env.reset(seed=seed)
        s, g, r = env.starts, env.goals, env.radii
        # Blocks shares one goal point per quadrant, as RVO2's example does.
        for pts in ((s,) if name == "blocks_v0" else (s, g)):
            d = np.linalg.norm(pts[:, None] - pts[None], axis=2)
            np.fill_diagonal(d, np.inf)
            assert (d >= (r[:, None] + r[None]) - 1e-9).all()
        assert env.sim.is_walkable(s, clearance=0.0).all()
        assert env.sim.is_walkable(g, clearance=0.0).all()


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenarios_are_seeded(name):
    a = orca_env.parallel_env(scenario=name, **SMALL.get(name, {}))
    b = orca_env.parallel_env(scenario=name, **SMALL.get(name, {}))
    a.reset(seed=4)
    b.reset(seed=4)
    assert np.array_equal(a.starts, b.starts) and np.array_equal(a.goals, b.goals)


def test_circle_is_rvo2_layout():
    env = orca_env.parallel_env(scenario="circle_v0")
    env.reset(seed=0)
    i = np.arange(250)
    pos = 200.0 * np.stack([np.cos(i * 2 * np.pi / 250), np.sin(i * 2 * np.pi / 250)], 1)
    assert np.allclose(env.starts, pos) and np.allclose(env.goals, -pos)
    assert env.sim.radii[0] == 1.5 and env.sim.max_speeds[0] == 2.0
    assert env.time_step == 0.25


def test_blocks_is_rvo2_layout():
    env = orca_env.parallel_env(scenario="blocks_v0")
    env.reset(seed=0)
    assert env.starts.shape == (100, 2)
    assert tuple(env.starts[0]) == (55.0, 55.0) and tuple(env.goals[0]) == (-75.0, -75.0)
    assert tuple(env.starts[-1]) == (-95.0, -95.0) and tuple(env.goals[-1]) == (75.0, 75.0)
    assert env.sim.obstacle_points.shape[0] == 16
    assert np.all(env.goal_tolerances == 20.0)
    with pytest.raises(ValueError, match="100 agent slots"):
        orca_env.parallel_env(scenario="blocks_v0",
                              groups=[{"population": "learned", "count": 101}]).reset(seed=0)


def test_spawn_gives_up_with_clear_error():
    env = orca_env.parallel_env(scenario="crowdnav_circle_v0",
                                groups=[{"population": "learned", "count": 80}])
    with pytest.raises(SpawnError, match="could not place agent"):
        env.reset(seed=0)
    env = orca_env.parallel_env(scenario="random_obstacles_v0",
                                scenario_kwargs={"num_obstacles": 40})
    with pytest.raises(SpawnError, match="obstacles"):
        env.reset(seed=0)


def test_make_scenario_strict():
    with pytest.raises(ValueError, match="valid keys"):
        make_scenario("corridor_v0", lenght=3.0)
    assert make_scenario("corridor_v0", length=30).length == 30.0


def test_corridor_v1_has_halls_and_no_way_around():
    # corridor_v1: the corridor and its two end halls are the whole walkable region, so the
    # outside of the walls (walkable in v0) is not; starts and goals are v0's draws.
    env = orca_env.parallel_env("corridor")
    assert env.config.scenario == "corridor_v1"
    env.reset(seed=3)
    walk = env.sim.is_walkable
    outside = np.array([[0.0, 3.0], [0.0, -3.0], [5.0, 4.0]])   # beside the walls
    halls = np.array([[-11.0, 3.0], [11.0, -3.0], [-11.5, 0.0]])  # in the end halls
    assert not walk(outside, clearance=0.0).any() and walk(halls, clearance=0.0).all()
    v0 = orca_env.parallel_env("corridor", scenario="corridor_v0")
    v0.reset(seed=3)
    assert v0.sim.is_walkable(outside, clearance=0.0).all()
    assert np.array_equal(env.starts, v0.starts) and np.array_equal(env.goals, v0.goals)
    # Agents that push for the outside (no safety layer, sideways at full speed) stay inside.
    env = orca_env.parallel_env("corridor", groups=[
        {"population": "learned", "count": 2, "safety_layer": False},
        {"population": "orca", "count": 10, "on_goal": "new_goal"}])
    env.reset(seed=1)
    for _ in range(80):
        if not env.agents:
            break
        env.step({a: np.array([0.0, 1.0], np.float32) for a in env.agents})
        p = env.sim.positions
        assert (np.abs(p[:, 1]) <= 3.5 + 1e-6).all() and (np.abs(p[:, 0]) <= 12.0 + 1e-6).all()
        in_corridor = np.abs(p[:, 0]) < 10.0
        assert (np.abs(p[in_corridor, 1]) <= 1.5 + 1e-6).all()


def test_intersection_v1_closes_the_arms():
    # intersection_v1: the plus shape of the two corridors, closed 1 m past the blocks, is the
    # whole walkable region; in v0 the world round the blocks was walkable. Same starts and goals.
    env = orca_env.parallel_env("intersection", scenario="intersection_v1")
    env.reset(seed=3)
    walk = env.sim.is_walkable
    outside = np.array([[5.0, 10.5], [-10.5, 5.0], [0.0, 11.5], [11.5, 0.0], [-6.0, -10.5]])
    arms = np.array([[0.0, 10.7], [10.7, 1.0], [-10.7, -1.0], [0.0, -10.7], [0.0, 0.0]])
    assert not walk(outside, clearance=0.0).any() and walk(arms, clearance=0.0).all()
    assert not walk(np.array([[5.0, 5.0]]), clearance=0.0).any()  # a block
    v0 = orca_env.parallel_env("intersection", scenario="intersection_v0")
    v0.reset(seed=3)
    assert v0.sim.is_walkable(outside, clearance=0.0).all()
    assert np.array_equal(env.starts, v0.starts) and np.array_equal(env.goals, v0.goals)
    # Learned agents pushing out of their arm's end (no safety layer, full speed) stay inside.
    env = orca_env.parallel_env("intersection", scenario="intersection_v1", groups=[
        {"population": "learned", "count": 4, "safety_layer": False},
        {"population": "orca", "count": 12}])
    env.reset(seed=1)
    for _ in range(40):
        if not env.agents:
            break
        env.step({a: np.array([-1.0, 0.0], np.float32) for a in env.agents})  # away from goal
        p = env.sim.positions
        assert (np.abs(p) <= 11.0 + 1e-6).all() and (np.abs(p).min(axis=1) <= 2.0 + 1e-6).all()
    with pytest.raises(ValueError, match=r"'end_room' of intersection_v1 must be positive"):
        make_scenario("intersection_v1", end_room=0.0)


@pytest.mark.parametrize("value", [-1.0, 0.0])
def test_a_positive_parameter_says_so_for_zero_and_negatives(value):
    with pytest.raises(ValueError, match=rf"'hall' of corridor_v1 must be positive, got {value}"):
        make_scenario("corridor_v1", hall=value)
    # A parameter that may be 0 (the circle's start jitter) is refused below it only.
    assert make_scenario("circle_v0", jitter=0.0).jitter == 0.0
    with pytest.raises(ValueError, match=r"'jitter' of circle_v0 must be >= 0, got -1.0"):
        make_scenario("circle_v0", jitter=-1.0)


def test_any_overlap_matches_the_distance_matrix():
    from orca_env.scenarios.base import any_overlap

    rng = np.random.default_rng(3)
    seen = set()
    for n in (2, 7, 60, 300):
        for _ in range(50):
            p = rng.uniform(0.0, np.sqrt(n), (n, 2))
            r = rng.uniform(0.1, 0.4, n)
            d = np.linalg.norm(p[:, None] - p[None], axis=2)
            np.fill_diagonal(d, np.inf)
            want = not np.all(d >= r[:, None] + r[None])
            assert any_overlap(p, r) == want
            seen.add(want)
    assert seen == {True, False}  # both outcomes were exercised


def test_any_overlap_all_pairs_decides_as_the_sweep(monkeypatch):
    # Small layouts measure every pair at once (faster at a reset); the sort-and-sweep of
    # larger ones must give the same answer, also for discs that touch to the last bit.
    import orca_env.scenarios.base as base

    rng = np.random.default_rng(5)
    cases = []
    for n in (2, 3, 16, 64):
        for _ in range(200):
            p = rng.uniform(0.0, np.sqrt(n), (n, 2))
            r = rng.uniform(0.1, 0.4, n)
            i, j = rng.choice(n, 2, replace=False)
            ang = rng.uniform(0.0, 2.0 * np.pi)
            gap = (r[i] + r[j]) * (1.0 + rng.choice([-1e-15, 0.0, 1e-15]))
            p[j] = p[i] + gap * np.array([np.cos(ang), np.sin(ang)])
            cases.append((p, r))
    fast = [base.any_overlap(p, r) for p, r in cases]
    monkeypatch.setattr(base, "_ALL_PAIRS", 0)
    sweep = [base.any_overlap(p, r) for p, r in cases]
    assert fast == sweep
    assert set(fast) == {True, False}


def test_a_large_jittered_circle_places_in_linear_memory():
    # 20,000 agents: a distance matrix would need 6 GiB (issue 27, item 5).
    env = orca_env.parallel_env("circle_dense", scenario_kwargs={"circle_radius": 4000.0},
                                groups=[{"population": "learned", "count": 20000,
                                         "radius": 0.3, "max_speed": 1.0}])
    env.reset(seed=0)
    assert env.starts.shape == (20000, 2)
