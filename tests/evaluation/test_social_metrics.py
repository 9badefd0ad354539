"""Social-navigation metrics: hand-computed cases, a plain-Python reference, reports, bad values."""

import csv
import hashlib
import json
import math
import os

import numpy as np
import pytest

from orca_env.codes import Population
from orca_env.evaluation import (
    ARRIVAL_TIMES,
    METRICS,
    SOCIAL_METRICS,
    evaluate,
    format_table,
    report_json,
)
from orca_env.evaluation import social as so
from orca_env.evaluation.bench import format_markdown, run_bench
from orca_env.evaluation.social import (
    SocialRecorder,
    check_personal_space,
    social_metrics,
    time_to_collision,
)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CROWDNAV = os.path.join(ROOT, "configs", "crowdnav_circle.yaml")
L, H = int(Population.LEARNED), int(Population.ORCA)
DT = 0.25


def metrics_of(traj_robot, humans_xy, *, goal, success=True, radius=0.3, personal_space=0.5,
               populations=None, dt=DT):
    """One learned robot along ``traj_robot`` ((T + 1, 2)), humans standing at ``humans_xy``."""
    traj_robot = np.asarray(traj_robot, dtype=float)
    steps = traj_robot.shape[0]
    humans_xy = np.asarray(humans_xy, dtype=float).reshape(-1, 2)
    n = 1 + humans_xy.shape[0]
    pos = np.empty((steps, n, 2))
    pos[:, 0] = traj_robot
    pos[:, 1:] = humans_xy
    pops = [L] + [H] * humans_xy.shape[0] if populations is None else populations
    return social_metrics(pos, np.ones((steps, n), bool), np.ones((steps - 1, 1), bool), pops,
                          np.full(n, radius), [0], [success], [goal], dt,
                          learned_code=L, personal_space=personal_space)


# -- hand-computed cases --------------------------------------------------------------------------
def test_robot_passing_a_standing_human():
    """1 m per step along y = 0 from x = -5.5; a human (radius 0.3) stands at (0, 0.75).

    The closest pass (clearance 0.75 - 0.6 = 0.15 m) falls between two samples (x = -0.5 and
    0.5, clearance sqrt(0.25 + 0.5625) - 0.6 = 0.301 m): the swept clearance sees it.
    """
    xs = np.arange(-5.5, 5.0, 1.0)  # 11 positions, 10 steps
    m = metrics_of(np.c_[xs, np.zeros_like(xs)], [(0.0, 0.75)], goal=(4.5, 0.0))
    assert m["min_distance_to_humans"] == pytest.approx(0.15, abs=1e-12)
    # Below 0.2 m during one step of ten (-0.5 -> 0.5).
    assert m["discomfort_frequency"] == pytest.approx(0.1)
    # Ending within 0.5 m: |x| < sqrt(1.1^2 - 0.75^2) = 0.805, i.e. x = -0.5 and 0.5.
    assert m["personal_space_intrusion"] == pytest.approx(0.2)
    # A 0.75 m lateral offset misses the 0.6 m contact distance: never on a collision course.
    assert m["min_time_to_collision"] is None
    # Straight at constant speed: ratio 1, irregularity 0, no acceleration, no jerk.
    assert m["path_length_ratio"] == pytest.approx(1.0, abs=1e-12)
    assert m["path_irregularity"] == pytest.approx(0.0, abs=1e-6)
    for key in ("mean_acceleration", "peak_acceleration", "mean_jerk", "peak_jerk"):
        assert m[key] == pytest.approx(0.0, abs=1e-12)
    # A larger personal space: |x| < sqrt(1.6^2 - 0.75^2) = 1.413: still x = -0.5 and 0.5.
    wide = metrics_of(np.c_[xs, np.zeros_like(xs)], [(0.0, 0.75)], goal=(4.5, 0.0),
                      personal_space=1.0)
    assert wide["personal_space_intrusion"] == pytest.approx(0.2)
    wider = metrics_of(np.c_[xs, np.zeros_like(xs)], [(0.0, 0.75)], goal=(4.5, 0.0),
                       personal_space=1.2)
    # |x| < sqrt(1.8^2 - 0.75^2) = 1.636: x = -1.5, -0.5, 0.5, 1.5.
    assert wider["personal_space_intrusion"] == pytest.approx(0.4)
    assert {k: wide[k] for k in wide if k != "personal_space_intrusion"} == \
        {k: m[k] for k in m if k != "personal_space_intrusion"}


def test_time_to_collision_of_a_robot_heading_past_a_human():
    """Lateral offset 0.5 < 0.6: contact when |x| = sqrt(0.36 - 0.25) = 0.3317 m."""
    xs = np.arange(-5.5, 5.0, 1.0)  # speed 4 m/s
    m = metrics_of(np.c_[xs, np.zeros_like(xs)], [(0.0, 0.5)], goal=(4.5, 0.0))
    # Smallest at x = -0.5 (still approaching); receding from x = 0.5 on.
    assert m["min_time_to_collision"] == pytest.approx((0.5 - math.sqrt(0.11)) / 4.0, rel=1e-12)
    assert m["min_distance_to_humans"] == pytest.approx(0.5 - 0.6, abs=1e-12)  # overlap in passing
    assert time_to_collision(np.array([4.5, 0.5]), np.array([-4.0, 0.0]), 0.6) == \
        pytest.approx((4.5 - math.sqrt(0.11)) / 4.0, rel=1e-12)
    assert time_to_collision(np.array([0.5, 0.0]), np.array([1.0, 0.0]), 0.6) == 0.0  # touching
    assert time_to_collision(np.array([2.0, 0.0]), np.array([1.0, 0.0]), 0.6) == math.inf


def test_constant_acceleration():
    """x = a t^2 / 2 from rest: the finite differences give a exactly and no jerk."""
    a = 0.8
    t = np.arange(21) * DT
    m = metrics_of(np.c_[0.5 * a * t ** 2, np.zeros_like(t)], [], goal=(0.5 * a * t[-1] ** 2, 0))
    assert m["mean_acceleration"] == pytest.approx(a, rel=1e-9)
    assert m["peak_acceleration"] == pytest.approx(a, rel=1e-9)
    assert m["mean_jerk"] == pytest.approx(0.0, abs=1e-9)
    assert m["peak_jerk"] == pytest.approx(0.0, abs=1e-9)
    assert m["path_length_ratio"] == pytest.approx(1.0, abs=1e-12)
    # No human: the crowd terms are undefined, not zero.
    for key in ("min_distance_to_humans", "discomfort_frequency", "personal_space_intrusion",
                "min_time_to_collision"):
        assert m[key] is None


def test_path_irregularity_and_length_ratio_on_a_circle_around_the_goal():
    """Chords of 1/16 turn around the goal: each makes (pi - pi/8) / 2 with the goal ray."""
    ang = np.arange(9) * np.pi / 8
    traj = 2.0 * np.c_[np.cos(ang), np.sin(ang)]
    m = metrics_of(traj, [], goal=(0.0, 0.0), success=False)
    assert m["path_irregularity"] == pytest.approx(7 * np.pi / 16, rel=1e-12)
    assert m["path_length_ratio"] is None  # only agents that reached their goal
    # A right angle: one step along x, one along y, the goal at (1, 1).
    m = metrics_of([(0, 0), (1, 0), (1, 1)], [], goal=(1.0, 1.0))
    assert m["path_irregularity"] == pytest.approx(np.pi / 8, rel=1e-12)  # (pi/4 + 0) / 2
    assert m["path_length_ratio"] == pytest.approx(2 / math.sqrt(2), rel=1e-12)
    # Velocity (1, 0) / dt then (0, 1) / dt: |a| = sqrt(2) / dt^2.
    assert m["peak_acceleration"] == pytest.approx(math.sqrt(2) / DT ** 2, rel=1e-12)


def test_only_humans_count():
    """Another learned agent close by is not a human; an inactive human is not there."""
    xs = np.arange(-5.5, 5.0, 1.0)
    robot = np.c_[xs, np.zeros_like(xs)]
    peer_and_human = metrics_of(robot, [(0.0, 0.65), (0.0, 3.0)], goal=(4.5, 0.0),
                                populations=[L, L, H])
    assert peer_and_human["min_distance_to_humans"] == pytest.approx(3.0 - 0.6, abs=1e-12)
    assert peer_and_human["discomfort_frequency"] == 0.0
    only_peer = metrics_of(robot, [(0.0, 0.65)], goal=(4.5, 0.0), populations=[L, L])
    assert only_peer["min_distance_to_humans"] is None
    # A human that is active only in the last four states counts only there.
    n_steps = xs.size - 1
    pos = np.zeros((xs.size, 2, 2))
    pos[:, 0] = robot
    pos[:, 1] = (0.0, 0.75)
    act = np.ones((xs.size, 2), bool)
    act[:-4, 1] = False
    m = social_metrics(pos, act, np.ones((n_steps, 1), bool), [L, H], [0.3, 0.3], [0], [True],
                       [(4.5, 0.0)], DT, learned_code=L)
    # It appears at x = 1.5 (standing where it appears): closest at the end of that step.
    assert m["min_distance_to_humans"] == pytest.approx(math.hypot(1.5, 0.75) - 0.6, rel=1e-12)
    assert m["discomfort_frequency"] == 0.0  # fractions over all the agent's steps


@pytest.fixture(scope="module")
def pass_human():
    """A scenario: a robot (4 m/s, no safety layer) passes a human (both of radius 0.3 m)."""
    from orca_env.scenarios import SCENARIOS, Scenario, World, register_scenario

    if "pass_human_v0" not in SCENARIOS:
        @register_scenario
        class PassHuman(Scenario):
            """A robot from (-5.5, 0) to (4.5, 0) past a human (``human``: start and goal).

            Version History:
                v0: initial version.
            """

            name = "pass_human_v0"
            AGENT_DEFAULTS = dict(radius=0.3, max_speed=4.0, pref_speed=4.0, neighbor_dist=10.0,
                                  max_neighbors=10, time_horizon=5.0, time_horizon_obst=5.0)
            DEFAULT_GROUPS = [dict(population="learned", count=1, safety_layer=False),
                              dict(population="non_reactive", count=1, on_goal="stay")]
            #: The human's start and goal, m: by default it stands at (0, 0.75).
            human = ((0.0, 0.75), (0.0, 0.75))

            def build_world(self, rng):
                return World(extent=20.0)

            def place_agents(self, rng, sim, radii):
                start, goal = type(self).human
                return np.array([[-5.5, 0.0], start]), np.array([[4.5, 0.0], goal])

    return SCENARIOS["pass_human_v0"]


def straight_ahead(observations, env):
    """Full speed towards the goal (the goal frame's x axis)."""
    return {a: np.array([1.0, 0.0], dtype=np.float32) for a in env.agents}


def test_the_env_reports_the_hand_computed_pass(pass_human, monkeypatch):
    """The pass above, through the env and ``evaluate``: 1 m per step past a standing human."""
    ep = evaluate({"scenario": "pass_human_v0"}, straight_ahead, episodes=1)["episodes"][0]
    assert ep["success_rate"] == 1.0 and ep["episode_steps"] == 10
    # The end-of-step separation misses the pass between samples; the swept clearance does not.
    assert ep["min_separation"] == pytest.approx(math.hypot(0.5, 0.75) - 0.6, rel=1e-12)
    assert ep["min_distance_to_humans"] == pytest.approx(0.15, rel=1e-12)
    assert ep["discomfort_frequency"] == pytest.approx(0.1)
    assert ep["personal_space_intrusion"] == pytest.approx(0.2)
    assert ep["min_time_to_collision"] is None
    assert ep["path_length_ratio"] == pytest.approx(1.0, rel=1e-12)
    assert ep["path_irregularity"] == pytest.approx(0.0, abs=1e-6)
    for key in ("mean_acceleration", "peak_acceleration", "mean_jerk", "peak_jerk"):
        assert ep[key] == pytest.approx(0.0, abs=1e-9)


def test_the_env_reports_the_time_to_collision_of_a_head_on_walker(pass_human, monkeypatch):
    """A linear walker (4 m/s, avoiding nobody) head-on, 0.5 m aside: contact at 0.6 m.

    The gap closes at 8 m/s; after step 5 the centres are 1 m apart along x, so the time to
    collision is (1 - sqrt(0.6^2 - 0.5^2)) / 8; during step 6 they hit.
    """
    monkeypatch.setattr(pass_human, "human", ((5.5, 0.5), (-4.5, 0.5)))
    config = {"scenario": "pass_human_v0", "groups": [
        {"population": "learned", "count": 1, "safety_layer": False},
        {"population": "linear", "count": 1}]}
    ep = evaluate(config, straight_ahead, episodes=1)["episodes"][0]
    assert ep["collision_rate"] == 1.0 and ep["episode_steps"] == 6
    assert ep["min_time_to_collision"] == pytest.approx((1 - math.sqrt(0.11)) / 8, rel=1e-9)
    assert ep["min_distance_to_humans"] == pytest.approx(0.5 - 0.6, abs=1e-9)  # swept overlap
    assert ep["discomfort_frequency"] == pytest.approx(1 / 6)


# -- the kernel against a plain-Python reference --------------------------------------------------
def reference(pos, act, live, pops, radii, slots, dt, personal_space):
    """Every pair of every step, no bounds: what the kernel must give."""
    humans = [j for j in range(len(pops)) if pops[j] != L]
    min_sw, min_ttc = math.inf, math.inf
    n_disc = n_intr = n_live = present = 0
    for t in range(1, pos.shape[0]):
        for k, i in enumerate(slots):
            if not live[t - 1, k]:
                continue
            n_live += 1
            sw = end = math.inf
            for j in humans:
                if not act[t, j]:
                    continue
                r = radii[i] + radii[j]
                d1 = pos[t, j] - pos[t, i]
                if act[t - 1, j]:
                    d0 = pos[t - 1, j] - pos[t - 1, i]
                    e = d1 - d0
                    s = 0.0 if e @ e == 0 else min(1.0, max(0.0, -(d0 @ e) / (e @ e)))
                    sw = min(sw, float(np.hypot(*(d0 + s * e))) - r)
                else:  # entered during the step: there at its end only, standing
                    e = pos[t - 1, i] - pos[t, i]
                    sw = min(sw, float(np.hypot(*d1)) - r)
                end = min(end, float(np.hypot(*d1)) - r)
                min_ttc = min(min_ttc, time_to_collision(d1, e / dt, r))
            present += math.isfinite(end)
            min_sw = min(min_sw, sw)
            n_disc += sw < 0.2
            n_intr += end < personal_space
    if not present:
        return None
    return {"min_distance_to_humans": min_sw, "discomfort_frequency": n_disc / n_live,
            "personal_space_intrusion": n_intr / n_live,
            "min_time_to_collision": min_ttc if math.isfinite(min_ttc) else None}


@pytest.mark.parametrize("seed", range(6))
def test_kernel_matches_every_pair(seed):
    rng = np.random.default_rng(seed)
    n, n_l, steps = 14, 3, 40
    pops = np.array([L] * n_l + list(rng.choice([H, int(Population.LINEAR)], n - n_l)))
    rng.shuffle(pops)
    slots = np.flatnonzero(pops == L)
    radii = rng.uniform(0.2, 0.5, n)
    start = rng.uniform(-4, 4, (1, n, 2))
    pos = start + np.cumsum(rng.normal(0, 0.3, (steps + 1, n, 2)), axis=0)
    act = rng.random((steps + 1, n)) > 0.15  # humans entering and leaving
    act[:, slots] = True
    live = np.ones((steps, n_l), bool)
    live[30:, 0] = False  # the first agent finishes early
    ref = reference(pos, act, live, pops, radii, slots, DT, 0.7)
    for chunk in (1, 7, 128):
        rec = SocialRecorder(pos[0], act[0], pops, radii, slots, DT, learned_code=L,
                             personal_space=0.7, chunk=chunk)
        for t in range(1, steps + 1):
            rec.add(pos[t], act[t], live[t - 1])
        got = rec.metrics(np.zeros(n_l, bool), np.zeros((n_l, 2)))
        for key, value in ref.items():
            if value is None:
                assert got[key] is None
            else:
                assert got[key] == pytest.approx(value, rel=1e-12, abs=1e-12), (key, chunk)


# -- reports --------------------------------------------------------------------------------------
def test_reports_hold_the_social_metrics_and_the_old_values_stay(monkeypatch):
    rep = evaluate(CROWDNAV, "orca", episodes=2)
    assert list(rep["metrics"]) == [*METRICS, *SOCIAL_METRICS]
    assert rep["social"] == {"personal_space": 0.5, "discomfort_distance": 0.2}
    for ep in rep["episodes"]:
        assert list(ep) == ["seed", *METRICS, *SOCIAL_METRICS, ARRIVAL_TIMES]
        # The robot's only neighbours are the humans (no obstacles): the swept clearance is at
        # most the end-of-step separation; both paths are measured on the straight line.
        assert ep["min_distance_to_humans"] <= ep["min_separation"] + 1e-12
        assert ep["path_length_ratio"] == pytest.approx(ep["path_ratio"], rel=1e-9)
        assert 0.0 <= ep["discomfort_frequency"] <= ep["personal_space_intrusion"] <= 1.0
    # Without the social recorder's results the old metrics are the same values.
    real = so.SocialRecorder

    class NoSocial(real):
        def metrics(self, success, goals):
            return {}

    monkeypatch.setattr("orca_env.evaluation.suite.SocialRecorder", NoSocial)
    bare = evaluate(CROWDNAV, "orca", episodes=2)
    for e, b in zip(rep["episodes"], bare["episodes"], strict=True):
        assert {k: e[k] for k in ("seed", *METRICS, ARRIVAL_TIMES)} == b
    assert {k: rep["aggregate"][k] for k in METRICS} == \
        {k: bare["aggregate"][k] for k in METRICS}


def test_old_keys_are_bit_identical_to_before_the_social_metrics():
    """The old metrics hash as at commit a1b009d (before the social metrics).

    The pinned hash is of ``report_json`` of the report's format, policy, seeds, episode count
    and old metrics (per episode and aggregated), as the code before the social metrics wrote
    them (the same evaluation, the same seeds). The resolved ``config`` and ``env`` are left
    out: they list every config key, and new keys (kinematics, sensors) keep being added.
    """
    rep = evaluate(CROWDNAV, "orca", episodes=3)
    old = {k: rep[k] for k in ("format", "policy", "seeds", "num_episodes")}
    old["metrics"] = {k: v for k, v in rep["metrics"].items() if k in METRICS}
    old["aggregate"] = {k: v for k, v in rep["aggregate"].items() if k in METRICS}
    old["episodes"] = [{k: v for k, v in e.items() if k in METRICS or k == "seed"}
                       for e in rep["episodes"]]
    digest = hashlib.sha256(report_json(old).encode()).hexdigest()
    assert digest == OLD_CROWDNAV_DIGEST, "an old metric's value changed"


OLD_CROWDNAV_DIGEST = "965732670b3daefd5a09dcd3d7790add2fb3ec219eec954ac81aadce24c73512"


def test_csv_keeps_the_old_columns_first(tmp_path):
    evaluate(CROWDNAV, "orca", episodes=2, out_dir=tmp_path, personal_space=0.3)
    with open(tmp_path / "episodes.csv") as fh:
        head = next(csv.reader(fh))
    assert head == ["seed", *METRICS, *SOCIAL_METRICS]
    report = json.loads((tmp_path / "metrics.json").read_text())
    assert "below 0.3 m" in report["metrics"]["personal_space_intrusion"]["definition"]
    assert report["social"]["personal_space"] == 0.3


def test_tables_show_the_social_metrics_apart():
    rep = evaluate(CROWDNAV, "orca", episodes=2, personal_space=0.8)
    table = format_table(rep)
    main, social = table.split("\n\nsocial navigation")
    assert "min_distance_to_humans" not in main and "episode_steps" in main
    assert "personal space 0.8 m" in social
    for key in SOCIAL_METRICS:
        assert f"\n{key} " in social


def test_bench_reports_the_social_metrics(tmp_path):
    suite = tmp_path / "s.yaml"
    suite.write_text("name: s\nseed: 11000\nepisodes: 2\nentries:\n"
                     "  - {name: cn, config: crowdnav_circle, tag: standard, seed_offset: 0}\n")
    rep = run_bench(str(suite), ["orca"], personal_space=0.4)
    assert set(SOCIAL_METRICS) <= set(rep["results"]["cn"]["orca"]) <= set(rep["metrics"])
    assert rep["social"]["personal_space"] == 0.4
    md = format_markdown(rep)
    assert "Social navigation" in md and "personal space 0.4 m" in md
    assert "| cn | orca | " in md.split("Social navigation")[1]


# -- bad values -----------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [-0.1, float("nan"), float("inf"), "0.5", True, None])
def test_bad_personal_space_is_a_clear_error(bad, tmp_path):
    with pytest.raises(ValueError, match=r"personal_space must be a finite number.*got"):
        check_personal_space(bad)
    with pytest.raises(ValueError, match=f"personal_space .*got {bad!r}"):
        evaluate(CROWDNAV, "orca", episodes=1, personal_space=bad)
    with pytest.raises(ValueError, match="personal_space"):
        run_bench(str(tmp_path / "never_read.yaml"), ["orca"], personal_space=bad)
    assert check_personal_space(0) == 0.0  # zero: only overlaps intrude


def test_bad_personal_space_on_the_command_line(capsys):
    from orca_env.cli import main

    for cmd in (["eval", "crowdnav_circle", "--episodes", "1"], ["bench", "--quick"]):
        with pytest.raises(SystemExit) as exc:
            main([*cmd, "--personal-space", "-1", "--quiet"])
        assert exc.value.code == 2
        assert "--personal-space must be a finite number of metres >= 0" in \
            capsys.readouterr().err
