"""The single-agent Gymnasium env (orca_env.single): registration, Gymnasium's and SB3's env
checks, seeding, episode end, a PPO smoke run, errors."""

import copy
import os
import pickle
import subprocess
import sys
import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import orca_env
import orca_env.single  # registers the ids whatever the session imported first
from orca_env import configs
from orca_env.single import GENERIC_ID, GYM_IDS, SingleAgentEnv

#: Every registered id with a config of its own (visible and invisible robot).
IDS = list(GYM_IDS)

#: Warnings Gymnasium's check_env gives for every OrcaEnv: the goal vector, distance and path
#: length are unbounded, and the made env is wrapped (the check runs on both on purpose).
EXPECTED_GYM_WARNINGS = ("minimum value is -infinity", "maximum value is infinity",
                         "is different from the unwrapped version")


def run_python(code):
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout


HEAVY = ("heavy = {'numba', 'pettingzoo', 'orca_env.environment', 'orca_env.core'} "
         "& set(sys.modules)\n"
         "assert not heavy, heavy\n")


MAKE_CIRCLE = ("env = gymnasium.make('orca_env/CrowdNavCircle-v0')\n"
               "obs, info = env.reset(seed=0)\n"
               "assert obs in env.observation_space and info['status'] == 'active'\n")


def test_registration_is_light_and_works_in_both_import_orders():
    # orca_env first (issue 25): import orca_env stays light, import gymnasium registers.
    code = (
        "import sys\n"
        "import orca_env\n"
        "assert not {'gymnasium', 'numpy', 'numba'} & set(sys.modules), 'heavy import'\n"
        "import gymnasium\n"
        "from orca_env.single import GYM_IDS, GENERIC_ID\n"
        "assert set(GYM_IDS) | {GENERIC_ID} <= set(gymnasium.registry)\n" + HEAVY +
        # The hook is gone and gymnasium's loader is its own again.
        "assert not [f for f in sys.meta_path if hasattr(f, 'registers_orca_env')]\n"
        "assert 'exec_module' not in vars(gymnasium.__loader__)\n" + MAKE_CIRCLE)
    run_python(code)
    # gymnasium first: import orca_env registers at once.
    code = (
        "import sys\n"
        "import gymnasium\n"
        "import orca_env\n"
        "from orca_env.single import GYM_IDS, GENERIC_ID\n"
        "assert set(GYM_IDS) | {GENERIC_ID} <= set(gymnasium.registry)\n" + HEAVY +
        "assert not [f for f in sys.meta_path if hasattr(f, 'registers_orca_env')]\n"
        "spec = gymnasium.spec('orca_env/CrowdNavCircle-v0')\n"
        "assert spec.entry_point == 'orca_env.single:SingleAgentEnv'\n"
        "assert spec.kwargs == {'config': 'crowdnav_circle'} and spec.max_episode_steps is None\n"
        + MAKE_CIRCLE)
    run_python(code)


def test_an_availability_check_before_the_import_does_not_lose_the_registration():
    # importlib.util.find_spec asks the finders without importing (libraries check extras so).
    run_python("import importlib.util, sys\n"
               "import orca_env\n"
               "assert importlib.util.find_spec('gymnasium') is not None\n"
               "assert 'gymnasium' not in sys.modules\n"
               "import gymnasium\n"
               "assert 'orca_env/CrowdNavCircle-v0' in gymnasium.registry\n"
               "assert not [f for f in sys.meta_path if hasattr(f, 'registers_orca_env')]\n")


def test_orca_env_first_then_a_gymnasium_submodule_registers():
    # Importing a submodule first runs gymnasium's package, which is what registers.
    run_python("import importlib, sys\n"
               "import orca_env\n"
               "importlib.reload(orca_env)\n"  # no second hook
               "hooks = [f for f in sys.meta_path if hasattr(f, 'registers_orca_env')]\n"
               "assert len(hooks) == 1, hooks\n"
               "from gymnasium.envs.registration import registry\n"
               "assert 'orca_env/CrowdNavSquare-v0' in registry\n")


def test_module_syntax_of_gymnasium_make():
    # A fresh process: gymnasium imports orca_env, which registers.
    run_python("import gymnasium\n"
               "env = gymnasium.make('orca_env:orca_env/CrowdNavCircle-v0')\n"
               "obs, info = env.reset(seed=0)\n"
               "assert obs in env.observation_space and info['status'] == 'active'\n"
               "env.step(env.action_space.sample())\n")
    # A process that imported orca_env before gymnasium: the module orca_env.single registers.
    run_python("import orca_env.configs\n"
               "import gymnasium\n"
               "env = gymnasium.make('orca_env.single:orca_env/CrowdNavSquare-v0')\n"
               "env.reset(seed=0)\n"
               "env.step(env.action_space.sample())\n")


@pytest.mark.parametrize("env_id", IDS)
def test_gymnasium_check_env(env_id):
    pytest.importorskip("pygame")  # check_env makes the env in every render mode
    env = gymnasium.make(env_id)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped)
        check_env(env)
    unexpected = [str(w.message) for w in caught
                  if not any(e in str(w.message) for e in EXPECTED_GYM_WARNINGS)]
    assert not unexpected
    assert isinstance(env.unwrapped, gymnasium.Env)
    assert isinstance(env.observation_space, gymnasium.spaces.Box)
    assert env.action_space == gymnasium.spaces.Box(-1.0, 1.0, (2,), np.float32)
    env.close()


#: A server: no display, no SDL driver chosen, no XDG_RUNTIME_DIR (issue 25 item 9).
HEADLESS = {k: v for k, v in os.environ.items()
            if k not in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER", "XDG_RUNTIME_DIR")}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the Linux display fallback")
def test_check_env_on_a_server_is_quiet():
    pytest.importorskip("pygame")
    code = ("import sys, warnings\n"
            "warnings.simplefilter('ignore')\n"
            "import gymnasium, orca_env\n"
            "from gymnasium.utils.env_checker import check_env\n"
            "check_env(gymnasium.make('orca_env/CrowdNavCircle-v0').unwrapped)\n"
            "env = gymnasium.make('orca_env/CrowdNavCircle-v0', render_mode='human')\n"
            "env.reset(seed=0)\n"  # human mode draws on reset: the display is up now
            "import pygame\n"
            "print(pygame.display.get_driver())\n"
            "env.close()\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=HEADLESS, timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""  # SDL printed "error: XDG_RUNTIME_DIR is invalid or not set"
    assert out.stdout.splitlines()[-1] == "offscreen"
    # A driver the user chose is kept.
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**HEADLESS, "SDL_VIDEODRIVER": "dummy"}, timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == "dummy"


@pytest.mark.parametrize("env_id", IDS)
def test_sb3_check_env(env_id):
    sb3_checker = pytest.importorskip("stable_baselines3.common.env_checker")
    env = gymnasium.make(env_id)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sb3_checker.check_env(env.unwrapped, warn=True)
        sb3_checker.check_env(env, warn=True)
    assert [str(w.message) for w in caught] == []


def trajectory(env, seed, actions):
    out = [env.reset(seed=seed)]
    for a in actions:
        step = env.step(a)
        out.append(step)
        if step[2] or step[3]:
            out.append(env.reset())  # continues the generator
    return out


def test_same_seed_same_trajectory_and_same_as_the_parallel_env():
    actions = np.random.default_rng(0).uniform(-1, 1, (150, 2)).astype(np.float32)
    a = trajectory(gymnasium.make("orca_env/CrowdNavCircle-v0"), 3, actions)
    b = trajectory(gymnasium.make("orca_env/CrowdNavCircle-v0"), 3, actions)
    assert len(a) > len(actions) + 1  # an episode ended and reset() continued
    assert gymnasium.utils.env_checker.data_equivalence(a, b, exact=True)
    c = trajectory(gymnasium.make("orca_env/CrowdNavCircle-v0"), 4, actions)
    assert not np.array_equal(a[0][0], c[0][0])

    # The single-agent env is the parallel env's agent_0, step for step.
    penv = orca_env.parallel_env("crowdnav_circle")
    obs, infos = penv.reset(seed=3)
    assert np.array_equal(obs["agent_0"], a[0][0]) and infos["agent_0"] == a[0][1]
    for k, act in enumerate(actions[:20]):
        o, r, te, tr, i = penv.step({"agent_0": act})
        assert np.array_equal(o["agent_0"], a[k + 1][0])
        assert (r["agent_0"], te["agent_0"], tr["agent_0"], i["agent_0"]) == a[k + 1][1:]


def test_np_random_is_the_parallel_envs_generator():
    env = SingleAgentEnv("crowdnav_square")
    env.reset(seed=5)
    assert env.np_random is env.parallel_env.np_random and env.np_random_seed == 5
    gen = np.random.default_rng(1)
    env.np_random = gen
    assert env.parallel_env.np_random is gen


def crowd_slots(penv):
    return np.flatnonzero(penv.populations != orca_env.codes.Population.LEARNED)


def test_episode_ends_at_the_robots_goal_while_the_crowd_goes_on():
    env = gymnasium.make("orca_env/CrowdNavCircle-v0")
    env.reset(seed=0)
    penv = env.unwrapped.parallel_env
    for _ in range(100):
        action = penv.heuristic_actions()["agent_0"]  # pure ORCA drives the robot home
        obs, reward, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    assert terminated and not truncated and info["status"] == "at_goal"
    assert info["reward_terms"]["goal"] > 0 and reward == pytest.approx(
        sum(info["reward_terms"].values()))
    crowd = crowd_slots(penv)
    assert penv.sim.active[crowd].all()
    assert (np.linalg.norm(penv.sim.positions[crowd] - penv.goals[crowd], axis=1) > 0.3).any()
    assert penv.agents == []
    with pytest.raises(RuntimeError, match="episode ended"):
        env.step(np.zeros(2, np.float32))
    env.reset()  # a new episode works


def test_episode_ends_when_the_robot_collides():
    env = SingleAgentEnv("crowdnav_circle")
    env.reset(seed=0)
    penv = env.parallel_env
    robot = penv.learned_slots[0]
    human = crowd_slots(penv)[0]
    pos = penv.sim.positions.copy()
    overlap = 0.1  # metres, well above the 0.01 m collision tolerance
    pos[human] = pos[robot] + [penv.radii[robot] + penv.radii[human] - overlap, 0.0]
    penv.sim.set_positions(pos)
    obs, reward, terminated, truncated, info = env.step(np.zeros(2, np.float32))
    assert terminated and not truncated
    assert info["status"] == "collided" and info["collided_with"] == "agent"
    assert reward < 0
    assert penv.sim.active[crowd_slots(penv)].all()


def test_episode_is_truncated_at_max_steps_without_a_time_limit_wrapper():
    env = gymnasium.make("orca_env/CrowdNavSquare-v0", max_steps=6)
    assert env.spec.max_episode_steps is None
    wrapper, chain = env, []
    while wrapper is not wrapper.unwrapped:
        chain.append(type(wrapper).__name__)
        wrapper = wrapper.env
    assert "TimeLimit" not in chain
    env.reset(seed=1)
    for k in range(6):
        obs, reward, terminated, truncated, info = env.step(np.zeros(2, np.float32))
        assert truncated == (k == 5) and not terminated
    assert info["status"] == "timed_out"


def test_generic_id_takes_any_one_robot_config():
    env = gymnasium.make(GENERIC_ID, config="crowdnav_square", infos="compact", max_steps=3)
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
    assert info == {"status": "active"}
    assert env.unwrapped.parallel_env.max_steps == 3


def test_configs_without_exactly_one_learned_agent_are_refused():
    with pytest.raises(ValueError, match=r"exactly one learned agent; config 'circle_dense' "
                                         r"has 16 \(groups: \w+: learned x16"):
        SingleAgentEnv("circle_dense")
    with pytest.raises(ValueError, match="config 'corridor' has 2"):
        gymnasium.make(GENERIC_ID, config="corridor")
    groups = [{"name": "robots", "population": "learned", "count": 2},
              {"population": "orca", "count": 3}]
    with pytest.raises(ValueError, match=r"config 'crowdnav_circle' has 2 \(groups: robots: "
                                         r"learned x2, orca_1: orca x3\)"):
        gymnasium.make("orca_env/CrowdNavCircle-v0", groups=groups)
    with pytest.raises(ValueError, match="from a dict, scenario 'crowdnav_square_v0', has 2"):
        SingleAgentEnv({"scenario": "crowdnav_square_v0", "groups": groups})


def test_wraps_an_orca_env_and_passes_render_mode_through():
    pytest.importorskip("pygame")
    penv = orca_env.parallel_env("crowdnav_circle", render_mode="rgb_array")
    env = orca_env.SingleAgentEnv(penv)
    assert env.parallel_env is penv and env.render_mode == "rgb_array"
    with pytest.raises(ValueError, match="no other argument"):
        SingleAgentEnv(penv, max_steps=3)
    made = gymnasium.make("orca_env/CrowdNavSquare-v0", render_mode="rgb_array")
    made.reset(seed=0)
    frame = made.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
    made.close()
    made.close()


def test_metadata_is_the_parallel_envs():
    assert SingleAgentEnv.metadata["render_modes"] == orca_env.OrcaEnv.metadata["render_modes"]
    assert SingleAgentEnv.metadata["render_fps"] == orca_env.OrcaEnv.metadata["render_fps"]


def test_sb3_ppo_learns_on_a_made_env():
    sb3 = pytest.importorskip("stable_baselines3")
    env = gymnasium.make("orca_env/CrowdNavCircle-v0", infos="compact")
    model = sb3.PPO("MlpPolicy", env, n_steps=64, batch_size=64, n_epochs=1, seed=0,
                    device="cpu", policy_kwargs={"net_arch": [16]})
    model.learn(256)
    assert model.num_timesteps == 256
    action, _ = model.predict(env.reset(seed=0)[0], deterministic=True)
    assert action in env.action_space


def test_human_mode_draws_on_reset_and_step():
    pytest.importorskip("pygame")  # conftest sets SDL_VIDEODRIVER=dummy: no window opens
    env = gymnasium.make("orca_env/CrowdNavCircle-v0", render_mode="human")
    env.reset(seed=0)
    renderer = env.unwrapped.parallel_env._renderer
    assert renderer is not None  # reset drew the first frame
    env.step(np.zeros(2, np.float32))
    assert env.render() is None
    env.close()
    assert env.unwrapped.parallel_env._renderer is None


def test_copies_continue_identically():
    env = gymnasium.make("orca_env/CrowdNavSquare-v0")
    env.reset(seed=2)
    env.step(np.array([0.5, 0.1], np.float32))
    twins = [copy.deepcopy(env), pickle.loads(pickle.dumps(env))]
    actions = np.random.default_rng(0).uniform(-1, 1, (5, 2)).astype(np.float32)
    # The copies hold a copy of the generator too: they go on with the same crowd noise.
    steps = [env.step(a) for a in actions]
    for twin in twins:
        assert twin.unwrapped.np_random is twin.unwrapped.parallel_env.np_random
        twin_steps = [twin.step(a) for a in actions]
        assert gymnasium.utils.env_checker.data_equivalence(steps, twin_steps, exact=True)


def test_every_id_names_a_shipped_config():
    assert set(GYM_IDS.values()) <= set(configs.names())
