"""learned_orca_padding and a training config's deploy section: a safety margin a policy brings.

The config key replaces the orca_padding of the learned groups with the safety layer (not of
the crowd, not of learned groups without it); a trained policy brings it from its training env
or from its run config's ``deploy`` section, and explicit overrides still win.
"""

import os
import shutil
import warnings

import numpy as np
import pytest
import yaml

import orca_env
from orca_env import agents
from orca_env.config import apply_policy_settings, load_config, policy_settings
from orca_env.training.config import TrainConfigError, check_deploy, load_train_config

ROBOT_AND_CROWD = [
    {"name": "robot", "population": "learned", "count": 1, "orca_padding": 0.01},
    {"name": "bare", "population": "learned", "count": 1, "safety_layer": False,
     "orca_padding": 0.02},
    {"name": "humans", "population": "orca", "count": 4, "orca_padding": 0.03},
]


def _padding(env):
    """Each slot's ORCA radius minus its radius."""
    return env.sim.radii - env.radii


def test_replaces_the_padding_of_learned_groups_with_the_safety_layer_only():
    env = orca_env.parallel_env("circle", groups=ROBOT_AND_CROWD)
    env.reset(seed=0)
    padded = orca_env.parallel_env("circle", groups=ROBOT_AND_CROWD, learned_orca_padding=0.25)
    padded.reset(seed=0)
    # The ORCA radius (what the core avoids with) moves; the body does not.
    assert np.allclose(_padding(env), [0.01, 0.02, 0.03, 0.03, 0.03, 0.03])
    assert np.allclose(_padding(padded), [0.25, 0.02, 0.03, 0.03, 0.03, 0.03])
    assert np.array_equal(padded.radii, env.radii)
    assert np.array_equal(padded.sim.positions, env.sim.positions)


def test_none_is_the_default_and_zero_is_a_margin_of_zero():
    assert load_config({}).learned_orca_padding is None
    zero = orca_env.parallel_env("circle", groups=ROBOT_AND_CROWD, learned_orca_padding=0.0)
    zero.reset(seed=0)
    assert np.allclose(_padding(zero), [0.0, 0.02, 0.03, 0.03, 0.03, 0.03])


@pytest.mark.parametrize("value, says", [(-0.1, "must be >= 0.0, got -0.1"),
                                         ("wide", "must be a number, got 'wide'"),
                                         (float("nan"), "must be finite, got nan"),
                                         (float("inf"), "must be finite, got inf"),
                                         (float("-inf"), "must be finite, got -inf")])
def test_bad_values_name_the_key_and_the_value(value, says):
    with pytest.raises(ValueError, match=f"config key 'learned_orca_padding' {says}"):
        load_config({"learned_orca_padding": value})


ROBOT_03 = [{"name": "robot", "population": "learned", "count": 1, "radius": 0.3},
            {"name": "humans", "population": "orca", "count": 4, "radius": 0.2}]


@pytest.fixture(autouse=True)
def fresh_warnings(monkeypatch):
    """Each margin warning is given once a process: each test starts with none given."""
    monkeypatch.setattr(agents, "_WARNED", set())


def _margin_warnings(groups, padding):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        orca_env.parallel_env("circle", groups=groups, learned_orca_padding=padding)
    return [str(w.message) for w in caught if "learned_orca_padding" in str(w.message)]


def test_a_margin_wider_than_the_radius_is_warned_about():
    # More than the radius: the ORCA disc more than twice the body.
    said = _margin_warnings(ROBOT_03, 0.4)
    assert said == ["config key 'learned_orca_padding' is 0.4 m, more than the radius 0.3 m of "
                    "the learned agents of group 'robot': their ORCA disc (radius + padding) is "
                    "more than twice their body, and the ORCA agents that avoid them keep off "
                    "it too, which usually deadlocks the crowd; a margin of at most the radius "
                    "is expected (the shipped policies use 0.1 m)"]
    with pytest.warns(UserWarning, match="'learned_orca_padding' is 0.31 m, more than the radius"):
        orca_env.parallel_env("circle", groups=ROBOT_03, learned_orca_padding=0.31)
    # Up to the radius: no warning (the crowd's smaller radius does not matter).
    for padding in (0.0, 0.1, 0.3):
        assert _margin_warnings(ROBOT_03, padding) == [], padding
    # Once a process: the env built again (a bench builds each entry's several times) is quiet.
    assert _margin_warnings(ROBOT_03, 0.4) == []


def test_the_margin_warning_takes_the_agents_it_pads():
    small = [{"name": "big", "population": "learned", "count": 1, "radius": 0.5},
             {"name": "small", "population": "learned", "count": 1, "radius": 0.15},
             {"name": "bare", "population": "learned", "count": 1, "radius": 0.05,
              "safety_layer": False},
             {"name": "humans", "population": "orca", "count": 3, "radius": 0.05}]
    # The smallest padded radius is 0.15 m: a learned group without the safety layer keeps its
    # own padding, and the crowd is not padded.
    assert _margin_warnings(small, 0.15) == []
    (said,) = _margin_warnings(small, 0.2)
    assert "more than the radius 0.15 m of the learned agents of group 'small'" in said
    # randomize_attributes draws radii from 0.3 m.
    drawn = [{"name": "drawn", "population": "learned", "count": 2,
              "randomize_attributes": True}, {"population": "orca", "count": 3}]
    assert _margin_warnings(drawn, 0.3) == []
    (said,) = _margin_warnings(drawn, 0.35)
    assert "radius 0.3 m of the learned agents of group 'drawn'" in said
    assert _margin_warnings(ROBOT_03, None) == []


def test_policy_settings_carry_it_and_explicit_keys_win():
    assert "learned_orca_padding" not in policy_settings({})
    settings = policy_settings({"learned_orca_padding": 0.1})
    assert settings["learned_orca_padding"] == 0.1
    assert apply_policy_settings({}, settings)["learned_orca_padding"] == 0.1
    assert apply_policy_settings({"learned_orca_padding": 0.02},
                                 settings)["learned_orca_padding"] == 0.02
    # null runs the policy without its margin: the groups' own padding again.
    assert apply_policy_settings({"learned_orca_padding": None},
                                 settings)["learned_orca_padding"] is None


def test_mixture_entries_take_it_from_next_to_the_mixture():
    env = orca_env.parallel_env({"mixture": [{"config": "crowdnav_circle_invisible"},
                                             {"config": "crowdnav_square_invisible"}],
                                 "observation": {"layout": "universal", "num_agents": 5,
                                                 "num_obstacles": 0},
                                 "learned_orca_padding": 0.07})
    for seed in range(4):
        env.reset(seed=seed)
        assert np.allclose(_padding(env), [0.07] + [0.01] * 5)


def test_deploy_section_is_checked_and_named():
    env = {"config": "crowdnav_square_invisible"}
    check_deploy({"learned_orca_padding": 0.1}, load_train_config(
        "configs/train/crowdnav.yaml")["env"])
    with pytest.raises(ValueError, match="'deploy' must be a mapping"):
        check_deploy([0.1], env)
    with pytest.raises(ValueError, match="unknown key 'max_steps' in training config key "
                                         "'deploy'"):
        check_deploy({"max_steps": 5}, env)
    with pytest.raises(ValueError, match=r"'deploy': .*learned_orca_padding"):
        check_deploy({"learned_orca_padding": -1.0}, load_train_config(
            "configs/train/crowdnav.yaml")["env"])


def test_a_run_config_with_a_bad_deploy_section_is_refused(tmp_path):
    cfg = yaml.safe_load(open("configs/train/circle_ppo.yaml"))
    cfg["deploy"] = {"learned_orca_padding": "wide"}
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(cfg))
    with pytest.raises(TrainConfigError, match="deploy"):
        load_train_config(path)


def test_the_shipped_crowdnav_robot_brings_its_margin(tmp_path):
    pytest.importorskip("stable_baselines3")
    from orca_env.policies import TRAINED_DIR, env_settings

    from orca_env.evaluation import evaluate

    shipped = os.path.join(TRAINED_DIR, "crowdnav")
    assert env_settings(shipped)["learned_orca_padding"] == 0.1
    # The part the deploy section gives, for the bench's report of where a margin came from.
    from orca_env.policies import deploy_settings

    from orca_env.evaluation.suite import policy_deploy

    assert deploy_settings(shipped) == {"learned_orca_padding": 0.1}
    assert policy_deploy("crowdnav") == {"learned_orca_padding": 0.1}
    assert policy_deploy("circle_ppo") is None and policy_deploy("orca") is None
    by_name = evaluate("crowdnav_square_invisible", "crowdnav", episodes=3)
    assert by_name["config"]["learned_orca_padding"] == 0.1
    from orca_env.evaluation.metrics import format_table
    assert "learned_orca_padding 0.1 m" in format_table(by_name).splitlines()[0]
    explicit = evaluate("crowdnav_square_invisible", "crowdnav", episodes=3,
                        overrides={"learned_orca_padding": 0.1})
    assert by_name["episodes"] == explicit["episodes"]
    # Without the deploy section the same weights run with the training margin (0.01).
    run = tmp_path / "crowdnav"
    shutil.copytree(shipped, run)
    cfg = yaml.safe_load(open(run / "config.yaml"))
    del cfg["deploy"]
    (run / "config.yaml").write_text(yaml.safe_dump(cfg))
    assert "learned_orca_padding" not in env_settings(str(run))
    assert deploy_settings(str(run)) is None
    plain = evaluate("crowdnav_square_invisible", str(run), episodes=3)
    assert plain["config"]["learned_orca_padding"] is None
    assert "learned_orca_padding" not in format_table(plain)


def test_an_empty_deploy_section_is_no_section(tmp_path):
    cfg = yaml.safe_load(open("configs/train/circle_ppo.yaml"))
    cfg["deploy"] = None  # `deploy:` with its keys commented out
    path = tmp_path / "empty.yaml"
    path.write_text(yaml.safe_dump(cfg))
    assert "deploy" not in load_train_config(path)

