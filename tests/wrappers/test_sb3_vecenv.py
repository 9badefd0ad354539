"""The SB3 VecEnv adapter: VecEnv API, one episode per agent, masked rows, both backends."""

import numpy as np
import pytest

import orca_env

pytest.importorskip("stable_baselines3")

import torch  # noqa: E402
from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common.callbacks import EvalCallback  # noqa: E402
from stable_baselines3.common.evaluation import evaluate_policy  # noqa: E402
from stable_baselines3.common.vec_env import (  # noqa: E402
    VecCheckNan,
    VecMonitor,
    VecNormalize,
    VecVideoRecorder,
)

from orca_env.codes import STATUSES  # noqa: E402
from orca_env.training.sb3.adapter import (  # noqa: E402
    MaskedRolloutBuffer,
    MaskedVecNormalize,
    SB3VecEnv,
    attach_masks,
    make_vec_env,
)

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
BACKENDS = ["vector", "copies"]


def random_actions(venv, rng):
    return rng.uniform(-1, 1, (venv.num_envs, 2)).astype(np.float32)


def goal_actions(venv, rng):
    """Mostly straight at the goal (goal-aligned frame): agents finish at their own times."""
    acts = np.zeros((venv.num_envs, 2), np.float32)
    acts[:, 0] = 1.0
    acts[:, 1] = rng.uniform(-0.3, 0.3, venv.num_envs)
    return acts


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
    for t in range(n_steps):
        acts = goal_actions(venv, rng) if t % 2 else random_actions(venv, rng)
        obs, rews, dones, infos = venv.step(acts)
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
            assert set(infos[i]["episode"]) == {"r", "l", "t"}
        episodes += int(dones.sum())
    return episodes


@pytest.mark.parametrize("backend", BACKENDS)
def test_vec_env_api_checks(backend):
    venv = make_vec_env(CIRCLE, n_envs=3, backend=backend)
    assert venv.num_envs == 3 * 6 and venv.agents_per_env == 6
    assert check_vec_env(venv) > 0
    venv.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_vec_env_api_checks_with_crowd(backend):
    venv = make_vec_env(CROWDNAV, n_envs=2, backend=backend)
    assert venv.num_envs == 6
    assert check_vec_env(venv, n_steps=100) > 0


def test_auto_backend_picks_the_vector_env_and_copies_for_rendering():
    from orca_env.vector import OrcaVectorEnv

    assert isinstance(make_vec_env(CIRCLE, 2).worlds, OrcaVectorEnv)
    venv = make_vec_env(CIRCLE, 2, render_mode="rgb_array")
    assert len(venv.envs) == 2
    guided = {"scenario": "blocks_v0", "guidance": True, "max_steps": 5}
    assert isinstance(make_vec_env(guided, 1).worlds, OrcaVectorEnv)  # guidance too
    with pytest.raises(ValueError, match="backend 'vector' cannot run this: render_mode"):
        make_vec_env(CIRCLE, 1, render_mode="rgb_array", backend="vector")
    with pytest.raises(ValueError, match="backend must be one of .*'gpu'"):
        make_vec_env(CIRCLE, 1, backend="gpu")


def rollout(backend, n_steps=160, seed=4, n_envs=3, config=CROWDNAV):
    venv = make_vec_env(config, n_envs, backend=backend)
    venv.seed(seed)
    obs = [venv.reset()]
    rng = np.random.default_rng(0)
    rews, dones, eps, valid, real = [], [], [], [], []
    for _ in range(n_steps):
        o, r, d, infos = venv.step(goal_actions(venv, rng))
        obs.append(o)
        rews.append(r)
        dones.append(d)
        valid.append(venv.step_valid.copy())
        real.append(venv.obs_real.copy())
        eps.append([(i, infos[i]["agent_episode"], infos[i]["TimeLimit.truncated"],
                     infos[i]["terminal_observation"].tolist()) for i in np.flatnonzero(d)])
    return (np.stack(obs), np.stack(rews), np.stack(dones), eps, np.stack(valid),
            np.stack(real), venv)


def test_both_backends_give_the_same_numbers():
    a, b = rollout("vector"), rollout("copies")
    for x, y in zip(a[:6], b[:6], strict=True):
        if isinstance(x, np.ndarray):
            assert np.array_equal(x, y)
        else:
            assert x == y
    assert a[6].live_fraction == b[6].live_fraction < 1.0  # there were masked steps


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_episode_per_agent_and_masked_rows(backend):
    """An entry is done on its own agent's last step; masked rows observe 0 and earn 0."""
    obs, rews, dones, eps, valid, real, venv = rollout(backend)
    L = 3
    n_episodes = 0
    early = 0
    for t in range(len(dones)):
        for i, ag, truncated, term_obs in eps[t]:
            assert valid[t, i], "an entry is done only on a step its agent acted"
            assert ag["status"] in STATUSES and ag["status"] != "active"
            assert truncated == (ag["status"] == "timed_out")
            assert any(term_obs), "the terminal observation is the agent's real one"
            n_episodes += 1
            early += ag["l"] < 50 and ag["status"] == "at_goal"
        # Masked (not acted) rows earn 0; rows without a real observation observe zeros.
        assert np.all(rews[t][~valid[t]] == 0)
        assert np.all(obs[t + 1][~real[t]] == 0)
        assert np.all(np.any(obs[t + 1][real[t]] != 0, axis=1))
        # An entry stays masked from its done until its world resets, then acts again.
        if t + 1 < len(dones):
            world_reset = [not real[t][b * L:(b + 1) * L].any() for b in range(3)]
            assert not any(world_reset), "a world resets on the same step as its last agent"
            assert np.array_equal(valid[t + 1], real[t])
    assert early > 0, "the scenario should produce early finishers"
    assert (~valid).any(), "and masked steps"
    assert dones.sum() == n_episodes
    assert venv.agent_steps == valid.sum() and venv.entry_steps == valid.size


@pytest.mark.parametrize("backend", BACKENDS)
def test_episode_info_is_the_agents_own_return_and_length(backend):
    obs, rews, dones, eps, valid, real, venv = rollout(backend, n_steps=120)
    for i in range(venv.num_envs):
        ret, length = 0.0, 0
        for t in range(len(dones)):
            ret += float(rews[t, i])
            length += bool(valid[t, i])
            for j, ag, _, _ in eps[t]:
                if j == i:
                    assert ag["l"] == length and ag["r"] == pytest.approx(ret, abs=1e-4)
                    ret, length = 0.0, 0


def test_finished_agent_terminal_observation_and_truncation_flags():
    venv = make_vec_env(dict(CROWDNAV, max_steps=12), n_envs=1)
    venv.seed(0)
    venv.reset()
    for _ in range(12):
        obs, rews, dones, infos = venv.step(np.zeros((3, 2), np.float32))  # nobody moves
    assert dones.all()  # timed out at step 12
    for k in range(3):
        assert infos[k]["TimeLimit.truncated"] is True
        assert infos[k]["agent_episode"] == {"r": pytest.approx(infos[k]["episode"]["r"]),
                                             "l": 12, "status": "timed_out"}
        assert np.any(infos[k]["terminal_observation"] != 0)


# Learned agents alone; standing still stalls them all after 4 steps (a deadlock end) unless the
# time limit of 3 steps comes first.
STILL = {"scenario": "circle_v0", "scenario_kwargs": {"circle_radius": 2.5},
         "groups": [{"population": "learned", "count": 3}], "stall": {"window": 4}}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("bootstrap, deadlock_flag, time_limit_flag", [
    ("truncated", True, True), ("time_limit", False, True), ("never", False, False)])
def test_bootstrap_says_which_truncations_sb3_bootstraps(backend, bootstrap, deadlock_flag,
                                                        time_limit_flag):
    for max_steps, status, flag in ((50, "deadlocked", deadlock_flag),
                                    (3, "timed_out", time_limit_flag)):
        venv = make_vec_env(dict(STILL, max_steps=max_steps), n_envs=2, backend=backend,
                            bootstrap=bootstrap)
        venv.seed(0)
        venv.reset()
        dones = np.zeros(6, bool)
        while not dones.any():
            _, _, dones, infos = venv.step(np.zeros((6, 2), np.float32))
        assert dones.all()
        for k in range(6):
            assert infos[k]["agent_episode"]["status"] == status
            assert infos[k]["TimeLimit.truncated"] is flag
            assert np.any(infos[k]["terminal_observation"] != 0)
        venv.close()


def test_a_bad_bootstrap_is_refused():
    with pytest.raises(ValueError, match=r"bootstrap must be one of \['truncated', 'time_limit', "
                                         r"'never'\], got 'always'"):
        make_vec_env(STILL, n_envs=1, bootstrap="always")
    with pytest.raises(ValueError, match="bootstrap must be one of"):
        SB3VecEnv([lambda: orca_env.parallel_env(STILL)], bootstrap=None)


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


@pytest.mark.parametrize("backend", BACKENDS)
def test_seed_makes_rollouts_reproducible(backend):
    def run(seed):
        venv = make_vec_env(CROWDNAV, n_envs=2, backend=backend)
        venv.seed(seed)
        out = [venv.reset()]
        rng = np.random.default_rng(0)
        for _ in range(60):
            out.append(venv.step(random_actions(venv, rng))[0])
        return np.stack(out)

    a, b, c = run(5), run(5), run(6)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)
    venv = make_vec_env(CROWDNAV, n_envs=3, backend=backend)
    # One seed per entry, as SB3's VecEnv.seed promises: each entry gets its world's seed.
    assert venv.seed(10) == [10, 10, 10, 11, 11, 11, 12, 12, 12]


def test_seed_none_never_touches_the_global_rng():
    venv = make_vec_env(CROWDNAV, n_envs=2)
    np.random.seed(123)
    state = np.random.get_state()
    s1 = venv.seed(None)
    s2 = venv.seed()
    after = np.random.get_state()
    assert after[0] == state[0] and np.array_equal(after[1], state[1]) and after[2] == state[2]
    assert len(s1) == venv.num_envs == 6
    assert s1[0] == s1[2] and s1[3] == s1[0] + 1  # world 1 gets seed + 1
    assert s1 != s2  # fresh entropy each call
    assert 0 <= s1[0] < 2**32


def _weights(model):
    return np.concatenate([p.detach().numpy().ravel() for p in model.policy.parameters()])


def _masked_ppo(venv, base, seed, **kw):
    model = PPO("MlpPolicy", venv, seed=seed, device="cpu",
                rollout_buffer_class=MaskedRolloutBuffer, **kw)
    attach_masks(model, base)
    return model


def test_ppo_same_seed_identical_weights():
    def train(seed):
        base = make_vec_env(CIRCLE, n_envs=2)
        model = _masked_ppo(MaskedVecNormalize(base), base, seed, n_steps=32, batch_size=64,
                            n_epochs=2, policy_kwargs={"net_arch": [16, 16]})
        model.learn(3 * 32 * base.num_envs)
        return _weights(model)

    w1, w2, w3 = train(1), train(1), train(2)
    assert np.array_equal(w1, w2)
    assert not np.array_equal(w1, w3)


def test_masked_rollout_buffer_trains_on_valid_rows_only():
    base = make_vec_env(CROWDNAV, n_envs=2)
    model = _masked_ppo(base, base, 0, n_steps=100, batch_size=50, n_epochs=1,
                        policy_kwargs={"net_arch": [8], "log_std_init": -2.0})
    # Head for the goal (x of the goal-aligned frame): agents finish at their own times.
    model.policy.action_net.weight.data.zero_()
    model.policy.action_net.bias.data[:] = torch.tensor([1.0, 0.0])
    valid_rows = []

    class Spy:  # records what the adapter says about each step the buffer stores
        def __init__(self, inner):
            self.inner = inner

        @property
        def step_valid(self):
            valid_rows.append(self.inner.step_valid.copy())
            return self.inner.step_valid

    model.rollout_buffer.mask_source = Spy(base)
    model.learn(100 * base.num_envs)
    buf = model.rollout_buffer
    valid = np.stack(valid_rows)
    assert valid.shape == (100, 6) and np.array_equal(buf.valid, valid)
    assert 0 < buf.valid_fraction() < 1, "the rollout should hold masked rows"
    # Rebuild the flat view the buffer trains from (its tensors are flattened by now).
    samples = list(buf.get(batch_size=64))
    n = sum(len(s.observations) for s in samples)
    assert n == valid.sum()
    for s in samples:
        # A masked row observes all zeros; a real observation never does.
        assert (s.observations.abs().sum(dim=1) > 0).all()


def test_masked_replay_buffer_samples_valid_transitions_only():
    from stable_baselines3 import SAC

    from orca_env.training.sb3.adapter import MaskedReplayBuffer

    base = make_vec_env(CROWDNAV, n_envs=2)
    model = SAC("MlpPolicy", base, buffer_size=2000, learning_starts=10_000, seed=0,
                device="cpu", replay_buffer_class=MaskedReplayBuffer,
                policy_kwargs={"net_arch": [8]})
    attach_masks(model, base)
    # Goal-directed actions: agents finish early and leave masked rows.
    buf = model.replay_buffer
    base.seed(0)
    obs = base.reset()
    rng = np.random.default_rng(0)
    for _ in range(150):
        acts = goal_actions(base, rng)
        new_obs, rews, dones, infos = base.step(acts)
        buf.add(obs, new_obs, acts, rews, dones, infos)
        obs = new_obs
    n = buf.pos
    assert 0 < buf.valid[:n].mean() < 1
    # Masked transitions start from an all-zero observation; valid ones never do.
    assert (buf.observations[:n][~buf.valid[:n]] == 0).all()
    batch = buf.sample(4000)
    assert (batch.observations.abs().sum(dim=1) > 0).all()
    with pytest.raises(ValueError, match="optimize_memory_usage"):
        MaskedReplayBuffer(100, base.observation_space, base.action_space, n_envs=6,
                           optimize_memory_usage=True, handle_timeout_termination=False)


def test_attach_masks_needs_the_masked_buffer():
    base = make_vec_env(CIRCLE, n_envs=1)
    model = PPO("MlpPolicy", base, n_steps=8, batch_size=8, device="cpu")
    with pytest.raises(ValueError, match="rollout_buffer_class=MaskedRolloutBuffer or"):
        attach_masks(model, base)


def test_masked_normaliser_statistics_see_real_observations_only():
    base = make_vec_env(CROWDNAV, n_envs=2)
    venv = MaskedVecNormalize(base, norm_reward=False)
    base.seed(2)
    venv.reset()
    raw = [venv.get_original_obs()[base.obs_real]]
    rng = np.random.default_rng(0)
    for _ in range(80):
        venv.step(goal_actions(base, rng))
        raw.append(venv.get_original_obs()[base.obs_real])
    assert base.live_fraction < 1, "there should be masked rows"
    allreal = np.concatenate(raw).astype(np.float64)
    assert venv.obs_rms.count == pytest.approx(len(allreal) + 1e-4)
    np.testing.assert_allclose(venv.obs_rms.mean, allreal.mean(axis=0), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(venv.obs_rms.var, allreal.var(axis=0), rtol=1e-5, atol=1e-6)


def test_vec_monitor_warns_that_the_adapter_reports_episodes_itself():
    with pytest.warns(UserWarning, match="Monitor"):
        VecMonitor(make_vec_env(CIRCLE, n_envs=1))


def test_eval_callback_and_evaluate_policy(tmp_path):
    train_env = make_vec_env(CIRCLE, n_envs=1)
    eval_env = make_vec_env(CIRCLE, n_envs=1)
    model = PPO("MlpPolicy", train_env, n_steps=16, batch_size=48, n_epochs=1, seed=0,
                device="cpu", policy_kwargs={"net_arch": [8]})
    cb = EvalCallback(eval_env, n_eval_episodes=6, eval_freq=16, warn=False,
                      log_path=str(tmp_path))
    model.learn(16 * 6 * 2, callback=cb)
    assert cb.evaluations_results and len(cb.evaluations_results[0]) == 6
    rets, lens, episodes = evaluate_and_count(model, eval_env, 12)
    assert len(rets) == 12 and all(1 <= ln <= CIRCLE["max_steps"] for ln in lens)
    # The lengths are the agents' own (from the adapter's Monitor-style episodes): the steps an
    # agent acted in, not the entry's steps since its last episode (which count masked steps).
    assert sorted(lens) == sorted(own for own, _ in episodes)
    # The same where agents finish at different steps (the model above ends them all together).
    crowd = make_vec_env(CROWDNAV)
    crowd.seed(0)  # seeded: whether some agent finishes before the others depends on the draw
    rets, lens, episodes = evaluate_and_count(StraightToGoal(), crowd, 6)
    assert sorted(lens) == sorted(own for own, _ in episodes)
    assert any(own < steps for own, steps in episodes), "no evaluated episode has masked steps"


class StraightToGoal:
    """A ``predict`` for ``evaluate_policy``: every agent full speed at its goal."""

    def predict(self, obs, state=None, episode_start=None, deterministic=True):
        acts = np.zeros((len(obs), 2), np.float32)
        acts[:, 0] = 1.0
        return acts, None


def evaluate_and_count(model, venv, n_episodes):
    """``evaluate_policy``'s returns and lengths, and the (own, entry) lengths of the episodes it
    takes (the first ones of each entry): own counts the steps the agent acted in (``step_valid``),
    entry every step of the entry since its previous episode ended, masked steps included."""
    record = []
    step_wait = venv.step_wait

    def recording_step_wait():
        out = step_wait()
        record.append((venv.step_valid.copy(), out[2].copy()))
        return out
    venv.step_wait = recording_step_wait
    rets, lens = evaluate_policy(model, venv, n_eval_episodes=n_episodes,
                                 return_episode_rewards=True)
    own, steps = np.zeros(venv.num_envs, int), np.zeros(venv.num_envs, int)
    per_entry = [[] for _ in range(venv.num_envs)]
    for valid, done in record:
        own += valid
        steps += 1
        for i in np.flatnonzero(done):
            per_entry[i].append((int(own[i]), int(steps[i])))
        own[done] = steps[done] = 0
    assert n_episodes % venv.num_envs == 0  # evaluate_policy then takes as many from each entry
    k = n_episodes // venv.num_envs
    return rets, lens, [ep for entry in per_entry for ep in entry[:k]]


def test_plain_vec_normalize_still_works():
    venv = VecNormalize(make_vec_env(CIRCLE, n_envs=2))
    venv.reset()
    for _ in range(5):
        venv.step(np.zeros((venv.num_envs, 2), np.float32))
    assert venv.obs_rms.count > 5 * venv.num_envs


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
    venv = make_vec_env(CIRCLE, n_envs=2, backend="copies")
    assert venv.get_attr("max_steps") == [40] * 12
    assert venv.get_attr("max_steps", indices=[0, 7]) == [40, 40]
    venv.set_attr("debug_agent", 3, indices=[7])
    assert venv.envs[1].debug_agent == 3 and venv.envs[0].debug_agent is None
    assert venv.env_is_wrapped(object) == [False] * 12
    venv.reset()
    assert len(venv.env_method("state", indices=[0, 1, 6])) == 3
    vec = make_vec_env(CIRCLE, n_envs=2)
    assert vec.get_attr("num_worlds", indices=[0, 11]) == [2, 2]
    with pytest.raises(ValueError, match="env_fns"):
        SB3VecEnv([])
    with pytest.raises(ValueError, match="n_envs"):
        make_vec_env(CIRCLE, n_envs=0)
