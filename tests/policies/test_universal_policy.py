"""A policy trained on a mixture with the universal layout runs on every config."""

import dataclasses
import json
import os
import warnings

import numpy as np
import pytest
from orca_env.configs import names
from orca_env.policies import SHIPPED_MODEL, TRAINED_DIR, load_policy, observation_settings

import orca_env
from orca_env.evaluation import evaluate
from orca_env.evaluation.suite import policy_observation

MIXTURE = {
    "mixture": [
        {"config": "circle_dense", "weight": 2, "set": {"groups.0.count": 2, "max_steps": 30},
         "ranges": {"scenario_kwargs.circle_radius": [2.0, 3.0]}},
        {"config": "crowdnav_circle", "set": {"groups.0.count": 2, "max_steps": 30},
         "ranges": {"groups.1.count": [1, 3]}},
    ],
    "observation": {"layout": "universal", "num_agents": 6},  # crowdnav_circle's own K is 5
    "collision_tolerance": {"relative": 0.01},
}
#: A shipped policy with a metric layout (CrowdNav's robot).
METRIC_MODEL = os.path.join(TRAINED_DIR, "crowdnav_circle")
SETTINGS = {"layout": "universal", "frame": "goal", "num_agents": 6, "num_obstacles": 4}


@pytest.fixture(scope="module")
def mixture_run(tmp_path_factory, train_tiny):
    """A tiny PPO run on a two-scenario mixture (the SB3 adapter's copies backend), evaluated."""
    return train_tiny(tmp_path_factory.mktemp("runs"), MIXTURE, evaluate=True)


def test_the_run_trains_and_compares_on_the_mixture(mixture_run):
    saved = json.loads((mixture_run / "eval" / "comparison.json").read_text())
    assert saved  # the three-way comparison ran on the mixture (with and without safety layer)
    assert observation_settings(str(mixture_run)) == SETTINGS
    assert observation_settings(str(mixture_run / "model.zip")) == SETTINGS
    assert load_policy.observation_settings(str(mixture_run)) == SETTINGS
    assert observation_settings(SHIPPED_MODEL) == SETTINGS  # circle_ppo: universal too
    assert observation_settings(METRIC_MODEL) is None  # metric layout: its own config only
    assert policy_observation(str(mixture_run)) == SETTINGS
    assert policy_observation("orca") is None and policy_observation("random") is None
    assert policy_observation(METRIC_MODEL) is None


#: Shipped configs of holonomic learned agents (a robot config has other spaces; its own suite).
HOLONOMIC = [n for n in names("env")
             if orca_env.parallel_env(n).world_config.learned_kinematics == "holonomic"]


@pytest.mark.parametrize("config", HOLONOMIC)
def test_evaluate_runs_the_model_on_every_shipped_config(mixture_run, config):
    env = orca_env.parallel_env(config)
    if env.max_steps > 400 or env.num_slots > 40:
        over = {"max_steps": 20}  # RVO2's big examples: a few steps are enough here
    else:
        over = {}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "trained with other groups/observation" warning
        rep = evaluate(config, str(mixture_run), episodes=1, overrides=over)
    ob = rep["config"]["observation"]
    assert {k: ob[k] for k in SETTINGS} == SETTINGS
    assert ob.get("range") == orca_env.parallel_env(config).obs_range  # the scenario's unit


def test_explicit_observation_overrides_still_win(mixture_run):
    with pytest.raises(ValueError, match=r"expects observations of shape \(64,\).*\(58,\)"):
        evaluate("circle_dense", str(mixture_run), episodes=1,
                 overrides={"observation": {"num_agents": 5}})
    rep = evaluate("circle_dense", str(mixture_run), episodes=1,
                   overrides={"observation": {"range": 3.0}})
    assert rep["config"]["observation"]["range"] == 3.0


def test_the_command_line_evaluates_it_elsewhere(mixture_run, capsys):
    from orca_env.cli import main

    assert main(["eval", "bottleneck", "--policy", str(mixture_run), "--episodes", "1",
                 "--quiet", "--print-hash"]) == 0
    first = capsys.readouterr().out.strip()
    assert main(["eval", "bottleneck", "--policy", str(mixture_run), "--episodes", "1",
                 "--quiet", "--print-hash"]) == 0
    assert capsys.readouterr().out.strip() == first and len(first) == 64


def test_the_loaded_policy_acts_in_any_env(mixture_run):
    pol = load_policy(str(mixture_run), None)
    for config in ("corridor", "crowdnav_square"):
        env = orca_env.parallel_env(config, observation=SETTINGS)
        obs, _ = env.reset(seed=1)
        acts = pol(obs, env)
        assert set(acts) == set(env.agents)
        assert all(np.all(np.abs(a) <= 1) for a in acts.values())


def test_an_env_without_the_settings_gets_a_message_that_names_them(mixture_run):
    env = orca_env.parallel_env("crowdnav_square")
    with pytest.raises(ValueError, match=r"expects observations of shape \(64,\).*\(38,\); it "
                                         r"was trained with the universal layout: give the env "
                                         r"the observation settings \{'layout': 'universal'"):
        load_policy(str(mixture_run), env)


def test_bench_runs_a_universal_policy_on_every_entry(mixture_run, tmp_path):
    """orca-env bench applies the model's observation settings to every suite entry."""
    from orca_env.evaluation.bench import BenchPolicy, load_suite, run_bench

    suite = load_suite("standard")
    picked = [e for e in suite.entries if e.name in ("corridor_headon", "crowdnav_circle")]
    assert len(picked) == 2
    small = dataclasses.replace(suite, entries=tuple(dataclasses.replace(e, episodes=1)
                                                     for e in picked))
    rep = run_bench(small, [BenchPolicy(str(mixture_run)),
                            BenchPolicy(str(mixture_run), safety_layer=False)])
    for e in picked:
        res = rep["results"][e.name]
        assert len(res) == 2
        for agg in res.values():
            assert agg["success_rate"]["n"] >= 1
