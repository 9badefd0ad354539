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
