"""What a robot senses (issue 22 item 3): the LiDAR scan, the neighbour cone and occlusion, and
the heading features of non-holonomic agents; checked against plain-Python references."""

import math

import numpy as np
import pytest

import orca_env
from orca_env.config import load_config
from orca_env.kinematics import REGISTRY as KINEMATICS
from orca_env.kinematics.base import Kinematics, register_kinematics
from orca_env.observations import OWN, PER_AGENT, PER_SEGMENT
from orca_env.sensors import DEFAULT_ANGULAR_BOUND, lidar_noise, lidar_scan, ray_disc
from orca_env.vector import OrcaVectorEnv

LIDAR = {"beams": 32}


def _env(config="random_obstacles", **observation):
    return orca_env.parallel_env(config, observation=observation)


def _block(env):
    """First column of the sensor block, 8 + 6K + 5M."""
    wc = env.world_config
    return OWN + PER_AGENT * wc.num_obs_agents + PER_SEGMENT * wc.num_obs_obstacles


# -- plain-Python references -----------------------------------------------------------------
def _ref_ray_segment(p, d, a, b):
    e = b - a
    den = d[0] * e[1] - d[1] * e[0]
    if den == 0.0:
        return math.inf
    w = a - p
    t = (w[0] * e[1] - w[1] * e[0]) / den
    s = (w[0] * d[1] - w[1] * d[0]) / den
    return t if t >= 0.0 and 0.0 <= s <= 1.0 else math.inf


def _ref_ray_disc(p, d, c, r):
    # Solve |p + t d - c| = r for the smallest t >= 0 (0 when p is inside).
    m = p - c
    if m @ m <= r * r:
        return 0.0
    b = m @ d
    disc = b * b - (m @ m - r * r)
    if disc < 0.0:
        return math.inf
    t = -b - math.sqrt(disc)
    return t if t >= 0.0 else math.inf


def _ref_scan(pos, radii, active, i, heading, fov, rng, points, nxt, beams):
    """Every beam against every segment and every other active disc: no index, no pruning."""
    out = []
    for k in range(beams):
        a = heading - fov / 2 + (k + 0.5) * fov / beams
        d = np.array([math.cos(a), math.sin(a)])
        best = rng
        for s in range(points.shape[0]):
            best = min(best, _ref_ray_segment(pos[i], d, points[s], points[nxt[s]]))
        for j in range(pos.shape[0]):
            if j != i and active[j]:
                best = min(best, _ref_ray_disc(pos[i], d, pos[j], radii[j]))
        out.append(best)
    return np.array(out)


def _goal_heading(env, i):
    t = env._batch.targets[i] - env._batch.positions[i]
    return math.atan2(t[1], t[0])


# -- config ----------------------------------------------------------------------------------
@pytest.mark.parametrize("observation, key, value", [
    ({"lidar": {"beams": 0}}, "observation.lidar.beams", "0"),
    ({"lidar": {"beams": -3}}, "observation.lidar.beams", "-3"),
    ({"lidar": {"range": 0.0}}, "observation.lidar.range", "0.0"),
    ({"lidar": {"range": -1.0}}, "observation.lidar.range", "-1.0"),
    ({"lidar": {"noise": -0.1}}, "observation.lidar.noise", "-0.1"),
    ({"lidar": {"fov": 0.0}}, "observation.lidar.fov", "0.0"),
    ({"lidar": {"fov": 361.0}}, "observation.lidar.fov", "361.0"),
    ({"fov": 0.0}, "observation.fov", "0.0"),
    ({"fov": -90.0}, "observation.fov", "-90.0"),
    ({"fov": 400.0}, "observation.fov", "400.0"),
    ({"lidar": {"beam": 8}}, "observation.lidar.beam", ""),
    ({"lidar": 8}, "observation.lidar", "8"),
])
def test_bad_sensor_values_name_key_and_value(observation, key, value):
    with pytest.raises(ValueError) as exc:
        load_config("random_obstacles", observation=observation)
    assert key in str(exc.value) and value in str(exc.value)


def test_defaults_are_off_and_serialise_as_before():
    cfg = load_config("random_obstacles")
    ob = cfg.observation
    assert ob.lidar is None and ob.fov == 360.0 and not ob.occlusion
    assert set(cfg.to_dict()["observation"]) == {"frame", "num_agents", "num_obstacles", "range"}
    env = _env()
    assert env.observation_space("agent_0").shape == (8 + 6 * 6 + 5 * 4,)
    lid = load_config("random_obstacles", observation={"lidar": {}}).observation.lidar
    assert (lid.beams, lid.range, lid.noise, lid.fov) == (32, None, 0.0, 360.0)


# -- LiDAR -----------------------------------------------------------------------------------
def test_kernel_against_hand_geometry():
    """A square wall 2 m ahead and a disc 3 m to the left, beams at 0, 90, 180, 270 degrees."""
    # Counter-clockwise square x in [2, 4], y in [-1, 1]: four vertices, next = +1.
    points = np.array([[2.0, -1.0], [4.0, -1.0], [4.0, 1.0], [2.0, 1.0]])
    nxt = np.array([1, 2, 3, 0])
    from orca_env.core.obstacles import build_segment_index
    order, boxes = build_segment_index(points, nxt)
    pos = np.array([[0.0, 0.0], [0.0, 3.5]])
    radii = np.array([0.3, 0.5])
    out = np.empty((1, 4))
    # fov 360, 4 beams, centred on heading -45 deg: beams at -180, -90, 0, 90 degrees.
    axes = np.array([[math.cos(-math.pi / 4), math.sin(-math.pi / 4)]])
    lidar_scan(np.array([0]), pos, radii, np.ones(2, bool), axes, 2 * math.pi, 5.0, points,
               nxt, order, boxes, out)
    np.testing.assert_allclose(out[0], [5.0, 5.0, 2.0, 3.0], atol=1e-12)
    assert ray_disc(0.0, 0.0, 1.0, 0.0, 0.1, 0.0, 0.5) == 0.0  # starts inside: 0
    assert ray_disc(0.0, 0.0, -1.0, 0.0, 2.0, 0.0, 0.5) == math.inf  # behind


def test_scan_matches_brute_force_reference():
    env = _env(lidar={"beams": 24, "range": 4.0})
    obs, _ = env.reset(seed=3)
    c0 = _block(env)
    sim = env.sim
    points, nxt = np.asarray(sim.obstacle_points), np.asarray(sim.obstacle_next)
    hits = 0
    for _ in range(25):
        b = env._batch
        for a, slot in zip(env.agents, env.live_slots, strict=True):
            ref = _ref_scan(b.positions, b.radii, b.active, slot, _goal_heading(env, slot),
                            2 * math.pi, 4.0, points, nxt, 24)
            got = obs[a][c0:c0 + 24]
            np.testing.assert_allclose(got, ref.astype(np.float32), rtol=1e-6, atol=1e-6)
            hits += int((ref < 4.0).sum())
        if not env.agents:
            break
        obs, *_ = env.step(env.heuristic_actions())
    assert hits > 100  # walls and agents were seen, not only empty beams


def test_narrow_fov_scan_and_universal_units():
    env = _env(lidar={"beams": 9, "fov": 90.0, "range": 3.0}, layout="universal")
    obs, _ = env.reset(seed=1)
    c0 = _block(env)
    b, sim = env._batch, env.sim
    space = env.observation_space("agent_0")
    assert np.all(space.low[c0:c0 + 9] == 0.0) and np.all(space.high[c0:c0 + 9] == 1.0)
    for a, slot in zip(env.agents, env.live_slots, strict=True):
        ref = _ref_scan(b.positions, b.radii, b.active, slot, _goal_heading(env, slot),
                        math.pi / 2, 3.0, np.asarray(sim.obstacle_points),
                        np.asarray(sim.obstacle_next), 9)
        np.testing.assert_allclose(obs[a][c0:c0 + 9], (ref / 3.0).astype(np.float32),
                                   rtol=1e-6, atol=1e-6)


def test_universal_box_is_fixed_across_scenarios():
    ob = {"layout": "universal", "lidar": {"beams": 16}, "num_agents": 6, "num_obstacles": 4}
    spaces = [orca_env.parallel_env(c, observation=ob).observation_space("agent_0")
              for c in ("circle_dense", "random_obstacles", "corridor")]
    assert spaces[0] == spaces[1] == spaces[2]
    assert spaces[0].shape == (8 + 6 * 6 + 5 * 4 + 16,)
    assert orca_env.config.universal_observation(load_config("circle", observation=ob))[
        "lidar"]["beams"] == 16


def test_noise_is_gaussian_seeded_and_leaves_the_world_alone():
    clean, noisy = _env(lidar={"beams": 32}), _env(lidar={"beams": 32, "noise": 0.05})
    c0 = _block(clean)
    diffs = []
    for seed in (0, 1):
        o1, _ = clean.reset(seed=seed)
        o2, _ = noisy.reset(seed=seed)
        o3, _ = noisy.reset(seed=seed)
        for a in o2:
            assert np.array_equal(o2[a], o3[a])  # same seed, same noise
        for _ in range(30):
            for a in o1:
                np.testing.assert_array_equal(o1[a][:c0], o2[a][:c0])  # the rest untouched
                x, y = o1[a][c0:c0 + 32], o2[a][c0:c0 + 32]
                inside = (x > 0.3) & (x < 4.7)  # clipping at 0 and range out of reach
                diffs.append((y - x)[inside])
            if not clean.agents:
                break
            act = clean.heuristic_actions()
            o1, *_ = clean.step(act)
            o2, *_ = noisy.step(act)
            # The noise key does not advance the world's generator: same trajectories.
            np.testing.assert_array_equal(clean._batch.positions, noisy._batch.positions)
    d = np.concatenate(diffs)
    assert d.size > 2000
    assert abs(d.mean()) < 0.005 and abs(d.std() - 0.05) < 0.005
    # The stream itself: standard normal.
    z = np.array([lidar_noise(np.uint64(7), s, q, k) for s in range(20) for q in range(10)
                  for k in range(50)])
    assert abs(z.mean()) < 0.05 and abs(z.std() - 1.0) < 0.05


# -- neighbour cone and occlusion ------------------------------------------------------------
def _ref_sensed(env, slot, fov_deg, occlusion, k):
    b, sim = env._batch, env.sim
    p = b.positions[slot]
    rng = env.world_config.obs_range
    h = _goal_heading(env, slot)
    cand = []
    for j in np.flatnonzero(b.active):
        if j == slot:
            continue
        r = b.positions[j] - p
        d = float(np.hypot(*r))
        if d >= rng:
            continue
        ang = abs((math.atan2(r[1], r[0]) - h + math.pi) % (2 * math.pi) - math.pi)
        if ang > math.radians(fov_deg) / 2:
            continue
        if occlusion and not sim.query_visibility(p, b.positions[j]):
            continue
        cand.append((d, j))
    return [j for _, j in sorted(cand)[:k]]


@pytest.mark.parametrize("fov, occlusion", [(120.0, False), (360.0, True), (200.0, True)])
def test_sensed_neighbours_match_reference(fov, occlusion):
    env = _env(fov=fov, occlusion=occlusion)
    K = env.world_config.num_obs_agents
    obs, _ = env.reset(seed=5)
    dropped = 0
    for _ in range(40):
        b = env._batch
        for a, slot in zip(env.agents, env.live_slots, strict=True):
            want = _ref_sensed(env, slot, fov, occlusion, K)
            got = obs[a][OWN:OWN + PER_AGENT * K].reshape(K, PER_AGENT)
            assert int(got[:, 5].sum()) == len(want)
            # Relative positions, in the goal frame, of the expected neighbours.
            h = _goal_heading(env, slot)
            ex, ey = math.cos(h), math.sin(h)
            for row, j in zip(got, want, strict=False):
                r = b.positions[j] - b.positions[slot]
                np.testing.assert_allclose(row[:2], [r[0] * ex + r[1] * ey,
                                                     -r[0] * ey + r[1] * ex], atol=1e-5)
            dropped += len(_ref_sensed(env, slot, 360.0, False, K)) - len(want)
        if not env.agents:
            break
        obs, *_ = env.step(env.heuristic_actions())
    assert dropped > 0  # the sensor did hide someone


def test_rewards_and_separations_use_true_neighbours():
    plain, coned = _env(), _env(fov=60.0, occlusion=True)
    for seed in (0, 4):
        plain.reset(seed=seed)
        coned.reset(seed=seed)
        for _ in range(40):
            if not plain.agents:
                break
            act = plain.heuristic_actions()
            _, r1, _, _, i1 = plain.step(act)
            _, r2, _, _, i2 = coned.step(act)
            assert r1 == r2
            for a in i1:
                assert i1[a]["nearest_separation"] == i2[a]["nearest_separation"]
                assert i1[a]["reward_terms"] == i2[a]["reward_terms"]


# -- heading features of non-holonomic agents ------------------------------------------------
@pytest.fixture
def turning_model():
    """A registered non-holonomic name (the kernels move it as holonomic: tests write heading)."""
    rec = register_kinematics(Kinematics(name="test_turning", doc="test only"))
    yield rec
    del KINEMATICS["test_turning"]


def _turning_config(**observation):
    cfg = load_config("random_obstacles").to_dict()
    cfg["groups"][0]["kinematics"] = "test_turning"
    cfg["guidance"] = False  # the goal frame points at the goal the heading starts facing
    cfg["observation"].update(observation)
    return cfg


def test_heading_features_only_for_non_holonomic(turning_model):
    plain = orca_env.parallel_env("random_obstacles", guidance=False)
    env = orca_env.parallel_env(_turning_config())
    c0 = _block(env)
    assert env.observation_space("agent_0").shape[0] == \
        plain.observation_space("agent_0").shape[0] + 3
    obs, _ = env.reset(seed=2)
    for a in obs:  # every agent starts facing its goal: (1, 0) in the goal frame, at rest
        np.testing.assert_allclose(obs[a][c0:c0 + 3], [1.0, 0.0, 0.0], atol=1e-6)
    sl = env._batch.slots
    slots = env.live_slots
    rel = np.array([0.5, -2.0, 3.0, 1.2])
    w = np.array([0.3, -1.0, 9.0, 0.0])
    for q, i in enumerate(slots):
        sl.heading[i] = _goal_heading(env, i) + rel[q]
        sl.ang_vel[i] = w[q]
    sl.kin_param[slots[3], 1] = 2.0  # P_MAX_ANGULAR_SPEED: this agent's own bound
    sl.ang_vel[slots[3]] = 1.0
    o = np.zeros((env._batch.alive.size, env._batch.obs_size), dtype=np.float32)
    env._batch.observe([0], o, np.zeros(env._batch.alive.size))
    for q in range(4):
        want_w = np.clip((w[q] if q < 3 else 1.0) / (DEFAULT_ANGULAR_BOUND if q < 3 else 2.0),
                         -1, 1)
        np.testing.assert_allclose(o[q, c0:c0 + 3], [math.cos(rel[q]), math.sin(rel[q]), want_w],
                                   atol=1e-6)
    # Holonomic observations do not carry them (the layout of earlier versions).
    po, _ = plain.reset(seed=2)
    eo, _ = env.reset(seed=2)
    for a in po:
        np.testing.assert_array_equal(po[a][:c0], eo[a][:c0])
        np.testing.assert_array_equal(po[a][c0:], eo[a][c0 + 3:])


def test_non_holonomic_sensors_follow_the_heading(turning_model):
    env = orca_env.parallel_env(_turning_config(lidar={"beams": 16, "range": 4.0}, fov=90.0))
    env.reset(seed=1)
    c0 = _block(env) + 3
    sl, b, sim = env._batch.slots, env._batch, env.sim
    for turn in (0.0, 1.0, math.pi):
        for i in env.live_slots:
            sl.heading[i] = _goal_heading(env, i) + turn
        o = np.zeros((b.alive.size, b.obs_size), dtype=np.float32)
        b.observe([0], o, np.zeros(b.alive.size))
        for q, i in enumerate(env.live_slots):
            ref = _ref_scan(b.positions, b.radii, b.active, i, float(sl.heading[i]),
                            2 * math.pi, 4.0, np.asarray(sim.obstacle_points),
                            np.asarray(sim.obstacle_next), 16)
            np.testing.assert_allclose(o[q, c0:c0 + 16], ref, rtol=1e-6, atol=1e-6)
            # Every observed neighbour lies within 45 degrees of the heading.
            K = env.world_config.num_obs_agents
            nb = o[q, OWN:OWN + PER_AGENT * K].reshape(K, PER_AGENT)
            for row in nb[nb[:, 5] == 1]:
                ang = math.atan2(row[1], row[0])  # goal frame; heading at `turn` in it
                assert abs((ang - turn + math.pi) % (2 * math.pi) - math.pi) <= math.pi / 4 + 1e-6


# -- the vector env --------------------------------------------------------------------------
def test_vector_env_bit_identical_with_sensors():
    ob = {"lidar": {"beams": 20, "noise": 0.03, "fov": 270.0}, "fov": 150.0, "occlusion": True}
    v = OrcaVectorEnv("random_obstacles", 3, seed=8, observation=ob, guidance=False)
    envs = [orca_env.parallel_env("random_obstacles", infos="compact", observation=ob,
                                  guidance=False) for _ in range(3)]
    obs, _ = v.reset()
    L = v.num_agents_per_world
    for b, e in enumerate(envs):
        o, _ = e.reset(seed=8 + b)
        for k, a in enumerate(e.possible_agents):
            assert np.array_equal(obs[b * L + k], o[a])
    rng = np.random.default_rng(0)
    for t in range(120):
        act = rng.uniform(-1, 1, (3 * L, 2)).astype(np.float32)
        obs, rew, term, trunc, info = v.step(act)
        for b, e in enumerate(envs):
            acts = {a: act[b * L + e.possible_agents.index(a)] for a in e.agents}
            o, r, te, tr, _ = e.step(acts)
            for a in acts:
                row = b * L + e.possible_agents.index(a)
                got = info["final_obs"][row] if te[a] or tr[a] else obs[row]
                assert np.array_equal(got, o[a]) and rew[row] == r[a], (t, b, a)
            if not e.agents:
                o, _ = e.reset()
                for k, a in enumerate(e.possible_agents):
                    assert np.array_equal(obs[b * L + k], o[a])
    v.close()


# -- mixtures --------------------------------------------------------------------------------
def _lidar_mixture(second_lidar):
    ob = {"layout": "universal", "num_agents": 6, "num_obstacles": 4}
    return {"mixture": [
        {"config": "circle_dense", "set": {"groups.0.count": 4,
                                           "observation.lidar": {"beams": 12}}},
        {"config": "random_obstacles", "set": {"guidance": False,
                                               "observation.lidar": second_lidar}}],
        "observation": ob, "collision_tolerance": {"relative": 0.01}}


def test_mixture_entries_share_one_scan_and_run_in_the_vector_env():
    env = orca_env.parallel_env(_lidar_mixture({"beams": 12}))
    assert env.observation_space("agent_0").shape == (8 + 6 * 6 + 5 * 4 + 12,)
    v = OrcaVectorEnv(_lidar_mixture({"beams": 12}), 2, seed=1)
    obs, _ = v.reset()
    for _ in range(20):
        obs, *_ = v.step(np.zeros((v.num_envs, 2), dtype=np.float32))
    assert v.single_observation_space.contains(obs[0])
    v.close()
    with pytest.raises(ValueError, match="observes with"):
        orca_env.parallel_env(_lidar_mixture({"beams": 16}))
