"""The MARL libraries on orca-env without a wrapper of ours (issue 26, items 4 and 6):
PettingZoo's test utilities, SuperSuit and skrl, with the env options of item 1."""

import functools
import types
import warnings

import numpy as np
import pytest
from pettingzoo.test import (
    api_test,
    bombardment_test,
    max_cycles_test,
    parallel_api_test,
    parallel_seed_test,
    render_test,
    seed_test,
    state_test,
)

import orca_env

#: The options tensor libraries use (every agent on every step, numbers only).
TENSOR = dict(finished_agents="absorb", infos="numeric", finished_actions="ignore")
#: PettingZoo's warnings about agents that are missing from, or extra in, a step's dicts.
API_WARNINGS = ("was not given", "was dead last turn", "No agents present")


def module(**options):
    """A module-like object whose factories build orca-env with ``options`` (as
    ``max_cycles_test`` wants a module)."""
    return types.SimpleNamespace(parallel_env=functools.partial(orca_env.parallel_env, **options),
                                 env=functools.partial(orca_env.env, **options))


@pytest.mark.parametrize("options", [{}, TENSOR], ids=["defaults", "tensor_options"])
def test_pettingzoo_test_utilities(options):
    pytest.importorskip("pygame")  # render_test draws in both render modes (headless)
    mod = module(**options)
    small = dict(max_steps=60)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parallel_api_test(mod.parallel_env("circle_dense", **small), num_cycles=100)
        parallel_api_test(mod.parallel_env("bottleneck", **small), num_cycles=100)
    assert not [w for w in caught if any(s in str(w.message) for s in API_WARNINGS)]
    api_test(mod.env("crowdnav_square", **small), num_cycles=80)
    max_cycles_test(mod)
    seed_test(functools.partial(mod.env, "bottleneck", **small), num_cycles=40)
    parallel_seed_test(functools.partial(mod.parallel_env, "bottleneck", **small), num_cycles=40)
    render_test(functools.partial(mod.env, "corridor", max_steps=10))
    state_test(mod.env("bottleneck", **small), mod.parallel_env("bottleneck", **small),
               num_cycles=20)
    bombardment_test(mod.env("crowdnav_square", **small), cycles=20)


def test_supersuit_vector_env_needs_the_absorbing_state():
    ss = pytest.importorskip("supersuit")
    env = ss.pettingzoo_env_to_vec_env_v1(orca_env.parallel_env("circle_dense", max_steps=30))
    env.reset(seed=0)
    with pytest.raises(AssertionError, match="varying numbers of active agents"):
        for _ in range(40):  # an agent leaves at its goal
            env.step(np.tile([1.0, 0.0], (16, 1)))
    envs = ss.concat_vec_envs_v1(
        ss.pettingzoo_env_to_vec_env_v1(
            orca_env.parallel_env("circle_dense", finished_agents="absorb", max_steps=30)),
        2, num_cpus=0, base_class="gymnasium")
    obs, _ = envs.reset(seed=0)
    assert obs.shape == (32, envs.observation_space.shape[0])  # SuperSuit's: one row's space
    ends = 0
    for _ in range(70):  # two episodes of each copy
        obs, rew, term, trunc, infos = envs.step(np.tile([1.0, 0.0], (32, 1)))
        done = (term | trunc).reshape(2, 16)
        assert (done.all(axis=1) | ~done.any(axis=1)).all()  # a copy's agents end together
        ends += int(done.all(axis=1).sum())
        assert len(infos) == 32
    assert ends >= 4


def test_supersuit_with_stable_baselines3():
    ss = pytest.importorskip("supersuit")
    sb3 = pytest.importorskip("stable_baselines3")
    env = orca_env.parallel_env("circle_dense", finished_agents="absorb", infos="compact",
                                max_steps=20)
    venv = ss.concat_vec_envs_v1(ss.pettingzoo_env_to_vec_env_v1(env), 2, num_cpus=0,
                                 base_class="stable_baselines3")
    # Not PPO(seed=...): it seeds the vector env, which SuperSuit 3.11's SB3 wrapper cannot.
    sb3.common.utils.set_random_seed(0)
    model = sb3.PPO("MlpPolicy", venv, n_steps=16, batch_size=64, n_epochs=1,
                    policy_kwargs={"net_arch": [16]})
    model.learn(32 * 32)  # two rollouts of 16 steps of 32 rows: a world end in each copy
    assert model.num_timesteps == 2 * 16 * 32


def test_skrl_ippo():
    torch = pytest.importorskip("torch")
    pytest.importorskip("skrl")
    from skrl.envs.wrappers.torch import wrap_env
    from skrl.memories.torch import RandomMemory
    from skrl.multi_agents.torch.ippo import IPPO
    from skrl.trainers.torch import SequentialTrainer
    from skrl.utils.model_instantiators.torch import deterministic_model, gaussian_model

    torch.manual_seed(0)
    raw = orca_env.parallel_env("bottleneck", finished_agents="absorb", infos="numeric",
                                max_steps=20)
    env = wrap_env(raw, wrapper="pettingzoo")
    agents = env.possible_agents
    obs_space, act_space = env.observation_space(agents[0]), env.action_space(agents[0])
    net = [{"name": "net", "input": "OBSERVATIONS", "layers": [16], "activations": "tanh"}]
    policy = gaussian_model(observation_space=obs_space, action_space=act_space, network=net,
                            output="ACTIONS", clip_actions=True)
    value = deterministic_model(observation_space=obs_space, action_space=act_space,
                                network=net, output="ONE")
    per_agent = {a: {} for a in agents}  # skrl 2.1's config wants these keyed by agent
    ippo = IPPO(possible_agents=agents, models={a: {"policy": policy, "value": value}
                                                for a in agents},
                memories={a: RandomMemory(memory_size=16, num_envs=env.num_envs)
                          for a in agents},
                observation_spaces=env.observation_spaces, action_spaces=env.action_spaces,
                state_spaces=env.state_spaces,
                cfg={"rollouts": 16, "learning_epochs": 1, "mini_batches": 1,
                     **{k: per_agent for k in ("learning_rate_scheduler_kwargs",
                                               "observation_preprocessor_kwargs",
                                               "state_preprocessor_kwargs",
                                               "value_preprocessor_kwargs")}})
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # no clipped actions, nothing else
        SequentialTrainer(env=env, agents=ippo, cfg={
            "timesteps": 50, "headless": True, "disable_progressbar": True,
            "close_environment_at_exit": False}).train()
    env.close()
    assert raw.seed_episode == 2  # two world ends, two resets
    assert all(ippo.optimizers[a].state for a in agents)  # every agent's update ran
