"""The shipped CrowdNav robot for both crossings (policies/trained/crowdnav, issue 24 item 5).

Trained by configs/train/crowdnav.yaml on the random layouts of CrowdNav's circle and square
crossings (robot invisible), shipped as its 7M-step checkpoint chosen on CrowdNav's validation
cases, with the safety margin of its config's deploy section chosen afterwards on validation
episodes; checked here on the first 50 of CrowdNav's square-crossing test cases
(configs/crowdnav_square_invisible.yaml, layout crowdnav_test). The 500-case figures are in
docs/crowdnav.md.
"""

import os
import warnings

import pytest

pytest.importorskip("stable_baselines3")
pytest.importorskip("torch")

from orca_env.policies import TRAINED_DIR  # noqa: E402

from orca_env.config import load_yaml  # noqa: E402
from orca_env.evaluation import evaluate, is_eval_seed  # noqa: E402
from orca_env.training.config import REPO_ROOT, load_train_config  # noqa: E402

SHIPPED = os.path.join(TRAINED_DIR, "crowdnav")


def test_shipped_files_and_training_config():
    for f in ("model.zip", "config.yaml", "vecnormalize.npz", "command.txt", "git.txt"):
        assert os.path.isfile(os.path.join(SHIPPED, f)), f
    shipped = load_train_config(os.path.join(SHIPPED, "config.yaml"))
    repo = load_train_config(os.path.join(REPO_ROOT, "configs", "train", "crowdnav.yaml"))
    for key in ("env", "algo", "n_envs", "n_timesteps", "seed", "hyperparams",
                "policy_kwargs", "normalize", "deploy"):
        assert shipped[key] == repo[key], key
    assert "rl_model_7000000_steps.zip" in open(os.path.join(SHIPPED, "command.txt")).read()


def test_trained_on_random_layouts_never_on_the_test_or_validation_cases():
    cfg = load_yaml(os.path.join(SHIPPED, "config.yaml"))
    entries = cfg["env"]["mixture"]
    assert [e["config"] for e in entries] == ["crowdnav_circle_invisible",
                                              "crowdnav_square_invisible"]
    for e in entries:  # the configs' own layout is crowdnav_test: training overrides it
        assert e["set"]["scenario_kwargs.layout"] == "random"
    assert not any(is_eval_seed(s) for s in range(cfg["seed"], cfg["seed"] + cfg["n_envs"]))


def test_succeeds_on_crowdnav_square_test_cases():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the test setting is the one it was trained for
        # By name: evaluate applies the model's observation settings (universal, time left).
        report = evaluate("crowdnav_square_invisible", "crowdnav", episodes=50)
    agg = report["aggregate"]
    assert report["config"]["scenario_kwargs"]["layout"] == "crowdnav_test"
    # With its deploy margin (learned_orca_padding 0.1): 50 of 50, no collision; 0.996 on all
    # 500 (docs/crowdnav.md). With the training margin 0.01: 47 of 50 (3 collisions), 0.958 on
    # the 500. The circle-crossing robot crowdnav_circle: 0.764 on the 500, 17% time-outs.
    assert report["config"]["learned_orca_padding"] == 0.1
    assert agg["success_rate"]["mean"] >= 0.96
    assert agg["collision_rate"]["mean"] <= 0.02
    assert agg["timeout_rate"]["mean"] <= 0.02
