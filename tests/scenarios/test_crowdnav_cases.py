"""CrowdNav's test cases (``layout: crowdnav_test``): case i here is CrowdNav's case i.

CrowdNav cannot run here, so the expectations come from its rules, written out a second time
below as a plain transcription of ``crowd_sim.py`` (``reset``, ``generate_circle_crossing_human``,
``generate_square_crossing_human``) and ``agent.py`` (``sample_random_attributes``), with a
``RandomState`` standing for its seeded global generator, and from properties of the rules.
"""

import numpy as np
import pytest

import orca_env
from orca_env.scenarios import SpawnError, make_scenario
from orca_env.scenarios.crowdnav_circle import CROWDNAV_TEST_SEED

CIRCLE = dict(scenario="crowdnav_circle_v0", scenario_kwargs={"layout": "crowdnav_test"})
SQUARE = dict(scenario="crowdnav_square_v0", scenario_kwargs={"layout": "crowdnav_test"})
RANDOM_HUMANS = [{"name": "robot", "population": "learned", "count": 1},
                 {"name": "humans", "population": "orca", "count": 5,
                  "randomize_attributes": True, "pref_speed": 1.0}]


class Agent:
    def __init__(self, radius=0.3, v_pref=1.0):
        self.radius, self.v_pref = radius, v_pref
        self.px = self.py = self.gx = self.gy = None


def crowdnav_reference(rule, case, human_num=5, randomize=False):
    """CrowdNav's test-phase ``reset`` for ``case``, transcribed from its source."""
    rng = np.random.RandomState(1000 + case)  # CrowdNav: np.random.seed(counter_offset + case)
    robot = Agent()
    robot.px, robot.py, robot.gx, robot.gy = 0, -4, 0, 4  # robot.set(0, -R, 0, R, ...), R = 4
    humans = []
    for _ in range(human_num):
        human = Agent()
        if randomize:
            human.v_pref = rng.uniform(0.5, 1.5)
            human.radius = rng.uniform(0.3, 0.5)
        if rule == "circle":
            while True:
                angle = rng.random_sample() * np.pi * 2
                px_noise = (rng.random_sample() - 0.5) * human.v_pref
                py_noise = (rng.random_sample() - 0.5) * human.v_pref
                px = 4 * np.cos(angle) + px_noise
                py = 4 * np.sin(angle) + py_noise
                collide = False
                for agent in [robot] + humans:
                    min_dist = human.radius + agent.radius + 0.2
                    if np.linalg.norm((px - agent.px, py - agent.py)) < min_dist or \
                            np.linalg.norm((px - agent.gx, py - agent.gy)) < min_dist:
                        collide = True
                        break
                if not collide:
                    break
            human.px, human.py, human.gx, human.gy = px, py, -px, -py
        else:
            sign = -1 if rng.random_sample() > 0.5 else 1
            while True:
                px = rng.random_sample() * 10 * 0.5 * sign
                py = (rng.random_sample() - 0.5) * 10
                if all(np.linalg.norm((px - a.px, py - a.py)) >= human.radius + a.radius + 0.2
                       for a in [robot] + humans):
                    break
            while True:
                gx = rng.random_sample() * 10 * 0.5 * -sign
                gy = (rng.random_sample() - 0.5) * 10
                if all(np.linalg.norm((gx - a.gx, gy - a.gy)) >= human.radius + a.radius + 0.2
                       for a in [robot] + humans):
                    break
            human.px, human.py, human.gx, human.gy = px, py, gx, gy
        humans.append(human)
    agents = [robot] + humans
    return (np.array([(a.px, a.py) for a in agents], dtype=float),
            np.array([(a.gx, a.gy) for a in agents], dtype=float),
            np.array([a.radius for a in agents]), np.array([a.v_pref for a in agents]))


@pytest.mark.parametrize("rule, kw", [("circle", CIRCLE), ("square", SQUARE)])
@pytest.mark.parametrize("randomize", [False, True])
def test_cases_match_crowdnav_rules(rule, kw, randomize):
    env = orca_env.parallel_env(**kw, groups=RANDOM_HUMANS if randomize else None)
    for case in list(range(40)) + [123, 499]:
        env.reset(seed=10_000 + case)  # evaluation episode k is case k
        assert env.scenario.case == case
        s, g, r, v = crowdnav_reference(rule, case, randomize=randomize)
        assert np.array_equal(env.starts, s), case
        assert np.array_equal(env.goals, g), case
        assert np.array_equal(env.radii, r) and np.array_equal(env.max_speeds, v), case
        assert np.array_equal(env.sim.positions, s)  # the agents stand there
    if randomize:  # the drawn attributes vary and respect CrowdNav's ranges
        assert 0.3 <= env.radii[1:].min() < env.radii[1:].max() <= 0.5
        assert 0.5 <= env.max_speeds[1:].min() < env.max_speeds[1:].max() <= 1.5


def test_case_zero_by_hand():
    """Case 0, human 1 of the circle, from the first three numbers of seed 1000."""
    u = np.random.RandomState(1000).random_sample(3)
    angle = u[0] * np.pi * 2
    p = 4 * np.array([np.cos(angle), np.sin(angle)]) + (u[1:] - 0.5)
    # The draw is accepted unless it lies within 0.8 m of the robot's start or goal.
    assert min(np.linalg.norm(p - (0, -4)), np.linalg.norm(p - (0, 4))) >= 0.8
    env = orca_env.parallel_env(**CIRCLE)
    env.reset(seed=10_000)
    assert np.array_equal(env.starts[1], p) and np.array_equal(env.goals[1], -p)
    assert CROWDNAV_TEST_SEED == 1000


@pytest.mark.parametrize("kw", [CIRCLE, SQUARE])
def test_layout_properties(kw):
    env = orca_env.parallel_env(**kw)
    for case in range(60):
        env.reset(seed=10_000 + case)
        s, g, r = env.starts, env.goals, env.radii
        assert tuple(s[0]) == (0.0, -4.0) and tuple(g[0]) == (0.0, 4.0)  # CrowdNav's robot
        for h in range(1, 6):
            need = r[h] + r[:h] + 0.2  # CrowdNav's rejection distance to every earlier agent
            if kw is CIRCLE:
                assert np.array_equal(g[h], -s[h])
                assert (np.linalg.norm(s[h] - s[:h], axis=1) >= need).all()
                assert (np.linalg.norm(s[h] - g[:h], axis=1) >= need).all()
                # On the circle of radius 4, up to noise U(-0.5, 0.5) per axis.
                assert abs(np.linalg.norm(s[h]) - 4.0) <= np.sqrt(0.5)
            else:
                assert (np.linalg.norm(s[h] - s[:h], axis=1) >= need).all()
                assert (np.linalg.norm(g[h] - g[:h], axis=1) >= need).all()
                assert s[h, 0] * g[h, 0] <= 0.0  # start and goal on opposite sides of x = 0
                assert (np.abs(s[h]) <= 5.0).all() and (np.abs(g[h]) <= 5.0).all()


def test_square_goals_are_only_checked_against_goals():
    """CrowdNav's square crossing checks goals against goals only: some goal lies on a start."""
    env = orca_env.parallel_env(**SQUARE)
    found = False
    for case in range(500):
        env.reset(seed=10_000 + case)
        d = np.linalg.norm(env.goals[:, None] - env.starts[None], axis=2)
        np.fill_diagonal(d, np.inf)
        if (d < 0.8).any():
            found = True
            break
    assert found


def test_case_index_from_seed_and_episode():
    env = orca_env.parallel_env(**CIRCLE)
    env.reset(seed=10_000 + 7)
    first = env.starts.copy()
    assert env.scenario.case == 7
    env.reset()  # like CrowdNav's case counter: the next case
    assert env.scenario.case == 8
    env.reset()
    assert env.scenario.case == 9
    env.reset(seed=7)  # seed % 500
    assert env.scenario.case == 7 and np.array_equal(env.starts, first)
    env.reset(seed=10_499)
    assert env.scenario.case == 499
    env.reset()
    assert env.scenario.case == 0  # CrowdNav's counter wraps at test_size
    small = orca_env.parallel_env(scenario="crowdnav_circle_v0",
                                  scenario_kwargs={"layout": "crowdnav_test", "test_cases": 100})
    small.reset(seed=10_000 + 250)
    assert small.scenario.case == 50
    env.reset(seed=10_050)
    assert np.array_equal(small.starts, env.starts)  # case 50 is case 50
    plain = orca_env.parallel_env(scenario="crowdnav_circle_v0")
    plain.reset(seed=3)
    assert plain.scenario.case is None


@pytest.mark.parametrize("name, kwargs, match", [
    ("crowdnav_circle_v0", {"layout": "crowdnav"}, r"layout.*one of.*'crowdnav'"),
    ("crowdnav_square_v0", {"layout": "crowdnav_test", "test_cases": 1001},
     r"test_cases.*at most 1000.*1001"),
    ("crowdnav_circle_v0", {"layout": "crowdnav_test", "test_cases": 0},
     r"test_cases.*positive"),
    ("crowdnav_circle_v0", {"layout": "crowdnav_test", "robot_fixed": False},
     r"robot_fixed.*crowdnav_test"),
    ("crowdnav_square_v0", {"layout": 3}, r"layout.*must be a str"),
])
def test_layout_parameter_errors(name, kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_scenario(name, **kwargs)


def test_randomized_robot_is_refused():
    env = orca_env.parallel_env(**CIRCLE, groups=[
        {"population": "learned", "count": 1, "randomize_attributes": True},
        {"population": "orca", "count": 5}])
    with pytest.raises(ValueError, match="slot 0 is CrowdNav's robot"):
        env.reset(seed=0)


def test_impossible_case_gives_up():
    env = orca_env.parallel_env(**SQUARE, groups=[{"population": "learned", "count": 1},
                                                  {"population": "orca", "count": 200}])
    with pytest.raises(SpawnError, match="CrowdNav test case 0: slot .* found no start"):
        env.reset(seed=10_000)
