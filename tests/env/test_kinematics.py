"""Robot kinematics (unicycle, differential drive) and NH-ORCA, the non-holonomic safety layer."""

from __future__ import annotations

import os

import numpy as np
import pytest

import orca_env
from orca_env.kinematics import nh
from orca_env.kinematics.base import P_TRACKING_ERROR
from orca_env.vector import OrcaVectorEnv


def _robot_env(kin, count=1, humans=5, visible=None, **robot):
    groups = [{"name": "robot", "population": "learned", "count": count, "kinematics": kin,
               "visible_to": visible, **robot}]
    if humans:
        groups.append({"name": "humans", "population": "orca", "count": humans,
                       "on_goal": "stay"})
    return orca_env.parallel_env("crowdnav_circle", groups=groups)


def _swap_config(kin, n=14, **robot):
    """NH-ORCA's experiment: n robots on a circle swap to the antipodes."""
    return {"scenario": "circle_v0", "scenario_kwargs": {"circle_radius": 5.0, "jitter": 0.05},
            "max_steps": 200,
            "groups": [{"name": "robots", "population": "learned", "count": n, "radius": 0.3,
                        "max_speed": 1.0, "pref_speed": 1.0, "neighbor_dist": 5.0,
                        "max_neighbors": 10, "time_horizon": 5.0, "time_horizon_obst": 5.0,
                        "kinematics": kin, **robot}]}


# -- configuration ---------------------------------------------------------------------------
@pytest.mark.parametrize("group, match", [
    ({"kinematics": "tank"}, "kinematics.*must be one of.*tank"),
    ({"kinematics": "unicycle", "max_rotation": -0.1}, "max_rotation"),
    ({"kinematics": "unicycle", "max_rotation": 0.0}, "max_rotation"),
    ({"kinematics": "differential_drive", "max_acceleration": -1.0}, "max_acceleration"),
    ({"kinematics": "differential_drive", "max_angular_speed": float("nan")},
     "max_angular_speed"),
    ({"kinematics": "unicycle", "tracking_error": -0.1}, "tracking_error"),
    ({"kinematics": "differential_drive", "tracking_time": 0.1}, "tracking_time.*time step"),
    ({"kinematics": "differential_drive", "max_rotation": 0.5}, "max_rotation.*unicycle"),
    ({"kinematics": "holonomic", "tracking_error": 0.1}, "tracking_error"),
    ({"kinematics": "unicycle", "wheel_actions": True}, "wheel_actions"),
])
def test_bad_kinematics_keys_name_the_key(group, match):
    with pytest.raises(ValueError, match=match):
        orca_env.parallel_env("crowdnav_circle", groups=[
            {"population": "learned", "count": 1, **group},
            {"population": "orca", "count": 2}])


def test_residual_actions_and_mixed_learned_kinematics_are_refused():
    with pytest.raises(ValueError, match="'action'.*unicycle"):
        orca_env.parallel_env("crowdnav_circle", action="residual", groups=[
            {"population": "learned", "count": 1, "kinematics": "unicycle"}])
    with pytest.raises(ValueError, match="same kinematics"):
        orca_env.parallel_env("crowdnav_circle", groups=[
            {"population": "learned", "count": 1, "kinematics": "unicycle"},
            {"population": "learned", "count": 1}])


# -- the models -------------------------------------------------------------------------------
def test_unicycle_without_safety_layer_is_crowdnavs_step():
    """CrowdNav's ActionRot(v, r): the heading turns by r first, then v * dt along it."""
    env = _robot_env("unicycle", humans=0, safety_layer=False)
    env.reset(seed=3)
    b, dt = env._batch, env.time_step
    for a in ([1.0, 0.5], [0.0, -1.0], [-1.0, 1.0], [0.3, 0.2]):
        p0, h0 = b.positions[0].copy(), b.headings[0]
        env.step({"agent_0": np.array(a, np.float32)})
        v, r = 0.5 * (a[0] + 1.0) * 1.0, a[1] * np.pi / 4
        h = h0 + r
        np.testing.assert_allclose(b.positions[0], p0 + v * dt * np.array([np.cos(h), np.sin(h)]),
                                   atol=1e-12)
        assert np.isclose(np.cos(b.headings[0]), np.cos(h)) and \
            np.isclose(np.sin(b.headings[0]), np.sin(h))


def test_non_holonomic_actions_are_clipped_to_the_box_not_the_norm():
    env = _robot_env("differential_drive", humans=0, safety_layer=False,
                     max_acceleration=100.0, max_angular_acceleration=100.0)
    env.reset(seed=0)
    env.step({"agent_0": np.array([1.0, 1.0], np.float32)})  # norm sqrt(2), inside the box
    b = env._batch
    assert np.isclose(b._slots.lin_vel[0], 1.0) and np.isclose(b.angular_velocities[0], np.pi)


def test_differential_drive_respects_acceleration_limits():
    env = _robot_env("differential_drive", humans=0, safety_layer=False)
    env.reset(seed=0)
    b, dt = env._batch, env.time_step
    v_prev, w_prev = 0.0, 0.0
    for _ in range(6):
        env.step({"agent_0": np.array([1.0, -1.0], np.float32)})
        v, w = b._slots.lin_vel[0], b.angular_velocities[0]
        assert abs(v - v_prev) <= 1.0 * dt + 1e-12 and abs(w - w_prev) <= 2.0 * dt + 1e-12
        v_prev, w_prev = v, w
    assert np.isclose(v, 1.0) and np.isclose(w, -6 * 2.0 * dt)


def test_wheel_actions_map_to_speed_and_turn_rate():
    env = _robot_env("differential_drive", humans=0, safety_layer=False, wheel_actions=True,
                     wheel_base=0.5, max_acceleration=100.0, max_angular_acceleration=100.0)
    env.reset(seed=0)
    env.step({"agent_0": np.array([0.2, 0.6], np.float32)})
    b = env._batch
    assert np.isclose(b._slots.lin_vel[0], 0.4) and np.isclose(b.angular_velocities[0], 0.8)


# -- NH-ORCA ----------------------------------------------------------------------------------
def test_max_track_speed_is_the_papers_error_bound():
    """At V(theta) the paper's tracking trajectory ends exactly E from the reference point."""
    T, E = 0.5, 0.1
    for th in (0.2, 0.7, 1.4, 2.0, 3.0):
        u = nh.max_track_speed(th, T, E, 10.0, 100.0)
        v = u * th * np.sin(th) / (2 * (1 - np.cos(th)))
        w = th / T
        end = np.array([v / w * np.sin(th), v / w * (1 - np.cos(th))])
        ref = u * T * np.array([np.cos(th), np.sin(th)])
        assert np.isclose(np.linalg.norm(end - ref), E)
    assert nh.max_track_speed(0.0, T, E, 1.0, 3.0) == 1.0
    assert nh.max_track_speed(3.0, T, E, 1.0, 1.0) == pytest.approx(E * 1.0 / 3.0)


@pytest.mark.parametrize("kin, extra", [
    ("unicycle", {}),
    ("differential_drive", {"max_acceleration": 1000.0, "max_angular_acceleration": 1000.0}),
])
def test_nh_orca_circle_swap_without_collision_within_the_tracking_bound(kin, extra):
    """The paper's claims: robots swap on a circle without collision, error within E."""
    env = orca_env.parallel_env(_swap_config(kin, **extra))
    env.reset(seed=0)
    b, dt = env._batch, env.time_step
    E = b.kin_params[0, P_TRACKING_ERROR]
    statuses, worst = {}, 0.0
    while env.agents:
        p0 = b.positions.copy()
        act = b.active.copy()
        _, _, _, _, infos = env.step(env.heuristic_actions())
        ref = p0 + b._work.new_vel * dt  # ORCA's reference velocity, before the robot's motion
        err = np.linalg.norm(b.positions - ref, axis=1)[act]
        worst = max(worst, float(err.max()))
        statuses.update({a: i["status"] for a, i in infos.items()})
    assert len(statuses) == 14
    assert set(statuses.values()) == {"at_goal"}, statuses
    assert worst <= E + 1e-9, worst


def test_orca_crowd_agents_with_unicycle_kinematics_use_nh_orca():
    cfg = _swap_config("holonomic", n=1)
    cfg["groups"].append({"name": "crowd", "population": "orca", "count": 11, "radius": 0.3,
                          "max_speed": 1.0, "pref_speed": 1.0, "kinematics": "unicycle",
                          "on_goal": "stay", "neighbor_dist": 5.0, "time_horizon": 5.0})
    env = orca_env.parallel_env(cfg)
    env.reset(seed=1)
    b = env._batch
    h0 = b.headings[1:].copy()
    for _ in range(40):
        if not env.agents:
            break
        env.step(env.heuristic_actions())
        v = b.velocities[1:]
        # A unicycle moves only along its heading: no sideways velocity.
        side = -v[:, 0] * np.sin(b.headings[1:]) + v[:, 1] * np.cos(b.headings[1:])
        assert np.abs(side).max() < 1e-9
    assert not np.allclose(b.headings[1:], h0)


def test_unicycle_with_zero_tracking_error_moves_along_its_heading_only():
    env = orca_env.parallel_env(_swap_config("unicycle", n=6, tracking_error=0.0))
    env.reset(seed=0)
    b = env._batch
    for _ in range(10):
        h = b.headings[:6].copy()
        env.step(env.heuristic_actions())
        # E = 0: the reference velocity lies within max_rotation of the heading (error 0).
        u = b._work.new_vel[:6]
        ang = np.abs(np.angle(np.exp(1j * (np.arctan2(u[:, 1], u[:, 0]) - h))))
        fast = np.linalg.norm(u, axis=1) > 1e-9
        assert np.all(ang[fast] <= np.pi / 4 + 1e-9)


def test_hard_velocity_lines_that_do_not_bind_leave_orca_unchanged():
    """NH-ORCA's polygon lines enter the LP as hard lines; where they do not bind (a polygon far
    outside the speed disc) the velocities are bit-identical to plain ORCA, obstacles included."""
    from orca_env.core import Simulator
    from orca_env.core.batch import step_world
    from orca_env.core.kernels import AgentParams

    sim = Simulator(time_step=0.25, neighbor_dist=5.0, max_neighbors=10, time_horizon=5.0,
                    time_horizon_obst=5.0, radius=0.3, max_speed=1.0)
    sim.add_obstacle([(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)])
    sim.process_obstacles()
    rng = np.random.default_rng(0)
    n = 30
    pos0 = np.concatenate([rng.uniform(-4, -1.5, (n // 2, 2)), rng.uniform(1.5, 4, (n // 2, 2))])
    pref = rng.uniform(-1, 1, (n, 2))
    order, boxes = sim.obstacle_index
    obst = (sim.obstacle_points, sim.obstacle_next, sim.obstacle_prev, sim.obstacle_unit_dirs,
            sim.obstacle_convex, order, boxes)
    params = tuple(np.full(n, v, dtype=np.int64 if f in ("max_neighbors", "layer", "avoid_mask")
                           else np.float64)
                   for f, v in zip(AgentParams._fields, (0.3, 1.0, 5.0, 10, 5.0, 5.0, 0.5, 1, -1),
                                   strict=True))
    vlines = np.zeros((n, nh.POLYGON, 4))
    nv = np.zeros(n, dtype=np.int64)
    for i in range(n):
        nv[i] = nh.velocity_polygon(0.3 * i, np.full(nh.POLYGON, 50.0), vlines, i)
    results = []
    for vl, nvl in ((vlines[:, :0], nv[:0]), (vlines, nv)):
        pos, vel = pos0.copy(), np.zeros((n, 2))
        for _ in range(12):
            out = (np.zeros((n, 2)), np.zeros(n, np.int64), np.zeros(n, bool), np.zeros(n, bool),
                   np.zeros(n))
            nodes = (np.zeros(2 * n, np.int64), np.zeros(2 * n, np.int64),
                     np.zeros(2 * n, np.int64), np.zeros(2 * n, np.int64), np.zeros((2 * n, 4)))
            step_world(pos, vel, pref, np.ones(n, bool), np.arange(n, dtype=np.int64), params,
                       0.25, obst, 10, out, nodes, np.zeros((n, 2)), vl, nvl)
        results.append((pos, vel))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])
    assert not np.allclose(results[0][0], pos0)


# -- the vector env ---------------------------------------------------------------------------
@pytest.mark.parametrize("kin", ["unicycle", "differential_drive"])
def test_vector_env_worlds_match_single_envs(kin):
    cfg = _swap_config(kin, n=6)
    cfg["groups"].append({"name": "crowd", "population": "orca", "count": 4, "radius": 0.3,
                          "kinematics": kin, "on_goal": "stay"})
    vec = OrcaVectorEnv(cfg, 2, seed=11)
    obs, _ = vec.reset()
    rng = np.random.default_rng(0)
    acts = [rng.uniform(-1, 1, (vec.num_envs, 2)).astype(np.float32) for _ in range(15)]
    singles = []
    for b in range(2):
        env = orca_env.parallel_env(cfg)
        env.reset(seed=11 + b)
        singles.append(env)
    for a in acts:
        vec.step(a)
        for b, env in enumerate(singles):
            if env.agents:
                env.step({ag: a[b * 6 + k].astype(np.float32)
                          for k, ag in enumerate(env.possible_agents) if ag in env.agents})
    for b, env in enumerate(singles):
        s = slice(int(vec._batch.offsets[b]), int(vec._batch.offsets[b + 1]))
        np.testing.assert_array_equal(vec._batch.positions[s], env._batch.positions)
        np.testing.assert_array_equal(vec._batch.headings[s], env._batch.headings)


# -- observations -----------------------------------------------------------------------------
def test_non_holonomic_agents_observe_heading_and_turn_rate_holonomic_ones_do_not():
    holo = _robot_env("holonomic")
    uni = _robot_env("unicycle", safety_layer=False)
    assert uni.observation_space("agent_0").shape[0] == \
        holo.observation_space("agent_0").shape[0] + 3
    obs, _ = uni.reset(seed=0)
    np.testing.assert_allclose(obs["agent_0"][-3:], [1.0, 0.0, 0.0], atol=1e-6)  # faces its goal
    obs, *_ = uni.step({"agent_0": np.array([1.0, 1.0], np.float32)})  # full left turn
    b = uni._batch
    assert np.isclose(obs["agent_0"][-1], b.angular_velocities[0] / (np.pi / 4 / uni.time_step),
                      atol=1e-6)
    assert np.isclose(obs["agent_0"][-1], 1.0)
    h = np.pi / 4  # turned by max_rotation from facing the goal: (cos, sin) in the goal frame
    assert np.allclose(obs["agent_0"][-3:-1], [np.cos(h), np.sin(h)], atol=0.05)
    assert uni.observation_space("agent_0").contains(obs["agent_0"])


def test_a_model_of_other_kinematics_is_refused_naming_both():
    from orca_env.policies import TRAINED_DIR, load_policy

    holonomic = os.path.join(TRAINED_DIR, "crowdnav_circle")
    unicycle = os.path.join(TRAINED_DIR, "crowdnav_unicycle")
    with pytest.raises(ValueError, match="kinematics 'holonomic'.*have 'unicycle'"):
        load_policy(holonomic, orca_env.parallel_env("crowdnav_circle_unicycle_invisible"))
    with pytest.raises(ValueError, match="kinematics 'unicycle'.*have 'holonomic'"):
        load_policy(unicycle, orca_env.parallel_env("crowdnav_circle_invisible"))
    # A differential drive acts with the unicycle's action shape but other meanings.
    with pytest.raises(ValueError, match="kinematics 'unicycle'.*'differential_drive'"):
        load_policy(unicycle, orca_env.parallel_env(
            "crowdnav_circle_unicycle_invisible", groups=[
                {"name": "robot", "population": "learned", "count": 1, "visible_to": [],
                 "kinematics": "differential_drive"},
                {"name": "humans", "population": "orca", "count": 5, "on_goal": "stay"}]))
