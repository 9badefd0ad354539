"""config key ``action: residual``: a learned agent's action corrects pure ORCA's velocity."""

import copy

import numpy as np
import pytest

import orca_env
from orca_env.config import load_config, policy_settings

# One learned agent alone in a corridor-free world: its velocity is its preferred velocity.
ALONE = {"scenario": "circle_v0", "scenario_kwargs": {"circle_radius": 5.0, "jitter": 0.0},
         "max_steps": 50,
         "groups": [{"population": "learned", "count": 1, "radius": 0.3, "max_speed": 2.0,
                     "pref_speed": 1.0}]}


def _velocity_after(action, **over):
    env = orca_env.parallel_env(copy.deepcopy(ALONE), action="residual", **over)
    env.reset(seed=0)
    goal = env.goals[0] - env.sim.positions[0]
    env.step({"agent_0": np.asarray(action, dtype=np.float32)})
    return env.sim.velocities[0].copy(), goal / np.linalg.norm(goal)


def test_zero_residual_is_pure_orca():
    # The heuristic actions are zero in residual mode: each learned agent then asks exactly for
    # the scripted goal-directed velocity (to rounding; the velocity mode's heuristic actions are
    # float32, so the two episodes agree to rounding only).
    runs = []
    for mode in ("velocity", "residual"):
        env = orca_env.parallel_env("bottleneck", action=mode)
        env.reset(seed=5)
        traj = []
        while env.agents:
            acts = env.heuristic_actions()
            live = env.live_slots.copy()
            if mode == "residual":
                assert all(not a.any() for a in acts.values())
                to_t = env.targets[live] - env.sim.positions[live]
                d = np.linalg.norm(to_t, axis=1)
                want = to_t * np.minimum(1.0, env.pref_speeds[live] / d)[:, None]
            env.step(acts)
            if mode == "residual":
                assert np.allclose(env.sim.pref_velocities[live], want, rtol=1e-12, atol=0)
            traj.append(env.sim.positions.copy())
        runs.append(np.array(traj))
    assert runs[0].shape == runs[1].shape
    assert np.allclose(runs[0], runs[1], atol=1e-4)


def test_residual_adds_twice_the_max_speed_and_is_clipped_to_it():
    # Goal frame: x points at the goal. Pure ORCA asks for pref_speed 1 m/s towards the goal.
    v, ex = _velocity_after([0.0, 0.0])
    assert np.allclose(v, 1.0 * ex)
    v, _ = _velocity_after([-0.25, 0.0])  # 1 - 2 * 0.25 * 2 = 0: stand still
    assert np.allclose(v, 0.0, atol=1e-12)
    v, _ = _velocity_after([-1.0, 0.0])  # 1 - 4 = -3 m/s, clipped to the max speed 2 m/s
    assert np.allclose(v, -2.0 * ex)
    v, _ = _velocity_after([0.0, 0.125])  # sideways 0.5 m/s on top of 1 m/s forward
    ey = np.array([-ex[1], ex[0]])
    assert np.allclose(v, 1.0 * ex + 0.5 * ey)
    # Without the safety layer the residual sum is the velocity itself.
    groups = [dict(ALONE["groups"][0], safety_layer=False)]
    v, ex = _velocity_after([0.25, 0.0], groups=groups)
    assert np.allclose(v, 2.0 * ex)


def test_config_key_validated_and_left_out_at_its_default():
    assert "action" not in load_config("circle_dense").to_dict()  # reports keep their bytes
    assert load_config({"scenario": "circle_v0", "action": "residual"}).to_dict()["action"] \
        == "residual"
    with pytest.raises(ValueError, match="action.*'delta'"):
        orca_env.parallel_env("circle_dense", action="delta")
    assert policy_settings("circle_dense") == {"action": "velocity"}
    got = policy_settings({"scenario": "circle_v0", "action": "residual",
                           "observation": {"layout": "universal"}})
    assert got == {"action": "residual", "observation": {"layout": "universal", "frame": "goal",
                                                          "num_agents": 6, "num_obstacles": 4}}


def test_mixture_entries_must_agree_on_the_action():
    entries = [{"config": "circle_dense", "set": {"groups.0.count": 2}},
               {"config": "crowdnav_circle",
                "set": {"groups.0.count": 2, "action": "residual"}}]
    cfg = {"mixture": entries, "observation": {"layout": "universal", "num_agents": 6}}
    with pytest.raises(ValueError, match=r"mixture\[1\]' has action: residual.*action: velocity"):
        orca_env.parallel_env(cfg)
    cfg["action"] = "residual"  # next to mixture: applies to every entry
    env = orca_env.parallel_env(cfg)
    assert policy_settings(cfg)["action"] == "residual"
    for seed in range(4):
        env.reset(seed=seed)
        assert env.episode_config.action == "residual"
        assert all(not a.any() for a in env.heuristic_actions().values())


def test_orca_noise_policy_perturbs_by_its_noise_bound_in_residual_mode():
    from orca_env.baselines import OrcaPolicy

    env = orca_env.parallel_env("circle_dense", action="residual")
    obs, _ = env.reset(seed=3)
    live = env.live_slots.copy()
    to_t = env.targets[live] - env.sim.positions[live]
    d = np.linalg.norm(to_t, axis=1)
    clean = to_t * np.minimum(1.0, env.pref_speeds[live] / d)[:, None]
    env.step(OrcaPolicy(noise=0.05, seed=1)(obs, env))
    dev = np.linalg.norm(env.sim.pref_velocities[live] - clean, axis=1)
    # U(0, 0.05) m/s in a uniform direction (then shortened to the max speed): not doubled.
    assert dev.max() <= 0.05 + 1e-6 and dev.max() > 0.02
