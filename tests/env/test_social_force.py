"""The social_force behaviour: against pysocialforce, visibility, bad parameters, vector env."""

import numpy as np
import pytest

import orca_env
from orca_env.behaviours.social_force import DEFAULTS
from orca_env.scenarios import Scenario, World, register_scenario
from orca_env.vector import OrcaVectorEnv

#: Pedestrians (start, goal) of the differential scenes; the robot (slot 0) waits far away,
#: invisible to them. Goals are far enough that nobody comes within pysocialforce's 0.5 m stop.
_PEDS = {
    "crossing": [((-4.0, 0.0), (6.0, 0.2)), ((4.0, 0.1), (-6.0, -0.1)),
                 ((0.2, -4.0), (0.0, 6.0)), ((-3.0, -3.0), (5.0, 5.0))],
    "wall": [((-4.0, 0.4), (6.0, 0.4)), ((-4.5, -0.6), (6.0, -0.8)), ((5.0, 0.0), (-6.0, 0.5))],
}
_WALL = ((-1.0, 1.0), (2.0, 1.2))  # one segment, (x0, y0), (x1, y1)
ROBOT = (30.0, 30.0)


class SocialForceScene(Scenario):
    """Fixed starts and goals for the differential tests (scene ``crossing`` or ``wall``).

    Version History:
        v0: initial version.
    """

    name = "test_sf_scene_v0"
    PARAMS = dict(scene="crossing")
    MAX_STEPS = 400

    def build_world(self, rng):
        """The wall scene has one segment."""
        obst = [np.array(_WALL, dtype=np.float64)] if self.scene == "wall" else []
        return World(obstacles=obst, extent=8.0)

    def place_agents(self, rng, sim, radii):
        """Slot 0 the robot, then the scene's pedestrians."""
        peds = _PEDS[self.scene]
        starts = np.array([ROBOT] + [p[0] for p in peds], dtype=np.float64)
        goals = np.array([(ROBOT[0] + 1e3, ROBOT[1])] + [p[1] for p in peds], dtype=np.float64)
        return starts, goals


@pytest.fixture(autouse=True, scope="module")
def _scene():
    """The test scenario, registered for this module only (not seen by other modules' tests)."""
    from orca_env.scenarios import SCENARIOS

    register_scenario(SocialForceScene)
    yield
    SCENARIOS.pop(SocialForceScene.name)


def _env(scene, dt, **sf):
    n = len(_PEDS[scene])
    return orca_env.parallel_env(
        scenario="test_sf_scene_v0", scenario_kwargs={"scene": scene}, time_step=dt,
        on_collision="continue",
        groups=[{"name": "robot", "population": "learned", "count": 1, "visible_to": []},
                {"name": "peds", "population": "social_force", "count": n, "on_goal": "stay",
                 "radius": 0.2, "max_speed": 3.0, "pref_speed": 1.2, "time_horizon_obst": dt,
                 "social_force": {"cutoff": 100.0, **sf}}])


@pytest.fixture(autouse=True)
def _fixed_pysocialforce(monkeypatch, tmp_path):
    """pysocialforce 1.1.2's ``PedRepulsiveForce`` with its one bug fixed.

    Its ``PedPedPotential.grad_r_ab`` passes ``stateutils.desired_directions(state)``, which
    returns ``(directions, distances)``, where the directions are meant (as in socialforce, the
    package it forks; numpy >= 1.24 refuses the ragged tuple). The same code with ``[0]``.
    """
    with monkeypatch.context() as m:
        m.chdir(tmp_path)  # importing pysocialforce opens a log file, ./file.log
        psf = pytest.importorskip("pysocialforce")
    import logging

    from pysocialforce import forces, potentials
    from pysocialforce.utils import stateutils

    logging.getLogger().setLevel(logging.WARNING)  # pysocialforce turns on DEBUG at import

    class Potential(potentials.PedPedPotential):
        def grad_r_ab(self, state, delta=1e-3):
            r_ab = self.r_ab(state)
            speeds = stateutils.speeds(state)
            directions = stateutils.desired_directions(state)[0]
            dx = np.array([[[delta, 0.0]]])
            dy = np.array([[[0.0, delta]]])
            v = self.value_r_ab(r_ab, speeds, directions)
            dvdx = (self.value_r_ab(r_ab + dx, speeds, directions) - v) / delta
            dvdy = (self.value_r_ab(r_ab + dy, speeds, directions) - v) / delta
            np.fill_diagonal(dvdx, 0.0)
            np.fill_diagonal(dvdy, 0.0)
            return np.stack((dvdx, dvdy), axis=-1)

    monkeypatch.setattr(forces, "PedPedPotential", Potential)
    return psf


def _pysf(scene, dt, pref):
    """pysocialforce 1.1.2 with Helbing and Molnar's three forces and the env's step."""
    psf = pytest.importorskip("pysocialforce")
    from pysocialforce import forces

    peds = _PEDS[scene]
    state = np.array([[*s, 0.0, 0.0, *g] for s, g in peds], dtype=np.float64)
    obstacles = None
    if scene == "wall":
        (x0, y0), (x1, y1) = _WALL
        obstacles = [(x0, x1, y0, y1)]
    sim = psf.Simulator(state, obstacles=obstacles)
    sim.peds.step_width = dt  # dt matched (its default is 0.4 s)
    # Desired speed = initial speed in pysocialforce; the env starts at rest with pref_speed.
    sim.peds.initial_speeds = np.full(len(peds), pref)
    sim.peds.max_speeds = sim.peds.max_speed_multiplier * sim.peds.initial_speeds
    sim.forces = [forces.GoalAttractiveForce(), forces.PedRepulsiveForce(),
                  forces.SpaceRepulsiveForce()]
    for f in sim.forces:
        f.init(sim, sim.config)
    return sim


#: Measured largest position difference over 28 steps of 0.25 s (7 s, while everyone is more
#: than 1.2 m (v0 * 1 s) from its goal, where both models steer alike): 6.7e-3 m (crossing:
#: forward differences against analytic gradients, grown through four close encounters) and
#: 2.9e-2 m (wall, which pysocialforce samples every 0.1 m); tolerances with a margin of 1.5.
@pytest.mark.parametrize(("scene", "tol"), [("crossing", 1e-2), ("wall", 4.5e-2)])
def test_trajectories_match_pysocialforce(scene, tol):
    dt, steps = 0.25, 28
    env = _env(scene, dt)
    env.reset(seed=0)
    ref = _pysf(scene, dt, 1.2)
    worst = 0.0
    for _ in range(steps):
        env.step({"agent_0": np.zeros(2, dtype=np.float32)})
        ref.step_once()
        ours = env.sim.positions[1:]
        worst = max(worst, float(np.abs(ours - ref.peds.pos()).max()))
    assert worst < tol, worst
    # They moved and interacted: not a trivial agreement.
    assert np.linalg.norm(ours - np.array([s for s, _ in _PEDS[scene]]), axis=1).min() > 3.0


def test_one_step_force_matches_pysocialforce_on_random_states():
    """The forces themselves on random moving crowds (analytic vs forward differences)."""
    from orca_env.behaviours.social_force import social_forces

    psf = pytest.importorskip("pysocialforce")
    from pysocialforce import forces

    rng = np.random.default_rng(3)
    for _ in range(5):
        n, dt = 6, 0.4
        pos = rng.uniform(-2, 2, (n, 2))
        vel = rng.uniform(-1, 1, (n, 2))
        goals = rng.uniform(-8, 8, (n, 2))
        sim = psf.Simulator(np.column_stack([pos, vel, goals]))
        sim.peds.step_width = dt
        sim.forces = [forces.GoalAttractiveForce(), forces.PedRepulsiveForce()]
        for f in sim.forces:
            f.init(sim, sim.config)
        want = sim.compute_forces()
        speed = np.linalg.norm(vel, axis=1)
        p = {**DEFAULTS, "cutoff": 100.0}
        p["fov_phi"] = np.cos(np.radians(p["fov_phi"]))
        params = np.tile(np.array(list(p.values())), (n, 1))
        got = np.empty((n, 2))
        social_forces(np.arange(n), np.zeros(n, dtype=np.int64), np.array([0, n]), pos, vel,
                      np.ones(n, dtype=bool), np.ones(n, dtype=np.int64),
                      np.full(n, -1, dtype=np.int64), goals, goals, speed, np.full(n, 0.3), params,
                      np.array([dt]),
                      np.zeros((0, 2)), np.zeros(0, dtype=np.int64), np.zeros(2, np.int64), got)
        # Forward differences with a 1e-3 m step err by about 1e-3 / (2 sigma) = 1.7e-3 of each
        # push (measured: at most 2.2e-3 of the largest force here).
        assert np.abs(got - want).max() < 4e-3 * max(1.0, np.abs(want).max())


def test_visibility_masks_forces():
    """A human feels exactly the agents it avoids (avoids / visible_to), in the kernel."""
    cfg = dict(scenario="crowdnav_circle_v0", groups=[
        {"name": "robot", "population": "learned", "count": 1, "visible_to": []},
        {"name": "h", "population": "social_force", "count": 5, "on_goal": "stay"}])
    env = orca_env.parallel_env(cfg)
    env.reset(seed=1)
    batch = env._batch
    from orca_env.behaviours.social_force import _sense_masks

    sense = _sense_masks(batch.episodes[0].config)
    layer = batch.layers
    assert not (sense[1:] & layer[0]).any()  # no human feels the robot
    assert ((sense[1:, None] & layer[None, 1:]) != 0).all()  # each feels the humans
    assert (batch.slots.avoid_mask[1:] == 0).all()  # and ORCA makes them avoid no one


def test_robot_does_not_push_invisible_but_pushes_visible():
    def crowd_after(visible_to):
        robot = {"name": "robot", "population": "learned", "count": 1, "max_speed": 1.0}
        if visible_to is not None:
            robot["visible_to"] = visible_to
        env = orca_env.parallel_env(
            scenario="crowdnav_circle_v0", max_steps=100,
            groups=[robot, {"name": "h", "population": "social_force", "count": 5,
                            "on_goal": "stay"}])
        env.reset(seed=4)
        for _ in range(20):
            if not env.agents:
                break
            env.step(env.heuristic_actions())
        return env.sim.positions[1:].copy()

    invisible, visible = crowd_after([]), crowd_after(None)
    assert not np.allclose(invisible, visible)


@pytest.mark.parametrize(("key", "value", "match"), [
    ("v0", -1.0, r"social_force\.v0' must be non-negative .* got -1\.0"),
    ("u0", -0.5, r"social_force\.u0' must be non-negative .* got -0\.5"),
    ("tau", 0.0, r"social_force\.tau' must be positive, got 0"),
    ("sigma", "a", r"social_force\.sigma' must be a finite number, got 'a'"),
    ("fov_factor", 2.0, r"fov_factor' must be at most 1\.0, got 2\.0"),
    ("nope", 1.0, r"social_force\.nope' is unknown"),
])
def test_bad_parameters_name_key_and_value(key, value, match):
    with pytest.raises(ValueError, match=match):
        orca_env.parallel_env("crowdnav_circle", groups=[
            {"population": "learned", "count": 1},
            {"population": "social_force", "count": 2, "social_force": {key: value}}])


def test_social_force_key_on_other_population_is_refused():
    with pytest.raises(ValueError, match=r"groups\[1\]\.social_force' applies to population "
                                         r"social_force only"):
        orca_env.parallel_env("crowdnav_circle", groups=[
            {"population": "learned", "count": 1},
            {"population": "orca", "count": 2, "social_force": {"v0": 1.0}}])


def test_humans_reach_goals_and_stay_apart():
    env = orca_env.parallel_env("crowdnav_circle", on_collision="continue",
                                stall={"end_episode": False}, groups=[
        {"name": "robot", "population": "learned", "count": 1},
        {"population": "social_force", "count": 5, "on_goal": "stay", "max_speed": 1.3}])
    env.reset(seed=2)
    sep = np.inf
    for _ in range(99):
        env.step({"agent_0": np.zeros(2, dtype=np.float32)})
        p = env.sim.positions[1:]
        d = np.linalg.norm(p[:, None] - p[None], axis=2) + np.eye(5) * 1e9
        sep = min(sep, d.min())
    goals = env._batch.goals[1:]
    assert np.linalg.norm(env.sim.positions[1:] - goals, axis=1).max() < 0.6
    assert sep > 0.4  # radius 0.3 each: they came close but the forces kept them apart


def _mixed_config():
    return dict(scenario="crowdnav_circle_v0", max_steps=60, groups=[
        {"name": "robot", "population": "learned", "count": 1},
        {"population": "orca", "count": 2, "on_goal": "stay"},
        {"population": "social_force", "count": 3, "on_goal": "stay"},
        {"population": "linear", "count": 1, "on_goal": "stay"},
        {"population": "non_reactive", "count": 1, "on_goal": "stay"},
        {"population": "replay", "count": 3, "max_speed": 3.0,
         "replay": {"file": "replay_sample.txt"}}])


def test_mixed_scene_vector_bit_identical_to_single():
    cfg = _mixed_config()
    worlds, seed = 3, 11
    v = OrcaVectorEnv(cfg, worlds, seed=seed)
    obs, _ = v.reset()
    envs = [orca_env.parallel_env(cfg) for _ in range(worlds)]
    for b, e in enumerate(envs):
        o, _ = e.reset(seed=seed + b)
        assert np.array_equal(obs[b], o["agent_0"])
    rng = np.random.default_rng(0)
    for _ in range(130):  # past the time limit: worlds reset on their own
        act = rng.uniform(-1, 1, (worlds, 2)).astype(np.float32)
        obs, rew, term, trunc, info = v.step(act)
        for b, e in enumerate(envs):
            o, r, te, tr, _ = e.step({"agent_0": act[b]})
            got = info["final_obs"][b] if te["agent_0"] or tr["agent_0"] else obs[b]
            assert np.array_equal(got, o["agent_0"]) and rew[b] == r["agent_0"]
            if not e.agents:
                e.reset()
    v.close()



def test_invisible_robot_cannot_push_the_humans():
    """Whatever an invisible robot does, social-force humans walk as if it were not there."""
    def humans_after(visible_to, action):
        robot = {"name": "robot", "population": "learned", "count": 1}
        if visible_to is not None:
            robot["visible_to"] = visible_to
        env = orca_env.parallel_env(
            scenario="crowdnav_circle_v0", max_steps=100, on_collision="continue",
            stall={"end_episode": False},
            groups=[robot, {"name": "h", "population": "social_force", "count": 5,
                            "on_goal": "stay"}])
        env.reset(seed=4)
        for _ in range(30):
            env.step({"agent_0": np.asarray(action, dtype=np.float32)})
        return env.sim.positions[1:].copy()

    assert np.array_equal(humans_after([], (0.0, 0.0)), humans_after([], (0.0, 1.0)))
    assert not np.array_equal(humans_after(None, (0.0, 0.0)), humans_after(None, (0.0, 1.0)))


# -- the contact model (Helbing, Farkas and Vicsek 2000), Moussaid's force, doors -----------

def _kernel_force(pos, vel, goals, radius=0.3, obstacle=None, cutoff=100.0, **sf):
    """Forces of ``social_forces`` on every agent of one world (the targets are the goals)."""
    from orca_env.behaviours.social_force import _params, resolved, social_forces

    n = len(pos)
    p = resolved({"cutoff": cutoff, **sf})
    p["fov_phi"] = np.cos(np.radians(p["fov_phi"]))
    params = np.tile(np.array([p[k] for k in DEFAULTS], dtype=np.float64), (n, 1))
    assert _params is not None
    pts = np.zeros((0, 2)) if obstacle is None else np.asarray(obstacle, dtype=np.float64)
    nxt = np.roll(np.arange(len(pts)), -1).astype(np.int64)
    out = np.empty((n, 2))
    pos, vel, goals = (np.asarray(a, dtype=np.float64) for a in (pos, vel, goals))
    social_forces(np.arange(n), np.zeros(n, dtype=np.int64), np.array([0, n]), pos, vel,
                  np.ones(n, dtype=bool), np.ones(n, dtype=np.int64),
                  np.full(n, -1, dtype=np.int64), goals, goals, np.ones(n), np.full(n, radius),
                  params, np.array([0.25]), pts, nxt, np.array([0, len(pts)]), out)
    return out


def test_contact_forces_are_helbing_farkas_vicseks():
    """Two touching discs: A exp(g/B) + k g along n, kappa g dv_t along t, per 80 kg."""
    # overlap m (small: kappa g / m = 1.5 /s, below the friction's cap of 0.5 / dt), sliding
    # speed m/s (b passes a upwards)
    g, dvt = 5e-4, 0.4
    pos = [(0.0, 0.0), (0.6 - g, 0.0)]
    vel = [(0.0, 0.0), (0.0, dvt)]
    goals = pos  # no goal force: at the goal, at rest (a); b's relaxes its own velocity only
    f = _kernel_force(pos, vel, goals, model="helbing_farkas_vicsek")
    push = (2000.0 * np.exp(g / 0.08) + 1.2e5 * g) / 80.0
    # a feels b: n from b to a is -x, t = (-n_y, n_x) = (0, -1), dv_t = (v_b - v_a) . t = -dvt
    assert f[0, 0] == pytest.approx(-push, rel=1e-12)
    assert f[0, 1] == pytest.approx(2.4e5 * g * dvt / 80.0, rel=1e-12)
    # Apart (no contact): only the repulsion, as HFV's A exp((r_ab - d_ab) / B).
    far = _kernel_force([(0.0, 0.0), (1.0, 0.0)], vel, [(0.0, 0.0), (1.0, 0.0)],
                        model="helbing_farkas_vicsek")
    assert far[0, 0] == pytest.approx(-2000.0 * np.exp(-0.4 / 0.08) / 80.0, rel=1e-12)
    assert far[0, 1] == 0.0
    # Off by default: pysocialforce's forces only, whatever the overlap.
    base = _kernel_force(pos, vel, goals)
    assert abs(base[0, 0]) < 0.5 * push


def test_friction_never_reverses_the_sliding():
    """kappa g / m dt above 1: the friction is capped (at most stops the sliding in a step)."""
    g = 0.25
    pos, vel = [(0.0, 0.0), (0.6 - g, 0.0)], [(0.0, 0.0), (0.0, 1.0)]
    f = _kernel_force(pos, vel, pos, model="helbing_farkas_vicsek", k=0.0, A=0.0)
    # uncapped 2.4e5 * 0.25 / 80 = 750 m/s² per m/s: 187 m/s in 0.25 s; the cap 0.5 / 0.25
    assert abs(f[0, 1]) == pytest.approx(0.5 / 0.25 * 1.0, rel=1e-12)


def test_wall_contact_counts_a_corner_once():
    """A disc against a square's corner feels its body force once, not once per edge."""
    square = [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)]  # counter-clockwise
    d = 0.25  # centre to the corner (1, 1), along the diagonal
    c = 1.0 + d / np.sqrt(2.0)
    f = _kernel_force([(c, c)], [(0.0, 0.0)], [(c, c)], obstacle=square,
                      model="helbing_farkas_vicsek", A=0.0, wall_A=0.0)
    want = 1.2e5 * (0.3 - d) / 80.0 / np.sqrt(2.0)
    assert f[0] == pytest.approx([want, want], rel=1e-9)
    # and along an edge, where one segment is closest, the same law
    f = _kernel_force([(0.5, 1.0 + d)], [(0.0, 0.0)], [(0.5, 1.0 + d)], obstacle=square,
                      model="helbing_farkas_vicsek", A=0.0, wall_A=0.0)
    assert f[0] == pytest.approx([0.0, 1.2e5 * (0.3 - d) / 80.0], abs=1e-9)


def test_moussaid_force_matches_pysocialforce_socialforce():
    """social_factor: pysocialforce's SocialForce (Moussaid et al. 2009) on random crowds."""
    psf = pytest.importorskip("pysocialforce")
    from pysocialforce import forces

    rng = np.random.default_rng(5)
    compared = 0
    for _ in range(10):
        n = 4
        pos = rng.uniform(-2, 2, (n, 2))
        vel = rng.uniform(-1, 1, (n, 2))
        goals = rng.uniform(-8, 8, (n, 2))
        sim = psf.Simulator(np.column_stack([pos, vel, goals]))
        f = forces.SocialForce()
        f.init(sim, sim.config)
        want = f.get_force()
        only = dict(ped_factor=0.0, space_factor=0.0, social_factor=5.1)
        got = _kernel_force(pos, vel, goals, **only) - _kernel_force(pos, vel, goals,
                                                                     ped_factor=0.0)
        # Moussaid's theta is the angle from e to D; pysocialforce takes atan2 minus atan2
        # without wrapping it to [-pi, pi], so a pair whose two angles straddle pi gets
        # exp(-(n B (2 pi - |theta|))^2), nearly no push, where the model gives the full one
        # (a bug: it depends on the direction of travel). The kernel wraps: it agrees with
        # pysocialforce on the agents none of whose pairs straddle, and with its code with
        # the wrap on every agent.
        d = pos[:, None] - pos[None]  # a - b
        dn = np.linalg.norm(d, axis=2) + np.eye(n)
        e = d / dn[..., None]
        D = 2.0 * (vel[None] - vel[:, None]) + e  # lambda (v_b - v_a) + e
        dl = np.linalg.norm(D, axis=2)
        t = D / dl[..., None]
        raw = np.arctan2(t[..., 1], t[..., 0]) - np.arctan2(e[..., 1], e[..., 0])
        raw[np.arange(n), np.arange(n)] = 0.0
        plain = (np.abs(raw) <= np.pi).all(axis=1)
        compared += plain.sum()
        assert np.abs(got[plain] - want[plain]).max() < 1e-9 * max(1.0, np.abs(want).max())
        th = (raw + np.pi) % (2.0 * np.pi) - np.pi
        B = 0.35 * dl
        fv = np.exp(-dn / B - (3.0 * B * th) ** 2)
        fa = -np.sign(th) * np.exp(-dn / B - (2.0 * B * th) ** 2)
        pair = fv[..., None] * t + fa[..., None] * np.stack([-t[..., 1], t[..., 0]], axis=-1)
        pair[np.arange(n), np.arange(n)] = 0.0
        assert np.abs(got - 5.1 * pair.sum(axis=1)).max() < 1e-12
    assert compared >= 5  # the comparison with pysocialforce itself is not empty


@pytest.mark.parametrize(("key", "value", "match"), [
    ("model", "panic", r"social_force\.model' must be one of \['helbing_farkas_vicsek', "
                       r"'pysocialforce'\], got 'panic'"),
    ("substeps", 0, r"social_force\.substeps' must be positive, got 0"),
    ("substeps", 2.5, r"social_force\.substeps' must be a whole number, got 2\.5"),
    ("substeps", 101, r"social_force\.substeps' must be at most 100, got 101"),
    ("k", -1.0, r"social_force\.k' must be non-negative .* got -1\.0"),
    ("kappa", float("nan"), r"social_force\.kappa' must be a finite number, got nan"),
    ("B", 0.0, r"social_force\.B' must be positive, got 0\.0"),
    ("mass", -80.0, r"social_force\.mass' must be positive, got -80\.0"),
    ("gamma", 0.0, r"social_force\.gamma' must be positive, got 0\.0"),
    ("social_factor", -5.1, r"social_force\.social_factor' must be non-negative .* got -5\.1"),
])
def test_bad_contact_parameters_name_key_and_value(key, value, match):
    with pytest.raises(ValueError, match=match):
        orca_env.parallel_env("bottleneck_sf", groups=[
            {"population": "learned", "count": 1},
            {"population": "social_force", "count": 2, "social_force": {key: value}}])


def _config_path(name):
    """This checkout's config file (a bare name may resolve to another install's configs)."""
    import os

    return os.path.join(os.path.dirname(__file__), "..", "..", "configs", f"{name}.yaml")


def _crossed(config, seconds, seed, social_force=None):
    """Crowd humans of a door scene that reach the other room within ``seconds`` (learners
    invisible and standing: the crowd alone)."""
    import yaml

    with open(_config_path(config)) as f:
        cfg = yaml.safe_load(f)
    cfg["groups"][0]["visible_to"] = []
    if social_force is not None:
        cfg["groups"][1]["social_force"] = social_force
    env = orca_env.parallel_env(cfg, stall={"end_episode": False}, on_collision="continue",
                                max_steps=int(seconds / 0.25))
    env.reset(seed=seed)
    crowd = np.arange(4, env.sim.positions.shape[0])
    side = np.sign(env.sim.positions[crowd, 0])
    crossed = np.zeros(crowd.size, dtype=bool)
    while env.agents:
        env.step({a: np.zeros(2, dtype=np.float32) for a in env.agents})
        p, act = env.sim.positions[crowd], env.sim.active[crowd]
        crossed |= ~act | (np.sign(p[:, 0]) != side) & (np.abs(p[:, 0]) > 0.5)
    return int(crossed.sum())


def test_social_force_crowds_pass_the_doors():
    """The door configs' model lets the crowd through; pysocialforce's walls close the door.

    Measured (seeds 0-3): bottleneck 12 of 12 in 30 s, doorway (both ways) 5-9 of 12 in 30 s
    and 12 of 12 in 60 s (seeds 10000-10009); pysocialforce's model: 0.
    """
    assert _crossed("bottleneck_sf", 30.0, 0) >= 10
    assert _crossed("doorway_sf", 60.0, 0) >= 10
    assert _crossed("bottleneck_sf", 30.0, 0, {"model": "pysocialforce"}) == 0


def test_door_crowd_vector_bit_identical_to_single():
    """Sub-steps per world: world b of the vector env is the single env with seed b."""
    from orca_env.behaviours.social_force import resolved

    worlds, seed, path = 2, 3, _config_path("doorway_sf")
    v = OrcaVectorEnv(path, worlds, seed=seed, on_collision="continue")
    v.reset()
    assert resolved(v._batch.episodes[0].config.groups[1].social_force)["substeps"] == 10
    envs = [orca_env.parallel_env(path, on_collision="continue") for _ in range(worlds)]
    for b, e in enumerate(envs):
        e.reset(seed=seed + b)
    off = v._batch.offsets
    rng = np.random.default_rng(1)
    for _ in range(40):
        act = rng.uniform(-1, 1, (worlds * 4, 2)).astype(np.float32)
        v.step(act)
        for b, e in enumerate(envs):
            e.step({a: act[4 * b + k] for k, a in enumerate(e.possible_agents)
                    if a in e.agents})
        if not all(e.agents for e in envs):
            break
        for b, e in enumerate(envs):
            assert np.array_equal(v._batch.slots.pos[off[b]:off[b + 1]], e.sim.positions)
