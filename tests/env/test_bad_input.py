"""Bad input to the env layer: a clear error naming the key or argument, fast, nothing lost."""

import copy
import pickle
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from small_configs import SMALL

import orca_env
from orca_env.config import MAX_YAML_ALIASES, load_config
from orca_env.scenarios import SpawnError


def make(name="crowdnav_circle_v0", **kw):
    return orca_env.parallel_env(scenario=name, **{**SMALL.get(name, {}), **kw})


# -- YAML files are data, read strictly --------------------------------------------------------
def test_yaml_alias_bomb_fails_fast_in_a_subprocess(tmp_path):
    levels = ["a: &a [" + ", ".join(['"lol"'] * 9) + "]"]
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        levels.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
    path = tmp_path / "bomb.yaml"
    path.write_text("scenario: circle_v0\n" + "\n".join(levels) + "\nmax_steps: *i\n")
    code = textwrap.dedent(f"""
        import orca_env.config as c
        try:
            c.load_config({str(path)!r})
        except ValueError as e:
            print(str(e)[:300])
    """)
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=30, check=True)
    assert time.perf_counter() - t0 < 10.0  # interpreter start included; the load is ~ms
    assert "aliases" in out.stdout and str(MAX_YAML_ALIASES) in out.stdout


def test_yaml_duplicate_keys_are_an_error(tmp_path):
    path = tmp_path / "dup.yaml"
    path.write_text("scenario: circle_v0\nmax_steps: 100\nobservation: {range: 2.0}\n"
                    "max_steps: 200\n")
    with pytest.raises(ValueError, match=r"max_steps.*twice.*lines 2 and 4"):
        load_config(str(path))


def test_yaml_exponent_floats_are_numbers(tmp_path):
    path = tmp_path / "e.yaml"
    path.write_text("scenario: circle_v0\nmax_steps: 1e3\ntime_step: 2.5E-1\n")
    cfg = load_config(str(path))
    assert cfg.max_steps == 1000 and cfg.time_step == 0.25
    import yaml
    assert yaml.safe_load("x: 1e3") == {"x": "1e3"}  # PyYAML's own loader is untouched


def test_error_messages_do_not_expand_huge_values():
    with pytest.raises(ValueError) as err:
        load_config(None, max_steps=[[1] * 1000] * 1000)
    assert "max_steps" in str(err.value) and len(str(err.value)) < 400


# -- numeric bounds ----------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs,key", [
    ({"observation": {"num_agents": 10**12}}, "observation.num_agents"),
    ({"observation": {"num_obstacles": 10**12}}, "observation.num_obstacles"),
    ({"observation": {"range": 1e300}}, "observation.range"),
    ({"groups": [{"population": "learned", "radius": 1e200}]}, r"groups\[0\].radius"),
    ({"groups": [{"population": "learned", "max_neighbors": 10**12}]},
     r"groups\[0\].max_neighbors"),
    ({"groups": [{"population": "learned", "count": 10**12}]}, r"groups\[0\].count"),
    ({"time_step": 1e300}, "time_step"),
    ({"max_steps": 10**400}, "max_steps"),
    ({"num_threads": 10**6}, "num_threads"),
    ({"rewards": {"goal": 1e300}}, "rewards.goal"),
])
def test_numeric_keys_have_bounds(kwargs, key):
    with pytest.raises(ValueError, match=rf"'{key}' must be <="):
        load_config(None, **kwargs)


def test_num_threads_beyond_the_machine_fails_at_config_time(monkeypatch):
    monkeypatch.setenv("NUMBA_NUM_THREADS", "2")
    with pytest.raises(ValueError, match=r"'num_threads' must be <= 2, got 64"):
        orca_env.parallel_env(scenario="circle_v0", num_threads=64)


# -- scenarios ---------------------------------------------------------------------------------
@pytest.mark.parametrize("scenario,kwargs,key", [
    ("random_obstacles_v0", {"half_size": 0.0}, "half_size"),
    ("bottleneck_v0", {"door_width": 0.0}, "door_width"),
    ("bottleneck_v0", {"door_width": 9.0}, "door_width"),
    ("crowdnav_circle_v0", {"circle_radius": 1e12}, "circle_radius"),
    ("circle_v0", {"circle_radius": 0.0}, "circle_radius"),
    ("crowdnav_square_v0", {"robot_dist": 9.0}, "robot_dist"),
    ("corridor_v0", {"zone": 15.0}, "zone"),
    ("intersection_v0", {"zone": 9.0}, "zone"),
    ("random_obstacles_v0", {"min_side": 3.0}, "min_side"),
])
def test_scenario_parameters_name_the_key(scenario, kwargs, key):
    with pytest.raises(ValueError, match=rf"scenario_kwargs key '{key}' of {scenario}"):
        orca_env.parallel_env(scenario=scenario, scenario_kwargs=kwargs)


def test_infeasible_obstacle_request_fails_fast():
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="'num_obstacles'.*at most"):
        orca_env.parallel_env(scenario="random_obstacles_v0",
                              scenario_kwargs={"num_obstacles": 10000})
    assert time.perf_counter() - t0 < 1.0


def test_circle_without_jitter_refuses_overlapping_spawns():
    env = orca_env.parallel_env(scenario="circle_v0", scenario_kwargs={"circle_radius": 5.0,
                                                                         "jitter": 0.0})
    with pytest.raises(SpawnError, match="overlapping"):
        env.reset(seed=0)


def test_spawn_inside_an_obstacle_is_refused():
    from orca_env.scenarios import SCENARIOS, Scenario, World, rectangle, register_scenario

    @register_scenario
    class InWall(Scenario):
        name = "test_in_wall_v0"
        HAS_OBSTACLES = True

        def build_world(self, rng):
            return World(obstacles=[rectangle(-1, -1, 1, 1)])

        def place_agents(self, rng, sim, radii):
            return np.zeros((len(radii), 2)), np.full((len(radii), 2), 5.0)

    try:
        with pytest.raises(SpawnError, match="inside or within its radius"):
            orca_env.parallel_env(scenario="test_in_wall_v0").reset(seed=0)
    finally:
        SCENARIOS.pop("test_in_wall_v0")


# -- actions, seeds, copies --------------------------------------------------------------------
@pytest.mark.parametrize("bad", ["ab", ["1", "0"], True, np.array([True, False]), 1 + 2j,
                                 np.array([1 + 1j, 0.0]), [1.0, 2.0, 3.0], None])
def test_non_real_actions_are_refused_and_nothing_moves(bad):
    env = make()
    env.reset(seed=0)
    pos = env.sim.positions.copy()
    with pytest.raises(ValueError, match="action of agent 'agent_0' must be 2 real numbers"):
        env.step({a: bad for a in env.agents})
    assert np.array_equal(env.sim.positions, pos) and env.step_count == 0
    env.step(env.heuristic_actions())  # the env still works


def test_integer_actions_are_accepted():
    """Integer actions (arrays of any integer dtype, lists, tuples) step exactly as the equal
    floats: the same observations, rewards, flags, infos and positions, step after step."""
    ints, floats = make(), make()
    ints.reset(seed=0)
    floats.reset(seed=0)
    start = ints.sim.positions.copy()
    kinds = [lambda v: np.array(v), lambda v: list(v), lambda v: tuple(v),
             lambda v: np.array(v, dtype=np.int8), lambda v: np.array(v, dtype=np.uint8)]
    values = [(1, 0), (0, 1), (-1, 1), (1, 1), (0, 0)]
    for t in range(6):
        acts = {a: values[(t + k) % len(values)] for k, a in enumerate(ints.agents)}
        if t % len(kinds) == 4:  # uint8: no negative entries
            acts = {a: tuple(abs(x) for x in v) for a, v in acts.items()}
        got = ints.step({a: kinds[t % len(kinds)](v) for a, v in acts.items()})
        want = floats.step({a: np.array(v, dtype=np.float64) for a, v in acts.items()})
        np.testing.assert_equal(got, want)
        assert np.array_equal(ints.sim.positions, floats.sim.positions)
    assert ints.step_count == 6 and not np.array_equal(ints.sim.positions, start)  # they moved


@pytest.mark.parametrize("seed", [True, -1, 1.5, "3", [1]])
def test_bad_seeds_are_refused(seed):
    env = make()
    with pytest.raises(ValueError, match="seed must be None or a non-negative integer"):
        env.reset(seed=seed)


def test_numpy_integer_seed_is_the_same_as_int():
    a, b = make(), make()
    oa, _ = a.reset(seed=np.int64(5))
    ob, _ = b.reset(seed=5)
    assert all(np.array_equal(oa[k], ob[k]) for k in oa)


def test_pickle_and_deepcopy_after_render():
    env = make(render_mode="rgb_array")
    env.reset(seed=0)
    env.step(env.heuristic_actions())
    frame = env.render()
    twin = pickle.loads(pickle.dumps(env))
    clone = copy.deepcopy(env)
    acts = env.heuristic_actions()
    outs = [e.step(dict(acts)) for e in (env, twin, clone)]
    for out in outs[1:]:
        assert all(np.array_equal(outs[0][0][k], out[0][k]) for k in outs[0][0])
    assert clone.render().shape == frame.shape  # a new renderer, built on demand


@pytest.mark.parametrize("value", [1e12, -2e9, float("inf")])
def test_goals_beyond_the_core_coordinate_bound_are_refused(value):
    env = orca_env.parallel_env("circle_dense")
    env.reset(seed=0)
    before = env.goals.copy()
    with pytest.raises(ValueError, match=r"goals must be 1 finite .* within \+-1e\+09 m"):
        env.set_goals([[value, 0.0]], slots=[0])
    assert np.array_equal(env.goals, before)  # nothing changed
    env.set_goals([[1e9, 0.0]], slots=[0])  # the bound itself is fine
