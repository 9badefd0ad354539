import numpy as np
import pytest
from small_configs import SMALL

import orca_env
from orca_env.rewards import agent_collisions, obstacle_collisions
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
# on their straight line to the goal; RVO2 adds noise for this reason).
MAY_DEADLOCK = {("bottleneck_v0", False), ("circle_v0", False), ("blocks_v0", False)}


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
