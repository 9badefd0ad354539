"""The RLlib adapter (orca_env.training.rllib.adapter): RLlib's env checks, episode ends,
seeding."""

import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("ray.rllib", reason="the RLlib tests need ray[rllib]: the rllib or dev extra "
                    "(the test extra leaves it out)")

from ray.rllib.env.env_context import EnvContext  # noqa: E402
from ray.rllib.env.multi_agent_episode import MultiAgentEpisode  # noqa: E402
from ray.rllib.utils.pre_checks.env import check_multiagent_environments  # noqa: E402

import orca_env  # noqa: E402
from orca_env.training.rllib.adapter import (  # noqa: E402
    SHARED_MODULE_ID,
    OrcaRLlibEnv,
    copy_index,
    shared_policy_mapping,
)

ENV = "circle_dense"  # 16 learned agents, on_goal: stop


def zeros(env):
    return {a: np.zeros(2, np.float32) for a in env.agents}


def near_goal(env, agent_index=0):
    """Give one agent a goal 5 cm away: it reaches it on the next step."""
    slot = int(env.env.learned_slots[agent_index])
    pos = env.env.sim.positions[slot]
    env.env.set_goals(np.array([pos + [0.05, 0.0]]), slots=np.array([slot]))


def test_rllib_env_checks():
    env = OrcaRLlibEnv({"env": ENV, "seed": 1})
    check_multiagent_environments(env)
    assert env.possible_agents == [f"agent_{k}" for k in range(16)]
    assert set(env.observation_spaces) == set(env.possible_agents) == set(env.action_spaces)
    assert env.get_observation_space("agent_3") == env.env.observation_space("agent_3")
    assert env.get_action_space("agent_3") == env.env.action_space("agent_3")
    assert shared_policy_mapping("agent_7", None) == SHARED_MODULE_ID


def test_mixed_terminate_and_truncate_step_ends_the_episode():
    env = OrcaRLlibEnv({"env": ENV, "seed": 2, "overrides": {"max_steps": 1}})
    env.reset()
    near_goal(env)
    obs, rew, terms, truncs, infos = env.step(zeros(env))
    assert set(obs) == set(env.possible_agents)  # everyone's last observation
    assert terms["agent_0"] and not truncs["agent_0"]
    assert infos["agent_0"]["status"] == "at_goal"
    others = [a for a in env.possible_agents if a != "agent_0"]
    assert all(truncs[a] and not terms[a] for a in others)
    # ParallelPettingZooEnv would set both to False here and RLlib would step a finished env.
    assert terms["__all__"] is True and truncs["__all__"] is False
    assert env.agents == []
    with pytest.raises(RuntimeError, match="episode ended"):
        env.step({})
    obs, _ = env.reset()  # a new episode works
    assert len(obs) == 16 and len(env.agents) == 16


def test_all_truncated_step_sets_truncated_all():
    env = OrcaRLlibEnv({"env": ENV, "seed": 3, "overrides": {"max_steps": 1}})
    env.reset()
    _, _, terms, truncs, _ = env.step(zeros(env))
    assert truncs["__all__"] is True and terms["__all__"] is False


def test_rllib_episode_accepts_the_mixed_step():
    """RLlib's own MultiAgentEpisode ends on the mixed step (nothing is stepped after it)."""
    env = OrcaRLlibEnv({"env": ENV, "seed": 4, "overrides": {"max_steps": 2}})
    episode = MultiAgentEpisode(observation_space=env.observation_spaces,
                                action_space=env.action_spaces,
                                agent_to_module_mapping_fn=shared_policy_mapping)
    obs, infos = env.reset()
    episode.add_env_reset(observations=obs, infos=infos)
    steps = 0
    while not episode.is_done:
        acts = {a: np.zeros(2, np.float32) for a in episode.get_agents_to_act()}
        assert set(acts) == set(env.agents)  # RLlib asks exactly the live agents to act
        if steps == 1:
            near_goal(env, 5)  # agent_5 terminates on the last step, the rest time out
        obs, rew, terms, truncs, infos = env.step(acts)
        episode.add_env_step(observations=obs, actions=acts, rewards=rew, infos=infos,
                             terminateds=terms, truncateds=truncs)
        steps += 1
    assert steps == 2 and env.agents == []
    assert all(e.is_done for e in episode.agent_episodes.values())
    episode.validate()


def test_leaving_agent_and_action_dicts():
    env = OrcaRLlibEnv({"env": ENV, "seed": 5, "overrides": {"max_steps": 5}})
    env.reset()
    near_goal(env, 2)
    _, _, terms, truncs, _ = env.step(zeros(env))
    assert terms["agent_2"] and not terms["__all__"] and not truncs["__all__"]
    assert "agent_2" not in env.agents and len(env.agents) == 15
    acts = zeros(env)
    acts["agent_2"] = np.ones(2, np.float32)  # an agent that left: ignored
    acts["agent_0"] = np.array([5.0, -5.0], np.float32)  # clipped to the box, no warning
    obs, *_ = env.step(acts)
    assert "agent_2" not in obs and len(obs) == 15
    with pytest.raises(ValueError, match="'bogus', which is not an agent"):
        env.step({**zeros(env), "bogus": np.zeros(2)})
    acts = zeros(env)
    del acts["agent_1"]
    with pytest.raises(ValueError, match="no action for the live agent 'agent_1'"):
        env.step(acts)


def test_seed_from_env_config_and_worker_index():
    assert copy_index(0, 0, 2) == 0 and copy_index(1, 1, 2) == 1 and copy_index(2, 1, 2) == 3
    ctx = EnvContext({"env": ENV, "seed": 7, "envs_per_runner": 2}, worker_index=2,
                     vector_index=1)
    env = OrcaRLlibEnv(ctx)
    assert env.copy_index == 3 and env.base_seed == 10
    # RLlib's seed (config.seed + worker_index + i) is replaced by the copy's own seed.
    obs, _ = env.reset(seed=9)
    ref, _ = orca_env.parallel_env(ENV).reset(seed=10)
    assert all(np.array_equal(obs[a], ref[a]) for a in ref)
    again, _ = OrcaRLlibEnv(ctx).reset()  # first reset without a seed: the copy's seed too
    assert all(np.array_equal(obs[a], again[a]) for a in obs)
    other, _ = OrcaRLlibEnv(EnvContext(dict(ctx), worker_index=1, vector_index=0)).reset()
    assert not all(np.array_equal(obs[a], other[a]) for a in obs)
    # Without a seed in env_config, reset(seed=s) is gymnasium's.
    plain, _ = OrcaRLlibEnv({"env": ENV}).reset(seed=10)
    assert all(np.array_equal(plain[a], ref[a]) for a in ref)


@pytest.mark.parametrize("config, match", [
    ({"env": ENV, "sed": 1}, "unknown env_config key 'sed'"),
    ({"env": ENV, "seed": -1}, "env_config key 'seed' must be None or a non-negative"),
    ({"env": ENV, "envs_per_runner": 0}, "'envs_per_runner' must be a positive integer, got 0"),
    ({"env": ENV, "overrides": [1]}, "'overrides' must be a dict, got \\[1\\]"),
    ({"env": ENV, "infos": "some"}, "infos must be one of"),
])
def test_env_config_errors(config, match):
    with pytest.raises(ValueError, match=match):
        OrcaRLlibEnv(config)


def test_wrappers_package_stays_light():
    code = ("import sys, orca_env.wrappers as w; assert 'ray' not in sys.modules; "
            "assert w.OrcaRLlibEnv.__name__ == 'OrcaRLlibEnv'; assert 'ray' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
