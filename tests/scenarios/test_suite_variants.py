"""The benchmark's ORCA failure cases: the two-way doorway scenario, and that every entry of the
standard suite tagged ``deadlock`` or ``crush`` really makes pure ORCA deadlock or collide."""

import numpy as np
import pytest

import orca_env
from orca_env.evaluation import evaluate
from orca_env.evaluation.bench import load_suite
from orca_env.scenarios import SCENARIOS
from orca_env.scenarios.bottleneck import Bottleneck

SUITE = load_suite("standard")
FAILURES = [e for e in SUITE.entries if e.tag in ("deadlock", "crush")]
#: Episodes per check: the first ones of the entry's benchmark seeds.
EPISODES = 10


def test_the_doorway_is_the_bottleneck_crossed_both_ways():
    assert SCENARIOS["doorway_v0"].__mro__[1] is Bottleneck
    env = orca_env.parallel_env("doorway")
    ref = orca_env.parallel_env("bottleneck")
    for seed in range(3):
        env.reset(seed=seed)
        ref.reset(seed=seed)
        s, g = env.starts, env.goals
        even = np.arange(len(s)) % 2 == 0
        # Even slots cross left to right, odd slots right to left, through the wall at x = 0.
        assert (s[even, 0] < 0).all() and (g[even, 0] > 0).all()
        assert (s[~even, 0] > 0).all() and (g[~even, 0] < 0).all()
        assert env.sim.is_walkable(np.concatenate([s, g]), clearance=0.3).all()
        # The same rooms and doorway: the same walkable region.
        probe = np.random.default_rng(seed).uniform(-9.0, 9.0, (400, 2))
        assert np.array_equal(env.sim.is_walkable(probe, clearance=0.0),
                              ref.sim.is_walkable(probe, clearance=0.0))


def test_the_doorway_takes_the_bottleneck_parameters():
    env = orca_env.parallel_env("doorway", scenario_kwargs={"door_width": 2.0})
    assert env.scenario.door_width == 2.0
    with pytest.raises(ValueError, match="door_width.*below room_width"):
        orca_env.parallel_env("doorway", scenario_kwargs={"door_width": 9.0})


def test_the_suite_has_deadlock_and_crush_cases():
    tags = [e.tag for e in FAILURES]
    assert tags.count("deadlock") >= 2 and tags.count("crush") >= 2


@pytest.mark.parametrize("entry", FAILURES, ids=[e.name for e in FAILURES])
def test_pure_orca_deadlocks_or_crushes_on_each_failure_case(entry):
    """On the entry's own benchmark seeds, as ``orca-env bench`` runs it."""
    seeds = SUITE.seeds(entry)[:EPISODES]
    agg = evaluate(entry.path, "orca", seeds=seeds, overrides=entry.overrides)["aggregate"]
    rates = {k: agg[k]["mean"] for k in ("success_rate", "collision_rate", "deadlock_rate",
                                         "timeout_rate")}
    if entry.tag == "deadlock":
        # Some learned agents end stalled with everyone else (the episode's deadlock).
        assert rates["deadlock_rate"] > 0.0, rates
    else:
        # At least a fifth of the learned agents are pushed into someone.
        assert rates["collision_rate"] >= 0.2, rates
    assert rates["success_rate"] <= 0.8, rates


def test_the_symmetric_circle_deadlocks_every_time():
    entry = next(e for e in SUITE.entries if e.name == "circle_nojitter")
    agg = evaluate(entry.path, "orca", seeds=SUITE.seeds(entry)[:3])["aggregate"]
    assert agg["deadlock_rate"]["mean"] == 1.0 and agg["collision_rate"]["mean"] == 0.0
    # With circle_dense's jitter, the same crossing does not deadlock.
    jittered = evaluate("circle_dense", "orca", seeds=SUITE.seeds(entry)[:3])["aggregate"]
    assert jittered["deadlock_rate"]["mean"] == 0.0


@pytest.mark.parametrize("name", ["doorway", "corridor_headon", "intersection_dense"])
def test_every_benchmark_seed_places_its_agents(name):
    """No spawn failure on any seed the suite may use (up to 100 episodes per entry)."""
    entry = next(e for e in SUITE.entries if e.name == name)
    env = orca_env.parallel_env(entry.path, **entry.overrides)
    first = SUITE.seed + entry.seed_offset
    for seed in range(first, first + 100):
        env.reset(seed=seed)
