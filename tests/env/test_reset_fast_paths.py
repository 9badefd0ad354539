"""The reset's fast paths decide as the general ones (issue 28: resets of finished worlds)."""

import types

import numpy as np
import pytest

import orca_env
from orca_env import episode
from orca_env.core import Simulator
from orca_env.scenarios import SpawnError


def _kd_check(tol, rel, starts, r):
    """The start-overlap check through the core's kd-tree (what _check_spawns does above 17)."""
    n = len(r)
    sim = Simulator(0.25)
    sim.add_agents(starts, radius=r)
    nbr, dsq = sim.query_agent_neighbors(min(16, n - 1), 2.0 * float(r.max()))
    other = r[np.maximum(nbr, 0)]
    gap = np.sqrt(dsq) - r[:, None] - other
    pair_tol = tol + rel * np.minimum(r[:, None], other)
    bad = np.flatnonzero(((nbr >= 0) & (gap < -pair_tol)).any(axis=1))
    return int(bad[0]) if bad.size else None


@pytest.mark.parametrize("tol, rel", [(0.0, 0.0), (0.01, 0.0), (0.0, 0.05)])
def test_small_worlds_spawn_check_matches_the_kd_tree_query(tol, rel):
    # Up to 17 agents every other agent is among the 16 nearest: the pairs are measured at
    # once. The first offending slot (the error's) must be the kd-tree query's, also for
    # overlaps at the tolerance to the last bit.
    rng = np.random.default_rng(7)
    outcomes = set()
    for n in (1, 2, 4, 16, 17):
        for _ in range(150):
            r = rng.uniform(0.2, 0.5, n)
            starts = rng.uniform(0.0, 1.2 * np.sqrt(n), (n, 2))
            if n > 1:
                i, j = rng.choice(n, 2, replace=False)
                ang = rng.uniform(0.0, 2.0 * np.pi)
                d = (r[i] + r[j] - tol - rel * min(r[i], r[j])) * (1.0 + rng.choice([-1e-15, 0, 1e-15]))
                starts[j] = starts[i] + d * np.array([np.cos(ang), np.sin(ang)])
            wc = types.SimpleNamespace(tol_abs=tol, tol_rel=rel, n=n,
                                       scenario=types.SimpleNamespace(name="test"))
            sim = Simulator(0.25)
            sim.add_agents(starts, radius=r)
            want = _kd_check(tol, rel, starts, r)
            if want is None:
                episode._check_spawns(wc, sim, starts, r)
            else:
                with pytest.raises(SpawnError, match=rf"\(slot {want} at "):
                    episode._check_spawns(wc, sim, starts, r)
            outcomes.add(want is None)
    assert outcomes == {True, False}


def test_resets_after_the_first_give_the_simulator_the_validated_parameters():
    # The table's per-agent parameters are validated at the first reset and taken as they are
    # afterwards: every later episode's simulator holds what a full validation gives.
    env = orca_env.parallel_env("circle_dense", groups=[
        {"population": "learned", "count": 3, "radius": 0.3, "neighbor_dist": 4.0,
         "orca_padding": 0.05},
        {"population": "orca", "count": 5, "max_neighbors": 3,
         "randomize_attributes": True}])
    radii = []
    for seed in (0, None, None):
        env.reset(seed=seed)
        radii.append(np.asarray(env.radii).copy())
        sim, t = env.sim, env._wc.table
        ref = Simulator(0.25).check_agent_params(
            8, radius=np.asarray(env.radii) + t.padding,
            max_speed=sim.max_speeds, responsibility=t.responsibility, layer=t.layers,
            avoid_mask=t.avoid_masks, **t.orca)
        for name, attr in (("radius", "radii"), ("neighbor_dist", "neighbor_dists"),
                           ("max_neighbors", "max_neighbors_arr"),
                           ("time_horizon", "time_horizons"),
                           ("responsibility", "responsibilities")):
            np.testing.assert_array_equal(getattr(sim, attr), ref[name], err_msg=name)
    assert not np.array_equal(radii[0], radii[1])  # the randomized radii were drawn again
    assert np.any(env._wc.table.padding > 0.0)


@pytest.mark.parametrize("clone", ["pickle", "deepcopy"])
def test_a_copied_vector_env_binds_its_resets_to_its_own_arrays(clone):
    # The batch keeps each world's views of its slot arrays for the resets' binding; a copy
    # must make its own, or its worlds' simulators would see the original's arrays.
    import copy
    import pickle

    from orca_env.vector import OrcaVectorEnv

    env = OrcaVectorEnv("circle_dense", 3, seed=4)
    env.reset()
    rng = np.random.default_rng(1)
    for _ in range(5):
        env.step(rng.uniform(-1, 1, (env.num_envs, 2)))
    other = pickle.loads(pickle.dumps(env)) if clone == "pickle" else copy.deepcopy(env)
    resets = 0
    for _ in range(150):
        act = rng.uniform(-1, 1, (env.num_envs, 2))
        o1, *_, info = env.step(act)
        o2, *_ = other.step(act)
        np.testing.assert_array_equal(o1, o2)
        resets += int(info["world_reset"].sum())
    assert resets > 0
    for e in (env, other):
        b = e._batch
        for w, ep in enumerate(b.episodes):
            s = slice(int(b.offsets[w]), int(b.offsets[w + 1]))
            assert np.shares_memory(ep.sim.positions, b.slots.pos[s])
            np.testing.assert_array_equal(ep.sim.positions, b.slots.pos[s])


def _storage_copy(sim):
    return {k: np.array(v) for k, v in sim.storage().items()}


def test_new_agents_state_then_bind_is_add_agents_then_bind():
    # A batched stepper writes new_agents_state's arrays into its storage and binds with
    # num_agents: the simulator then holds, steps and answers as one that added the agents.
    rng = np.random.default_rng(3)
    n = 12
    pos = rng.uniform(-4, 4, (n, 2))
    kw = dict(radius=rng.uniform(0.2, 0.4, n), max_speed=1.2, max_neighbors=4,
              layer=np.where(np.arange(n) % 3 == 0, 2, 1))
    template = Simulator(0.25, neighbor_dist=3.0)
    sims = []
    for direct in (False, True):
        sim = template.new_like()
        sim.add_obstacle([(5, 5), (6, 5), (6, 6), (5, 6)])
        fields = Simulator.STORAGE_FIELDS
        if direct:
            state = sim.new_agents_state(pos, **kw)
            assert sim.num_agents == 0  # not changed
            assert set(state) == set(fields)
        else:
            sim.add_agents(pos, **kw)
            state = sim.storage()
        store = {k: np.array(state[k]) for k in fields}  # the stepper's own arrays
        sim.bind_storage(False, num_agents=n if direct else None, **store)
        assert sim.num_agents == n and np.shares_memory(sim.positions, store["pos"])
        sims.append((sim, store))
    (a, sa), (b, sb) = sims
    for k in Simulator.STORAGE_FIELDS:
        np.testing.assert_array_equal(sa[k], sb[k], err_msg=k)
    for _ in range(20):
        for s in (a, b):
            s.set_pref_velocities(-s.positions / 4.0)
            s.step()
        np.testing.assert_array_equal(a.positions, b.positions)
        np.testing.assert_array_equal(sa["kd_order"], sb["kd_order"])
    np.testing.assert_array_equal(a.orca_lines(0), b.orca_lines(0))


def test_new_agents_state_refuses_what_add_agents_refuses():
    sim = Simulator(0.25)
    for bad, match in (([(0.0, np.nan)], "positions"), ([(0.0, 0.0)], "radius")):
        with pytest.raises(ValueError, match=match) as want:
            sim.add_agents(bad, radius=-1.0 if match == "radius" else 0.3)
        with pytest.raises(ValueError) as got:
            sim.new_agents_state(bad, radius=-1.0 if match == "radius" else 0.3)
        assert str(got.value) == str(want.value)
    sim.add_agents([(0.0, 0.0)])
    with pytest.raises(ValueError, match="has 1 agents already"):
        sim.new_agents_state([(1.0, 1.0)])


@pytest.mark.parametrize("scenario", ["circle_dense", "crowdnav_circle", "bottleneck"])
def test_later_resets_hand_the_agents_to_the_simulator_at_load(scenario):
    # After the first reset small worlds' agents go straight to the batch: each world's
    # simulator is still bound to its slice, holds its agents, and steps as one that added
    # them (a copy made with add_agents from the same starts and parameters).
    from orca_env.vector import OrcaVectorEnv

    env = OrcaVectorEnv(scenario, 3, seed=2)
    env.reset()
    env.reset()
    b = env._batch
    rng = np.random.default_rng(0)
    for w, ep in enumerate(b.episodes):
        s = slice(int(b.offsets[w]), int(b.offsets[w + 1]))
        sim = ep.sim
        assert ep.agent_state is None and sim.num_agents == ep.table.size
        assert np.shares_memory(sim.positions, b.slots.pos[s])
        np.testing.assert_array_equal(sim.positions, ep.starts)
        ref = sim.new_like()
        for poly in ep.world.obstacles:
            ref.add_obstacle(np.asarray(poly, dtype=np.float64))
        if ep.world.boundary is not None:
            ref.add_boundary(np.asarray(ep.world.boundary, dtype=np.float64))
        ref.add_agents(ep.starts, radius=sim.radii, max_speed=sim.max_speeds,
                       neighbor_dist=sim.neighbor_dists, max_neighbors=sim.max_neighbors_arr,
                       time_horizon=sim.time_horizons, time_horizon_obst=sim.time_horizons_obst,
                       responsibility=sim.responsibilities, layer=sim.layers,
                       avoid_mask=sim.avoid_masks)
        for k, v in _storage_copy(ref).items():
            np.testing.assert_array_equal(sim.storage()[k], v, err_msg=k)
        pref = rng.uniform(-1, 1, (sim.num_agents, 2))
        for s in (sim, ref):
            s.set_pref_velocities(pref)
            s.step()
        np.testing.assert_array_equal(sim.positions, ref.positions)
