"""Baseline policies and the SB3 loader (including the shipped policy)."""

import os
import re

import numpy as np
import pytest
from orca_env.policies import SHIPPED_MODEL, load_policy, make_policy
from orca_env.policies.orca import OrcaPolicy
from orca_env.policies.random import RandomPolicy

import orca_env

CFG = {"scenario": "crowdnav_circle_v0", "max_steps": 40,
       "scenario_kwargs": {"robot_fixed": False, "circle_radius": 3.0},
       "groups": [{"population": "learned", "count": 4, "on_goal": "stop"},
                  {"population": "orca", "count": 2, "on_goal": "stay"}]}


def run(policy, seed, cfg=CFG):
    env = orca_env.parallel_env(cfg)
    obs, _ = env.reset(seed=seed)
    traj, statuses = [], {}
    while env.agents:
        actions = policy(obs, env)
        assert set(actions) == set(env.agents)
        for a in actions.values():
            assert a.shape == (2,) and a.dtype == np.float32 and np.all(np.abs(a) <= 1.0)
        obs, _, terms, truncs, infos = env.step(actions)
        traj.append(env.state().copy())
        for a, i in infos.items():
            if terms[a] or truncs[a]:
                statuses[a] = i["status"]
    return np.stack(traj), statuses


def test_orca_policy_is_heuristic_plus_small_noise_and_reproducible():
    env = orca_env.parallel_env(CFG)
    obs, _ = env.reset(seed=3)
    a = OrcaPolicy(noise=1e-4)(obs, env)
    h = env.heuristic_actions()
    for k in h:
        assert np.linalg.norm(a[k] - h[k]) <= 1e-4 + 1e-7
    t1, s1 = run(OrcaPolicy(), 5)
    t2, s2 = run(OrcaPolicy(), 5)
    assert np.array_equal(t1, t2) and s1 == s2
    assert list(s1.values()).count("at_goal") >= 3  # pure ORCA solves this sparse crossing
    t3, _ = run(OrcaPolicy(noise=0.2), 5)
    assert not np.array_equal(t1[: len(t3)], t3[: len(t1)])


def test_orca_policy_noise_must_be_non_negative():
    with pytest.raises(ValueError, match="noise"):
        OrcaPolicy(noise=-1.0)


def test_random_policy_reproducible_per_episode_seed():
    pol = RandomPolicy(seed=1)
    t1, _ = run(pol, 2)
    run(pol, 9)  # another episode in between does not change episode 2
    t2, _ = run(pol, 2)
    assert np.array_equal(t1, t2)


def test_make_policy_names():
    assert isinstance(make_policy("orca"), OrcaPolicy)
    assert isinstance(make_policy("random", seed=3), RandomPolicy)
    with pytest.raises(FileNotFoundError):
        make_policy("/nonexistent/run")


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory, train_tiny):
    """A tiny trained run folder (model.zip, config.yaml, vecnormalize.npz) via training."""
    return train_tiny(tmp_path_factory.mktemp("runs"), CFG, checkpoint_freq=128)


@pytest.mark.parametrize("which", ["dir", "zip", "checkpoint"])
def test_sb3_loader_loads_and_acts(tiny_run, which):
    import glob

    if which == "checkpoint":
        path = sorted(glob.glob(str(tiny_run / "checkpoints" / "*_steps.zip")))[-1]
    else:
        path = tiny_run if which == "dir" else tiny_run / "model.zip"
    pol = load_policy(str(path), None)
    assert pol.obs_rms is not None  # normaliser statistics were found
    assert pol.env_config["scenario"] == "crowdnav_circle_v0"
    t1, statuses = run(pol, 4)
    t2, _ = run(pol, 4)
    assert np.array_equal(t1, t2)  # deterministic actions
    assert len(statuses) == 4


def test_sb3_loader_through_the_evaluation_suite(tiny_run):
    from orca_env.evaluation import evaluate

    report = evaluate(CFG, "orca_env.policies:load_policy", model=str(tiny_run / "model.zip"),
                      episodes=2)
    assert report["num_episodes"] == 2
    assert 0.0 <= report["aggregate"]["success_rate"]["mean"] <= 1.0


@pytest.mark.skipif(not os.path.isfile(os.path.join(SHIPPED_MODEL, "model.zip")),
                    reason="no shipped policy yet (python train.py --ship writes it)")
def test_shipped_policy_loads_and_acts():
    pol = make_policy("shipped")
    env = orca_env.parallel_env(pol.env_config)
    obs, _ = env.reset(seed=10_000)
    actions = pol(obs, env)
    assert set(actions) == set(env.agents)
    _, statuses = run(pol, 10_000, cfg=pol.env_config)
    assert len(statuses) == len(env.possible_agents)


def test_sb3_loader_rejects_an_env_with_another_observation_shape(tiny_run):
    from orca_env.evaluation import evaluate

    env = orca_env.parallel_env(CFG, observation={"num_agents": 2})
    want = env.observation_space("agent_0").shape
    trained = orca_env.parallel_env(CFG).observation_space("agent_0").shape
    assert want != trained
    with pytest.raises(ValueError) as err:
        load_policy(str(tiny_run), env)
    msg = str(err.value)
    assert str(tiny_run / "model.zip") in msg
    assert str(trained) in msg and str(want) in msg
    # The evaluation suite fails the same way, before running an episode.
    with pytest.raises(ValueError, match=re.escape(str(want))):
        evaluate(CFG, str(tiny_run), episodes=1, overrides={"observation": {"num_agents": 2}})


def test_sb3_loader_warns_when_observation_or_groups_differ(tiny_run):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the training env itself: no warning
        load_policy(str(tiny_run), orca_env.parallel_env(CFG))
    with pytest.warns(UserWarning, match=r"trained with env observation .*'range': 6\.0"):
        load_policy(str(tiny_run), orca_env.parallel_env(CFG, observation={"range": 6.0}))
    groups = [dict(g) for g in CFG["groups"]]
    groups[1]["count"] = 3
    with pytest.warns(UserWarning, match="trained with env groups"):
        load_policy(str(tiny_run), orca_env.parallel_env(dict(CFG, groups=groups)))


@pytest.mark.parametrize("which", ["dir", "checkpoint"])
def test_sb3_loader_missing_normaliser_is_an_error(tiny_run, tmp_path, which):
    import glob
    import shutil

    run_dir = tmp_path / "run"
    shutil.copytree(tiny_run, run_dir)
    if which == "dir":
        path, pkl = run_dir, run_dir / "vecnormalize.npz"
    else:
        path = sorted(glob.glob(str(run_dir / "checkpoints" / "*_steps.zip")))[-1]
        n = path.rsplit("_", 2)[-2]
        pkl = run_dir / "checkpoints" / f"rl_model_vecnormalize_{n}_steps.npz"
    assert pkl.is_file()
    pkl.unlink()
    with pytest.raises(FileNotFoundError, match=re.escape(repr(str(pkl)))):
        load_policy(str(path), None)


def test_baseline_noise_is_fresh_after_unseeded_resets():
    """reset(seed=None) continues the env's stream: the ORCA noise must not repeat either."""
    from orca_env.baselines import OrcaPolicy as Baseline

    env = orca_env.parallel_env("configs/crowdnav_circle.yaml")
    pol = Baseline(noise=0.5)

    def first_actions(seed):
        obs, _ = env.reset(seed=seed)
        return np.stack(list(pol(obs, env).values()))

    a0 = first_actions(7)
    a1 = first_actions(None)
    a2 = first_actions(7)
    assert not np.array_equal(a0, a1)
    np.testing.assert_array_equal(a0, a2)
