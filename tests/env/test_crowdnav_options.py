"""Config options that express CrowdNav's settings: who avoids whom, ORCA padding, linear
humans, randomized attributes, CrowdNav's time limit and collision check."""

import numpy as np
import pytest

import orca_env
from orca_env.codes import Population
from orca_env.collisions import agent_collisions, agent_collisions_crowdnav
from orca_env.config import EnvConfig, load_config
from orca_env.environment import crowdnav_last_step


def groups(robot=None, humans=None, n=5):
    return [dict(name="robot", population="learned", count=1, **(robot or {})),
            dict(name="humans", population="orca", count=n, on_goal="stay", **(humans or {}))]


def run(env, seed, steps=200):
    """Pure ORCA for the robot; the robot's positions and the final infos."""
    env.reset(seed=seed)
    path, infos = [], {}
    while env.agents and steps:
        _, _, _, _, infos = env.step(env.heuristic_actions())
        path.append(env.sim.positions.copy())
        steps -= 1
    return np.array(path), infos


# -- visibility ------------------------------------------------------------------------------
def test_no_visibility_keys_is_rvo2():
    env = orca_env.parallel_env("crowdnav_circle")
    env.reset(seed=0)
    assert env.sim.layers.tolist() == [1] * 6 and env.sim.avoid_masks.tolist() == [-1] * 6


def test_invisible_robot_layers():
    env = orca_env.parallel_env(scenario="crowdnav_circle_v0",
                                groups=groups(robot={"visible_to": []}))
    env.reset(seed=0)
    layer, mask = env.sim.layers, env.sim.avoid_masks
    assert layer.tolist() == [1, 2, 2, 2, 2, 2]  # group g is bit g
    assert mask[0] == 0b10  # the robot avoids the humans (and would avoid robots: not visible)
    assert (mask[1:] == 0b10).all()  # humans avoid humans only
    # Nobody avoids the robot; the robot avoids everyone.
    assert not (mask[1:] & layer[0]).any() and all(mask[0] & layer[1:])


def test_visible_to_and_avoids_are_two_ways_to_say_it():
    a = orca_env.parallel_env(scenario="crowdnav_circle_v0",
                              groups=groups(robot={"visible_to": []}))
    b = orca_env.parallel_env(scenario="crowdnav_circle_v0",
                              groups=groups(humans={"avoids": ["humans"]}))
    visible = orca_env.parallel_env(scenario="crowdnav_circle_v0", groups=groups())
    pa, _ = run(a, 3)
    pb, _ = run(b, 3)
    pv, _ = run(visible, 3)
    assert np.array_equal(pa, pb)
    assert pa.shape != pv.shape or not np.array_equal(pa, pv)  # invisibility changes the run


def test_invisible_robot_is_ignored_by_the_humans():
    """Head-on: a visible robot is avoided (the human swerves), an invisible one is not."""
    def human_path(robot):
        env = orca_env.parallel_env(scenario="crowdnav_circle_v0", on_collision="continue",
                                    groups=groups(robot=robot, humans={"noise": 0.0}, n=1))
        env.reset(seed=0)
        env.sim.set_positions(np.array([[0.0, 0.0], [0.05, 2.0]]))
        env.set_goals(np.array([[0.0, 4.0], [0.05, -4.0]]))
        xs = []
        for _ in range(16):
            env.step({"agent_0": np.zeros(2, dtype=np.float32)})  # the robot stands still
            xs.append(env.sim.positions[1, 0])
        return np.array(xs)

    seen = human_path({})
    unseen = human_path({"visible_to": []})
    assert np.abs(seen - 0.05).max() > 0.1  # swerves around the robot it sees
    assert np.allclose(unseen, 0.05)  # walks straight into the robot it does not see


@pytest.mark.parametrize("grp, match", [
    (groups(robot={"visible_to": ["human"]}), r"groups\[0\]\.visible_to\[0\]' names no group: "
                                              r"'human'.*\['robot', 'humans'\]"),
    (groups(humans={"avoids": ["humans", 3]}), r"groups\[1\]\.avoids\[1\]' must be a string"),
    (groups(humans={"avoids": "humans"}), r"groups\[1\]\.avoids' must be a list"),
    ([dict(population="learned", count=1), dict(population="linear", count=2, avoids=[])],
     r"groups\[1\]\.avoids': linear agents avoid no one"),
    (groups(humans={"randomize_attributes": True, "radius": 0.4}),
     r"groups\[1\]\.radius' cannot be set with randomize_attributes"),
    (groups(humans={"randomize_attributes": True, "max_speed": 1.2}),
     r"groups\[1\]\.max_speed' cannot be set with randomize_attributes"),
    (groups(humans={"orca_padding": -0.01}), r"groups\[1\]\.orca_padding' must be >= 0"),
    (groups(humans={"randomize_attributes": 1}), r"randomize_attributes' must be true or false"),
])
def test_group_key_errors(grp, match):
    with pytest.raises(ValueError, match=match):
        orca_env.parallel_env(scenario="crowdnav_circle_v0", groups=grp)


@pytest.mark.parametrize("kw, match", [
    (dict(time_limit_rule="crowdnav_v1"), r"time_limit_rule' must be one of \['steps', "
                                          r"'crowdnav'\]"),
    (dict(collision_check="exact"), r"collision_check' must be one of \['swept', 'crowdnav'\]"),
])
def test_env_key_errors(kw, match):
    with pytest.raises(ValueError, match=match):
        orca_env.parallel_env(scenario="crowdnav_circle_v0", **kw)


def test_new_keys_stay_out_of_reports_at_their_defaults():
    plain = load_config("crowdnav_circle").to_dict()
    for g in plain["groups"]:
        assert not {"avoids", "visible_to", "orca_padding", "randomize_attributes"} & set(g)
    assert "time_limit_rule" not in plain and "collision_check" not in plain
    used = load_config("crowdnav_circle_invisible").to_dict()
    assert used["groups"][0]["visible_to"] == [] and used["groups"][0]["orca_padding"] == 0.01
    assert used["time_limit_rule"] == "crowdnav" and used["collision_check"] == "crowdnav"
    assert load_config(used) == load_config("crowdnav_circle_invisible")
    assert load_config(plain) == load_config("crowdnav_circle") == load_config(
        EnvConfig(**{**load_config("crowdnav_circle").__dict__}))


# -- ORCA padding ----------------------------------------------------------------------------
def test_padding_is_inside_orca_only():
    env = orca_env.parallel_env(scenario="crowdnav_circle_v0",
                                groups=groups(robot={"orca_padding": 0.01},
                                              humans={"orca_padding": 0.05}))
    obs, _ = env.reset(seed=1)
    assert np.array_equal(env.sim.radii, [0.31] + [0.35] * 5)
    assert np.array_equal(env.radii, [0.3] * 6)
    plain = orca_env.parallel_env(scenario="crowdnav_circle_v0", groups=groups())
    obs_plain, _ = plain.reset(seed=1)
    assert np.array_equal(obs["agent_0"], obs_plain["agent_0"])  # observations: physical radii
    pa, _ = run(env, 1)
    pb, _ = run(plain, 1)
    assert pa.shape != pb.shape or not np.array_equal(pa, pb)  # ORCA keeps more distance


# -- linear humans ---------------------------------------------------------------------------
def test_linear_humans_walk_straight_and_are_avoided():
    env = orca_env.parallel_env(scenario="crowdnav_circle_v0", groups=[
        dict(population="learned", count=1), dict(population="linear", count=5, on_goal="stay")])
    env.reset(seed=2)
    assert (env.populations[1:] == Population.LINEAR).all()
    assert env.sim.avoid_masks.tolist() == [-1, 0, 0, 0, 0, 0]
    assert env.sim.responsibilities.tolist() == [1.0] * 6 and not env.noise_magnitudes.any()
    start = env.sim.positions[1:].copy()
    goal = env.goals[1:].copy()
    robot_lines = 0
    for t in range(1, 6):
        env.step(env.heuristic_actions())
        robot_lines = max(robot_lines, int(env.sim.num_orca_lines[0]))
        # Straight at pref_speed 1 towards the goal, exactly as planned: ORCA changed nothing.
        d = goal - start
        expect = start + d / np.linalg.norm(d, axis=1)[:, None] * 0.25 * t
        assert np.allclose(env.sim.positions[1:], expect, atol=1e-12)
        assert (env.sim.num_orca_lines[1:] == 0).all()
    assert robot_lines > 0  # the robot does avoid them


# -- randomized attributes -------------------------------------------------------------------
def test_randomize_attributes():
    env = orca_env.parallel_env(scenario="crowdnav_square_v0", groups=groups(
        humans={"randomize_attributes": True}, n=15))
    space = env.observation_space("agent_0")
    radii, speeds = [], []
    for seed in range(3):
        env.reset(seed=seed)
        r, v = env.radii.copy(), env.max_speeds.copy()
        assert r[0] == 0.3 and v[0] == 1.0  # the robot's group is not randomized
        assert ((r[1:] >= 0.3) & (r[1:] <= 0.5)).all() and ((v[1:] >= 0.5) & (v[1:] <= 1.5)).all()
        assert np.array_equal(env.sim.radii, r) and np.array_equal(env.sim.max_speeds, v)
        assert np.array_equal(env.pref_speeds[1:], v[1:])  # pref_speed unset: v_pref
        radii.append(r)
        speeds.append(v)
    assert not np.array_equal(radii[0], radii[1])  # drawn anew every episode
    env.reset(seed=0)
    assert np.array_equal(env.radii, radii[0]) and np.array_equal(env.max_speeds, speeds[0])
    # Spaces hold every episode: R and V of the layout are the ranges' upper ends.
    plain = orca_env.parallel_env(scenario="crowdnav_square_v0", groups=groups(n=15))
    assert space.high[6] == np.float32(0.5) and space.high[7] >= 1.5
    assert plain.observation_space("agent_0").high[7] < 1.5
    assert space.high[8 + 4] == np.float32(0.5)  # a neighbour's radius
    fixed_pref = orca_env.parallel_env(scenario="crowdnav_square_v0", groups=groups(
        humans={"randomize_attributes": True, "pref_speed": 1.0}))
    fixed_pref.reset(seed=0)
    assert (fixed_pref.pref_speeds == 1.0).all() and (fixed_pref.max_speeds[1:] != 1.0).all()


def test_randomize_keeps_the_collision_tolerance_check():
    with pytest.raises(ValueError, match=r"collision_tolerance.*smallest agent radius \(0\.3"):
        orca_env.parallel_env(scenario="crowdnav_circle_v0", collision_tolerance=0.3,
                              groups=groups(humans={"randomize_attributes": True,
                                                    "pref_speed": 1.0}))


# -- CrowdNav's episode end ------------------------------------------------------------------
def test_crowdnav_last_step():
    assert crowdnav_last_step(100, 0.25) == (97, True)  # the step that starts at 24 s
    assert crowdnav_last_step(34, 0.25) == (31, True)
    assert crowdnav_last_step(4, 0.25) == (1, True)  # a limit under 1 s ends at once
    assert crowdnav_last_step(100, 0.1) == (91, True)
    assert crowdnav_last_step(3, 2.0) == (3, False)  # would come after max_steps


def test_time_limit_rule_overrides_the_goal():
    """Alone, the robot reaches its goal on step 33; with a CrowdNav time limit of 36 steps
    (9 s) step 33 (starting at 8 s) is the last, and it is a time-out."""
    alone = [dict(population="learned", count=1)]
    steps = orca_env.parallel_env(scenario="crowdnav_circle_v0", groups=alone, max_steps=36)
    crowd = orca_env.parallel_env(scenario="crowdnav_circle_v0", groups=alone, max_steps=36,
                                  time_limit_rule="crowdnav")
    assert crowd.last_step == 33
    for env, status, reward in ((steps, "at_goal", 1.0), (crowd, "timed_out", 0.0)):
        env.reset(seed=0)
        n = 0
        while env.agents:
            _, rew, term, trunc, infos = env.step(env.heuristic_actions())
            n += 1
        assert n == 33 and infos["agent_0"]["status"] == status
        assert infos["agent_0"]["reward_terms"]["goal"] == reward
        assert trunc["agent_0"] == (status == "timed_out") and term["agent_0"] != trunc["agent_0"]


def test_time_limit_rule_overrides_a_collision():
    """A robot that stands in the humans' way collides; not on CrowdNav's last step."""
    def last_status(rule, max_steps):
        env = orca_env.parallel_env(scenario="crowdnav_circle_v0", max_steps=max_steps,
                                    time_limit_rule=rule, collision_tolerance=0.0,
                                    groups=groups(robot={"visible_to": []}, n=1))
        env.reset(seed=0)
        env.sim.set_positions(np.array([[0.0, 0.0], [0.0, 2.0]]))
        env.set_goals(np.array([[0.0, 4.0], [0.0, -4.0]]))
        n = 0
        while env.agents:
            _, _, _, _, infos = env.step({"agent_0": np.zeros(2, dtype=np.float32)})
            n += 1
        return n, infos["agent_0"]["status"], infos["agent_0"]["collided_with"]

    hit = last_status("steps", 100)  # the human walks into the robot at step 6
    assert hit[1] == "collided" and hit[2] == "agent"
    k = hit[0]
    # CrowdNav's limit such that step k is the last: (k - 1) * 0.25 >= max_steps * 0.25 - 1.
    assert last_status("crowdnav", k + 3) == (k, "timed_out", None)
    assert last_status("crowdnav", k + 4)[1] == "collided"


def _crowdnav_reference(p0, p1, v0, dt, radii, i):
    """CrowdNav's step() check for robot i, transcribed (point_to_segment_dist to the origin)."""
    for j in range(len(radii)):
        if j == i:
            continue
        px, py = p0[j] - p0[i]
        vx, vy = v0[j] - (p1[i] - p0[i]) / dt
        ex, ey = px + vx * dt, py + vy * dt
        dx, dy = ex - px, ey - py
        if dx == 0 and dy == 0:
            d = np.hypot(px, py)
        else:
            u = min(1.0, max(0.0, ((0 - px) * dx + (0 - py) * dy) / (dx * dx + dy * dy)))
            d = np.hypot(px + u * dx, py + u * dy)
        if d - radii[j] - radii[i] < 0:
            return True
    return False


def test_crowdnav_collision_check_matches_its_rule():
    rng = np.random.default_rng(0)
    n, dt = 12, 0.25
    agree = hits = differ = 0
    for _ in range(300):
        p0 = rng.uniform(-3, 3, (n, 2))
        v0 = rng.uniform(-1, 1, (n, 2))
        v1 = rng.uniform(-1, 1, (n, 2))
        p1 = p0 + v1 * dt
        radii = rng.uniform(0.2, 0.4, n)
        check = np.arange(3)
        got = np.zeros(3, dtype=bool)
        agent_collisions_crowdnav(check, p0, p1, v0, dt, radii, np.ones(n, dtype=bool), 0.0, got)
        swept = np.zeros(3, dtype=bool)
        agent_collisions(check, p0, p1, radii, np.ones(n, dtype=bool), 0.0, swept)
        for r, i in enumerate(check):
            agree += got[r] == _crowdnav_reference(p0, p1, v0, dt, radii, i)
            hits += got[r]
            differ += got[r] != swept[r]
    assert agree == 900 and 50 < hits < 850
    assert differ > 0  # the others' old velocities are not their real motion
    # Inactive agents are not hit; with v0 = the real velocities it is the swept check.
    p0 = np.array([[0.0, 0.0], [0.5, 0.0]])
    got = np.zeros(1, dtype=bool)
    agent_collisions_crowdnav(np.array([0]), p0, p0, np.zeros((2, 2)), dt, np.full(2, 0.3),
                              np.array([True, False]), 0.0, got)
    assert not got[0]
    agent_collisions_crowdnav(np.array([0]), p0, p0, np.zeros((2, 2)), dt, np.full(2, 0.3),
                              np.array([True, True]), 0.0, got)
    assert got[0]


def test_invisible_config_is_crowdnavs_setting():
    env = orca_env.parallel_env("crowdnav_circle_invisible")
    cfg = env.config
    assert cfg.scenario_kwargs == {"layout": "crowdnav_test"} and env.max_steps == 100
    cfg = env.episode_config
    assert env.last_step == 97 and cfg.time_limit_rule == "crowdnav"
    assert cfg.collision_check == "crowdnav"
    assert cfg.collision_tolerance == 0.0 and not cfg.stall.end_episode
    env.reset(seed=10_000)
    assert np.array_equal(env.sim.radii, np.full(6, 0.31)) and not env.noise_magnitudes.any()
    assert env.sim.avoid_masks[1:].tolist() == [0b10] * 5 and env.sim.layers[0] == 1
