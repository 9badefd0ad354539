"""observation.time: the elapsed fraction of the time limit as the observation's last feature."""

import numpy as np
import pytest

import orca_env
from orca_env.config import apply_policy_settings, load_config, policy_settings

UNIVERSAL = {"layout": "universal", "num_agents": 6, "num_obstacles": 4}


@pytest.mark.parametrize("observation", [{}, UNIVERSAL])
def test_last_feature_counts_the_steps_and_leaves_the_rest_alone(observation):
    timed = orca_env.parallel_env("circle_dense", max_steps=6,
                                  observation=dict(observation, time=True))
    plain = orca_env.parallel_env("circle_dense", max_steps=6, observation=observation)
    space, plain_space = timed.observation_space("agent_0"), plain.observation_space("agent_0")
    assert space.shape == (plain_space.shape[0] + 1,)
    assert (space.low[-1], space.high[-1]) == (0.0, 1.0)
    assert np.array_equal(space.low[:-1], plain_space.low)
    assert np.array_equal(space.high[:-1], plain_space.high)
    o_t, _ = timed.reset(seed=3)
    o_p, _ = plain.reset(seed=3)
    step = 0
    while True:
        for a in o_t:
            assert o_t[a][-1] == np.float32(step / 6), (step, a)
            assert np.array_equal(o_t[a][:-1], o_p[a]) and space.contains(o_t[a])
        if not timed.agents:
            break
        acts = plain.heuristic_actions()
        o_t, _, te, tr, _ = timed.step(acts)
        o_p, _, _, _, _ = plain.step(acts)
        step += 1
    assert step == 6 and any(tr.values())      # the last step observes exactly 1
    assert o_t[next(iter(tr))][-1] == 1.0


def test_crowdnav_time_limit_rule_reaches_one_on_its_last_step():
    env = orca_env.parallel_env("crowdnav_circle", observation={"time": True},
                                groups=[{"population": "learned", "count": 1,
                                         "safety_layer": True},
                                        {"population": "orca", "count": 0}],
                                time_limit_rule="crowdnav", stall={"end_episode": False})
    last = env.last_step
    assert last < env.max_steps                 # CrowdNav's rule ends before max_steps
    env.reset(seed=0)
    obs = None
    for _ in range(last):
        obs, _, te, tr, _ = env.step({a: np.zeros(2, np.float32) for a in env.agents})
    assert all(tr.values()) and obs["agent_0"][-1] == 1.0


def test_time_comes_after_the_scenario_features():
    from orca_env.scenarios import SCENARIOS, register_scenario
    from orca_env.scenarios.circle import Circle

    class Featured(Circle):
        name = "circle_featured_time_v0"
        EXTRA_OBSERVATIONS = (("seven", 0.0, 10.0),)

        def observation_features(self, env, slots):
            return np.full((len(slots), 1), 7.0)

    register_scenario(Featured)
    try:
        env = orca_env.parallel_env(scenario="circle_featured_time_v0", max_steps=4,
                                    observation={"time": True})
        space = env.observation_space("agent_0")
        assert (space.high[-2], space.high[-1]) == (10.0, 1.0)
        env.reset(seed=1)
        obs, *_ = env.step(env.heuristic_actions())
        assert all(o[-2] == 7.0 and o[-1] == np.float32(0.25) for o in obs.values())
    finally:
        SCENARIOS.pop("circle_featured_time_v0")


def test_config_round_trip_and_validation():
    cfg = load_config("corridor", observation={"time": True})
    assert cfg.observation.time is True and cfg.to_dict()["observation"]["time"] is True
    assert load_config(cfg.to_dict()) == cfg
    # Off, it is left out of to_dict, so existing reports keep their bytes.
    assert "time" not in load_config("corridor").to_dict()["observation"]
    with pytest.raises(ValueError, match=r"observation\.time.*'yes'"):
        load_config("corridor", observation={"time": "yes"})



def test_policy_settings_carry_the_time_feature():
    # A model trained with the time feature gets it in every env it is evaluated in.
    assert policy_settings({"scenario": "circle_v0", "observation": dict(UNIVERSAL, time=True)}
                           )["observation"]["time"] is True
    assert policy_settings({"scenario": "circle_v0", "observation": {"time": True}}) == \
        {"action": "velocity", "observation": {"time": True}}
    assert "observation" not in policy_settings("circle_dense")
    assert "time" not in policy_settings({"scenario": "circle_v0",
                                          "observation": UNIVERSAL})["observation"]
    over = apply_policy_settings({"max_steps": 9}, policy_settings(
        {"scenario": "circle_v0", "observation": {"time": True}}))
    env = orca_env.parallel_env("corridor", **over)
    assert env.observation_space("agent_0").shape[0] == \
        orca_env.parallel_env("corridor").observation_space("agent_0").shape[0] + 1
