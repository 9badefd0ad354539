"""The SB3 VecEnv adapter: VecEnv API checks, absorbing finished agents, seeding, SB3 wrappers."""

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common.callbacks import EvalCallback  # noqa: E402
from stable_baselines3.common.evaluation import evaluate_policy  # noqa: E402
from stable_baselines3.common.vec_env import (  # noqa: E402
    VecCheckNan,
    VecMonitor,
    VecNormalize,
    VecVideoRecorder,
)

from orca_env.wrappers import SB3VecEnv, make_vec_env  # noqa: E402

# A small symmetric crossing: 6 learned agents on a circle, some finish early.
CIRCLE = {
    "scenario": "circle_v0",
    "scenario_kwargs": {"circle_radius": 2.5},
    "max_steps": 40,
    "groups": [{"population": "learned", "count": 6, "on_goal": "stop", "radius": 0.3,
                "max_speed": 1.0, "pref_speed": 1.0, "neighbor_dist": 4.0,
                "time_horizon": 3.0, "time_horizon_obst": 3.0}],
    "observation": {"num_agents": 3, "range": 3.0},
}
# Agents at distinct distances from their goals: early finishers within one episode.
CROWDNAV = {"scenario": "crowdnav_circle_v0", "max_steps": 50,
            "scenario_kwargs": {"robot_fixed": False, "circle_radius": 3.0},
            "groups": [{"population": "learned", "count": 3, "on_goal": "stop"},
                       {"population": "orca", "count": 3, "on_goal": "stay"}]}


def random_actions(venv, rng):
    return rng.uniform(-1, 1, (venv.num_envs, 2)).astype(np.float32)


def check_vec_env(venv, n_steps=150, seed=0):
    """SB3 check_env-style checks for a VecEnv: spaces, reset, step returns, terminal data."""
    obs_space, act_space = venv.observation_space, venv.action_space
    assert act_space.shape == (2,) and act_space.dtype == np.float32
    assert np.all(act_space.low == -1) and np.all(act_space.high == 1)
    venv.seed(seed)
    obs = venv.reset()
    assert isinstance(obs, np.ndarray)
    assert obs.shape == (venv.num_envs, *obs_space.shape) and obs.dtype == obs_space.dtype
    assert all(obs_space.contains(o) for o in obs)
    rng = np.random.default_rng(seed)
    episodes = 0
    for _ in range(n_steps):
        obs, rews, dones, infos = venv.step(random_actions(venv, rng))
        assert obs.shape == (venv.num_envs, *obs_space.shape) and obs.dtype == np.float32
        assert all(obs_space.contains(o) for o in obs)
        assert rews.shape == (venv.num_envs,) and np.issubdtype(rews.dtype, np.floating)
        assert dones.shape == (venv.num_envs,) and dones.dtype == bool
        assert isinstance(infos, list) and len(infos) == venv.num_envs
        assert all(isinstance(i, dict) for i in infos)
        assert np.all(np.isfinite(rews)) and np.all(np.isfinite(obs))
        for i in np.flatnonzero(dones):
            term = infos[i]["terminal_observation"]
            assert obs_space.contains(term)
            assert isinstance(infos[i]["TimeLimit.truncated"], bool)
            assert set(infos[i]["agent_episode"]) == {"r", "l", "status"}
        episodes += int(dones.sum())
    return episodes


def test_vec_env_api_checks():
    venv = make_vec_env(CIRCLE, n_envs=3)
    assert venv.num_envs == 3 * 6 and venv.agents_per_env == 6
    assert check_vec_env(venv) > 0
    venv.close()


def test_vec_env_api_checks_with_crowd():
    venv = make_vec_env(CROWDNAV, n_envs=2)
    assert venv.num_envs == 6
    assert check_vec_env(venv, n_steps=100) > 0


def test_vec_check_nan_random_rollouts():
    venv = VecCheckNan(make_vec_env(CROWDNAV, n_envs=2), raise_exception=True, check_inf=True)
    venv.seed(3)
    venv.reset()
    rng = np.random.default_rng(0)
    for _ in range(120):
        venv.step(random_actions(venv, rng))
    with pytest.raises(ValueError):
        bad = random_actions(venv, rng)
        bad[0, 0] = np.nan
        venv.step(bad)


def test_one_monitor_episode_per_agent_with_early_finishers():
    """Each agent of each env episode is exactly one VecMonitor episode, early finisher or not."""
    base = make_vec_env(CROWDNAV, n_envs=2)
    venv = VecMonitor(base)
    venv.seed(7)
    venv.reset()
    n_env_episodes = [0, 0]
    monitor_eps = np.zeros(venv.num_envs, dtype=int)
    early = 0
    for _ in range(90):
        # Goal-directed actions: agents reach their goals at their own times.
        acts = np.zeros((venv.num_envs, 2), dtype=np.float32)
        for e, env in enumerate(base.envs):
            for a, v in env.heuristic_actions().items():
                acts[e * 3 + base._index[a]] = v
        was_alive = base._alive.copy()
        obs, rews, dones, infos = venv.step(acts)
        for i, info in enumerate(infos):
            assert ("episode" in info) == bool(dones[i])
            if dones[i]:
                monitor_eps[i] += 1
                ag = info["agent_episode"]
                early += ag["l"] < info["episode"]["l"]
                # The monitor's return is the agent's own return (absorbing steps add 0).
                assert info["episode"]["r"] == pytest.approx(ag["r"], abs=1e-4)
        for e in range(2):
            block = dones[e * 3:(e + 1) * 3]
            assert block.all() or not block.any(), "a copy's entries end together"
            n_env_episodes[e] += int(block.all())
        # Absorbing entries: zero observation and zero reward until their copy's episode ends.
        for e in range(2):
            for k in range(3):
                slot = e * 3 + k
                if not was_alive[e, k]:
                    assert rews[slot] == 0
                if not base._alive[e, k] and not dones[slot]:
                    assert np.all(obs[slot] == 0)
    assert early > 0, "the scenario should produce early finishers"
    assert min(n_env_episodes) >= 2
    # Exactly one monitor episode per agent per env episode.
    assert list(monitor_eps) == [n_env_episodes[0]] * 3 + [n_env_episodes[1]] * 3


def test_finished_agent_terminal_observation_and_truncation_flags():
    venv = make_vec_env(dict(CROWDNAV, max_steps=12), n_envs=1)
    venv.seed(0)
    venv.reset()
    env = venv.envs[0]
    for _ in range(12):
        h = env.heuristic_actions()
        acts = np.zeros((3, 2), np.float32)
        for a, v in h.items():
            acts[venv.agent_names.index(a)] = v
        live = list(env.agents)
        obs, rews, dones, infos = venv.step(acts)
    assert dones.all()  # timed out at step 12
    for k in range(3):
        info = infos[k]
        status = info["agent_episode"]["status"]
        if f"agent_{k}" in live and status == "timed_out":
            assert info["TimeLimit.truncated"] is True
            assert np.any(info["terminal_observation"] != 0)
        else:
            assert info["TimeLimit.truncated"] is False


def test_seed_makes_rollouts_reproducible():
    def rollout(seed):
        venv = make_vec_env(CROWDNAV, n_envs=2)
        venv.seed(seed)
        out = [venv.reset()]
        rng = np.random.default_rng(0)
        for _ in range(60):
            out.append(venv.step(random_actions(venv, rng))[0])
        return np.stack(out)

    a, b, c = rollout(5), rollout(5), rollout(6)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)
    venv = make_vec_env(CROWDNAV, n_envs=3)
    # One seed per entry, as SB3's VecEnv.seed promises: each entry gets its copy's seed.
    assert venv.seed(10) == [10, 10, 10, 11, 11, 11, 12, 12, 12]
    assert len(venv.seed(10)) == venv.num_envs


def test_seed_none_never_touches_the_global_rng():
    venv = make_vec_env(CROWDNAV, n_envs=2)
    np.random.seed(123)
    state = np.random.get_state()
    s1 = venv.seed(None)
    s2 = venv.seed()
    after = np.random.get_state()
    assert after[0] == state[0] and np.array_equal(after[1], state[1]) and after[2] == state[2]
    assert len(s1) == venv.num_envs == 6
    assert s1[0] == s1[2] and s1[3] == s1[0] + 1  # copy 1 gets seed + 1
    assert s1 != s2  # fresh entropy each call
    assert 0 <= s1[0] < 2**32


def _weights(model):
    return np.concatenate([p.detach().numpy().ravel() for p in model.policy.parameters()])


def test_ppo_same_seed_identical_weights():
    def train(seed):
        venv = VecNormalize(VecMonitor(make_vec_env(CIRCLE, n_envs=2)))
        model = PPO("MlpPolicy", venv, n_steps=32, batch_size=64, n_epochs=2, seed=seed,
                    device="cpu", policy_kwargs={"net_arch": [16, 16]})
        model.learn(3 * 32 * venv.num_envs)
        return _weights(model)

    w1, w2, w3 = train(1), train(1), train(2)
    assert np.array_equal(w1, w2)
    assert not np.array_equal(w1, w3)


def test_eval_callback_and_evaluate_policy(tmp_path):
    train_env = VecMonitor(make_vec_env(CIRCLE, n_envs=1))
    eval_env = VecMonitor(make_vec_env(CIRCLE, n_envs=1))
    model = PPO("MlpPolicy", train_env, n_steps=16, batch_size=48, n_epochs=1, seed=0,
                device="cpu", policy_kwargs={"net_arch": [8]})
    cb = EvalCallback(eval_env, n_eval_episodes=6, eval_freq=16, warn=False,
                      log_path=str(tmp_path))
    model.learn(16 * 6 * 2, callback=cb)
    assert cb.evaluations_results and len(cb.evaluations_results[0]) == 6
    rets, lens = evaluate_policy(model, eval_env, n_eval_episodes=12, return_episode_rewards=True)
    assert len(rets) == 12 and all(1 <= ln <= CIRCLE["max_steps"] for ln in lens)


def test_vec_video_recorder(tmp_path):
    pytest.importorskip("pygame")
    pytest.importorskip("moviepy")
    venv = make_vec_env(CIRCLE, n_envs=1, render_mode="rgb_array")
    rec = VecVideoRecorder(venv, str(tmp_path), record_video_trigger=lambda s: s == 0,
                           video_length=5)
    rec.reset()
    for _ in range(6):
        rec.step(np.zeros((rec.num_envs, 2), np.float32))
    rec.close()
    assert list(tmp_path.glob("*.mp4"))


def test_get_images_one_frame_per_copy():
    pytest.importorskip("pygame")
    venv = make_vec_env(CIRCLE, n_envs=2, render_mode="rgb_array")
    venv.reset()
    imgs = venv.get_images()
    assert len(imgs) == 2 and imgs[0].dtype == np.uint8 and imgs[0].ndim == 3
    tiled = venv.render()
    assert tiled.ndim == 3


def test_attr_methods_and_errors():
    venv = make_vec_env(CIRCLE, n_envs=2)
    assert venv.get_attr("max_steps") == [40] * 12
    assert venv.get_attr("max_steps", indices=[0, 7]) == [40, 40]
    venv.set_attr("max_steps", 30, indices=[7])
    assert venv.envs[1].max_steps == 30 and venv.envs[0].max_steps == 40
    assert venv.env_is_wrapped(object) == [False] * 12
    venv.reset()
    assert len(venv.env_method("state", indices=[0, 1, 6])) == 3
    with pytest.raises(ValueError, match="env_fns"):
        SB3VecEnv([])
    with pytest.raises(ValueError, match="n_envs"):
        make_vec_env(CIRCLE, n_envs=0)


def test_step_hands_the_envs_info_dicts_through_without_copies():
    """step_wait passes each live agent's info dict on as is (no per-agent-step copy)."""
    venv = make_vec_env(CROWDNAV, n_envs=2)
    venv.seed(1)
    venv.reset()
    seen = []
    for env in venv.envs:
        step = env.step

        def spy(actions, step=step):
            out = step(actions)
            seen.append(out[4])
            return out

        env.step = spy
    rng = np.random.default_rng(0)
    for _ in range(5):
        seen.clear()
        _, _, dones, infos = venv.step(random_actions(venv, rng))
        assert not dones.any()
        for e, env_infos in enumerate(seen):
            for a, info in env_infos.items():
                assert infos[e * 3 + venv.agent_names.index(a)] is info
