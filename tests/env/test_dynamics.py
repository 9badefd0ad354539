import numpy as np
import pytest
from small_configs import SMALL

import orca_env
from orca_env.collisions import agent_collisions, obstacle_collisions
from orca_env.scenarios import SCENARIOS


def test_swept_agent_collision_detected_mid_step():
    # Two discs pass through each other within one step: both ends are clear.
    p0 = np.array([[-1.0, 0.0], [1.0, 0.0], [10.0, 10.0]])
    p1 = np.array([[1.0, 0.0], [-1.0, 0.0], [10.0, 10.0]])
    hit = np.zeros(3, dtype=bool)
    agent_collisions(np.arange(3), p0, p1, np.full(3, 0.3), np.ones(3, bool), 0.0, hit)
    assert hit.tolist() == [True, True, False]
    p1b = np.array([[-0.5, 0.0], [0.5, 0.0], [10.0, 10.0]])
    agent_collisions(np.arange(3), p0, p1b, np.full(3, 0.3), np.ones(3, bool), 0.0, hit)
    assert not hit.any()


def test_swept_obstacle_collision_detected_through_thin_wall():
    pts = np.array([[0.0, -1.0], [0.1, -1.0], [0.1, 1.0], [0.0, 1.0]])
    nxt = np.array([1, 2, 3, 0])
    p0 = np.array([[-1.0, 0.0], [-1.0, 5.0]])
    p1 = np.array([[1.0, 0.0], [1.0, 5.0]])
    hit = np.zeros(2, dtype=bool)
    obstacle_collisions(np.arange(2), p0, p1, np.full(2, 0.3), pts, nxt, 0.0, hit)
    assert hit.tolist() == [True, False]


def test_unsafe_agents_collide_and_terminate():
    groups = [{"population": "learned", "count": 2, "safety_layer": False}]
    env = orca_env.parallel_env(scenario="crowdnav_circle_v0", groups=groups,
                                scenario_kwargs={"robot_fixed": False})
    env.reset(seed=0)
    env.sim.set_positions(np.array([[-0.4, 0.0], [0.4, 0.0]]))
    _, rew, term, _, infos = env.step({"agent_0": np.array([1.0, 0.0]),
                                       "agent_1": np.array([-1.0, 0.0])})
    assert term == {"agent_0": True, "agent_1": True}
    assert infos["agent_0"]["status"] == "collided"
    assert infos["agent_0"]["collided_with"] == "agent"
    assert infos["agent_0"]["reward_terms"]["collision"] == -0.25
    assert env.agents == [] and not env.sim.active.any()


def test_stall_detector_on_constructed_deadlock():
    # The doorway is far too narrow: everybody stalls at the wall.
    groups = [{"population": "learned", "count": 1}, {"population": "orca", "count": 2}]
    env = orca_env.parallel_env(scenario="bottleneck_v0", groups=groups,
                                scenario_kwargs={"door_width": 0.1},
                                stall={"window": 8, "speed_fraction": 0.05})
    env.reset(seed=0)
    statuses, deadlock_terms = [], []
    while env.agents:
        _, _, _, trunc, infos = env.step(env.heuristic_actions())
        statuses.append(infos["agent_0"]["status"])
        deadlock_terms.append(infos["agent_0"]["reward_terms"]["deadlock"])
    assert trunc["agent_0"] and statuses[-1] == "deadlocked"
    assert len(statuses) < env.max_steps
    assert deadlock_terms[-1] == pytest.approx(-0.05)
    assert "active" in statuses


# Scenarios where pure ORCA is expected to finish, and the ones where it may deadlock and must
# say so: the doorway without guidance (agents press into the wall beside the door), the small
# symmetric Circle (a perfectly symmetric jam at the centre: noise-free learned agents) and Blocks
# without the roadmap (noise-free agents stop dead on the outer block corners, which lie exactly
# on their straight line to the goal; RVO2 adds noise for this reason). The two-way doorway is a
# deadlock case by design (two flows meet in a door one agent wide), with or without guidance.
MAY_DEADLOCK = {("bottleneck_v0", False), ("circle_v0", False), ("blocks_v0", False),
                ("doorway_v0", False), ("doorway_v0", True)}


@pytest.mark.parametrize("name,guidance", [(n, g) for n in sorted(SCENARIOS)
                                           for g in ([False, True] if SCENARIOS[n].HAS_OBSTACLES
                                                     else [False])])
def test_pure_orca_completes(name, guidance):
    env = orca_env.parallel_env(scenario=name, guidance=guidance, on_collision="continue",
                                **SMALL.get(name, {}))
    for seed in (0, 1):
        env.reset(seed=seed)
        final = {}
        while env.agents:
            _, _, term, trunc, infos = env.step(env.heuristic_actions())
            for a in term:
                if term[a] or trunc[a]:
                    final[a] = infos[a]["status"]
        assert set(final) == set(env.possible_agents)
        allowed = {"at_goal", "deadlocked"} if (name, guidance) in MAY_DEADLOCK else {"at_goal"}
        assert set(final.values()) <= allowed, final


def _goal_crash_env(on_collision):
    """agent_0 is 0.5 m short of its goal and drives onto agent_1, parked right behind it."""
    g = {"population": "learned", "count": 2, "on_goal": "stay", "safety_layer": False,
         "radius": 0.3, "max_speed": 1.0, "pref_speed": 1.0}
    env = orca_env.parallel_env(scenario="circle_v0", scenario_kwargs={"circle_radius": 4.0},
                                groups=[g], stall={"end_episode": False},
                                on_collision=on_collision, observation={"frame": "world"})
    env.reset(seed=0)
    p = env.sim.positions.copy()
    goal0 = env.goals[0].copy()
    p[0] = goal0 - np.array([0.3, 0.0])
    p[1] = goal0 + np.array([0.15, 0.0])
    env.sim.set_positions(p)
    env.set_goals(env.goals.copy())  # same goals: waypoints and progress from the new positions
    return env.step({"agent_0": np.array([1.0, 0.0]), "agent_1": np.array([0.0, 0.0])})


def test_goal_and_collision_on_one_step_terminate_counts_as_collision():
    _, rew, term, _, infos = _goal_crash_env("terminate")
    info = infos["agent_0"]
    assert info["collided_with"] == "agent" and term["agent_0"]
    assert info["status"] == "collided"
    assert info["reward_terms"]["goal"] == 0.0 and info["reward_terms"]["collision"] == -0.25


def test_goal_and_collision_on_one_step_continue_still_succeeds():
    _, rew, term, _, infos = _goal_crash_env("continue")
    info = infos["agent_0"]
    assert info["collided_with"] == "agent" and term["agent_0"]
    assert info["status"] == "at_goal"
    assert info["reward_terms"]["goal"] == 1.0 and info["reward_terms"]["collision"] == -0.25


def test_no_safety_layer_reports_no_orca_intervention():
    """Agents without the safety layer move as commanded: no ORCA telemetry, no penalty."""
    g = {"population": "learned", "count": 16, "on_goal": "stay", "safety_layer": False,
         "radius": 0.3, "max_speed": 1.0, "pref_speed": 1.0, "neighbor_dist": 5.0,
         "time_horizon": 5.0}
    env = orca_env.parallel_env("configs/circle_dense.yaml", groups=[g])
    env.reset(seed=3)
    seen = 0
    for _ in range(40):
        if not env.agents:
            break
        _, _, _, _, infos = env.step(env.heuristic_actions())
        for info in infos.values():
            seen += 1
            assert info["intervention"] == 0.0 and info["reward_terms"]["intervention"] == 0.0
            assert not info["used_lp3"] and info["num_orca_lines"] == 0
    assert seen > 100
