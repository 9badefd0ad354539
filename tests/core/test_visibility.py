"""Visibility in the core: per-agent ``layer`` and ``avoid_mask`` bit fields (who avoids whom).

Agent i builds an ORCA line for j, and counts j among its neighbours, only if
``avoid_mask[i] & layer[j] != 0``; its share of the pair's avoidance does not change. The
defaults (layer 1, avoid_mask -1) are RVO2, which the differential tests check against pyrvo.
"""

import copy
import pickle

import numpy as np
import pytest

from orca_env.core import Simulator


def crowd(n=24, seed=0, **kw):
    rng = np.random.default_rng(seed)
    sim = Simulator(time_step=0.25, neighbor_dist=5.0, max_neighbors=5, time_horizon=3.0,
                    time_horizon_obst=2.0, radius=0.3, max_speed=1.2, **kw)
    sim.add_obstacle([(-0.5, -0.5), (0.5, -0.5), (0.5, 0.5), (-0.5, 0.5)])
    ang = np.linspace(0, 2 * np.pi, n, endpoint=False)
    p = np.c_[np.cos(ang), np.sin(ang)] * 4 + rng.normal(0, 0.05, (n, 2))
    return sim, p, -p


def run(sim, goals, steps):
    for _ in range(steps):
        to_goal = goals - sim.positions
        sim.set_pref_velocities(
            to_goal / np.maximum(np.linalg.norm(to_goal, axis=1, keepdims=True), 1.0))
        sim.step()


def state(sim):
    return (sim.positions.copy(), sim.velocities.copy(), sim.num_orca_lines.copy(),
            sim.used_lp3.copy(), sim.intervention.copy())


def assert_same(a, b):
    for x, y in zip(state(a), state(b), strict=True):
        assert np.array_equal(x, y)


def test_defaults():
    sim = Simulator()
    sim.add_agents([(0, 0), (5, 0)])
    assert sim.layers.tolist() == [1, 1]
    assert sim.avoid_masks.tolist() == [-1, -1]
    assert sim.layers.dtype == np.int64 and sim.avoid_masks.dtype == np.int64
    with pytest.raises(ValueError):
        sim.layers[0] = 2  # read-only


def test_explicit_defaults_and_equivalent_masks_are_bit_identical():
    ref, p, goals = crowd()
    ref.add_agents(p)
    run(ref, goals, 40)
    variants = []
    sim, _, _ = crowd(layer=1, avoid_mask=-1)  # explicit constructor defaults
    sim.add_agents(p)
    variants.append(sim)
    sim, _, _ = crowd()  # explicit per-agent values
    sim.add_agents(p, layer=np.ones(len(p), dtype=np.int64), avoid_mask=-1)
    variants.append(sim)
    sim, _, _ = crowd()  # other bits, still everyone avoids everyone
    sim.add_agents(p, layer=0b100, avoid_mask=0b101)
    variants.append(sim)
    for sim in variants:
        run(sim, goals, 40)
        assert_same(sim, ref)
    assert ref.num_orca_lines.max() > 1  # agents did constrain each other


def head_on(layer_a=1, avoid_b=-1, resp_b=1.0):
    """A at the origin heading +x, B 3 m ahead heading -x (slightly offset)."""
    sim = Simulator(time_step=0.25, neighbor_dist=10.0, max_neighbors=10, time_horizon=5.0,
                    radius=0.5, max_speed=1.0)
    a = sim.add_agent((0.0, 0.0), velocity=(1.0, 0.0), layer=layer_a)
    b = sim.add_agent((3.0, 0.1), velocity=(-1.0, 0.0), avoid_mask=avoid_b,
                      responsibility=resp_b)
    sim.set_pref_velocities([(1.0, 0.0), (-1.0, 0.0)])
    sim.step()
    return sim, a, b


def test_invisible_agent_gets_no_line_but_avoids_with_its_usual_share():
    # A in layer 2; B avoids layer 1 only: B ignores A, A still avoids B.
    sim, a, b = head_on(layer_a=2, avoid_b=1)
    assert sim.num_orca_lines[b] == 0
    assert sim.orca_lines(b).shape == (0, 4)
    assert sim.agent_neighbors(b).size == 0
    assert np.array_equal(sim.velocities[b], [-1.0, 0.0])  # B goes straight on
    assert sim.num_orca_lines[a] == 1
    # A's line and velocity: those of mutual avoidance (share 0.5), not those it would get if B
    # were non-reactive (share 1), which the others' blindness must not turn it into.
    mutual, _, _ = head_on()
    nonreactive, _, _ = head_on(resp_b=0.0)
    assert np.array_equal(sim.orca_lines(a), mutual.orca_lines(a))
    assert np.array_equal(sim.velocities[a], mutual.velocities[a])
    assert not np.allclose(sim.orca_lines(a), nonreactive.orca_lines(a))
    assert not np.allclose(sim.velocities[a], nonreactive.velocities[a])
    # And B did react in the mutual run (the check above could fail).
    assert not np.array_equal(mutual.velocities[b], [-1.0, 0.0])


def test_invisible_agents_among_a_crowd():
    # Agent 0 in layer 2, everyone else avoids layer 1 only: nobody builds a line for agent 0.
    sim, p, goals = crowd()
    sim.add_agents(p, avoid_mask=1)
    sim.set_agent_params(0, layer=2)
    run(sim, goals, 30)
    for i in range(1, sim.num_agents):
        assert 0 not in sim.agent_neighbors(i)
    assert sim.agent_neighbors(0).size > 0  # but agent 0 sees them
    # The observation query is not filtered by the masks.
    ids, _ = sim.query_agent_neighbors(sim.num_agents - 1, 100.0)
    assert all(0 in row for row in ids[1:])


def test_unavoided_agents_take_no_neighbour_slot():
    def sim_with(layer_near):
        sim = Simulator(neighbor_dist=10.0, max_neighbors=1, radius=0.3, max_speed=1.0)
        q = sim.add_agent((0.0, 0.0), avoid_mask=1)
        near = sim.add_agent((1.0, 0.0), layer=layer_near)
        far = sim.add_agent((0.0, 2.0))
        sim.set_pref_velocities([(0.0, 1.0), (0.0, 0.0), (0.0, 0.0)])
        sim.step()
        return sim, q, near, far

    sim, q, near, far = sim_with(layer_near=1)
    assert sim.agent_neighbors(q).tolist() == [near]  # the nearest one takes the only slot
    sim, q, near, far = sim_with(layer_near=2)
    assert sim.agent_neighbors(q).tolist() == [far]  # invisible: the visible one is avoided
    assert sim.num_orca_lines[q] == 1


def test_layer_zero_and_mask_zero():
    sim = Simulator(neighbor_dist=10.0, radius=0.3)
    sim.add_agents([(0, 0), (1, 0), (0, 1)], layer=[0, 1, 1], avoid_mask=[-1, -1, 0])
    sim.step()
    assert 0 not in sim.agent_neighbors(1)  # layer 0: in no layer, nobody avoids it
    assert sim.agent_neighbors(2).size == 0  # mask 0: avoids nobody
    assert sim.num_orca_lines[2] == 0
    assert sorted(sim.agent_neighbors(0).tolist()) == [1, 2]


def test_extreme_bit_patterns_accepted():
    lo, hi = -(2**63), 2**63 - 1
    sim = Simulator(layer=hi, avoid_mask=lo)
    sim.add_agents([(0, 0), (1, 0)])
    sim.add_agents([(5, 5)], layer=np.array([lo]), avoid_mask=np.uint64(1))
    assert sim.layers.tolist() == [hi, hi, lo]
    assert sim.avoid_masks.tolist() == [lo, lo, 1]
    sim.step()
    # Mask lo is the sign bit only: agent 1 (hi lacks it) is ignored, agent 2 (lo) avoided.
    assert sim.agent_neighbors(0).tolist() == [2]


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"layer": 1.5}, r"layer must be an integer bit field.*got 1\.5"),
        ({"layer": 2.0}, r"layer must be an integer bit field.*got 2\.0"),
        ({"layer": True}, r"layer must be an integer bit field.*got True"),
        ({"avoid_mask": 2**63}, r"avoid_mask must be an integer bit.*got 9223372036854775808"),
        ({"avoid_mask": -(2**63) - 1},
         r"avoid_mask must be an integer bit.*got -9223372036854775809"),
        ({"avoid_mask": "1"}, r"avoid_mask must be an integer bit.*got '1'"),
    ],
)
def test_constructor_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Simulator(**kwargs)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"layer": 1.5}, r"layer must be an integer.*, got 1\.5"),
        ({"layer": np.array([1.0, 2.0])}, r"layer must be an integer bit field.*got 1\.0"),
        ({"layer": True}, r"layer must be a real number or array, got True"),
        ({"avoid_mask": 2**63}, r"avoid_mask must be an integer bit.*got 9223372036854775808"),
        ({"avoid_mask": -(2**63) - 1}, r"avoid_mask must be a real number or array"),
        ({"avoid_mask": [1, 2, 3]}, r"avoid_mask must be a scalar or have shape \(2,\)"),
    ],
)
def test_add_and_set_validation(kwargs, match):
    sim = Simulator()
    with pytest.raises(ValueError, match=match):
        sim.add_agents([(0, 0), (1, 0)], **kwargs)
    assert sim.num_agents == 0
    sim.add_agents([(0, 0), (1, 0)], layer=3, avoid_mask=5)
    with pytest.raises(ValueError, match=match):
        sim.set_agent_params([0, 1], **kwargs)
    assert sim.layers.tolist() == [3, 3] and sim.avoid_masks.tolist() == [5, 5]
    with pytest.raises(ValueError, match=match.split(" ")[0]):
        sim.add_agent((2, 2), **{k: (v if np.ndim(v) == 0 else 1.5) for k, v in kwargs.items()})


def test_set_agent_params_and_lifecycle():
    sim, p, goals = crowd()
    sim.add_agents(p)
    sim.set_agent_params([1, 2], layer=[4, 8], avoid_mask=3)
    assert sim.layers[:4].tolist() == [1, 4, 8, 1]
    assert sim.avoid_masks[:4].tolist() == [-1, 3, 3, -1]
    run(sim, goals, 3)
    sim.deactivate_agents([1])
    run(sim, goals, 2)
    sim.activate_agents([1])
    ids = sim.add_agents([(9.0, 9.0)], layer=16)
    assert sim.layers[1] == 4 and sim.avoid_masks[1] == 3 and sim.layers[ids[0]] == 16
    run(sim, np.vstack([goals, [(9.0, 9.0)]]), 2)
    # Changing the masks takes effect at the next step (the cached parameter bundle is dropped):
    # avoiding nobody is stepping without agent neighbours.
    alone = pickle.loads(pickle.dumps(sim))
    sim.set_agent_params(np.arange(sim.num_agents), avoid_mask=0)
    alone.set_agent_params(np.arange(sim.num_agents), max_neighbors=0)
    sim.step()
    alone.step()
    assert_same(sim, alone)
    assert all(sim.agent_neighbors(i).size == 0 for i in range(sim.num_agents))


def test_pickle_round_trip_continues_bit_identically():
    sim, p, goals = crowd(n=30)
    sim.add_agents(p, layer=np.arange(30) % 3 + 1, avoid_mask=np.arange(30) % 4)
    run(sim, goals, 10)
    clones = [pickle.loads(pickle.dumps(sim)), copy.deepcopy(sim)]
    run(sim, goals, 20)
    for c in clones:
        assert np.array_equal(c.layers, np.arange(30) % 3 + 1)
        assert np.array_equal(c.avoid_masks, np.arange(30) % 4)
        run(c, goals, 20)
        assert_same(c, sim)


def test_threads_bit_identical_with_mixed_layers():
    runs = []
    for threads in (1, 2):
        sim, p, goals = crowd(n=120, seed=3, num_threads=threads)
        sim.add_agents(p * 2, layer=1 << (np.arange(120) % 3), avoid_mask=np.arange(120) % 8)
        run(sim, goals * 2, 15)
        runs.append(sim)
    assert_same(runs[0], runs[1])


@pytest.mark.parametrize("seed", range(4))
def test_step_neighbours_match_brute_force(seed):
    # Random layers and masks (some agents avoid all, some a subset, some layers shared by
    # everyone or not): the step's neighbours are the max_neighbors nearest *avoided* active
    # agents within neighbor_dist, and its line counts match the debug recomputation.
    rng = np.random.default_rng(seed)
    n = 60
    sim = Simulator(neighbor_dist=3.0, max_neighbors=4, radius=0.2, max_speed=1.0)
    pos = rng.uniform(-6, 6, (n, 2))
    layers = rng.choice([1, 2, 3] if seed % 2 else [3, 7], n)
    masks = rng.choice([1, 2, 3, -1, 0, 4], n)
    sim.add_agents(pos, layer=layers, avoid_mask=masks)
    sim.deactivate_agents(rng.choice(n, 5, replace=False))
    sim.set_pref_velocities(rng.uniform(-1, 1, (n, 2)))
    before = sim.positions.copy()
    sim.step()
    for i in range(n):
        if not sim.active[i]:
            continue
        d = np.sum((before - before[i]) ** 2, axis=1)
        ok = sim.active & ((masks[i] & layers) != 0) & (d < 9.0)
        ok[i] = False
        want = np.flatnonzero(ok)[np.argsort(d[ok], kind="stable")][:4]
        assert sim.agent_neighbors(i).tolist() == want.tolist()
        assert sim.num_orca_lines[i] == len(sim.orca_lines(i)) == want.size
