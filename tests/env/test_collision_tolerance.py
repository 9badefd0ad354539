"""collision_tolerance relative to the agents' size, and the overlap depth metrics."""

import numpy as np
import pytest

import orca_env
from orca_env.collisions import agent_collisions, agent_collisions_crowdnav, obstacle_collisions
from orca_env.config import load_config, tolerance_parts
from orca_env.evaluation import (
    ARRIVAL_TIMES,
    METRICS,
    OVERLAP_METRICS,
    SOCIAL_METRICS,
    evaluate,
)
from orca_env.scenarios import SpawnError


# -- config -------------------------------------------------------------------------------------
def test_number_form_is_unchanged_and_mapping_form_is_filled_in():
    assert load_config().collision_tolerance == 0.01
    assert tolerance_parts(load_config().collision_tolerance) == (0.01, 0.0)
    cfg = load_config(collision_tolerance={"relative": 0.01})
    assert cfg.collision_tolerance == {"absolute": 0.0, "relative": 0.01}
    assert tolerance_parts(cfg.collision_tolerance) == (0.0, 0.01)
    assert tolerance_parts({"absolute": 0.002, "relative": 0.5}) == (0.002, 0.5)
    # to_dict keeps the form given; loading it back gives the same config.
    assert load_config().to_dict()["collision_tolerance"] == 0.01
    again = load_config(cfg.to_dict())
    assert again == cfg and again.to_dict() == cfg.to_dict()


@pytest.mark.parametrize("value, match", [
    ({"relative": 1.5}, r"collision_tolerance\.relative' must be <= 1\.0"),
    ({"relative": -0.1}, r"collision_tolerance\.relative' must be >= 0"),
    ({"absolute": float("nan")}, r"collision_tolerance\.absolute' must be finite"),
    ({"relativ": 0.01}, r"unknown config key 'collision_tolerance\.relativ'.*\['absolute', "
                        r"'relative'\]"),
    ({}, r"'collision_tolerance': the mapping needs absolute, relative or both"),
    ({"relative": True}, r"collision_tolerance\.relative' must be a number"),
    (True, r"'collision_tolerance' must be a number of metres or a mapping"),
    ("0.01", r"'collision_tolerance' must be a number of metres or a mapping"),
    (-0.01, r"'collision_tolerance' must be >= 0"),
])
def test_bad_tolerances_name_the_key(value, match):
    with pytest.raises(ValueError, match=match):
        load_config(collision_tolerance=value)


def test_relative_one_is_refused_with_its_own_message():
    with pytest.raises(ValueError, match=r"'collision_tolerance.relative' must be below 1"):
        load_config(collision_tolerance={"relative": 1.0})


def test_tolerance_must_stay_below_the_smallest_radius():
    # 0.2 m + 40% of 0.3 m = 0.32 m >= 0.3 m: contacts with walls would never count.
    with pytest.raises(ValueError, match=r"collision_tolerance.*smallest agent radius \(0\.3"):
        orca_env.parallel_env("circle_dense",
                              collision_tolerance={"absolute": 0.2, "relative": 0.4})
    orca_env.parallel_env("circle_dense", collision_tolerance={"absolute": 0.1, "relative": 0.4})


# -- kernels ------------------------------------------------------------------------------------
def _pair(overlap, r0, r1):
    """Two discs at rest that overlap by ``overlap`` metres."""
    p = np.array([[0.0, 0.0], [r0 + r1 - overlap, 0.0]])
    return p, np.array([r0, r1])


@pytest.mark.parametrize("kernel", ["swept", "crowdnav"])
def test_agent_tolerance_is_absolute_plus_relative_to_the_smaller_radius(kernel):
    def hits(overlap, r0, r1, tol, rel):
        p, radii = _pair(overlap, r0, r1)
        hit = np.zeros(1, dtype=bool)
        args = (np.array([0]), p, p)
        if kernel == "swept":
            agent_collisions(*args, radii, np.ones(2, bool), tol, hit, rel)
        else:
            agent_collisions_crowdnav(*args, np.zeros((2, 2)), 0.25, radii, np.ones(2, bool), tol,
                                      hit, rel)
        return bool(hit[0])

    # Blocks: 1.2 cm between agents of radius 2 m.
    assert hits(0.012, 2.0, 2.0, 0.01, 0.0)            # absolute 1 cm: a collision
    assert not hits(0.012, 2.0, 2.0, 0.0, 0.01)        # 1% of 2 m = 2 cm: a contact only
    assert hits(0.025, 2.0, 2.0, 0.0, 0.01)
    # The smaller radius counts: 1% of 0.3 m = 3 mm.
    assert hits(0.005, 2.0, 0.3, 0.0, 0.01)
    assert not hits(0.002, 2.0, 0.3, 0.0, 0.01)
    # Both parts add up: 1 mm + 1% of 0.3 m = 4 mm.
    assert not hits(0.0035, 0.3, 0.3, 0.001, 0.01)
    assert hits(0.0045, 0.3, 0.3, 0.001, 0.01)


def test_obstacle_tolerance_is_relative_to_the_agent_radius():
    wall = np.array([[-5.0, 0.0], [5.0, 0.0]])
    nxt = np.array([1, 0], dtype=np.int64)

    def hits(overlap, r, tol, rel):
        p = np.array([[0.0, r - overlap]])
        hit = np.zeros(1, dtype=bool)
        obstacle_collisions(np.array([0]), p, p, np.array([r]), wall, nxt, tol, hit, rel)
        return bool(hit[0])

    assert hits(0.012, 2.0, 0.01, 0.0)
    assert not hits(0.012, 2.0, 0.0, 0.01)
    assert hits(0.021, 2.0, 0.0, 0.01)


def test_relative_zero_is_the_absolute_tolerance_bit_for_bit():
    """The mapping {absolute: 0.01} is the default 0.01 m, episode for episode."""
    runs = []
    for tol in (0.01, {"absolute": 0.01}):
        env = orca_env.parallel_env("circle_dense", collision_tolerance=tol)
        obs, _ = env.reset(seed=3)
        trace = []
        while env.agents:
            obs, rew, term, trunc, infos = env.step(env.heuristic_actions())
            trace.append((sorted(obs.items(), key=lambda kv: kv[0]), rew, term,
                          {a: i["collided_with"] for a, i in infos.items()}))
        runs.append(trace)
    assert len(runs[0]) == len(runs[1])
    for a, b in zip(*runs, strict=True):
        assert all(np.array_equal(x[1], y[1]) for x, y in zip(a[0], b[0], strict=True))
        assert a[1:] == b[1:]
    assert any(c for step in runs[0] for c in step[3].values())  # collisions happen


def test_spawn_check_uses_the_relative_tolerance():
    """Agents of radius 2 m that start 1.5 cm into each other: a collision at 1 cm, not at 1%."""
    from orca_env.scenarios import SCENARIOS, Scenario, World, register_scenario

    if "tight_pair_v0" not in SCENARIOS:
        @register_scenario
        class TightPair(Scenario):
            """Two agents that start overlapping by 1.5 cm.

            Version History:
                v0: initial version.
            """

            name = "tight_pair_v0"
            AGENT_DEFAULTS = dict(radius=2.0, max_speed=2.0, pref_speed=1.0, neighbor_dist=15.0,
                                  max_neighbors=10, time_horizon=5.0, time_horizon_obst=5.0)
            DEFAULT_GROUPS = [dict(population="learned", count=2)]

            def build_world(self, rng):
                return World(extent=20.0)

            def place_agents(self, rng, sim, radii):
                starts = np.array([[0.0, 0.0], [4.0 - 0.015, 0.0]])
                return starts, starts + [[0.0, 10.0], [0.0, 10.0]]

    with pytest.raises(SpawnError, match="start overlapping"):
        orca_env.parallel_env(scenario="tight_pair_v0").reset(seed=0)
    orca_env.parallel_env(scenario="tight_pair_v0",
                          collision_tolerance={"relative": 0.01}).reset(seed=0)


# -- metrics ------------------------------------------------------------------------------------
def test_overlap_metrics_only_with_the_size_aware_form_or_on_request():
    plain = evaluate("circle_dense", "orca", episodes=2)
    # The social-navigation metrics come after the others in every report.
    assert list(plain["metrics"]) == [*METRICS, *SOCIAL_METRICS]
    assert set(plain["aggregate"]) == {*METRICS, *SOCIAL_METRICS}
    assert all(set(e) == {"seed", *METRICS, *SOCIAL_METRICS, ARRIVAL_TIMES}
               for e in plain["episodes"])

    asked = evaluate("circle_dense", "orca", episodes=2, overlap_metrics=True)
    rel = evaluate("circle_dense", "orca", episodes=2,
                   overrides={"collision_tolerance": {"absolute": 0.01}})
    for rep in (asked, rel):
        assert list(rep["metrics"]) == [*METRICS, *OVERLAP_METRICS, *SOCIAL_METRICS]
        for e, p in zip(rep["episodes"], plain["episodes"], strict=True):
            # Same episodes: the old metrics are unchanged.
            assert {k: e[k] for k in METRICS} == {k: p[k] for k in METRICS}
            assert e["max_overlap"] == max(0.0, -e["min_separation"])
            assert e["max_overlap_relative"] == pytest.approx(e["max_overlap"] / 0.3, rel=1e-12)
            # Every collision is a contact; pure ORCA in circle_dense overlaps at times.
            assert e["contact_rate"] >= e["collision_rate"]
            assert e["contact_rate"] > 0.0
    assert evaluate("circle_dense", "orca", episodes=1, overrides={
        "collision_tolerance": {"relative": 0.01}}, overlap_metrics=False)["metrics"].keys() \
        == {*METRICS, *SOCIAL_METRICS}


def test_relative_tolerance_turns_small_overlaps_into_contacts():
    """The same episodes: a larger tolerance never adds collisions, contacts stay."""
    strict = evaluate("circle_dense", "orca", episodes=3,
                      overrides={"collision_tolerance": {"absolute": 0.0}})
    loose = evaluate("circle_dense", "orca", episodes=3,
                     overrides={"collision_tolerance": {"relative": 0.2}})
    s, lo = strict["aggregate"], loose["aggregate"]
    assert lo["collision_rate"]["mean"] < s["collision_rate"]["mean"]
    assert lo["contact_rate"]["mean"] > lo["collision_rate"]["mean"]  # touched, not collided


def test_the_pipelines_scratch_variants_give_the_same_hits():
    """agent_collisions_into / _crowdnav_into (the batch's scratch) against the allocating ones,
    on random crowds with inactive agents, scratch reused dirty from call to call."""
    from orca_env.collisions import agent_collisions_crowdnav_into, agent_collisions_into

    rng = np.random.default_rng(3)
    hits = 0
    for n in (1, 2, 5, 16, 40):
        grid = (np.full(n, 7), np.full(4 * n + 65, 7), np.full(4 * n + 64, 7), np.full(n, 7))
        q1 = np.full((n, 2), 7.0)
        for _ in range(20):
            p0 = rng.uniform(-3, 3, (n, 2))
            p1 = p0 + rng.normal(0, 0.3, (n, 2))
            v0 = rng.normal(0, 1, (n, 2))
            radii = rng.uniform(0.2, 0.5, n)
            active = rng.random(n) > 0.2
            check = np.flatnonzero(active).astype(np.int64)
            want, got = np.zeros(check.size, bool), np.ones(check.size, bool)
            agent_collisions(check, p0, p1, radii, active, 0.01, want, 0.1)
            agent_collisions_into(check, p0, p1, radii, active, 0.01, got, 0.1, grid)
            hits += int(want.sum())
            np.testing.assert_array_equal(got, want)
            agent_collisions_crowdnav(check, p0, p1, v0, 0.25, radii, active, 0.0, want, 0.0)
            agent_collisions_crowdnav_into(check, p0, p1, v0, 0.25, radii, active, 0.0, got, 0.0,
                                           q1, grid)
            np.testing.assert_array_equal(got, want)
    assert hits > 20  # the crowds did collide
