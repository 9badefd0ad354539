"""RLlib's own ParallelPettingZooEnv on orca-env (issue 26, item 4): with the absorbing state
it ends the episode on a last step where some agents terminate and the rest are truncated;
without it that step is what the shipped adapter (OrcaRLlibEnv) is needed for."""

import numpy as np
import pytest

pytest.importorskip("ray.rllib", reason="the RLlib tests need ray[rllib]: the rllib or dev extra "
                    "(the test extra leaves it out)")

from ray.rllib.env.multi_agent_episode import MultiAgentEpisode  # noqa: E402
from ray.rllib.env.wrappers.pettingzoo_env import ParallelPettingZooEnv  # noqa: E402

import orca_env  # noqa: E402

ENV = "circle_dense"  # 16 learned agents, on_goal: stop


def near_goal(penv, agent_index):
    """Give one agent a goal 5 cm away: it reaches it on the next step."""
    slot = int(penv.learned_slots[agent_index])
    pos = penv.sim.positions[slot]
    penv.set_goals(np.array([pos + [0.05, 0.0]]), slots=np.array([slot]))


def episode_for(env):
    return MultiAgentEpisode(observation_space=env.observation_space,
                             action_space=env.action_space,
                             agent_to_module_mapping_fn=lambda agent, episode=None: "shared")


def play(env, penv, early, late, steps):
    """An RLlib episode: ``early`` reaches its goal on step 1, ``late`` on the last step (the
    others time out then). Returns the steps played and the last step's flags."""
    episode = episode_for(env)
    obs, infos = env.reset(seed=4)
    episode.add_env_reset(observations=obs, infos=infos)
    n = 0
    while not episode.is_done:
        acts = {a: np.zeros(2, np.float32) for a in episode.get_agents_to_act()}
        if n == 0:
            near_goal(penv, early)
        if n == steps - 1:
            near_goal(penv, late)
        obs, rew, terms, truncs, infos = env.step(acts)
        episode.add_env_step(observations=obs, actions=acts, rewards=rew, infos=infos,
                             terminateds=terms, truncateds=truncs)
        n += 1
    episode.validate()
    return n, terms, truncs


def test_parallel_pettingzoo_env_with_the_absorbing_state():
    penv = orca_env.parallel_env(ENV, finished_agents="absorb", max_steps=3)
    env = ParallelPettingZooEnv(penv)
    n, terms, truncs = play(env, penv, early=2, late=5, steps=3)
    assert n == 3 and penv.agents == []
    assert truncs["__all__"] is True  # RLlib resets: nothing is stepped after this
    assert terms["agent_2"] and terms["agent_5"]  # their own ends, kept
    assert all(truncs[a] for a in penv.possible_agents)  # the time limit cut every agent
    assert sum(terms[a] for a in penv.possible_agents) == 2


def test_parallel_pettingzoo_env_without_it_needs_the_adapter():
    """PettingZoo's convention (finished agents leave) gives the mixed last step RLlib's
    wrapper cannot end: ``__all__`` is False in both dicts (use OrcaRLlibEnv, or absorb)."""
    penv = orca_env.parallel_env(ENV, max_steps=1)
    env = ParallelPettingZooEnv(penv)
    env.reset(seed=4)
    near_goal(penv, 0)
    _, _, terms, truncs, _ = env.step({a: np.zeros(2, np.float32) for a in penv.agents})
    assert terms["agent_0"] and all(truncs[a] for a in penv.possible_agents[1:])
    assert terms["__all__"] is False and truncs["__all__"] is False
    assert penv.agents == []
    with pytest.raises(RuntimeError, match="episode ended"):
        env.step({})  # what RLlib's env runner would do next
