"""docs/extending.md: its Python blocks run as written, and do what the page says."""

import os
import re

import numpy as np
import pytest

from orca_env.scenarios import SCENARIOS, Scenario, register_scenario

DOC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs",
                   "extending.md")
ADDED = ("two_lines_v0", "two_lines_heading_v0", "two_lines_clock_v0")


@pytest.fixture(scope="module")
def ns():
    with open(DOC, encoding="utf-8") as fh:
        blocks = re.findall(r"```python\n(.*?)```", fh.read(), flags=re.S)
    assert len(blocks) == 3  # scenario, reward term, observation feature
    namespace = {"__name__": "extending_doc"}
    try:
        for block in blocks:
            exec(compile(block, DOC, "exec"), namespace)  # noqa: S102  (our own docs)
        yield namespace
    finally:
        for name in ADDED:
            SCENARIOS.pop(name, None)


def test_scenario_is_registered_and_solved_by_pure_orca(ns):
    assert SCENARIOS["two_lines_v0"] is ns["TwoLines"]
    env = ns["orca_env"].parallel_env(scenario="two_lines_v0")
    env.reset(seed=0)
    assert np.allclose(env.goals[:, 0], -np.sign(env.starts[:, 0]) * 4.0)
    final = {}
    while env.agents:
        *_, infos = env.step(env.heuristic_actions())
        final.update({a: info["status"] for a, info in infos.items()})
    assert len(final) == 4 and set(final.values()) == {"at_goal"}


def test_scenario_params_are_validated(ns):
    make = ns["orca_env"].parallel_env
    with pytest.raises(ValueError, match="gapp"):
        make(scenario="two_lines_v0", scenario_kwargs={"gapp": 3.0})
    with pytest.raises(ns["SpawnError"], match="spacing"):
        make(scenario="two_lines_v0", scenario_kwargs={"spacing": 0.2}).reset(seed=0)


def test_register_refuses_bad_names_and_duplicates(ns):
    class Unversioned(Scenario):
        name = "two_lines"

    with pytest.raises(ValueError, match="versioned"):
        register_scenario(Unversioned)

    class Clash(Scenario):
        name = "two_lines_v0"

    with pytest.raises(ValueError, match="already registered"):
        register_scenario(Clash)
    with pytest.raises(TypeError):
        register_scenario(object)
    assert SCENARIOS["two_lines_v0"] is ns["TwoLines"]


def test_reward_term_is_weighted_reported_and_summed(ns):
    env = ns["orca_env"].parallel_env(scenario="two_lines_heading_v0",
                                      rewards={"extra": {"heading": 0.02}})
    assert env.reward_term_names[-1] == "heading"
    env.reset(seed=1)
    for _ in range(3):
        _, rewards, _, _, infos = env.step(env.heuristic_actions())
    for a, info in infos.items():
        terms = info["reward_terms"]
        assert sum(terms.values()) == pytest.approx(rewards[a], abs=1e-12)
        assert 0.0 < terms["heading"] <= 0.02 + 1e-12  # heading for the goal under ORCA
    assert ns["heading"] == pytest.approx(0.02, rel=0.05)
    # Default weight from EXTRA_REWARDS; unknown names and bad weights are refused.
    env = ns["orca_env"].parallel_env(scenario="two_lines_heading_v0")
    env.reset(seed=1)
    _, _, _, _, infos = env.step(env.heuristic_actions())
    assert 0.0 < infos["agent_0"]["reward_terms"]["heading"] <= 0.01 + 1e-12
    with pytest.raises(ValueError, match="rewards.extra.headng"):
        ns["orca_env"].parallel_env(scenario="two_lines_heading_v0",
                                    rewards={"extra": {"headng": 1.0}})
    with pytest.raises(ValueError, match="rewards.extra.heading"):
        ns["orca_env"].parallel_env(scenario="two_lines_heading_v0",
                                    rewards={"extra": {"heading": float("nan")}})


def test_observation_feature_is_appended_bounded_and_filled(ns):
    plain, clock = ns["plain"], ns["clock"]
    n_plain = plain.observation_space("agent_0").shape[0]
    space = clock.observation_space("agent_0")
    assert space.shape == (n_plain + 1,)
    assert space.low[-1] == 0.0 and space.high[-1] == 1.0
    assert ns["time_left"] == pytest.approx(0.9)
    obs, _ = clock.reset(seed=0)
    assert all(o[-1] == 1.0 and space.contains(o) for o in obs.values())
    # The rest of the observation is the plain scenario's, unchanged.
    obs_plain, _ = plain.reset(seed=0)
    assert np.array_equal(obs["agent_0"][:-1], obs_plain["agent_0"])


def test_hook_with_a_wrong_shape_is_a_clear_error(ns):
    class Broken(ns["TwoLines"]):
        name = "two_lines_broken_v0"
        EXTRA_OBSERVATIONS = (("a", 0.0, 1.0), ("b", 0.0, 1.0))

        def observation_features(self, env, slots):
            return np.zeros((len(slots), 1))

    register_scenario(Broken)
    try:
        env = ns["orca_env"].parallel_env(scenario="two_lines_broken_v0")
        with pytest.raises(RuntimeError, match="observation_features must return"):
            env.reset(seed=0)
    finally:
        SCENARIOS.pop("two_lines_broken_v0")
