"""observation.layout: universal: one Box for every scenario, scale-free values."""

import copy

import numpy as np
import pytest
from gymnasium import spaces
from orca_env.configs import names, resolve

import orca_env
from orca_env.config import load_config, load_yaml
from orca_env.observations import (
    UNIVERSAL_DEFAULTS,
    build_observations_universal,
    make_universal_space,
    obs_size,
)

UNIVERSAL = {"layout": "universal", "num_agents": 6, "num_obstacles": 4}


def _universal_env(name, **kw):
    # Sensors off: a config's LiDAR scan (random_obstacles_lidar) lengthens the Box by design.
    return orca_env.parallel_env(name, observation=dict(UNIVERSAL, lidar=None), **kw)


def test_every_shipped_config_has_the_same_finite_space():
    want = make_universal_space(6, 4)
    assert np.isfinite(want.low).all() and np.isfinite(want.high).all()
    assert want.shape == (obs_size(6, 4),)
    for name in names("env"):
        env = _universal_env(name)
        if env.world_config.learned_kinematics != "holonomic":
            # A robot also observes its heading and turn rate: three more bounded features.
            want_robot = spaces.Box(np.append(want.low, [-1, -1, -1]).astype(np.float32),
                                    np.append(want.high, [1, 1, 1]).astype(np.float32))
            for a in env.possible_agents:
                assert env.observation_space(a) == want_robot, name
            continue
        for a in env.possible_agents:
            assert env.observation_space(a) == want, name


def test_defaults_of_k_and_m_do_not_depend_on_the_scenario():
    # Configs that leave K and M unset get the universal defaults, whatever the scenario's.
    want = make_universal_space(UNIVERSAL_DEFAULTS["num_agents"],
                                UNIVERSAL_DEFAULTS["num_obstacles"])
    for s in ("circle_v0", "bottleneck_v0", "crowdnav_circle_v0", "blocks_v0"):
        env = orca_env.parallel_env(scenario=s, observation={"layout": "universal"})
        assert env.observation_space("agent_0") == want, s
    # Explicit K and M are kept (the space then differs, as it must).
    env = orca_env.parallel_env("crowdnav_square", observation={"layout": "universal"})
    assert env.num_obs_agents == 5 and env.observation_space("agent_0").shape == (obs_size(5, 4),)


def test_layout_is_left_out_of_to_dict_at_its_default():
    assert "layout" not in load_config("circle_dense").to_dict()["observation"]
    cfg = load_config("circle_dense", observation={"layout": "universal"})
    assert cfg.to_dict()["observation"]["layout"] == "universal"
    assert load_config(cfg.to_dict()) == cfg
    with pytest.raises(ValueError, match=r"'observation.layout' must be one of \['metric', "
                                         r"'universal'\], got 'si'"):
        load_config(observation={"layout": "si"})


@pytest.mark.parametrize("name", names("env"))
def test_observations_lie_in_the_space_over_rollouts(name):
    env = _universal_env(name)
    space = env.observation_space("agent_0")
    rng = np.random.default_rng(0)
    for seed in (0, 1):
        obs, _ = env.reset(seed=seed)
        for t in range(25):
            for a, o in obs.items():
                assert space.contains(o), (name, a, o[~((o >= space.low) & (o <= space.high))])
                assert o[6] > 0 and o[7] > 0  # own radius and speed, in units of the range
            if not env.agents:
                break
            acts = env.heuristic_actions()
            if t % 3 == 0:
                acts = {a: rng.uniform(-1, 1, 2).astype(np.float32) for a in env.agents}
            obs, *_ = env.step(acts)


def _scaled(name, f, **over):
    """Config ``name`` with every length and speed times ``f`` (time unchanged)."""
    data = copy.deepcopy(load_yaml(resolve(name)))
    data.update(over)
    env = orca_env.parallel_env(data)
    sc = env.scenario
    out = copy.deepcopy(data)
    kw = dict(sc.params)
    for k, v in kw.items():
        if isinstance(v, float):
            kw[k] = v * f
    out["scenario_kwargs"] = kw
    groups = []
    for g in env.groups:
        g = dict(vars(g))
        for k in ("radius", "max_speed", "pref_speed", "neighbor_dist"):
            g[k] = (sc.AGENT_DEFAULTS[k] if g[k] is None else g[k]) * f
        noise = g["noise"] if g["noise"] is not None else (
            sc.CROWD_NOISE if g["population"] == "orca" else 0.0)
        g["noise"] = noise * f if g["population"] != "learned" else None
        groups.append(g)
    out["groups"] = groups
    ob = dict(out.get("observation") or {})
    ob.update(UNIVERSAL, range=env.obs_range * f)
    out["observation"] = ob
    out["collision_tolerance"] = {"relative": 0.01}
    return out


@pytest.mark.parametrize("name, over", [("circle_dense", {}),
                                        ("bottleneck", {"guidance": False}),
                                        ("corridor", {})])
def test_a_world_ten_times_larger_observes_the_same(name, over):
    """All lengths and speeds x10: the same observations up to round-off (the point of units)."""
    small = orca_env.parallel_env(_scaled(name, 1.0, **over))
    big = orca_env.parallel_env(_scaled(name, 10.0, **over))
    assert big.observation_space("agent_0") == small.observation_space("agent_0")
    o_s, _ = small.reset(seed=5)
    o_b, _ = big.reset(seed=5)
    if name == "circle_dense":  # its layout scales (random placement has a margin in metres)
        np.testing.assert_allclose(big.sim.positions, 10.0 * small.sim.positions, rtol=1e-9,
                                   atol=1e-9)
    else:  # the same layout, ten times larger
        big.sim.set_positions(10.0 * small.sim.positions)
        big.set_goals(10.0 * small.goals)
        acts = small.heuristic_actions()
        o_s, *_ = small.step(acts)
        o_b, *_ = big.step(acts)
    compared = 0
    for t in range(30):
        assert o_s.keys() == o_b.keys(), t
        for a in o_s:
            np.testing.assert_allclose(o_b[a], o_s[a], rtol=0, atol=2e-5, err_msg=f"{t} {a}")
            compared += 1
        if not small.agents:
            break
        acts = small.heuristic_actions()
        o_s, r_s, *_ = small.step(acts)
        o_b, r_b, *_ = big.step(acts)
    assert compared > 30
    # The metric layout, by contrast, sees ten times larger numbers.
    m_s = orca_env.parallel_env(_scaled(name, 1.0, **over), observation={"layout": "metric"})
    m_b = orca_env.parallel_env(_scaled(name, 10.0, **over), observation={"layout": "metric"})
    m_s.reset(seed=5)
    m_b.reset(seed=5)
    m_b.sim.set_positions(10.0 * m_s.sim.positions)
    m_b.set_goals(10.0 * m_s.goals)
    acts = m_s.heuristic_actions()
    a_s, a_b = m_s.step(acts)[0]["agent_0"], m_b.step(acts)[0]["agent_0"]
    assert a_b[2] == pytest.approx(10.0 * a_s[2], rel=1e-5)  # distance to the goal, m


def test_values_in_units():
    """Index by index on a hand-built state: the table of orca_env.observations."""
    pos = np.array([[0.0, 0.0], [3.0, 4.0], [100.0, 0.0]])
    vel = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 0.0]])
    radii = np.array([0.5, 1.0, 0.5])
    vmax = np.array([2.0, 2.0, 2.0])
    targets = np.array([[0.0, 10.0]])  # straight up: goal frame x = world +y
    k, m = 2, 1
    lo, hi = make_universal_space(k, m).low, make_universal_space(k, m).high
    out = np.empty((1, obs_size(k, m)), dtype=np.float32)
    build_observations_universal(np.array([0]), pos, vel, radii, vmax, targets, np.array([12.0]),
                                 np.array([[1, -1]]), np.array([[-1]]), np.zeros((1, 1, 2)),
                                 np.zeros((0, 2)), False, 10.0, 0.25, lo, hi, out)
    o = out[0].astype(np.float64)
    np.testing.assert_allclose(o[0:2], [1.0, 0.0], atol=1e-7)        # unit vector to the goal
    assert o[2] == pytest.approx(10.0 / 20.0) and o[3] == pytest.approx(12.0 / 22.0)
    np.testing.assert_allclose(o[4:6], [0.0, -0.5], atol=1e-7)       # (1, 0) m/s world, / 2 m/s
    assert o[6] == pytest.approx(0.05) and o[7] == pytest.approx(2.0 * 0.25 / 10.0)
    np.testing.assert_allclose(o[8:10], [0.4, -0.3], atol=1e-7)      # (3, 4) m / 10 m, rotated
    np.testing.assert_allclose(o[10:12], [0.0, 1.0], atol=1e-7)      # (-2, 0) m/s / 2, rotated
    assert o[12] == pytest.approx(0.1) and o[13] == 1.0
    assert not o[14:].any()                                          # padding


def test_universal_kernel_matches_its_python():
    rng = np.random.default_rng(1)
    n, k, m = 40, 6, 4
    pos = rng.uniform(-5, 5, (n, 2))
    slots = np.arange(0, n, 3, dtype=np.int64)
    nbr = rng.integers(-1, n, (slots.size, k))
    seg = rng.integers(-1, 3, (slots.size, m))
    space = make_universal_space(k, m)
    args = (slots, pos, rng.normal(size=(n, 2)), rng.uniform(0.1, 0.5, n), rng.uniform(0.5, 2, n),
            rng.uniform(-5, 5, (slots.size, 2)), rng.uniform(0, 20, slots.size), nbr, seg,
            rng.uniform(-5, 5, (slots.size, m, 2)), rng.normal(size=(3, 2)), False, 4.0, 0.25,
            space.low, space.high)
    a = np.empty((slots.size, obs_size(k, m)), dtype=np.float32)
    b = np.empty_like(a)
    build_observations_universal(*args, a)
    build_observations_universal.py_func(*args, b)
    assert np.array_equal(a, b)
