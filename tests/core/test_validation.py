"""Every bad input gets a ValueError naming the argument and value; the simulator is unchanged."""

import copy
import pickle
import warnings

import numpy as np
import pytest

from orca_env.core import Simulator

SQUARE = [(0.0, 0.0), (2.0, 0.0), (2.0, 2.0), (0.0, 2.0)]


def make_sim():
    sim = Simulator(time_step=0.25, neighbor_dist=10.0, max_neighbors=5, time_horizon=5.0,
                    time_horizon_obst=5.0, radius=0.5, max_speed=1.5)
    sim.add_obstacle(SQUARE)
    sim.add_agents([(-3.0, 0.0), (5.0, 1.0), (5.0, 3.0)], velocities=[(1, 0), (0, 0), (0, -1)])
    sim.set_pref_velocities([(1.0, 0.0), (-1.0, 0.0), (0.0, -1.0)])
    sim.step()
    return sim


def snapshot(sim):
    """Everything observable about the simulator, for before/after comparisons."""
    names = ["positions", "velocities", "pref_velocities", "radii", "max_speeds",
             "neighbor_dists", "max_neighbors_arr", "time_horizons", "time_horizons_obst",
             "responsibilities", "active", "obstacle_points", "obstacle_next", "obstacle_convex"]
    state = {name: np.array(getattr(sim, name)) for name in names}
    state["scalars"] = (sim.num_agents, sim.global_time, sim.time_step)
    return state


def assert_same(a, b):
    assert a.keys() == b.keys()
    for key in a:
        if isinstance(a[key], np.ndarray):
            np.testing.assert_array_equal(a[key], b[key], err_msg=key)
        else:
            assert a[key] == b[key], key


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"time_step": 0.0}, r"time_step must be > 0 and <= 1e\+06, got 0\.0"),
        ({"time_step": -1.0}, r"time_step must be > 0 and <= 1e\+06, got -1\.0"),
        ({"time_step": float("nan")}, r"time_step must be finite, got nan"),
        ({"radius": 0.0}, r"radius must be > 0 and <= 1e\+06, got 0\.0"),
        ({"max_speed": -0.1}, r"max_speed must be >= 0 and <= 1e\+06, got -0\.1"),
        ({"time_horizon": 0.0}, r"time_horizon must be > 0 and <= 1e\+06, got 0\.0"),
        ({"time_horizon_obst": -2.0}, r"time_horizon_obst must be > 0 and <= 1e\+06, got -2\.0"),
        ({"max_neighbors": -1}, r"max_neighbors must be an integer >= 0 and <= 10000, got -1"),
        ({"max_neighbors": 2.5}, r"max_neighbors must be an integer, got 2\.5"),
        ({"neighbor_dist": -1.0}, r"neighbor_dist must be >= 0 and <= 1e\+06, got -1\.0"),
        ({"responsibility": -0.5}, r"responsibility must be >= 0 and <= 1e\+06, got -0\.5"),
        ({"radius": float("inf")}, r"radius must be finite, got inf"),
        ({"radius": "big"}, r"radius must be a real number, got 'big'"),
        ({"num_threads": 0}, r"num_threads must be between 1 and"),
    ],
)
def test_constructor_rejects(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Simulator(**kwargs)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"position": (np.nan, 0.0)}, r"position must be finite, got \[nan, 0\.0\]"),
        ({"position": (0.0, np.inf)}, r"position must be finite"),
        ({"position": (1.0, 2.0, 3.0)}, r"position must have shape \(k, 2\), got shape \(1, 3\)"),
        ({"position": (0, 0), "velocity": (np.nan, 1)}, r"velocity must be finite"),
        ({"position": (0, 0), "radius": 0.0}, r"radius must be > 0 and <= 1e\+06, got 0\.0"),
        ({"position": (0, 0), "radius": -1.0}, r"radius must be > 0 and <= 1e\+06, got -1\.0"),
        ({"position": (0, 0), "max_speed": -1.0},
         r"max_speed must be >= 0 and <= 1e\+06, got -1\.0"),
        ({"position": (0, 0), "time_horizon": 0.0}, r"time_horizon must be > 0"),
        ({"position": (0, 0), "time_horizon_obst": 0.0}, r"time_horizon_obst must be > 0"),
        ({"position": (0, 0), "max_neighbors": -3}, r"max_neighbors must be an integer >= 0"),
        ({"position": (0, 0), "neighbor_dist": -1.0}, r"neighbor_dist must be >= 0"),
        ({"position": (0, 0), "responsibility": -1.0},
         r"responsibility must be >= 0 and <= 1e\+06, got -1\.0"),
        ({"position": (0, 0), "responsibility": np.nan}, r"responsibility must be finite"),
        ({"position": (0, 0), "radius": [1.0, 2.0]}, r"radius must be a scalar"),
    ],
)
def test_add_agent_rejects_and_keeps_state(kwargs, match):
    sim = make_sim()
    before = snapshot(sim)
    with pytest.raises(ValueError, match=match):
        sim.add_agent(**kwargs)
    assert_same(before, snapshot(sim))


def test_add_agents_rejects_bad_arrays():
    sim = make_sim()
    before = snapshot(sim)
    with pytest.raises(ValueError,
                       match=r"velocities must have shape \(2, 2\), got shape \(3, 2\)"):
        sim.add_agents(np.zeros((2, 2)), velocities=np.zeros((3, 2)))
    with pytest.raises(ValueError, match=r"radius must be a scalar or have shape \(2,\)"):
        sim.add_agents(np.zeros((2, 2)), radius=np.ones(3))
    with pytest.raises(ValueError, match=r"radius must be > 0 and <= 1e\+06, got -1\.0"):
        sim.add_agents(np.zeros((2, 2)), radius=np.array([1.0, -1.0]))
    with pytest.raises(ValueError, match=r"unknown agent parameter\(s\) \['raduis'\]"):
        sim.add_agents(np.zeros((2, 2)), raduis=1.0)
    assert_same(before, snapshot(sim))


@pytest.mark.parametrize(
    "method, value, match",
    [
        ("set_pref_velocities", np.zeros((2, 2)), r"pref_velocities must have shape \(3, 2\)"),
        ("set_pref_velocities", [[0, 0], [np.nan, 0], [0, 0]],
         r"pref_velocities must be finite, got \[nan, 0\.0\] at row 1"),
        ("set_positions", np.zeros((3, 3)), r"positions must have shape \(3, 2\)"),
        ("set_positions", [[0, 0], [0, 0], [np.inf, 0]], r"positions must be finite"),
        ("set_velocities", np.zeros(6), r"velocities must have shape \(3, 2\)"),
        ("set_velocities", "fast", r"velocities must be an array of \(x, y\) pairs"),
    ],
)
def test_setters_reject_and_keep_state(method, value, match):
    sim = make_sim()
    before = snapshot(sim)
    with pytest.raises(ValueError, match=match):
        getattr(sim, method)(value)
    assert_same(before, snapshot(sim))


def test_agent_ids_and_params_validated():
    sim = make_sim()
    before = snapshot(sim)
    with pytest.raises(ValueError, match=r"ids contains 7, not an agent id \(0\.\.2\)"):
        sim.deactivate_agents([0, 7])
    with pytest.raises(ValueError, match=r"ids contains -1"):
        sim.activate_agents(-1)
    with pytest.raises(ValueError, match=r"max_speed must be >= 0 and <= 1e\+06, got -2\.0"):
        sim.set_agent_params([0, 1], max_speed=[1.0, -2.0])
    with pytest.raises(ValueError, match=r"unknown agent parameter"):
        sim.set_agent_params(0, speed=1.0)
    with pytest.raises(ValueError, match=r"agent id must be an integer in 0\.\.2, got 3"):
        sim.orca_lines(3)
    with pytest.raises(ValueError, match=r"time_step must be > 0 and <= 1e\+06, got 0"):
        sim.time_step = 0
    assert_same(before, snapshot(sim))


@pytest.mark.parametrize(
    "vertices, match",
    [
        ([(0, 0)], r"vertices needs at least 2 distinct vertices"),
        ([(1, 1), (1, 1), (1, 1)], r"vertices needs at least 2 distinct vertices"),
        ([(0, 0), (np.nan, 1), (1, 1)], r"vertices must be finite"),
        ([(0, 0), (1, 1), (2, 2)], r"vertices has zero area"),
        ([(0, 0), (2, 2), (2, 0), (0, 2)], r"vertices is self-intersecting"),
        ([(0, 0, 0), (1, 1, 1)], r"vertices must have shape \(k, 2\)"),
        ([(0, 0), (0, 2), (2, 2), (2, 0)], r"vertices are clockwise.*add_boundary"),
    ],
)
def test_add_obstacle_rejects_and_keeps_state(vertices, match):
    sim = make_sim()
    before = snapshot(sim)
    with pytest.raises(ValueError, match=match):
        sim.add_obstacle(vertices)
    assert_same(before, snapshot(sim))
    sim.step()  # still steps fine


def test_boundary_rejects():
    sim = make_sim()
    before = snapshot(sim)
    with pytest.raises(ValueError, match=r"boundary vertices are clockwise"):
        sim.add_boundary([(-10, -10), (-10, 10), (10, 10), (10, -10)])
    with pytest.raises(ValueError, match=r"a boundary needs at least 3 distinct vertices"):
        sim.add_boundary([(-10, -10), (10, 10)])
    assert_same(before, snapshot(sim))
    sim.add_boundary([(-10, -10), (10, -10), (10, 10), (-10, 10)])
    with pytest.raises(ValueError, match=r"a boundary is already set"):
        sim.add_boundary([(-20, -20), (20, -20), (20, 20), (-20, 20)])


def test_duplicate_vertices_dropped_with_warning():
    sim = Simulator()
    with pytest.warns(UserWarning, match=r"dropped 2 repeated consecutive vertex"):
        sim.add_obstacle([(0, 0), (0, 0), (2, 0), (2, 2), (0, 2), (0, 0)])
    assert sim.num_obstacle_vertices == 4
    assert np.all(np.isfinite(sim.obstacle_unit_dirs))


def test_obstacle_added_after_processing_is_used():
    """RVO2 silently ignores obstacles added after processObstacles; here the index is rebuilt."""
    sim = Simulator(time_step=0.25, radius=0.5, max_speed=1.0, time_horizon_obst=2.0)
    sim.add_agent((0.0, 0.0))
    sim.process_obstacles()
    sim.add_obstacle([(1.0, -1.0), (2.0, -1.0), (2.0, 1.0), (1.0, 1.0)])
    sim.set_pref_velocities([(1.0, 0.0)])
    for _ in range(20):
        sim.step()
    assert sim.positions[0, 0] < 1.0 - 0.5 + 1e-6
    assert sim.obstacle_neighbors(0).size > 0


def test_identical_positions_no_nan():
    sim = Simulator(radius=0.5, max_speed=1.0)
    sim.add_agents([(1.0, 1.0), (1.0, 1.0), (1.0, 1.0)])
    for _ in range(10):
        sim.step()
        assert np.all(np.isfinite(sim.positions)) and np.all(np.isfinite(sim.velocities))
    d = np.linalg.norm(sim.positions[:, None] - sim.positions[None], axis=2)
    assert d[np.triu_indices(3, 1)].min() > 0.1


def test_zero_max_speed_stands_still():
    sim = Simulator(radius=0.5, max_speed=1.0)
    sim.add_agent((0.0, 0.0), max_speed=0.0)
    sim.add_agent((3.0, 0.0))
    sim.set_pref_velocities([(1.0, 0.0), (-1.0, 0.0)])
    for _ in range(40):
        sim.step()
        assert np.all(np.isfinite(sim.velocities))
    np.testing.assert_array_equal(sim.positions[0], [0.0, 0.0])
    assert np.linalg.norm(sim.positions[1] - sim.positions[0]) >= 1.0 - 1e-6


def test_pickle_and_deepcopy_continue_bit_identically():
    sim = make_sim()
    for _ in range(3):
        sim.step()
    clones = [pickle.loads(pickle.dumps(sim)), copy.deepcopy(sim)]
    for _ in range(10):
        for s in (sim, *clones):
            s.set_pref_velocities(-s.positions / 10.0)
            s.step()
    for c in clones:
        assert_same(snapshot(sim), snapshot(c))
        np.testing.assert_array_equal(sim.orca_lines(0), c.orca_lines(0))


def test_read_only_views():
    sim = make_sim()
    with pytest.raises(ValueError):
        sim.positions[0, 0] = 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert sim.positions.dtype == np.float64 and sim.positions.shape == (3, 2)


def test_new_like_is_a_fresh_simulator_with_the_same_arguments():
    """new_like() skips validating the constructor's arguments again, and steps the same."""
    a = Simulator(time_step=0.2, neighbor_dist=7.0, max_neighbors=4, time_horizon=3.0,
                  time_horizon_obst=2.0, radius=0.4, max_speed=1.2, responsibility=0.7,
                  layer=3, avoid_mask=5, num_threads=1)
    a.add_obstacle(SQUARE)
    a.add_agents([(-3.0, 0.0), (5.0, 1.0)])
    b = a.new_like()
    assert b.num_agents == 0 and b.num_obstacle_vertices == 0 and b.global_time == 0.0
    assert b.time_step == a.time_step
    ref = Simulator(time_step=0.2, neighbor_dist=7.0, max_neighbors=4, time_horizon=3.0,
                    time_horizon_obst=2.0, radius=0.4, max_speed=1.2, responsibility=0.7,
                    layer=3, avoid_mask=5, num_threads=1)
    for sim in (b, ref):
        sim.add_obstacle(SQUARE)
        sim.add_agents([(-3.0, 0.0), (5.0, 1.0), (5.0, 3.0)])
        sim.set_pref_velocities([(1.0, 0.0), (-1.0, 0.0), (0.0, -1.0)])
        for _ in range(5):
            sim.step()
    for name, x in snapshot(ref).items():
        np.testing.assert_array_equal(snapshot(b)[name], x, err_msg=name)
    assert a.num_agents == 2 and a.num_obstacle_vertices == 4  # the original is untouched


def test_add_agents_validated_takes_check_agent_params_arrays():
    sim = make_sim()
    params = sim.check_agent_params(2, neighbor_dist=[3.0, 4.0], max_neighbors=2)
    assert set(params) == {"radius", "max_speed", "neighbor_dist", "max_neighbors",
                           "time_horizon", "time_horizon_obst", "responsibility", "layer",
                           "avoid_mask"}
    np.testing.assert_array_equal(params["radius"], [0.5, 0.5])  # the simulator's default
    ref = make_sim()
    fixed = {k: v for k, v in params.items() if k != "radius"}
    sim.add_agents([(8.0, 0.0), (9.0, 0.0)], radius=[0.3, 0.2], validated=fixed)
    ref.add_agents([(8.0, 0.0), (9.0, 0.0)], radius=[0.3, 0.2], neighbor_dist=[3.0, 4.0],
                   max_neighbors=2)
    for name, x in snapshot(ref).items():
        np.testing.assert_array_equal(snapshot(sim)[name], x, err_msg=name)
    # The keywords are still validated, with the usual message; nothing is added.
    before = snapshot(sim)
    with pytest.raises(ValueError, match=r"^radius must be > 0"):
        sim.add_agents([(8.0, 0.0), (9.0, 0.0)], radius=[-1.0, 0.2], validated=fixed)
    with pytest.raises(ValueError, match="given both as keywords and in validated"):
        sim.add_agents([(8.0, 0.0), (9.0, 0.0)], neighbor_dist=1.0, validated=fixed)
    with pytest.raises(ValueError, match=r"check_agent_params\(3\)"):
        sim.add_agents([(8.0, 0.0), (9.0, 0.0), (7.0, 0.0)], validated=fixed)
    with pytest.raises(ValueError, match=r"^unknown agent parameter"):
        sim.check_agent_params(2, colour=1)
    with pytest.raises(ValueError, match=r"^max_neighbors must be an integer"):
        sim.check_agent_params(2, max_neighbors=1.5)
    for name, x in before.items():
        np.testing.assert_array_equal(snapshot(sim)[name], x, err_msg=name)


def test_storage_then_bind_without_copy_steps_as_unbound():
    """storage() gives the state bind_storage takes; copy=False binds the copies as they are."""
    sim, ref = make_sim(), make_sim()
    state = sim.storage()
    assert set(state) == set(Simulator.STORAGE_FIELDS)
    arrays = {name: np.array(a) for name, a in state.items()}
    sim.bind_storage(copy=False, **arrays)
    assert np.shares_memory(sim.positions, arrays["pos"])
    for _ in range(4):
        sim.step()
        ref.step()
    for name, x in snapshot(ref).items():
        np.testing.assert_array_equal(snapshot(sim)[name], x, err_msg=name)
    np.testing.assert_array_equal(arrays["pos"], ref.positions)  # the steps wrote the arrays
    assert arrays["clock"][0] == ref.global_time
