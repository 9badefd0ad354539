import copy
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, parallel_api_test
from small_configs import SMALL

import orca_env
from orca_env.rewards import TERMS, term_dicts
from orca_env.scenarios import SCENARIOS


def make(name="crowdnav_circle_v0", **kw):
    return orca_env.parallel_env(scenario=name, **{**SMALL.get(name, {}), **kw})


def test_import_is_light_and_names_are_plain():
    code = ("import sys, orca_env; assert 'numba' not in sys.modules; "
            "assert 'pettingzoo' not in sys.modules; import orca_env.core; "
            "import types, inspect; "
            "assert type(orca_env) is types.ModuleType; "
            "assert inspect.isclass(orca_env.OrcaEnv); "
            "assert all(inspect.isfunction(getattr(orca_env, f)) "
            "for f in ('parallel_env', 'env', 'raw_env')); "
            "import orca_env.environment as m; assert m.OrcaEnv is orca_env.OrcaEnv; "
            "assert inspect.isfunction(orca_env.env); "
            "assert not hasattr(orca_env, 'sim')")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_raw_env_is_the_unwrapped_aec_env():
    from pettingzoo.utils.conversions import parallel_to_aec_wrapper
    raw = orca_env.raw_env(scenario="crowdnav_square_v0")
    assert isinstance(raw, parallel_to_aec_wrapper)
    api_test(raw, num_cycles=20)


@pytest.mark.parametrize("name", ["crowdnav_circle_v0", "corridor_v0", "random_obstacles_v0"])
def test_parallel_api(name):
    parallel_api_test(make(name), num_cycles=300)


def test_aec_api():
    api_test(orca_env.env(scenario="crowdnav_square_v0"), num_cycles=200)


def rollout(env, seed, n_steps=10_000):
    rng = np.random.default_rng(seed + 1000)
    obs, infos = env.reset(seed=seed)
    trace = [obs, infos]
    for _ in range(n_steps):
        if not env.agents:
            break
        acts = {a: rng.uniform(-1, 1, 2).astype(np.float32) for a in env.agents}
        trace.append(env.step(acts))
    return trace


def same(a, b):
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and np.array_equal(a, b)
    if isinstance(a, float) and np.isnan(a):
        return isinstance(b, float) and np.isnan(b)
    return a == b


@pytest.mark.parametrize("name", ["crowdnav_circle_v0", "random_obstacles_v0", "corridor_v0"])
def test_seed_full_episode(name):
    t1 = rollout(make(name), 7)
    t2 = rollout(make(name), 7)
    assert same(t1, t2)
    t3 = rollout(make(name), 8)
    assert not same(t1, t3)


DIGEST = """
import hashlib, numpy as np, orca_env
e = orca_env.parallel_env(scenario='random_obstacles_v0', guidance=True)
rng = np.random.default_rng(3); h = hashlib.sha256()
obs, _ = e.reset(seed=5)
while e.agents:
    o, r, te, tr, inf = e.step({a: rng.uniform(-1, 1, 2) for a in e.agents})
    for a in sorted(o): h.update(o[a].tobytes()); h.update(np.float64(r[a]).tobytes())
h.update(e.state().tobytes()); print(h.hexdigest())
"""


def test_seed_across_processes():
    out = [subprocess.run([sys.executable, "-c", DIGEST], check=True, capture_output=True,
                          text=True).stdout for _ in range(2)]
    assert out[0] == out[1] and len(out[0]) > 10


@pytest.mark.parametrize("clone", [pickle.loads, copy.deepcopy])
def test_pickle_and_deepcopy_mid_episode(clone):
    env = make("random_obstacles_v0", guidance=True)
    rng = np.random.default_rng(0)
    env.reset(seed=3)
    for _ in range(10):
        env.step({a: rng.uniform(-1, 1, 2) for a in env.agents})
    other = clone(pickle.dumps(env)) if clone is pickle.loads else clone(env)
    acts = [{a: rng.uniform(-1, 1, 2) for a in env.possible_agents} for _ in range(40)]
    for act in acts:
        if not env.agents:
            break
        r1 = env.step({a: act[a] for a in env.agents})
        r2 = other.step({a: act[a] for a in other.agents})
        assert same(r1, r2)
    assert np.array_equal(env.state(), other.state())


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_observations_in_space(name):
    for frame in ("goal", "world"):
        env = make(name, observation={"frame": frame}, max_steps=60,
                   guidance=SCENARIOS[name].HAS_OBSTACLES)
        rng = np.random.default_rng(1)
        obs, _ = env.reset(seed=2)
        for _ in range(60):
            for a, o in obs.items():
                space = env.observation_space(a)
                assert o.dtype == np.float32 and o.shape == space.shape
                assert space.contains(o), (a, o)
            assert env.state_space.contains(env.state())
            if not env.agents:
                break
            acts = {a: rng.uniform(-1.5, 1.5, 2) for a in env.agents}
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                obs, *_ = env.step(acts)


def test_infos_and_reward_terms():
    env = make("crowdnav_circle_v0")
    env.reset(seed=0)
    _, rew, _, _, infos = env.step(env.heuristic_actions())
    info = infos["agent_0"]
    assert set(info) >= {"status", "reward_terms", "intervention", "num_orca_lines", "used_lp3",
                         "distance_to_goal", "nearest_separation", "position_corrected"}
    assert info["status"] == "active"
    assert sum(info["reward_terms"].values()) == pytest.approx(rew["agent_0"])
    assert info["reward_terms"]["progress"] > 0
    assert tuple(info["reward_terms"]) == TERMS
    row = np.arange(len(TERMS), dtype=np.float64)
    assert term_dicts(row[None]) == [dict(zip(TERMS, row.tolist(), strict=True))]


def test_bad_actions():
    env = make()
    with pytest.raises(RuntimeError, match="before reset"):
        env.step({"agent_0": np.zeros(2)})
    env.reset(seed=0)
    with pytest.raises(ValueError, match="agent_0"):
        env.step({"agent_0": np.array([np.nan, 0.0])})
    with pytest.raises(ValueError, match="agent_0"):
        env.step({"agent_0": np.array([0.0, np.inf])})
    with pytest.raises(ValueError, match="agent_7"):
        env.step({"agent_0": np.zeros(2), "agent_7": np.zeros(2)})
    with pytest.raises(ValueError, match="agent_0"):
        env.step({})
    with pytest.raises(ValueError, match="agent_0"):
        env.step({"agent_0": np.zeros(3)})
    with pytest.warns(UserWarning, match="clipped"):
        env.step({"agent_0": np.array([5.0, 0.0])})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env.step({"agent_0": np.array([5.0, 0.0])})  # one warning per episode
    env.reset(seed=1)
    with pytest.warns(UserWarning, match="clipped"):
        env.step({"agent_0": np.array([-3.0, 0.0])})


def test_step_after_episode_end():
    env = make(max_steps=2)
    env.reset(seed=0)
    env.step(env.heuristic_actions())
    *_, trunc, infos = env.step(env.heuristic_actions())
    assert trunc["agent_0"] and infos["agent_0"]["status"] == "timed_out"
    assert env.agents == []
    with pytest.raises(RuntimeError, match="reset"):
        env.step({})


def test_safety_layer_off_applies_action_as_velocity():
    groups = [{"population": "learned", "count": 1, "safety_layer": False},
              {"population": "orca", "count": 5, "on_goal": "stay"}]
    env = make(groups=groups, observation={"frame": "world"})
    env.reset(seed=0)
    env.step({"agent_0": np.array([0.6, 0.0])})
    assert np.allclose(env.sim.velocities[0], [0.6, 0.0])
    assert env.sim.responsibilities[0] == 0.0


def test_goal_frame_actions_point_at_the_goal():
    """In the default goal-aligned frame, (1, 0) is full speed towards the goal, (0, 1) left."""
    groups = [{"population": "learned", "count": 1, "safety_layer": False},
              {"population": "orca", "count": 5, "on_goal": "stay"}]
    env = make(groups=groups)
    env.reset(seed=0)
    p0 = env.sim.positions[0].copy()
    to_goal = env.targets[0] - p0
    e = to_goal / np.linalg.norm(to_goal)
    vmax = env.sim.max_speeds[0]
    env.step({"agent_0": np.array([1.0, 0.0])})
    np.testing.assert_allclose(env.sim.velocities[0], vmax * e, atol=1e-12)
    p1 = env.sim.positions[0].copy()
    e = (env.targets[0] - p1) / np.linalg.norm(env.targets[0] - p1)
    env.step({"agent_0": np.array([0.0, 0.5])})
    np.testing.assert_allclose(env.sim.velocities[0], 0.5 * vmax * np.array([-e[1], e[0]]),
                               atol=1e-12)
    # The heuristic action in the goal frame is (pref_speed / max_speed, 0) away from the goal.
    a = env.heuristic_actions()["agent_0"]
    assert a[0] > 0 and abs(a[1]) < 1e-6


def test_render_hook():
    env = make()
    env.reset(seed=0)
    with pytest.warns(UserWarning):
        assert env.render() is None
    data = env.render_data()
    assert data["positions"].shape == (6, 2)
