"""OrcaVectorEnv: per world bit-identical to OrcaEnv with the same seed; masks; validation."""

import numpy as np
import pytest

import orca_env
from orca_env.config import tolerance_parts
from orca_env.vector import OrcaVectorEnv

# The shared runs use actions outside the box on purpose (clipping is part of the contract).
pytestmark = pytest.mark.filterwarnings("ignore:actions outside the box")


def _run_pair(config, worlds, steps, seed, random_every=3, **kw):
    """Step a vector env and one single env per world with the same actions; compare bits.

    Actions are each single env's heuristic (pure ORCA, so agents reach goals and collide), and
    every ``random_every``-th step (0: never) uniform random ones. Returns (resets seen, finished
    rows seen, truncated rows seen).
    """
    v = OrcaVectorEnv(config, worlds, seed=seed, **kw)
    obs, info = v.reset()
    envs = [orca_env.parallel_env(config, infos="compact", **kw) for _ in range(worlds)]
    L = v.num_agents_per_world
    assert obs.shape == (worlds * L, v.single_observation_space.shape[0])
    assert obs.dtype == np.float32 and info["alive"].all()
    for b, e in enumerate(envs):
        o, _ = e.reset(seed=seed + b)
        for k, a in enumerate(e.possible_agents):
            assert np.array_equal(obs[b * L + k], o[a])
    rng = np.random.default_rng(seed)
    resets = finished = truncated = 0
    for t in range(steps):
        act = rng.uniform(-1.2, 1.2, (worlds * L, 2)).astype(np.float32)
        for b, e in enumerate(envs):
            if random_every == 0 or t % random_every:
                for a, h in e.heuristic_actions().items():
                    act[b * L + e.possible_agents.index(a)] = h
        alive_before = v.alive
        obs, rew, term, trunc, info = v.step(act)
        assert np.array_equal(info["active"], alive_before)
        assert rew.dtype == np.float64 and term.dtype == bool and trunc.dtype == bool
        # Rows that did not act report nothing.
        idle = ~info["active"]
        assert not rew[idle].any() and not term[idle].any() and not trunc[idle].any()
        truncated += int(trunc.sum())
        for b, e in enumerate(envs):
            acts = {a: act[b * L + e.possible_agents.index(a)] for a in e.agents}
            o, r, te, tr, _ = e.step(acts)
            for a in acts:
                row = b * L + e.possible_agents.index(a)
                done = te[a] or tr[a]
                got = info["final_obs"][row] if done else obs[row]
                assert np.array_equal(got, o[a]), (t, b, a)
                assert rew[row] == r[a] and term[row] == te[a] and trunc[row] == tr[a], (t, b, a)
                assert info["active"][row]
                if done:
                    finished += 1
                    assert info["_final_obs"][row]
            assert info["world_reset"][b] == (not e.agents)
            if not e.agents:
                resets += 1
                o, _ = e.reset()
                for k, a in enumerate(e.possible_agents):
                    assert np.array_equal(obs[b * L + k], o[a])
                assert info["alive"][b * L:(b + 1) * L].all()
            else:
                for k, a in enumerate(e.possible_agents):
                    row = b * L + k
                    assert info["alive"][row] == (a in e.agents)
                    if a not in e.agents:
                        assert not obs[row].any()  # finished rows read all-zero
    v.close()
    return resets, finished, truncated


def test_circle_dense_bit_identical_to_single_envs():
    resets, finished, _ = _run_pair("circle_dense", 3, 260, seed=7)
    assert resets >= 3 and finished > 10


def test_obstacles_crowd_and_new_goals_bit_identical():
    # Different random obstacles per world, ORCA and non-reactive crowds with new goals.
    resets, finished, _ = _run_pair("random_obstacles", 3, 200, seed=3, guidance=False)
    assert resets >= 1 and finished > 0


def test_crowd_noise_bit_identical():
    # blocks: ORCA crowd with RVO2's noise, drawn from each world's generator.
    env = orca_env.parallel_env("blocks")
    assert env.noise_magnitudes.any()
    _run_pair("blocks", 2, 120, seed=11, max_steps=60)


def test_threads_give_identical_results():
    outs = []
    for threads in (1, 2):
        v = OrcaVectorEnv("circle_dense", 4, seed=0, num_threads=threads)
        obs, _ = v.reset()
        rng = np.random.default_rng(0)
        seq = [obs]
        for _ in range(120):
            obs, rew, term, trunc, _ = v.step(rng.uniform(-1, 1, (v.num_envs, 2)))
            seq += [obs, rew, term, trunc]
        v.close()
        outs.append(seq)
    for a, b in zip(*outs, strict=True):
        assert np.array_equal(a, b)


def test_seed_list_and_infos():
    v = OrcaVectorEnv("circle_dense", 2, infos=True)
    obs, _ = v.reset(seed=[5, 9])
    e = orca_env.parallel_env("circle_dense")
    o, _ = e.reset(seed=9)
    assert np.array_equal(obs[16], o["agent_0"])
    _, rew, _, _, info = v.step(np.zeros((v.num_envs, 2)))
    assert info["status"].shape == (32,) and info["reward_terms"].shape == (32, 7)
    assert np.allclose(info["reward_terms"].sum(axis=1), rew)
    assert info["collided_with"].dtype == np.int8
    assert v.metadata["autoreset_mode"].name == "SAME_STEP"


@pytest.mark.parametrize("kwargs, match", [
    (dict(num_worlds=0), "num_worlds"),
    (dict(num_worlds=2.5), "num_worlds"),
    (dict(num_worlds=2, seed=-1), "seed"),
    (dict(num_worlds=2, seed=[1]), "seed"),
    (dict(num_worlds=2, infos="full"), "infos"),
])
def test_constructor_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        OrcaVectorEnv("circle_dense", **kwargs)


def test_guidance_bit_identical():
    # Roadmap guidance (the default of random_obstacles) runs on the pipeline too.
    resets, finished, _ = _run_pair("random_obstacles", 3, 150, seed=11)
    assert finished > 0


def test_mixture_bit_identical_worlds_of_different_sizes():
    # Each world draws its own entry (and size) at every reset, from its own generator.
    from tests.env.test_mixture import mix

    v = OrcaVectorEnv(mix(), 3, seed=2)
    sizes = set()
    v.reset()
    for _ in range(40):
        v.step(np.zeros((v.num_envs, 2)))
        sizes |= set(v.world_sizes.tolist())
    assert len(sizes) >= 2  # the batch held worlds of different sizes at once
    resets, finished, _ = _run_pair(mix(), 3, 120, seed=2)
    assert resets >= 1 and finished > 0


def test_bad_actions():
    v = OrcaVectorEnv("circle_dense", 2, seed=0)
    with pytest.raises(RuntimeError, match="reset"):
        v.step(np.zeros((32, 2)))
    v.reset()
    with pytest.raises(ValueError, match="actions"):
        v.step(np.zeros((31, 2)))
    with pytest.raises(ValueError, match="actions"):
        v.step(np.full((32, 2), "a"))
    bad = np.zeros((32, 2))
    bad[5, 1] = np.nan
    with pytest.raises(ValueError, match="row 5"):
        v.step(bad)
    with pytest.warns(UserWarning, match="clipped"):
        v.step(np.full((32, 2), 3.0))


def test_masked_actions_clip_alive_rows_like_clip_actions_and_zero_the_others():
    from orca_env.step import clip_actions, masked_actions

    rng = np.random.default_rng(3)
    raw = rng.uniform(-3, 3, (40, 2))
    raw[[1, 7]] = [[0.1, -0.2], [np.nan, np.inf]]  # row 7: not alive, so not read
    alive = rng.random(40) < 0.7
    alive[[1, 7]] = [True, False]
    for norm in (True, False):
        want = np.clip(np.where(alive[:, None], raw, 0.0), -1.0, 1.0)  # the box, then the norm
        length = np.sqrt(want[:, 0] * want[:, 0] + want[:, 1] * want[:, 1])
        if norm:
            want[length > 1.0] /= length[length > 1.0, None]
        assert clip_actions(ref := np.where(alive[:, None], raw, 0.0), norm) == (-1, True)
        assert ref.tobytes() == want.tobytes()
        got, before = np.full((40, 2), 9.0), raw.copy()
        bad, clipped = masked_actions(raw, alive, norm, got)
        assert (bad, clipped) == (-1, True)
        assert got.tobytes() == want.tobytes() and np.array_equal(raw, before, equal_nan=True)
        assert not masked_actions(raw[1:2], alive[1:2], norm, got[:1])[1]  # inside the box
    alive[7] = True
    assert masked_actions(raw, alive, True, np.zeros((40, 2)))[0] == 7


class _Garbage:
    """numpy, but ``empty`` hands out arrays whose every byte is 0xA5 (not what calloc gives)."""

    def __getattr__(self, name):
        return getattr(np, name)

    @staticmethod
    def empty(shape, dtype=float, **kw):
        a = np.empty(shape, dtype, **kw)
        a.view(np.uint8).reshape(-1)[:] = 0xA5
        return a


@pytest.mark.parametrize("mode", ["same_step", "next_step"])
def test_uninitialised_pipeline_arrays_never_reach_a_result(mode, monkeypatch):
    """Whatever the pipeline takes from np.empty (scratch, buffers) must be written before read.

    Checked with arrays full of 0xA5 bytes instead of whatever the allocator gives (often
    zeros): finished agents' rows, worlds left for a NEXT_STEP reset and every infos array.
    """
    from orca_env import pipeline

    def trace():
        v = OrcaVectorEnv("circle_dense", 3, seed=4, infos=True, autoreset_mode=mode,
                          max_steps=40)
        obs, info = v.reset()
        out = [obs] + [info[k] for k in sorted(info)]
        rng = np.random.default_rng(0)
        finished = idle = 0
        for t in range(90):  # towards the goal (the agents' frames), random every third step
            act = rng.uniform(-1, 1, (v.num_envs, 2)) if t % 3 == 0 else \
                np.tile([1.0, 0.0], (v.num_envs, 1))
            alive = v.alive
            obs, rew, term, trunc, info = v.step(act)
            finished += int((~alive).sum())
            idle += int((~alive.reshape(3, -1).any(axis=1)).sum())
            out += [obs, rew, term, trunc] + [np.asarray(info[k]) for k in sorted(info)]
        v.close()
        return out, finished, idle

    want, finished, idle = trace()
    assert finished > 0 and (idle > 0) == (mode == "next_step")  # both kinds of rows seen
    monkeypatch.setattr(pipeline, "np", _Garbage())
    got, _, _ = trace()
    assert len(got) == len(want)
    for a, b in zip(want, got, strict=True):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()


def test_unsafe_learners_world_frame_and_continue_bit_identical():
    # Learners without the safety layer (their core result is overwritten), a parked crowd,
    # world-frame observations, collisions that do not end the episode, stall deadlocks.
    small = {"radius": 0.3, "max_speed": 1.0, "pref_speed": 1.0, "neighbor_dist": 4.0,
             "time_horizon": 3.0}
    cfg = {"scenario": "circle_v0", "scenario_kwargs": {"circle_radius": 3.0, "jitter": 0.1},
           "max_steps": 70, "on_collision": "continue",
           "stall": {"window": 4, "speed_fraction": 0.3},
           "observation": {"frame": "world", "num_agents": 3, "range": 3.0},
           "groups": [{"population": "learned", "count": 5, "on_goal": "stay",
                       "safety_layer": False, **small},
                      {"population": "learned", "count": 3, "on_goal": "stop", **small},
                      {"population": "orca", "count": 4, "on_goal": "stay", **small},
                      {"population": "non_reactive", "count": 2, "on_goal": "stop", **small}]}
    resets, finished, _ = _run_pair(cfg, 3, 220, seed=21)
    assert resets >= 2 and finished > 0


def test_deadlocks_bit_identical():
    # Without jitter pure ORCA deadlocks circle_dense: the per-world all-stalled rule truncates.
    resets, _, truncated = _run_pair("circle_dense", 2, 150, seed=1, random_every=0,
                                     scenario_kwargs={"jitter": 0.0}, stall={"window": 5})
    assert resets >= 2 and truncated >= 32


def test_crowdnav_invisible_setting_bit_identical():
    # CrowdNav's test cases (autoresets walk on to the next case), the invisible robot, ORCA
    # padding, CrowdNav's time limit and collision check.
    resets, finished, truncated = _run_pair("crowdnav_circle_invisible", 3, 240, seed=10_000)
    assert resets >= 6 and finished >= 6


def test_linear_randomized_padded_visibility_bit_identical():
    groups = [{"name": "robot", "population": "learned", "count": 2, "orca_padding": 0.02,
               "visible_to": ["walkers"]},
              {"name": "walkers", "population": "orca", "count": 4, "on_goal": "new_goal",
               "randomize_attributes": True, "avoids": ["walkers", "robot"]},
              {"name": "lines", "population": "linear", "count": 3, "on_goal": "stay",
               "randomize_attributes": True, "pref_speed": 1.0}]
    kw = dict(groups=groups, collision_check="crowdnav", time_limit_rule="crowdnav",
              max_steps=60)
    env = orca_env.parallel_env("crowdnav_square", **kw)
    env.reset(seed=0)
    assert any(g.randomize_attributes for g in env.groups)
    assert any(g.orca_padding > 0 for g in env.groups) and (env.sim.avoid_masks[6:] == 0).all()
    resets, finished, truncated = _run_pair("crowdnav_square", 3, 150, seed=5, **kw)
    assert resets >= 3 and finished > 0 and truncated > 0


@pytest.mark.parametrize("config, kw", [
    ("circle_dense", {}),
    ("random_obstacles", {"guidance": False}),            # segments in the universal layout
    ("crowdnav_circle_invisible", {"collision_check": "crowdnav"}),
])
def test_universal_layout_and_relative_tolerance_bit_identical(config, kw):
    kw = dict(kw, observation={"layout": "universal", "num_agents": 6, "num_obstacles": 4},
              collision_tolerance={"absolute": 0.002, "relative": 0.02})
    env = orca_env.parallel_env(config, **kw)
    assert env.universal_layout
    assert tolerance_parts(env.episode_config.collision_tolerance) == (0.002, 0.02)
    resets, finished, _ = _run_pair(config, 2, 150, seed=4, **kw)
    assert finished > 0


def test_time_observation_bit_identical():
    # observation.time appends step / last step; worlds reset at different steps.
    kw = {"observation": {"layout": "universal", "time": True}, "max_steps": 60}
    plain = OrcaVectorEnv("circle_dense", 1, observation={"layout": "universal"})
    timed = OrcaVectorEnv("circle_dense", 1, **kw)
    assert timed.single_observation_space.shape[0] == plain.single_observation_space.shape[0] + 1
    resets, finished, truncated = _run_pair("circle_dense", 2, 130, seed=5, **kw)
    assert resets >= 2 and truncated > 0


def test_residual_actions_bit_identical():
    # action: residual (a correction to pure ORCA's preferred velocity), with and without the
    # safety layer; random residuals every other step, zero (pure ORCA) otherwise.
    resets, finished, _ = _run_pair("bottleneck", 2, 200, seed=3, random_every=2,
                                    action="residual", guidance=False)
    assert finished > 0
    small = {"radius": 0.3, "max_speed": 1.0, "pref_speed": 1.0, "neighbor_dist": 4.0}
    groups = [{"population": "learned", "count": 4, "safety_layer": False, **small},
              {"population": "orca", "count": 8, **small}]
    resets, finished, _ = _run_pair("circle_dense", 2, 150, seed=8, random_every=2,
                                    action="residual", groups=groups)
    assert finished > 0
