"""The shipped CrowdNav robot (policies/trained/crowdnav_circle) on CrowdNav's test cases.

It was trained on the random layout of configs/train/crowdnav_circle.yaml and is checked here on
the first 50 of CrowdNav's test cases (configs/crowdnav_circle_invisible.yaml, layout
crowdnav_test: evaluation episode k is test case k), in the setting it was trained for (the
robot's ORCA safety layer on, the humans blind to the robot). The full 500-case figures are in
the README's CrowdNav table.
"""

import os
import warnings

import pytest

pytest.importorskip("stable_baselines3")
pytest.importorskip("torch")

from orca_env.policies import TRAINED_DIR, make_policy  # noqa: E402

from orca_env.config import load_yaml  # noqa: E402
from orca_env.evaluation import evaluate, is_eval_seed  # noqa: E402
from orca_env.training.config import REPO_ROOT, load_train_config  # noqa: E402

SHIPPED = os.path.join(TRAINED_DIR, "crowdnav_circle")
TEST_CONFIG = "crowdnav_circle_invisible"
EPISODES = 50


def test_shipped_crowdnav_policy_is_complete_and_was_not_trained_on_the_test_cases():
    for f in ("model.zip", "config.yaml", "vecnormalize.npz", "command.txt"):
        assert os.path.isfile(os.path.join(SHIPPED, f)), f
    cfg = load_yaml(os.path.join(SHIPPED, "config.yaml"))
    env = cfg["env"]
    assert env["scenario"] == "crowdnav_circle_v0"
    assert env["scenario_kwargs"]["layout"] == "random"  # the test cases are crowdnav_test
    assert not any(is_eval_seed(s) for s in range(cfg["seed"], cfg["seed"] + cfg["n_envs"]))
    # Everything but the layout (and the reward, which evaluation does not use) is the test
    # setting: same groups (invisible robot with the safety layer), observation, time limit and
    # collision rules.
    test = load_yaml(os.path.join(REPO_ROOT, "configs", "crowdnav_circle_invisible.yaml"))
    for key in ("max_steps", "time_limit_rule", "collision_check", "collision_tolerance",
                "observation", "stall"):
        assert env[key] == test[key], key
    def without_safety_key(groups):
        return [{k: v for k, v in g.items() if k != "safety_layer"} for g in groups]

    assert without_safety_key(env["groups"]) == without_safety_key(test["groups"])
    assert env["groups"][0].get("safety_layer", True) is True


def test_shipped_crowdnav_policy_matches_its_training_config():
    shipped = load_train_config(os.path.join(SHIPPED, "config.yaml"))
    repo = load_train_config(os.path.join(REPO_ROOT, "configs", "train", "crowdnav_circle.yaml"))
    for key in ("env", "algo", "n_envs", "hyperparams", "policy_kwargs", "normalize"):
        assert shipped[key] == repo[key], key


def test_shipped_crowdnav_policy_succeeds_on_crowdnav_test_cases():
    policy = make_policy(SHIPPED)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the test setting is the one it was trained for
        report = evaluate(TEST_CONFIG, policy, episodes=EPISODES)
    agg = report["aggregate"]
    assert report["num_episodes"] == EPISODES
    assert report["config"]["scenario_kwargs"]["layout"] == "crowdnav_test"
    assert agg["success_rate"]["mean"] >= 0.94  # 1.0 (50 of 50) when shipped
    assert agg["collision_rate"]["mean"] <= 0.06
    assert agg["timeout_rate"]["mean"] == 0.0
    # 11.03 s on these 50 cases when shipped (10.43 s on all 500, the README's figure).
    assert agg["time_to_goal"]["mean"] <= 11.5
