"""A model trained with ``action: residual`` brings its action mode to every env it acts in."""

import dataclasses

import numpy as np
import pytest
from orca_env.policies import env_settings, load_policy, observation_settings

import orca_env
from orca_env.evaluation import evaluate
from orca_env.evaluation.suite import policy_settings

SETTINGS = {"layout": "universal", "frame": "goal", "num_agents": 6, "num_obstacles": 4}
ENV = {"scenario": "circle_v0", "action": "residual", "max_steps": 30,
       "observation": {"layout": "universal"},
       "scenario_kwargs": {"circle_radius": 2.5},
       "groups": [{"population": "learned", "count": 3, "radius": 0.3, "max_speed": 1.0,
                   "pref_speed": 1.0},
                  {"population": "orca", "count": 3, "radius": 0.3, "max_speed": 1.0,
                   "pref_speed": 1.0}]}


@pytest.fixture(scope="module")
def residual_run(tmp_path_factory, train_tiny):
    """A tiny PPO run with residual actions (the vector env backend)."""
    return train_tiny(tmp_path_factory.mktemp("runs"), ENV, n_timesteps=192)


def test_the_run_carries_its_action_mode(residual_run):
    want = {"action": "residual", "observation": SETTINGS}
    assert env_settings(str(residual_run)) == want
    assert load_policy.env_settings(str(residual_run / "model.zip")) == want
    assert observation_settings(str(residual_run)) == SETTINGS
    assert policy_settings(str(residual_run)) == want
    assert policy_settings("orca") is None


def test_evaluate_and_bench_apply_it(residual_run):
    rep = evaluate("corridor", str(residual_run), episodes=1)
    assert rep["config"]["action"] == "residual"
    from orca_env.evaluation.bench import BenchPolicy, load_suite, run_bench

    suite = load_suite("standard")
    picked = [dataclasses.replace(e, episodes=1) for e in suite.entries
              if e.name == "crowdnav_circle"]
    out = run_bench(dataclasses.replace(suite, entries=tuple(picked)),
                    [BenchPolicy(str(residual_run)), BenchPolicy("orca")])
    assert len(out["results"]["crowdnav_circle"]) == 2


def test_a_velocity_env_is_refused_with_a_message_that_says_why(residual_run):
    env = orca_env.parallel_env("crowdnav_square", observation=SETTINGS)
    with pytest.raises(ValueError, match="trained with action: residual, but the env has "
                                         "action: velocity.*build the env with action: "
                                         "residual"):
        load_policy(str(residual_run), env)
    with pytest.raises(ValueError, match="action: residual.*action: velocity"):
        evaluate("corridor", str(residual_run), episodes=1, overrides={"action": "velocity"})
    env = orca_env.parallel_env("crowdnav_square", observation=SETTINGS, action="residual")
    pol = load_policy(str(residual_run), env)
    obs, _ = env.reset(seed=2)
    acts = pol(obs, env)
    assert set(acts) == set(env.agents) and all(np.all(np.abs(a) <= 1) for a in acts.values())
