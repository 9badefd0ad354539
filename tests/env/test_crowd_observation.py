"""A variable crowd in the universal layout (K = 16, 32 slots) and observation.stall."""

import copy

import numpy as np
import pytest

import orca_env
from orca_env.config import MAX_OBSERVED, load_config, policy_settings, universal_observation
from orca_env.observations import OWN, PER_AGENT, PER_SEGMENT
from orca_env.vector import OrcaVectorEnv

MIX = {"mixture": [
    {"config": "crowdnav_circle", "weight": 2, "set": {"groups.0.count": 4},
     "ranges": {"groups.1.count": [0, 10]}},
    {"config": "corridor", "set": {"groups.0.count": 4},
     "ranges": {"groups.1.count": [2, 10], "max_steps": [50, 80]}},
]}


def _present(obs, k):
    """(rows, K) present flags of the neighbour slots."""
    return obs[:, OWN + PER_AGENT * np.arange(k) + 5]


@pytest.mark.parametrize("k", [16, 32])
def test_k_slots_fill_nearest_first_and_pad_the_rest(k):
    ob = {"layout": "universal", "num_agents": k, "num_obstacles": 4, "range": 20.0}
    env = orca_env.parallel_env("circle_dense", observation=ob)   # 16 agents: 15 neighbours
    d = env.observation_space("agent_0").shape[0]
    assert d == OWN + PER_AGENT * k + PER_SEGMENT * 4
    obs, _ = env.reset(seed=2)
    rows = np.stack([obs[a] for a in env.agents])
    flags = _present(rows, k)
    assert (flags[:, :15] == 1).all() and (flags[:, 15:] == 0).all()
    pad = rows[:, OWN + PER_AGENT * 15: OWN + PER_AGENT * k]
    assert (pad == 0).all()
    dist = np.hypot(rows[:, OWN + PER_AGENT * np.arange(15)],
                    rows[:, OWN + PER_AGENT * np.arange(15) + 1])
    assert (np.diff(dist, axis=1) >= -1e-6).all()                 # nearest first
    # The vector env observes the very same rows.
    v = OrcaVectorEnv("circle_dense", 2, seed=2, observation=ob)
    vo, _ = v.reset()
    assert np.array_equal(vo[:16], rows)


@pytest.mark.parametrize("k", [16, 32])
def test_k_slots_in_a_mixture_single_and_vector(k):
    cfg = dict(copy.deepcopy(MIX), observation={"layout": "universal", "num_agents": k,
                                                     "num_obstacles": 4})
    env = orca_env.parallel_env(cfg)
    v = OrcaVectorEnv(cfg, 3, seed=7)
    assert v.single_observation_space == env.observation_space("agent_0")
    seen = set()
    obs, _ = v.reset()
    for _ in range(5):
        flags = _present(obs, k)
        seen |= set(flags.sum(axis=1).astype(int).tolist())
        assert ((flags == 0) | (flags == 1)).all()
        # Present slots come first: no present slot after a padded one.
        assert (np.diff(flags, axis=1) <= 0).all()
        obs, *_ = v.step(np.zeros((obs.shape[0], 2), np.float32))
    assert len(seen) > 1                                        # the crowd size varies
    assert universal_observation(cfg)["num_agents"] == k


def test_k_is_capped_and_the_cap_is_named():
    assert MAX_OBSERVED == 1024
    load_config("circle_dense", observation={"layout": "universal", "num_agents": MAX_OBSERVED})
    with pytest.raises(ValueError, match=r"observation\.num_agents.*1025"):
        load_config("circle_dense", observation={"num_agents": MAX_OBSERVED + 1})


def _frozen_env(ob, **kw):
    # Every agent learned and still (action 0): nobody moves, each step counts as slow.
    return orca_env.parallel_env("circle_dense", max_steps=12, observation=ob,
                                 stall={"window": 4, "end_episode": False}, **kw)


@pytest.mark.parametrize("ob", [{}, {"layout": "universal", "num_agents": 16}])
@pytest.mark.parametrize("time", [False, True])
def test_stall_counts_slow_steps_over_the_window(ob, time):
    ob = dict(ob, time=time)
    env = _frozen_env(dict(ob, stall=True))
    plain = _frozen_env(ob)
    space, plain_space = env.observation_space("agent_0"), plain.observation_space("agent_0")
    c = -2 if time else -1                                      # just before the time
    assert space.shape[0] == plain_space.shape[0] + 1
    assert (space.low[c], space.high[c]) == (0.0, 1.0)
    keep = np.ones(space.shape[0], bool)
    keep[c] = False
    assert np.array_equal(space.low[keep], plain_space.low)
    o, _ = env.reset(seed=1)
    p, _ = plain.reset(seed=1)
    for t in range(8):
        for a in o:
            assert o[a][c] == np.float32(min(t / 4, 1.0)), (t, a)
            assert np.array_equal(o[a][keep], p[a]) and space.contains(o[a])
        zero = {a: np.zeros(2, np.float32) for a in env.agents}
        o, *_ = env.step(zero)
        p, *_ = plain.step(zero)
    # Moving resets it to 0.
    o, *_ = env.step(env.heuristic_actions())
    assert all(v[c] == 0.0 for v in o.values())


def test_stall_bit_identical_in_the_vector_env_and_a_mixture():
    for cfg in ("circle_dense", copy.deepcopy(MIX)):
        kw = {"observation": {"layout": "universal", "num_agents": 6, "num_obstacles": 4,
                              "stall": True, "time": True},
              "stall": {"window": 5}}
        v = OrcaVectorEnv(cfg, 2, seed=3, **kw)
        envs = [orca_env.parallel_env(cfg, infos="compact", **kw) for _ in range(2)]
        obs, _ = v.reset()
        L = v.num_agents_per_world
        singles = [e.reset(seed=3 + b)[0] for b, e in enumerate(envs)]
        stalled = 0.0
        for t in range(40):
            for b, e in enumerate(envs):
                for k, a in enumerate(e.possible_agents):
                    if a in singles[b]:
                        assert np.array_equal(obs[b * L + k], singles[b][a]), (t, b, a)
            stalled = max(stalled, float(obs[:, -2].max()))
            act = np.zeros((2 * L, 2), np.float32)
            if t % 10 >= 6:  # move now and then so that the counters reset
                for b, e in enumerate(envs):
                    for a, h in e.heuristic_actions().items():
                        act[b * L + e.possible_agents.index(a)] = h
            obs, *_ = v.step(act)
            for b, e in enumerate(envs):
                singles[b] = e.step({a: act[b * L + e.possible_agents.index(a)]
                                     for a in e.agents})[0]
            if not all(e.agents for e in envs):  # the vector env resets that world itself
                break
        assert stalled > 0.0


def test_stall_config_round_trip_and_policy_settings():
    cfg = load_config("corridor", observation={"stall": True})
    assert cfg.to_dict()["observation"]["stall"] is True and load_config(cfg.to_dict()) == cfg
    assert "stall" not in load_config("corridor").to_dict()["observation"]
    with pytest.raises(ValueError, match=r"observation\.stall.*'yes'"):
        load_config("corridor", observation={"stall": "yes"})
    assert policy_settings({"scenario": "circle_v0", "observation": {"stall": True}}) == \
        {"action": "velocity", "observation": {"stall": True}}
    uni = {"scenario": "circle_v0", "observation": {"layout": "universal", "stall": True}}
    assert policy_settings(uni)["observation"]["stall"] is True
    # A mixture whose entries disagree on the feature is refused.
    bad = copy.deepcopy(MIX)
    bad["mixture"][1]["set"]["observation.stall"] = True
    with pytest.raises(ValueError, match=r"mixture\[1\]"):
        orca_env.parallel_env(dict(bad, observation={"layout": "universal", "num_agents": 6,
                                                     "num_obstacles": 4}))
