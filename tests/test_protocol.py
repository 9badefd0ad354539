"""The evaluation protocol (issue 24 item 1): seed-independent entries run once, CrowdNav's
validation cases for model selection, disjoint seed ranges, and targets decided on paired
differences with follow-up episodes."""

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

import orca_env
import orca_env.evaluation.bench as bench_module
from orca_env.environment import OrcaEnv
from orca_env.evaluation import evaluate
from orca_env.evaluation.bench import (
    ALPHA,
    HEADLINE,
    LOOKS,
    MARGIN,
    decide_targets,
    describe_call,
    episode_keys,
    followup_plan,
    format_markdown,
    load_suite,
    missed_targets,
    run_bench,
    seed_dependence,
)
from orca_env.evaluation.metrics import (
    ARRIVAL_TIMES,
    METRICS,
    aggregate,
    decidable_episodes,
    decision_interval,
    paired_difference,
    paired_time_ratio,
    t95,
    t_quantile,
)
from orca_env.scenarios import make_scenario

SUITES = ("standard", "heldout", "validation", "validation_heldout", "robots")
#: The follow-up and new-suite range (docs/evaluation.md#seeds).
FOLLOWUP_RANGE = range(18_000, 19_000)


def _suite(tmp_path, text, name="s.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


# -- seed-independent entries -------------------------------------------------------------------
def test_every_shipped_entry_declares_whether_its_episodes_depend_on_the_seed():
    """The suites say which entries give one episode whatever the seed; the probe agrees."""
    independent = {}
    for name in SUITES:
        suite = load_suite(name)
        for e in suite.entries:
            env = OrcaEnv(e.path, **{**e.overrides, "render_mode": None})
            first = suite.seed_span(e)[0]
            reason = seed_dependence(env, (first, first + 1))
            env.close()
            assert (reason is None) == e.seed_independent, (name, e.name, reason)
            if e.seed_independent:
                independent.setdefault(name, []).append(e.name)
    assert independent == {"standard": ["rvo2_circle", "circle_nojitter", "replay_sample"],
                           "heldout": ["circle_nojitter_x1.5"]}


def test_the_probe_names_why_episodes_depend_on_the_seed():
    def reason(config, **kw):
        return seed_dependence(OrcaEnv(config, **kw), (11_000, 11_001))

    assert "reset with seed 11000 draws from the env's generator" in reason("circle_dense")
    assert "step 1 with seed 11000 draws" in reason("blocks")  # RVO2's crowd noise
    assert "seeds 11000 and 11001 give different episodes (from step 0" in \
        reason("crowdnav_circle_invisible")  # two CrowdNav test cases, no draw
    assert reason("circle_nojitter") is None
    # A seeded start jitter makes the symmetric crossing seed-dependent.
    assert reason("circle_nojitter", scenario_kwargs={"jitter": 0.01}) is not None


def test_a_seed_independent_entry_runs_once_and_reports_no_interval(tmp_path):
    suite = load_suite("standard").select(["circle_nojitter", "doorway"]).with_episodes(3)
    report = run_bench(suite, ["orca", "random"], out_dir=tmp_path)
    entries = {e["name"]: e for e in report["entries"]}
    assert entries["circle_nojitter"]["seed_independent"] is True
    assert entries["circle_nojitter"]["episodes"] == 1
    assert entries["circle_nojitter"]["seeds"] == [12_000, 12_000]
    assert entries["doorway"]["seed_independent"] is False and entries["doorway"]["episodes"] == 3
    for lab in ("orca", "random"):
        agg = report["results"]["circle_nojitter"][lab]
        assert all(a["n"] <= 1 and a["ci95_low"] is None and a["ci95_high"] is None
                   for a in agg.values()), lab
        # Its one episode is the entry's first seed's, as evaluate gives it.
        entry = suite.entries[0]
        ref = evaluate(entry.path, lab, seeds=[12_000], overrides=entry.overrides)
        assert {k: a["mean"] for k, a in agg.items()} == \
            {k: a["mean"] for k, a in ref["aggregate"].items()}
    assert report["results"]["circle_nojitter"]["orca"]["deadlock_rate"]["mean"] == 1.0
    # Every other entry's numbers are the evaluation's over all its seeds, as before.
    door = suite.entries[1]
    ref = evaluate(door.path, "orca", seeds=suite.seeds(door), overrides=door.overrides)
    assert report["results"]["doorway"]["orca"] == ref["aggregate"]
    diff = report["differences"]["circle_nojitter"]["random"]["deadlock_rate"]
    assert diff["n"] == 1 and diff["ci95_low"] is None
    md = format_markdown(report)
    assert "| circle_nojitter | deadlock | 16 (16) | 1 (seed-independent) | orca | 0.00 | 0.00 | " \
           "1.00 | 0.00 |" in md
    assert "it ran once, and its values have no interval" in md
    csv = (tmp_path / "entries" / "circle_nojitter" / "orca" / "episodes.csv").read_text()
    assert len(csv.splitlines()) == 2  # the header and one episode


def test_a_wrong_declaration_is_an_error_before_any_episode(tmp_path, monkeypatch):
    def no_episode(*args, **kwargs):
        raise AssertionError("an episode ran before the failing check")
    monkeypatch.setattr(bench_module, "evaluate", no_episode)
    undeclared = _suite(tmp_path, """
seed: 11000
episodes: 5
entries:
  - {name: sym, config: circle_nojitter, tag: deadlock, seed_offset: 0}
""")
    with pytest.raises(ValueError, match=r"entry 'sym' .*its episodes do not depend on the seed "
                                         r"\(seeds 11000 and 11001 give the same first 20 steps"
                                         r".*add 'seed_independent: true' to the entry"):
        run_bench(undeclared, ["orca"])
    wrong = _suite(tmp_path, """
seed: 11000
episodes: 5
entries:
  - {name: dense, config: circle_dense, tag: standard, seed_offset: 0, seed_independent: true}
""", "w.yaml")
    with pytest.raises(ValueError, match=r"entry 'dense' .*declared seed_independent, but its "
                                         r"episodes depend on the seed: its reset with seed "
                                         r"11000 draws"):
        run_bench(wrong, ["orca"])


@pytest.mark.parametrize("text, match", [
    ("followup_seeds: [18000]\n", r"followup_seeds must be \[first, last\]"),
    ("followup_seeds: [18100, 18000]\n", r"followup_seeds must be \[first, last\]"),
    ("followup_seeds: [19990, 20100]\n", r"followup_seeds 19990..20100 leave the evaluation"),
    ("followup_seeds: [11002, 11100]\n", r"entry 'a' would use seeds 11000..11004, which "
                                         r"overlap the follow-up seeds 11002..11100"),
    ("entries_extra: seed_independent: 1\n", r"seed_independent must be true or false, got 1"),
])
def test_bad_protocol_keys_are_errors_naming_them(tmp_path, text, match):
    extra = "" if text.startswith("entries_extra") else text
    flag = ", seed_independent: 1" if text.startswith("entries_extra") else ""
    path = _suite(tmp_path, f"""
seed: 11000
episodes: 5
{extra}entries:
  - {{name: a, config: circle_dense, tag: standard, seed_offset: 0{flag}}}
""")
    with pytest.raises(ValueError, match=match):
        load_suite(path)


# -- CrowdNav's validation cases ----------------------------------------------------------------
def _crowdnav_val_circle(case, human_num=5):
    """CrowdNav's ``reset(phase='val')`` of case ``case`` (circle crossing, 4 m, radius 0.3):
    ``np.random.seed(counter_offset['val'] + case)`` with ``counter_offset['val'] = 0``."""
    rng = np.random.RandomState(0 + case)
    pts = [((0.0, -4.0), (0.0, 4.0))]
    for _ in range(human_num):
        while True:
            angle = rng.random_sample() * np.pi * 2
            px = 4 * np.cos(angle) + (rng.random_sample() - 0.5)
            py = 4 * np.sin(angle) + (rng.random_sample() - 0.5)
            if all(np.linalg.norm((px - s[0], py - s[1])) >= 0.8
                   and np.linalg.norm((px - g[0], py - g[1])) >= 0.8 for s, g in pts):
                break
        pts.append(((px, py), (-px, -py)))
    return np.array([s for s, _ in pts]), np.array([g for _, g in pts])


def test_split_val_runs_crowdnavs_validation_cases_never_its_test_cases():
    val = orca_env.parallel_env("crowdnav_circle_invisible",
                                scenario_kwargs={"layout": "crowdnav_test", "split": "val"})
    test = orca_env.parallel_env("crowdnav_circle_invisible")
    for seed in (16_400, 16_437, 10_099):
        val.reset(seed=seed)
        case = seed % 100  # CrowdNav's val_size: 100 validation cases
        assert val.scenario.case == case and val.scenario.case_seed == case
        starts, goals = _crowdnav_val_circle(case)
        assert np.array_equal(val.starts, starts) and np.array_equal(val.goals, goals)
        test.reset(seed=seed)
        assert test.scenario.case_seed == 1000 + seed % 500  # CrowdNav's test case
        assert not np.array_equal(val.starts, test.starts)
    val.reset()  # CrowdNav's case counter: the next validation case, wrapping at val_size
    assert val.scenario.case == 0 and val.scenario.case_seed == 0
    # The square crossing has the split too; its cases are drawn from the same seeds.
    sq = orca_env.parallel_env("crowdnav_square_invisible",
                               scenario_kwargs={"layout": "crowdnav_test", "split": "val",
                                                "val_cases": 1000})
    sq.reset(seed=10_250)
    assert sq.scenario.case == 250 and sq.scenario.case_seed == 250


@pytest.mark.parametrize("kwargs, match", [
    ({"split": "val"}, r"'split' .* must be 'test' \(the default\) unless layout is "
                       r"crowdnav_test"),
    ({"layout": "crowdnav_test", "split": "train"}, r"'split' .* must be one of \['test', "
                                                    r"'val'\], got 'train'"),
    ({"layout": "crowdnav_test", "split": "val", "val_cases": 1001},
     r"val_cases.*at most 1000 \(CrowdNav's validation capacity"),
])
def test_split_errors_name_the_key(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_scenario("crowdnav_circle_v0", **kwargs)


def test_the_validation_suites_run_crowdnavs_validation_cases():
    for name in ("validation", "validation_heldout"):
        suite = load_suite(name)
        for e in suite.entries:
            env = OrcaEnv(e.path, **{**e.overrides, "render_mode": None})
            sc = env.scenario
            if getattr(sc, "layout", None) == "crowdnav_test":
                assert sc.split == "val", e.name
                for _, (kind, case_seed) in episode_keys(e, suite.seeds(e)):
                    assert kind == "case" and 0 <= case_seed < 1000, e.name  # never 1000+
    std = load_suite("standard")
    invisible = [e for e in std.entries if "invisible" in e.name]
    assert len(invisible) == 4
    for e in invisible:
        assert all(kind == "case" and 1000 <= s < 1500
                   for _, (kind, s) in episode_keys(e, std.seeds(e)))


# -- seeds: no shared episode, disjoint ranges --------------------------------------------------
def _all_episodes(suite, e):
    """Every seed the entry may run: its own, then its follow-ups up to the protocol's cap."""
    own = suite.run_seeds(e)
    more = followup_plan(suite, e, e.episodes * (2 ** (LOOKS - 1) - 1))
    return own, more


def test_no_two_shipped_suites_share_an_episode():
    """Counting CrowdNav's case mapping (seed mod 500, mod 100 for its validation cases), the
    seed-independent entries' one episode, and every follow-up episode up to the cap."""
    owner: dict = {}
    for name in SUITES:
        suite = load_suite(name)
        for e in suite.entries:
            own, more = _all_episodes(suite, e)
            if not e.seed_independent:
                assert len(more) == e.episodes * (2 ** (LOOKS - 1) - 1), (name, e.name)
            for key in episode_keys(e, own + more):
                where = owner.setdefault(key, (name, e.name))
                assert where == (name, e.name) or e.seed_independent, \
                    f"{name} {e.name} and {where} share the episode {key}"
            # Within an entry, no episode twice (a seed-independent entry runs once).
            keys = episode_keys(e, own + more)
            assert len(set(keys)) == (1 if e.seed_independent else len(keys)), (name, e.name)


def test_the_episode_keys_count_the_crowdnav_case_mapping():
    std = load_suite("standard")
    e = next(x for x in std.entries if x.name == "crowdnav_circle_invisible")
    a, b = episode_keys(e, [12_400, 12_900])  # 500 apart: the same test case
    assert a == b and a[1] == ("case", 1400)
    plain = next(x for x in std.entries if x.name == "crowdnav_circle")
    assert episode_keys(plain, [11_100])[0][1] == ("seed", 11_100)
    sym = next(x for x in std.entries if x.name == "circle_nojitter")
    assert episode_keys(sym, [12_000, 12_001])[0] == episode_keys(sym, [12_001])[0]


def test_the_shipped_suites_seed_ranges_are_disjoint_and_leave_the_followup_range():
    used: dict[int, str] = {}
    blocks = []
    for name in SUITES:
        suite = load_suite(name)
        lo, hi = suite.followup_seeds
        assert lo in FOLLOWUP_RANGE and hi in FOLLOWUP_RANGE, name
        blocks.append((lo, hi, name))
        for e in suite.entries:
            # At the suite's counts and at the 100 episodes an entry may run (--episodes 100).
            for n in (e.episodes, 100):
                first = suite.seed_span(e)[0]
                for s in range(first, first + n):
                    assert s not in FOLLOWUP_RANGE, (name, e.name, s)
                    assert used.setdefault(s, name) == name, (name, e.name, s, used[s])
    blocks.sort()
    for (_, hi, a), (lo, _, b) in zip(blocks, blocks[1:], strict=False):
        assert hi < lo, f"the follow-up seeds of {a} and {b} overlap"
    # 18800 .. 18999 stay free for new suites and other follow-up runs.
    assert blocks[-1][1] < 18_800


# -- targets: paired differences, decided ------------------------------------------------------
def test_t_quantile_and_the_decision_interval():
    for df in (1, 2, 5, 19, 30):
        assert t_quantile(0.95, df) == pytest.approx(t95(df), rel=1e-8)
    assert t_quantile(1 - 0.05 / 3, 49) == pytest.approx(2.478953, rel=1e-5)
    level = 1 - 0.05 / 3
    z2 = 2.3939797998185104 ** 2  # the normal quantile of the three looks' level, squared
    # Every pair agreeing: not zero width, but Wilson's bound on a rare difference (one robot).
    low, high = decision_interval(50, 0.0, 0.0, level=level)
    assert low == -high and high == pytest.approx(z2 / (50 + z2)) and 0.1 < high < 0.11
    # About 110 agreeing episodes call one robot's difference within 0.05.
    assert decision_interval(108, 0.0, 0.0, level=level)[1] > 0.05 > \
        decision_interval(110, 0.0, 0.0, level=level)[1]
    # 16 agents per episode: a step of 1/16, a floor 16 times lower.
    assert decision_interval(50, 0.0, 0.0, level=level, resolution=1 / 16)[1] == \
        pytest.approx(z2 / (50 + z2) / 16)
    # Otherwise mean +- t sd / sqrt(n), clipped to [-1, 1].
    low, high = decision_interval(200, -0.1, 0.3, level=0.95)
    assert (low, high) == pytest.approx((-0.1 - t95(199) * 0.3 / math.sqrt(200),
                                         -0.1 + t95(199) * 0.3 / math.sqrt(200)))
    assert decision_interval(5, -0.9, 0.5, level=0.95)[0] == -1.0
    assert decision_interval(1, 0.5, None, level=0.95) is None


def _rows(seeds, fn):
    return [dict({k: 0.0 for k in ("success_rate", "collision_rate", "deadlock_rate",
                                   "timeout_rate")}, seed=s, **fn(s)) for s in seeds]


def _report(entries):
    """A bench report of policy ``p`` and reference ``orca`` from synthetic episodes."""
    rep = {"policies": [{"label": "p"}, {"label": "orca"}], "reference": "orca", "entries": [],
           "results": {}, "differences": {}, "time_ratios": {}}
    for name, tag, learned, p_rows, r_rows, independent in entries:
        rep["entries"].append({"name": name, "tag": tag, "num_learned": learned,
                               "episodes": len(p_rows), "seed_independent": independent})
        rep["results"][name] = {"p": aggregate(p_rows), "orca": aggregate(r_rows)}
        rep["differences"][name] = {"p": paired_difference(p_rows, r_rows, HEADLINE)}
        rep["time_ratios"][name] = {"p": paired_time_ratio(p_rows, r_rows)}
    return rep


def _arrivals(times):
    """Episode fields of learned agents arriving at ``times`` (None: did not arrive)."""
    ok = [t for t in times if t is not None]
    return {ARRIVAL_TIMES: list(times), "success_rate": len(ok) / len(times),
            "time_to_goal": sum(ok) / len(ok) if ok else None}


def test_paired_time_ratio_pairs_agents_by_seed_and_slot():
    # Hand-computed: two episodes pair agents (seed 2's second agent arrived in one run only),
    # seed 3 pairs none, seed 4 has no reference episode.
    mine = [dict(seed=1, **_arrivals([10.0, 12.0])), dict(seed=2, **_arrivals([9.0, 30.0])),
            dict(seed=3, **_arrivals([None, 8.0])), dict(seed=4, **_arrivals([5.0, 5.0]))]
    ref = [dict(seed=3, **_arrivals([7.0, None])), dict(seed=2, **_arrivals([6.0, None])),
           dict(seed=1, **_arrivals([8.0, 8.0]))]
    r = paired_time_ratio(mine, ref)
    # Sums per episode: seed 1 (22, 16), seed 2 (9, 6): R = 31 / 22.
    ratio = 31.0 / 22.0
    resid = (22.0 - ratio * 16.0) ** 2 + (9.0 - ratio * 6.0) ** 2
    half = t95(1) * math.sqrt(resid / 2.0) / 11.0
    assert r["ratio"] == pytest.approx(ratio)
    assert (r["ci95_low"], r["ci95_high"]) == pytest.approx((ratio - half, ratio + half))
    assert (r["episodes"], r["agents"]) == (2, 3)
    # Swapped roles: the ratio inverts.
    assert paired_time_ratio(ref, mine)["ratio"] == pytest.approx(22.0 / 31.0)
    # Episodes without arrival times (an older report) pair nothing.
    old = [{k: v for k, v in e.items() if k != ARRIVAL_TIMES} for e in mine]
    assert paired_time_ratio(old, ref) == {"ratio": None, "ci95_low": None, "ci95_high": None,
                                           "ci_method": "ratio_delta_t", "episodes": 0,
                                           "agents": 0}
    # One episode: a ratio without an interval.
    one = paired_time_ratio(mine[:1], ref)
    assert one["ratio"] == pytest.approx(22.0 / 16.0) and one["ci95_low"] is None
    # Bad input: an error naming the argument and the value.
    with pytest.raises(ValueError, match="seed 1 has 3 learned agents in episodes and 2 in "
                                         "reference"):
        paired_time_ratio([dict(seed=1, **_arrivals([1.0, 1.0, 1.0]))], ref)
    with pytest.raises(ValueError, match="reference has seed 2 twice"):
        paired_time_ratio(mine, ref + ref[1:2])
    with pytest.raises(ValueError, match="episodes holds an episode without a seed"):
        paired_time_ratio([{ARRIVAL_TIMES: [1.0]}], ref)
    for bad in (3.0, [1.0, float("nan")], [-1.0, 2.0], ["1.0", None]):
        with pytest.raises(ValueError, match="episodes seed 1: arrival_times must be a list of "
                                             "finite times >= 0 or None"):
            paired_time_ratio([{"seed": 1, ARRIVAL_TIMES: bad}], ref)


def test_paired_time_ratio_is_free_of_the_survivors_bias():
    # The reference loses three of four agents in every episode and keeps its fastest; the
    # policy brings all four home, the same agent 20% later. The ratio of the two runs' means
    # (what time_to_goal compares) says 3.3x; paired by agent it is 1.2x.
    seeds = range(40)
    ref = [dict(seed=s, **_arrivals([5.0 + s % 2, None, None, None])) for s in seeds]
    mine = [dict(seed=s, **_arrivals([1.2 * (5.0 + s % 2), 20.0, 20.0, 20.0])) for s in seeds]
    means = aggregate(mine)["time_to_goal"]["mean"] / aggregate(ref)["time_to_goal"]["mean"]
    assert means > 3.0
    r = paired_time_ratio(mine, ref)
    assert r["ratio"] == pytest.approx(1.2) and (r["episodes"], r["agents"]) == (40, 40)
    assert r["ci95_low"] == pytest.approx(1.2) and r["ci95_high"] == pytest.approx(1.2)


def test_episodes_record_when_each_successful_agent_arrived():
    rep = evaluate("corridor", "orca", episodes=3)
    for e in rep["episodes"]:
        times = e[ARRIVAL_TIMES]
        ok = [t for t in times if t is not None]
        assert len(times) == rep["env"]["num_learned"]
        assert len(ok) == round(e["success_rate"] * len(times))
        if ok:
            assert math.fsum(ok) / len(ok) == pytest.approx(e["time_to_goal"])
            assert all(t > 0 and round(t / rep["env"]["time_step"], 9).is_integer()
                       for t in ok)
    assert any(len([t for t in e[ARRIVAL_TIMES] if t is not None]) for e in rep["episodes"])
    # Not a metric: no aggregate of it.
    assert ARRIVAL_TIMES not in rep["aggregate"]


def test_targets_on_synthetic_outcomes_met_missed_undecided():
    seeds = range(11_000, 11_050)
    rng = np.random.default_rng(0)
    noise = {s: rng.normal(0, 0.1) for s in seeds}
    ref = _rows(seeds, lambda s: {"success_rate": 0.5 + noise[s], "collision_rate": 0.3})
    better = _rows(seeds, lambda s: {"success_rate": 0.8 + noise[s], "collision_rate": 0.1})
    worse = _rows(seeds, lambda s: {"success_rate": 0.6 + noise[s], "collision_rate": 0.3})
    # One robot that collides on 2 of 50 seeds where the reference succeeds: -0.04.
    r1 = _rows(seeds, lambda s: {"success_rate": 1.0})
    p1 = _rows(seeds, lambda s: {"success_rate": 0.0 if s % 25 == 3 else 1.0,
                                 "collision_rate": 1.0 if s % 25 == 3 else 0.0})
    sym_r = _rows([12_000], lambda s: {"deadlock_rate": 1.0})
    sym_p = _rows([12_000], lambda s: {"success_rate": 1.0})
    report = _report([
        ("clear_gain", "crush", 16, better, ref, False),       # +0.30: needs +0.15, met
        ("short_gain", "crush", 16, worse, ref, False),        # +0.10 exactly: missed
        ("borderline", "standard", 1, p1, r1, False),          # -0.04 on 50 episodes
        ("symmetric", "deadlock", 16, sym_p, sym_r, True),     # one episode: exact
    ])
    calls = missed_targets(report, "p")
    assert {k: c["label"] for k, c in calls.items()} == {
        "clear_gain": "met", "short_gain": "missed", "borderline": "undecided at 50 episodes",
        "symmetric": "met"}
    short = calls["short_gain"]["targets"][0]
    assert short["target"] == ">= +0.15" and short["call"] == "missed"
    assert short["difference"] == pytest.approx(0.1) and short["high"] < 0.15
    border = calls["borderline"]["targets"]
    # The robot never deadlocks, nor does the reference, but 50 agreeing episodes of one robot
    # do not bound a rare difference within 0.05: that target is open too.
    assert [t["call"] for t in border] == ["undecided", "undecided", "undecided"]
    assert border[0]["low"] < -0.05 < border[0]["high"]
    assert describe_call(calls["borderline"]).startswith(
        "undecided at 50 episodes: success -0.040 [")
    assert describe_call(calls["symmetric"]) == "met"
    # Looked at once (no follow-ups to come), the interval is the plain 95% one: narrower.
    once = missed_targets(report, "p", looks=1)["borderline"]["targets"][0]
    assert border[0]["low"] < once["low"] and once["high"] < border[0]["high"]
    # The reference's targets against the policy: the differences turned round.
    back = missed_targets(report, "orca", reference="p")
    assert back["clear_gain"]["targets"][0]["difference"] == pytest.approx(-0.3)
    with pytest.raises(ValueError, match=r"policy 'q': not a policy of this bench"):
        missed_targets(report, "q")
    with pytest.raises(ValueError, match=r"policy 'orca' is the reference"):
        missed_targets(report, "orca")


@pytest.fixture
def synthetic(monkeypatch):
    """``evaluate`` replaced by synthetic episodes: per seed, policy and entry (no simulation).

    Entry ``met`` (16 learned agents): the policy beats orca by 0.3. Entry ``missed``: it is
    0.3 worse. Entry ``borderline`` (one robot): the policy fails where orca succeeds on the
    seeds that are 7 mod 40 (one of its own 10, one of every 40 follow-ups): about -0.025 to
    -0.05, at or near the margin, which 109 episodes do not decide. Entry ``agree``: both bring
    every agent home.
    """
    calls = []

    def fake(config, policy, *, seeds, overrides=None, out_dir=None, name=None, **kw):
        entry = overrides["max_steps"]  # the entries are told apart by their step limit
        rows = []
        for s in seeds:
            r = np.random.default_rng([s, entry]).normal(0, 0.05)
            if entry == 101:
                succ = (0.8 if name == "p" else 0.5) + r
            elif entry == 102:
                succ = (0.2 if name == "p" else 0.5) + r
            elif entry == 104:  # both policies bring every agent home: no difference at all
                succ = 1.0
            else:
                succ = 0.0 if name == "p" and s % 40 == 7 else 1.0
            rows.append({"seed": s, "success_rate": succ, "collision_rate": 0.0,
                         "deadlock_rate": 0.0, "timeout_rate": 1.0 - succ})
        calls.append((entry, name, list(seeds)))
        metrics = {k: METRICS[k] for k in ("success_rate", "collision_rate", "deadlock_rate",
                                           "timeout_rate")}
        return {"seeds": list(seeds), "num_episodes": len(rows), "episodes": rows,
                "metrics": {k: {"unit": u, "definition": d} for k, (u, d) in metrics.items()},
                "aggregate": aggregate(rows, metrics)}

    monkeypatch.setattr(bench_module, "evaluate", fake)
    return calls


def test_decide_targets_runs_follow_ups_until_called_or_capped(tmp_path, synthetic):
    path = _suite(tmp_path, """
seed: 11000
episodes: 10
followup_seeds: [18800, 18999]
entries:
  - {name: met, config: circle_dense, tag: crush, seed_offset: 0, set: {max_steps: 101}}
  - {name: missed, config: circle_dense, tag: crush, seed_offset: 100, set: {max_steps: 102}}
  - {name: borderline, config: crowdnav_circle, tag: standard, seed_offset: 200,
     set: {max_steps: 103}}
""")
    report = decide_targets(path, BenchPolicyNamed("p"), "orca")
    calls = report["targets"]["calls"]
    # Clear gains and losses are called on the entry's own 10 episodes; the borderline entry
    # (one robot) runs 20 and then 109 (the cap: 4x, 40, is raised to the fewest episodes that
    # could meet the 0.05 margin), on the same seeds for both policies, and stays open.
    assert {k: c["label"] for k, c in calls.items()} == {
        "met": "met", "missed": "missed", "borderline": "undecided at 109 episodes"}
    entries = {e["name"]: e for e in report["entries"]}
    assert entries["met"]["episodes"] == 10 and "followup_seeds" not in entries["met"]
    assert entries["borderline"]["followup_seeds"] == list(range(18_800, 18_899))
    by_policy = {}
    for entry, name, seeds in synthetic:
        by_policy.setdefault((entry, name), []).extend(seeds)
    assert by_policy[(103, "p")] == by_policy[(103, "orca")] == \
        list(range(11_200, 11_210)) + list(range(18_800, 18_899))
    assert report["targets"]["looks"] == LOOKS == 3 and report["targets"]["looks_run"] == 3
    assert report["results"]["borderline"]["p"]["success_rate"]["n"] == 109
    assert report["differences"]["borderline"]["p"]["success_rate"]["mean"] == \
        pytest.approx(-4 / 109)  # seeds 11207, 18807, 18847 and 18887
    md = format_markdown(report)
    assert "| borderline | standard | 109 | -0.037 [" in md and "undecided at 109 episodes |" in md
    assert "`p`: met on 1 of 3 entries, missed on 1, undecided on 1." in md


def test_the_cap_never_stops_an_entry_before_agreeing_episodes_can_meet_the_margin(
        tmp_path, synthetic):
    # Four learned agents, 5 episodes: 4x is 20 episodes, at which episodes that never differ
    # still bound the difference only to +-0.056 (the Wilson floor at the level of three
    # looks), wider than the 0.05 margin: such an entry could never be called. The last look
    # runs it to 23, where the floor is 0.0499.
    path = _suite(tmp_path, """
seed: 11000
episodes: 5
followup_seeds: [18800, 18999]
entries:
  - {name: agree, config: crowdnav_circle, tag: standard, seed_offset: 0,
     set: {max_steps: 104, groups.0.count: 4}}
""")
    level = 1 - ALPHA / LOOKS
    assert decidable_episodes(MARGIN, level=level, resolution=0.25) == 23
    assert decision_interval(20, 0.0, 0.0, level=level, resolution=0.25)[1] > MARGIN
    report = decide_targets(path, BenchPolicyNamed("p"), "orca")
    call = report["targets"]["calls"]["agree"]
    assert report["entries"][0]["num_learned"] == 4
    assert call["label"] == "met" and call["episodes"] == 23
    assert report["entries"][0]["followup_seeds"] == list(range(18_800, 18_818))
    # One robot needs 109 agreeing episodes to call a target within 0.05.
    assert decidable_episodes(MARGIN, level=level) == 109
    assert decision_interval(108, 0.0, 0.0, level=level, resolution=1.0)[1] > MARGIN
    assert decision_interval(109, 0.0, 0.0, level=level, resolution=1.0)[1] < MARGIN


def test_decide_targets_stops_where_the_followup_seeds_end(tmp_path, synthetic):
    path = _suite(tmp_path, """
seed: 11000
episodes: 10
followup_seeds: [18800, 18814]
entries:
  - {name: borderline, config: crowdnav_circle, tag: standard, seed_offset: 200,
     set: {max_steps: 103}}
""")
    report = decide_targets(path, BenchPolicyNamed("p"), "orca")
    assert report["targets"]["calls"]["borderline"]["label"] == "undecided at 25 episodes"
    assert report["entries"][0]["followup_seeds"] == list(range(18_800, 18_815))


def BenchPolicyNamed(name):  # noqa: N802
    """Pure ORCA under another label (the synthetic evaluate tells the two apart by label)."""
    return bench_module.BenchPolicy("orca", name=name)



def test_suite_targets_reports_the_absolute_targets_and_the_time_ratio(tmp_path):
    # benchmarks/suite_targets.py on a bench.json: beside the paired calls, whether success >=
    # 0.90 with collision <= 0.05 holds, and the time to goal over the reference's, paired by
    # agent (with its call against 1.3) and as the ratio of the two runs' means.
    seeds = range(11_000, 11_040)

    def arrive(times, **fields):
        return lambda s: dict(_arrivals(times(s)), **fields)

    fast = _rows(seeds, arrive(lambda s: [10.0 + s % 3] * 4))
    slow = _rows(seeds, arrive(lambda s: [15.0] * 4, collision_rate=0.05))
    never = _rows(seeds, arrive(lambda s: [None] * 4, timeout_rate=1.0))
    # The reference keeps one agent of four, its fastest; the policy all four, that one 10%
    # later: 1.1x paired, 1.9x as a ratio of the means.
    survivor = _rows(seeds, arrive(lambda s: [10.0 + s % 3, None, None, None],
                                   collision_rate=0.75))
    all_home = _rows(seeds, arrive(lambda s: [1.1 * (10.0 + s % 3) + 0.1 * (s % 2), 25.0, 25.0,
                                              25.0]))
    near = _rows(seeds, arrive(lambda s: [1.05 * (10.0 + s % 3) + 0.1 * (s % 2)] * 4))
    # Episodes whose times all agree in ratio give an interval of zero width: undecided.
    report = _report([("quick", "standard", 4, fast, fast, False),
                      ("near", "standard", 4, near, fast, False),
                      ("slow", "standard", 4, slow, fast, False),
                      ("stuck", "standard", 4, never, fast, False),
                      ("jam", "deadlock", 4, slow, never, False),
                      ("crush", "crush", 4, all_home, survivor, False),
                      # A seed-independent entry's one episode gives the ratio exactly.
                      ("fixed", "deadlock", 4, slow[1:2], fast[1:2], True)])
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(report))
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, os.path.join(root, "benchmarks", "suite_targets.py"),
                          str(path)], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=root), check=True).stdout
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[1:-1]]
            for line in out.splitlines() if line.startswith("| ") and "---" not in line}
    assert rows["quick"][-4:] == ["yes", "1.000 [1.000, 1.000] (160)", "undecided", "1.00"]
    ref_sum = sum(10.0 + s % 3 for s in seeds)
    near_ratio = sum(1.05 * (10.0 + s % 3) + 0.1 * (s % 2) for s in seeds) / ref_sum
    assert rows["near"][-3][:7] == f"{near_ratio:.3f} [" and rows["near"][-2] == "met"
    # 15 s against 10-12 s: 1.36 paired, its interval above 1.3. 0.95 / 0.05 is on the bounds.
    assert rows["slow"][-4][:3] == "yes" and rows["slow"][-2:] == ["missed", f"{15.0 / 11.0:.2f}"]
    assert rows["slow"][-3].startswith(f"{15.0 * 40 / ref_sum:.3f} [")
    assert rows["stuck"][-4:] == ["no", "-", "-", "-"]  # nobody arrived: no ratio
    assert rows["jam"][-4:] == ["-", "-", "-", "-"]     # a deadlock entry's target is the gain
    crush_ratio = sum(1.1 * (10.0 + s % 3) + 0.1 * (s % 2) for s in seeds) / ref_sum
    assert rows["crush"][-3][:7] == f"{crush_ratio:.3f} [" and rows["crush"][-3].endswith("(40)")
    assert rows["crush"][-2] == "met" and float(rows["crush"][-1]) > 1.9  # means: 1.98
    assert rows["fixed"][-3:] == [f"{15.0 / 10.0:.3f} (4)", "missed", f"{15.0 / 10.0:.2f}"]
    assert ("success >= 0.90 with collision <= 0.05 on 3 of the 4 entries not tagged deadlock "
            "or crush; time to goal at most 1.3x orca's, paired by agent: met on 2, missed on 2, "
            "undecided on 1 of the 5 entries where some agent arrives in both runs (ratio of the "
            "means at most 1.3 on 2 of 5)") in out
