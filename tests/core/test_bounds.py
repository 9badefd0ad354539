"""Numeric bounds, real-number inputs and polygon checks far from the origin (the core)."""

import numpy as np
import pytest

from orca_env.core import Simulator

SQUARE = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])  # counter-clockwise


def state(sim):
    return (sim.num_agents, sim.positions.copy(), sim.velocities.copy(),
            sim.num_obstacle_vertices)


@pytest.mark.parametrize("kwargs,match", [
    ({"radius": 1e200}, r"radius must be > 0 and <= 1e\+06, got 1e\+200"),
    ({"time_step": 10**400}, r"time_step must be a finite number"),
    ({"max_neighbors": 10**400}, r"max_neighbors must be a finite number"),
    ({"max_neighbors": 10**12}, r"max_neighbors must be an integer >= 0 and <= 10000"),
    ({"time_step": 1e9}, r"time_step must be > 0 and <= 1e\+06"),
    ({"max_speed": 1e300}, r"max_speed must be >= 0 and <= 1e\+06"),
    ({"neighbor_dist": 1e300}, r"neighbor_dist must be >= 0 and <= 1e\+06"),
    ({"time_horizon": 1e300}, r"time_horizon must be > 0 and <= 1e\+06"),
    ({"responsibility": 1e300}, r"responsibility must be >= 0 and <= 1e\+06"),
    ({"num_threads": 10**400}, r"num_threads must be a finite number"),
])
def test_constructor_bounds(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Simulator(**kwargs)


def test_error_message_of_a_huge_integer_is_short():
    with pytest.raises(ValueError) as err:
        Simulator(time_step=10**400)
    assert len(str(err.value)) < 120


def test_query_sizes_are_bounded_and_nothing_changes():
    sim = Simulator()
    sim.add_agents(np.arange(6.0).reshape(3, 2) * 5.0)
    before = state(sim)
    with pytest.raises(ValueError, match=r"k must be >= 0 and <= 10000, got 10000000000"):
        sim.query_agent_neighbors(10**10, 5.0)
    with pytest.raises(ValueError, match=r"max_count must be >= 0 and <= 10000"):
        sim.query_obstacle_neighbors(np.zeros((1, 2)), 1.0, 10**12)
    with pytest.raises(ValueError, match=r"clearance must be >= 0 and <= 1e\+06"):
        sim.is_walkable(np.zeros((1, 2)), clearance=1e300)
    with pytest.raises(ValueError, match=r"radius must be >= 0 and <= 1e\+06"):
        sim.query_visibility((0, 0), (1, 1), radius=1e300)
    with pytest.raises(ValueError, match=r"radius must be > 0 and <= 1e\+06"):
        sim.add_agents(np.zeros((1, 2)), radius=1e200)
    after = state(sim)
    assert before[0] == after[0] and np.array_equal(before[1], after[1])


@pytest.mark.parametrize("bad", [[["1", "2"]], [[True, False]], np.array([[1 + 1j, 0.0]]),
                                 [[1e300, 0.0]], [[0.0, -2e9]]])
def test_positions_must_be_real_and_bounded(bad):
    sim = Simulator()
    sim.add_agents(np.zeros((1, 2)))
    before = state(sim)
    with pytest.raises(ValueError, match="positions must"):
        sim.add_agents(bad)
    with pytest.raises(ValueError, match="positions must"):
        sim.set_positions(bad)
    triangle = list(bad) + [[0, 1], [1, 1]]  # the bad vertex first
    with pytest.raises(ValueError, match="vertices must"):
        sim.add_obstacle(np.asarray(triangle, dtype=np.asarray(bad).dtype))
    after = state(sim)
    assert before[0] == after[0] and np.array_equal(before[1], after[1]) and after[3] == 0


@pytest.mark.parametrize("offset", [(0.0, 0.0), (1e8, 1e8), (-7e8, 3e8), (5e5, 5e6)])
@pytest.mark.parametrize("size", [1.0, 0.01])
def test_orientation_and_area_far_from_the_origin(offset, size):
    ccw = SQUARE * size + np.asarray(offset)
    Simulator().add_obstacle(ccw)  # counter-clockwise: accepted
    with pytest.raises(ValueError, match="clockwise"):
        Simulator().add_obstacle(ccw[::-1])  # its clockwise twin: refused
    Simulator().add_boundary(ccw * 1.0)  # a boundary outline counter-clockwise: accepted


def test_coordinates_near_float_max_are_refused():
    with pytest.raises(ValueError, match=r"vertices must lie within \+-1e\+09 m"):
        Simulator().add_obstacle([[1e308, 0.0], [1e308, 1.0], [0.0, 1.0]])
    with pytest.raises(ValueError, match=r"vertices must lie within"):
        Simulator().add_obstacle(SQUARE + 1e10)
