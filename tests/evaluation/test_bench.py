"""``orca-env bench`` and orca_env.evaluation.bench: suites, seeds, reproducible bench.json,
the same numbers as ``evaluate``, policies with and without the safety layer, errors before any
episode, progress, the table and the figure."""

import json
import os
import subprocess
import sys

import pytest
import yaml
from orca_env.configs import names, resolve

import orca_env
import orca_env.evaluation.suite as suite_module
from orca_env.cli import main
from orca_env.evaluation import evaluate
from orca_env.evaluation.bench import (
    HEADLINE,
    BenchPolicy,
    bench_figure,
    format_markdown,
    load_suite,
    missed_targets,
    run_bench,
    write_bench,
)
from orca_env.evaluation.metrics import METRICS, SOCIAL_METRICS

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHIPPED_MODEL = os.path.join(ROOT, "policies", "trained", "circle_ppo")
ENV = {**os.environ, "SDL_VIDEODRIVER": "dummy", "NUMBA_NUM_THREADS": "1"}
#: Two cheap entries of the standard suite (16 agents each, episodes of under 200 steps).
SMALL = ["--entries", "circle_nojitter,doorway", "--episodes", "2"]


def _suite(tmp_path, text, name="s.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _one_line_error(capsys):
    """The error: one line, the last on stderr (after any progress lines), no traceback."""
    err = capsys.readouterr().err
    last = err.splitlines()[-1]
    assert last.startswith("orca-env bench: error: ") and "Traceback" not in err, err
    return last


@pytest.fixture
def no_episodes(monkeypatch):
    """Fail the test if an episode runs: checks must come before the work."""
    def run_episode(*args, **kwargs):
        raise AssertionError("an episode ran before the failing check")
    monkeypatch.setattr(suite_module, "run_episode", run_episode)


# -- the standard suite -------------------------------------------------------------------------
def test_the_standard_suite_is_shipped_and_found_by_name():
    assert "standard" in names("suite")
    by_name = load_suite("standard")
    for other in (load_suite(resolve("configs/suites/standard.yaml", kind="suite")),
                  load_suite(os.path.join(ROOT, "configs", "suites", "standard.yaml"))):
        assert other.entries == by_name.entries and other.seed == by_name.seed == 11000
    assert os.path.samefile(by_name.path, os.path.join(ROOT, "configs", "suites",
                                                       "standard.yaml"))
    entries = {e.name: e for e in by_name.entries}
    # The ORCA failure cases are there with their tags, and RVO2's examples at full scale.
    assert entries["circle_nojitter"].tag == "deadlock" and entries["doorway"].tag == "deadlock"
    assert entries["corridor_headon"].tag == "crush"
    assert entries["intersection_dense"].tag == "crush"
    assert entries["rvo2_circle"].config == "circle" and entries["rvo2_blocks"].config == "blocks"
    # Seeds: evaluation seeds (which training refuses), one disjoint range per entry.
    seen = set()
    for e in by_name.entries:
        seeds = by_name.seeds(e)
        assert len(seeds) == e.episodes and all(10_000 <= s < 20_000 for s in seeds)
        assert not seen & set(seeds)
        seen |= set(seeds)
    with pytest.raises(ValueError, match="kind must be one of"):
        resolve("standard", kind="suites")


def test_the_standard_and_robots_suites_cover_every_shipped_config():
    """A benchmark over every scenario: a new shipped config needs its entry in a suite (the
    robots suite for non-holonomic learned robots, whose spaces the holonomic policies lack)."""
    standard, robots = load_suite("standard"), load_suite("robots")
    covered = {os.path.realpath(e.path) for e in standard.entries + robots.entries}
    missing = [n for n in names("env") if os.path.realpath(resolve(n)) not in covered]
    assert not missing, (f"shipped configs without an entry in configs/suites/standard.yaml or "
                         f"robots.yaml: {missing}; add one (a new seed_offset)")
    for e in robots.entries:  # and only robots go to the robots suite
        env = orca_env.parallel_env(e.path, **e.overrides)
        assert env.world_config.learned_kinematics != "holonomic", e.name


def test_the_heldout_suite_uses_other_evaluation_seeds_than_the_standard_one():
    standard, heldout = load_suite("standard"), load_suite("heldout")
    used = {s for e in standard.entries for s in standard.seeds(e)}
    for e in heldout.entries:
        seeds = set(heldout.seeds(e))
        assert all(10_000 <= s < 20_000 for s in seeds) and not seeds & used, e.name
        used |= seeds
    # Variants of shipped configs, outside the generalist's training ranges.
    names_ = {e.name: e for e in heldout.entries}
    assert names_["circle_dense_x2"].set == {"groups.0.count": 32}
    assert names_["random_obstacles_12"].set["scenario_kwargs.num_obstacles"] == 12


def test_the_validation_suites_mirror_the_reporting_suites_on_their_own_seeds():
    """Model selection runs on validation seeds: the standard and held-out entries (RVO2's
    250-agent Circle and the seed-independent entries, whose one episode is the reporting
    suite's, left out; RVO2's Blocks and Roadmap on 10 episodes), the same configs and offsets
    (the social-force entries past 18000 moved to 19500..), CrowdNav's validation cases, seeds
    no other suite uses."""
    used: set[int] = set()
    moved = {"crowdnav_circle_sf_invisible": 4500, "crowdnav_square_sf_invisible": 4600,
             "crowdnav_circle_mixed": 4700, "bottleneck_sf": 4800, "doorway_sf": 4900}
    for report_name, val_name in (("standard", "validation"), ("heldout", "validation_heldout")):
        rep, val = load_suite(report_name), load_suite(val_name)
        kept = {e.name: e for e in rep.entries
                if e.name != "rvo2_circle" and not e.seed_independent}
        assert [e.name for e in val.entries] == [n for n in kept]
        for e in val.entries:
            k = kept[e.name]
            split = {"scenario_kwargs.split": "val"} if "invisible" in e.name else {}
            assert (e.path, e.tag, e.set) == (k.path, k.tag, {**k.set, **split})
            assert e.seed_offset == moved.get(e.name, k.seed_offset)
            assert e.episodes == (10 if e.name.startswith("rvo2_") else min(k.episodes, 20))
        for suite in (rep, val):
            for e in suite.entries:
                seeds = set(suite.seeds(e))
                assert all(10_000 <= x < 20_000 for x in seeds) and not seeds & used, e.name
                used |= seeds


def test_missed_targets_follow_the_protocol():
    """Paired differences with an interval: met, missed or undecided (tests/test_protocol.py
    has the synthetic outcomes; here the shape on a real bench)."""
    report = run_bench(load_suite().select(["doorway"]).with_episodes(3), ["random", "orca"])
    calls = missed_targets(report, "random")
    assert list(calls) == ["doorway"]
    call = calls["doorway"]
    assert call["call"] in ("met", "missed", "undecided") and call["episodes"] == 3
    assert [t["target"] for t in call["targets"]] == [">= +0.15", "<= +0.05", "<= +0.05"]
    with pytest.raises(ValueError, match=r"policy 'q': not a policy of this bench"):
        missed_targets(report, "q")
    with pytest.raises(ValueError, match=r"policy 'orca' is the reference"):
        missed_targets(report, "orca")


def test_a_quick_run_is_the_first_episodes_of_the_full_run():
    s = load_suite()
    quick = s.with_episodes(2)
    for full, short in zip(s.entries, quick.entries, strict=True):
        k = min(2, full.episodes)  # a deterministic entry runs one episode in the full suite
        assert quick.seeds(short)[:k] == s.seeds(full)[:k]


# -- reproducibility and agreement with evaluate ------------------------------------------------
def test_reruns_give_the_same_bench_json_bytes(tmp_path, capsys):
    args = ["bench", *SMALL, "--policy", "orca", "--policy", "random", "--print-hash",
            "--no-figure"]
    assert main([*args, "--out", str(tmp_path / "a")]) == 0
    hash_a = capsys.readouterr().out.strip().splitlines()[-1]
    # Again, in a fresh process.
    out = subprocess.run([sys.executable, "-m", "orca_env", *args, "--quiet", "--out",
                          str(tmp_path / "b")], capture_output=True, text=True, timeout=600,
                         cwd=ROOT, env=ENV)
    assert out.returncode == 0, out.stderr
    a = (tmp_path / "a" / "bench.json").read_bytes()
    b = (tmp_path / "b" / "bench.json").read_bytes()
    assert a == b
    assert out.stdout.strip() == hash_a
    assert (tmp_path / "a" / "bench.md").read_bytes() == (tmp_path / "b" / "bench.md").read_bytes()
    report = json.loads(a)
    assert report["format"] == "orca-env-bench/1"
    assert [p["label"] for p in report["policies"]] == ["orca", "random"]
    assert [e["name"] for e in report["entries"]] == ["circle_nojitter", "doorway"]
    # entry -> policy -> metric -> mean and interval, with the metrics of metrics.json.
    agg = report["results"]["doorway"]["orca"]
    assert set(agg) == set(METRICS) | set(SOCIAL_METRICS)
    assert set(report["metrics"]) == set(METRICS) | set(SOCIAL_METRICS)
    assert {"mean", "ci95_low", "ci95_high"} <= set(agg["success_rate"])


def test_bench_numbers_are_the_evaluation_numbers(tmp_path):
    s = load_suite().select(["doorway"]).with_episodes(3)
    report = run_bench(s, ["orca"], out_dir=tmp_path)
    entry = s.entries[0]
    ref = evaluate(entry.path, "orca", seeds=s.seeds(entry), overrides=entry.overrides)
    assert report["results"]["doorway"]["orca"] == ref["aggregate"]
    # Each run's own files, as eval writes them.
    with open(tmp_path / "entries" / "doorway" / "orca" / "metrics.json", encoding="utf-8") as fh:
        metrics = json.load(fh)
    assert metrics["seeds"] == [12100, 12101, 12102] and metrics["policy"] == "orca"
    assert metrics["aggregate"] == ref["aggregate"]
    assert (tmp_path / "entries" / "doorway" / "orca" / "episodes.csv").exists()


# -- policies -----------------------------------------------------------------------------------
def test_without_the_safety_layer_the_learned_groups_move_as_commanded(tmp_path):
    s = load_suite().select(["doorway"]).with_episodes(2)
    report = run_bench(s, ["orca", BenchPolicy("orca", safety_layer=False)], out_dir=tmp_path)
    labels = [p["label"] for p in report["policies"]]
    assert labels == ["orca", "orca (no safety layer)"]
    assert report["policies"][1]["without_safety_layer"] is True
    with open(tmp_path / "entries" / "doorway" / "orca_no_safety_layer" / "metrics.json",
              encoding="utf-8") as fh:
        groups = json.load(fh)["config"]["groups"]
    assert [(g["population"], g["safety_layer"]) for g in groups] == [("learned", False),
                                                                       ("orca", True)]
    # Walking straight at the goal through a crowd and a doorway: everyone collides.
    res = report["results"]["doorway"]
    assert res["orca (no safety layer)"]["collision_rate"]["mean"] == 1.0
    assert res["orca"]["collision_rate"]["mean"] < 1.0


def test_two_run_folders_of_the_same_name_are_told_apart(tmp_path, no_episodes):
    for parent in ("a", "b"):
        (tmp_path / parent / "run").mkdir(parents=True)
    with pytest.raises(ValueError, match=r"policies '.*a/run' and '.*b/run' are both labelled "
                                         r"'run': name one \(NAME=SPEC on the command line"):
        run_bench(load_suite().select(["doorway"]),
                  [str(tmp_path / "a" / "run"), str(tmp_path / "b" / "run")])
    assert BenchPolicy(str(tmp_path / "a" / "run"), safety_layer=False).label == \
        "run (no safety layer)"
    # NAME=SPEC labels a policy; an existing path with '=' in it stays a path.
    named = BenchPolicy.parse(f"old={tmp_path / 'a' / 'run'}", safety_layer=False)
    assert (named.spec, named.name, named.label) == (str(tmp_path / "a" / "run"), "old",
                                                     "old (no safety layer)")
    (tmp_path / "x=y").mkdir()
    assert BenchPolicy.parse(str(tmp_path / "x=y")).name is None
    assert BenchPolicy.parse("package.module:make").label == "package.module:make"
    with pytest.raises(ValueError, match=r"policy name 'a b' \(for 'orca'\): use letters"):
        BenchPolicy("orca", name="a b")
    with pytest.raises(ValueError, match=r"policy name 'my run' \(for 'x/gen'\): use letters"):
        BenchPolicy.parse("my run=x/gen")
    with pytest.raises(ValueError, match=r"policy 'a=': NAME=SPEC with an empty SPEC"):
        BenchPolicy.parse("a=")


def test_named_policies_and_a_reused_out_folder(tmp_path, capsys):
    """Two runs of one policy under two names; a second bench into the same folder removes the
    first one's runs that it does not list, and keeps files it did not write."""
    base = ["bench", "--entries", "doorway", "--episodes", "1", "--no-figure", "--quiet",
            "--out", str(tmp_path)]
    assert main([*base, "--policy", "a=orca", "--policy", "b=orca", "--policy", "random"]) == 0
    report = json.loads((tmp_path / "bench.json").read_text())
    assert [p["label"] for p in report["policies"]] == ["a", "b", "random"]
    res = report["results"]["doorway"]
    assert res["a"] == res["b"] != res["random"]
    (tmp_path / "entries" / "doorway" / "b" / "notes.txt").write_text("mine")
    with pytest.warns(UserWarning, match=r"entries/doorway/b' is not from this bench"):
        assert main([*base, "--policy", "orca"]) == 0
    assert sorted(os.listdir(tmp_path / "entries" / "doorway")) == ["b", "orca"]
    assert (tmp_path / "entries" / "doorway" / "b" / "notes.txt").exists()
    # Links are never followed: a linked run folder elsewhere keeps its files.
    elsewhere = tmp_path.parent / f"{tmp_path.name}_elsewhere"
    elsewhere.mkdir()
    (elsewhere / "metrics.json").write_text("{}")
    os.symlink(elsewhere, tmp_path / "entries" / "doorway" / "linked")
    # An earlier summary goes before the first episode (the runs it lists are overwritten).
    (tmp_path / "bench.png").write_bytes(b"old")
    s = load_suite().select(["doorway"]).with_episodes(1)
    with pytest.warns(UserWarning):  # the folder b with notes.txt, as above
        run_bench(s, ["random"], out_dir=tmp_path)
    assert not (tmp_path / "bench.json").exists() and not (tmp_path / "bench.png").exists()
    assert (elsewhere / "metrics.json").exists()
    assert sorted(os.listdir(tmp_path / "entries" / "doorway")) == ["b", "linked", "random"]


def test_shipped_policies_by_name(tmp_path, monkeypatch, capsys):
    """A shipped policy runs by its name from any folder (and after a wheel install)."""
    monkeypatch.chdir(tmp_path)
    assert main(["bench", "--entries", "circle_dense", "--episodes", "1", "--no-figure",
                 "--quiet", "--policy", "circle_ppo", "--out", "b"]) == 0
    report = json.loads((tmp_path / "b" / "bench.json").read_text())
    assert report["policies"][0]["label"] == "circle_ppo"
    assert report["results"]["circle_dense"]["circle_ppo"] == run_bench(
        load_suite().select(["circle_dense"]).with_episodes(1),
        [SHIPPED_MODEL])["results"]["circle_dense"]["circle_ppo"]
    with pytest.raises(SystemExit) as exc:
        main(["bench", "--entries", "circle_dense", "--quick", "--no-figure",
              "--policy", "generalistt", "--out", "c"])
    assert exc.value.code == 2
    assert ("a shipped policy (circle_ppo, crowdnav, crowdnav_circle, crowdnav_unicycle, generalist, "
            "generalist_residual, generalist_sarl, generalist_sarl2)") \
        in capsys.readouterr().err


def test_a_trained_policy_with_and_without_the_safety_layer(tmp_path, capsys):
    assert main(["bench", "--entries", "circle_dense", "--episodes", "1", "--no-figure",
                 "--policy", SHIPPED_MODEL, "--no-safety", SHIPPED_MODEL, "--policy", "orca",
                 "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "bench.json").read_text())
    assert [p["label"] for p in report["policies"]] == [
        "circle_ppo", "circle_ppo (no safety layer)", "orca"]
    res = report["results"]["circle_dense"]
    # Without the safety layer the policy's velocity is applied as it is: ORCA never corrects
    # it; with it, ORCA does (and its LP is sometimes infeasible).
    free, safe = res["circle_ppo (no safety layer)"], res["circle_ppo"]
    assert free["intervention"]["mean"] == free["lp3_rate"]["mean"] == 0.0
    assert safe["intervention"]["mean"] > 0.0 and safe["lp3_rate"]["mean"] > 0.0
    assert "| circle_dense | standard | 16 (16) | 1 | circle_ppo (no safety layer) |" in \
        capsys.readouterr().out


@pytest.fixture(scope="module")
def metric_model(tmp_path_factory):
    """A policy trained (for one rollout) on circle_dense's own metric layout: 6 agents and no
    obstacle segments, so it can act in circle_dense but not in the doorway."""
    from orca_env.training.experiment import run_experiment
    folder = tmp_path_factory.mktemp("metric")
    cfg = {"env": {"config": "configs/circle_dense.yaml"}, "n_envs": 1, "n_timesteps": 256,
           "seed": 0, "hyperparams": {"n_steps": 16, "batch_size": 64, "n_epochs": 1},
           "policy_kwargs": {"net_arch": [8, 8]}}
    (folder / "metric.yaml").write_text(yaml.safe_dump(cfg))
    run_experiment(str(folder / "metric.yaml"), run_dir=str(folder / "run"), evaluate=False,
                   progress_bar=False)
    return str(folder / "run")


def test_a_policy_that_cannot_act_in_an_entry_fails_before_any_episode(tmp_path, capsys,
                                                                      metric_model,
                                                                      no_episodes):
    # The metric layout of circle_dense observes no obstacles; the doorway's has 4 segments.
    with pytest.raises(SystemExit) as exc:
        main(["bench", "--entries", "circle_dense,doorway", "--policy", metric_model,
              "--out", str(tmp_path), "--no-figure"])
    assert exc.value.code == 2
    err = _one_line_error(capsys)
    assert "entry 'doorway'" in err and "observation" in err
    assert not (tmp_path / "entries").exists()


# -- outputs and progress -----------------------------------------------------------------------
def test_progress_table_figure_and_markdown(tmp_path, capsys):
    assert main(["bench", *SMALL, "--policy", "orca", "--policy", "random",
                 "--out", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    err, out = captured.err, captured.out
    # Per entry, and per episode, on stderr.
    assert "[bench 1/2] circle_nojitter (deadlock, circle_v0, 16 agents" in err
    assert "[bench 2/2] doorway orca: success" in err
    assert "[bench 2/2 doorway random] 2/2 episodes" in err
    # The tables on stdout: one row per entry and policy, then one per entry and policy
    # compared with orca, then the social metrics per entry and policy.
    rows = [line for line in out.splitlines() if line.startswith("| ") and "---" not in line]
    assert len(rows) == 1 + 2 * 2 + 1 + 2 * 1 + 1 + 2 * 2
    # circle_nojitter has no humans (16 learned agents): its crowd terms are undefined.
    assert "| circle_nojitter | orca | - | - | - | - | " in out
    assert "Differences to `orca`, paired by seed" in out
    # The time to goal over orca's, paired by seed and agent: a column, and bench.json's
    # time_ratios per entry and policy (random's agents seldom arrive: "-" where none pair).
    assert "| entry | policy | success | collision | deadlock | timeout | time to goal, paired " \
           "ratio |" in out
    ratios = json.loads((tmp_path / "bench.json").read_text())["time_ratios"]
    assert {k: set(v) for k, v in ratios.items()} == {"circle_nojitter": {"random"},
                                                       "doorway": {"random"}}
    assert all(r["ci_method"] == "ratio_delta_t" for v in ratios.values() for r in v.values())
    # circle_nojitter gives the same episode for every seed: one episode, no interval.
    assert "| circle_nojitter | deadlock | 16 (16) | 1 (seed-independent) | orca | 0.00 | 0.00 | " \
           "1.00 | 0.00 |" in out
    assert (tmp_path / "bench.md").read_text() in out
    png = (tmp_path / "bench.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
    report = json.loads((tmp_path / "bench.json").read_text())
    fig = bench_figure(report)
    assert len(fig.axes) == len(HEADLINE)
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == [
        "circle_nojitter [deadlock]", "doorway [deadlock]"]
    # No temporary files left behind.
    assert not [f for f in os.listdir(tmp_path) if f.startswith(".")]


def test_list_and_quiet(tmp_path, capsys):
    assert main(["bench", "--list", "--tags", "crush"]) == 0
    out = capsys.readouterr().out
    assert "corridor_headon" in out and "intersection_dense" in out and "doorway" not in out
    assert "12200..12249" in out
    assert main(["bench", "--entries", "circle_nojitter", "--quick", "--quiet", "--no-figure",
                 "--out", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""
    entry = json.loads((tmp_path / "bench.json").read_text())["entries"][0]
    assert entry["episodes"] == 1 and entry["seed_independent"] is True  # one, whatever --quick


# -- suite files --------------------------------------------------------------------------------
def test_suite_overrides_relative_configs_and_defaults(tmp_path):
    (tmp_path / "mine.yaml").write_text("scenario: bottleneck_v0\nmax_steps: 40\n")
    path = _suite(tmp_path, """
seed: 15000
episodes: 1
set: {max_steps: 7}
entries:
  - {name: a, config: mine.yaml, tag: custom, seed_offset: 0, set: {groups.0.count: 2}}
  - {name: b, config: crowdnav_circle, tag: custom, seed_offset: 10, episodes: 2,
     set: {max_steps: 9, observation.range: 3.0}}
""")
    s = load_suite(path)
    assert s.name == "s" and [e.episodes for e in s.entries] == [1, 2]
    a, b = s.entries
    assert a.path == str(tmp_path / "mine.yaml")  # beside the suite file
    # A list item starts from the scenario's default groups, as eval --set does.
    assert a.overrides["max_steps"] == 7 and a.overrides["groups"][0]["count"] == 2
    assert a.overrides["groups"][1]["population"] == "orca"
    assert b.overrides == {"max_steps": 9, "observation": {"range": 3.0}}
    report = run_bench(s, ["orca"])
    info = {e["name"]: e for e in report["entries"]}
    assert info["a"]["num_learned"] == 2 and info["a"]["max_steps"] == 7
    assert info["b"]["max_steps"] == 9 and info["b"]["seeds"] == [15010, 15011]


@pytest.mark.parametrize("body, match", [
    ("seed: 11000\nentries: []\n", "entries must be a non-empty list"),
    ("entries: [{name: a, config: doorway, tag: x, seed_offset: 0, episodes: 1}]\n",
     "missing key 'seed'"),
    ("seed: 11000\nbogus: 1\nentries: []\n", "unknown key 'bogus'"),
    ("seed: 11000\nentries: [{name: a, config: doorway, tag: x, seed_offset: 0}]\n",
     "entry 'a': missing key 'episodes'"),
    ("seed: 11000\nentries: [{name: a, config: doorway, tag: x, seed_offset: 0, episodes: 0}]\n",
     "entry 'a': episodes must be an integer >= 1, got 0"),
    ("seed: 11000\nentries: [{name: a, config: doorway, tag: x, seed_offset: 0, "
     "episodes: true}]\n", "entry 'a': episodes must be an integer >= 1, got True"),
    ("seed: 11000\nentries: [{name: a, config: doorway, tag: Big, seed_offset: 0, "
     "episodes: 1}]\n", "entry 'a': tag must be a lower-case word"),
    ("seed: 11000\nentries: [{name: a/b, config: doorway, tag: x, seed_offset: 0, "
     "episodes: 1}]\n", "name must be letters, digits"),
    ("seed: 11000\nentries: [{name: a, config: nope, tag: x, seed_offset: 0, episodes: 1}]\n",
     "entry 'a': config: no config file 'nope'"),
    ("seed: 11000\nentries: [{name: a, config: doorway, tag: x, seed_offset: 0, episodes: 1, "
     "colour: red}]\n", "entry 'a': unknown key 'colour'"),
    ("seed: 11000\nentries:\n - {name: a, config: doorway, tag: x, seed_offset: 0, episodes: 1}"
     "\n - {name: a, config: doorway, tag: x, seed_offset: 5, episodes: 1}\n",
     "the name 'a' is used twice"),
    ("seed: 11000\nentries:\n - {name: a, config: doorway, tag: x, seed_offset: 0, episodes: 10}"
     "\n - {name: b, config: doorway, tag: x, seed_offset: 5, episodes: 1}\n",
     "entries 'a' and 'b' would share seeds"),
    ("seed: 19990\nentries: [{name: a, config: doorway, tag: x, seed_offset: 5, episodes: 10}]\n",
     "entry 'a' would use seeds 19995..20004, outside the evaluation seeds 10000..19999"),
    ("seed: 11000\nentries: [{name: a, config: doorway, tag: x, seed_offset: -1, episodes: 1}]\n",
     "seed_offset must be an integer >= 0"),
    # A billion episodes: refused by the range check, without building the seed list (issue 27).
    ("seed: 11000\nentries: [{name: a, config: doorway, tag: x, seed_offset: 0, "
     "episodes: 1000000000}]\n",
     "entry 'a' would use seeds 11000..1000010999, outside the evaluation seeds"),
    ("seed: 11000\nentries: [{name: a, config: doorway, tag: x, seed_offset: 0, episodes: 1, "
     "set: {groups.7.count: 2}}]\n",
     "entry 'a': set 'groups.7.count': 'groups' is a list of 2 items"),
    ("seed: 11000\nentries: [{name: a, config: doorway, tag: x, seed_offset: 0, episodes: 1}]\n"
     "entries: []\n", "key 'entries' appears twice"),
])
def test_suite_file_errors_name_the_entry_and_key(tmp_path, body, match):
    with pytest.raises(ValueError, match=match):
        load_suite(_suite(tmp_path, body))


def test_an_entry_whose_env_cannot_be_built_fails_before_any_episode(tmp_path, no_episodes):
    path = _suite(tmp_path, "seed: 11000\nentries:\n"
                  " - {name: ok, config: doorway, tag: x, seed_offset: 0, episodes: 1}\n"
                  " - {name: bad, config: doorway, tag: x, seed_offset: 10, episodes: 1,\n"
                  "    set: {scenario_kwargs.door_width: 50.0}}\n")
    with pytest.raises(ValueError, match=r"entry 'bad' \(config 'doorway'\): .*door_width"):
        run_bench(path, ["orca"], out_dir=tmp_path / "out")
    assert not (tmp_path / "out" / "entries").exists()


# -- the command line's errors ------------------------------------------------------------------
@pytest.mark.parametrize("argv, match", [
    (["nope"], "no config file 'nope' and no shipped suite config of that name; shipped: "
               "heldout, robots, standard"),
    (["--entries", "nope"], "--entries 'nope': no such entry in suite 'standard'; entries: "
                            "circle_dense, "),
    (["--tags", "nope"], "tags 'nope': no entry of suite 'standard' has this tag; tags: crush, "
                         "deadlock, standard"),
    (["--episodes", "101"], "--episodes 101: entries 'circle_dense' and 'crowdnav_circle' would "
                            "share seeds (from 11100): space their seed_offset further apart or "
                            "run fewer episodes (at most 100 per entry between the suite's seed "
                            "offsets)"),
    (["--policy", "orca", "--policy", "orca"], "policy 'orca' is given twice"),
    (["--policy", "runs/nope"], "policy 'runs/nope': no such model file or run folder"),
    (["--policy", "my run=runs/x"], "policy name 'my run' (for 'runs/x'): use letters"),
])
def test_bad_input_is_one_line_naming_the_argument(tmp_path, capsys, argv, match, no_episodes):
    with pytest.raises(SystemExit) as exc:
        main(["bench", *argv, "--out", str(tmp_path / "out")])
    assert exc.value.code == 2
    assert match in _one_line_error(capsys)


@pytest.mark.parametrize("argv, match", [
    (["--episodes", "0"], "argument --episodes: expected an integer >= 1, got '0'"),
    (["--quick", "--episodes", "3"], "not allowed with argument"),
    (["--entries", "a,,b"], "argument --entries: expected comma-separated names"),
])
def test_bad_options_are_argparse_errors(capsys, argv, match):
    with pytest.raises(SystemExit) as exc:
        main(["bench", *argv])
    assert exc.value.code == 2
    assert match in capsys.readouterr().err


def test_write_bench_and_markdown_without_running(tmp_path):
    """The summary files depend on the report only."""
    report = json.loads(json.dumps({
        "format": "orca-env-bench/1", "orca_env_version": "x",
        "suite": {"name": "t", "description": "", "seed": 11000},
        "policies": [{"label": "p", "policy": "p", "without_safety_layer": False}],
        "entries": [{"name": "e", "tag": "crush", "num_agents": 3, "num_learned": 1,
                     "episodes": 4}],
        "results": {"e": {"p": {m: {"mean": 0.25, "ci95_low": 0.1, "ci95_high": 0.4,
                                    "ci95": 0.15, "ci_method": "t_clipped", "n": 4}
                                for m in METRICS}}}}))
    paths = write_bench(report, tmp_path / "w", figure=False)
    assert paths["figure"] is None and not (tmp_path / "w" / "bench.png").exists()
    md = format_markdown(report)
    assert "| e | crush | 3 (1) | 4 | p | 0.25 [0.1, 0.4] | 0.25 [0.1, 0.4] | 0.25 [0.1, 0.4] " \
           "| 0.25 [0.1, 0.4] |" in md
    assert (tmp_path / "w" / "bench.md").read_text() == md
    # A label with a pipe (a folder may be called so) stays one cell.
    report["policies"][0]["label"] = "a|b"
    report["results"]["e"]["a|b"] = report["results"]["e"].pop("p")
    assert "| 4 | a\\|b | 0.25 [0.1, 0.4] |" in format_markdown(report)


# -- paired differences -------------------------------------------------------------------------
def test_paired_difference_pairs_episodes_by_seed():
    from orca_env.evaluation.metrics import paired_difference, t95

    ref = [{"seed": 1, "success_rate": 0.5}, {"seed": 2, "success_rate": 1.0},
           {"seed": 3, "success_rate": 0.0}, {"seed": 4, "success_rate": 0.25}]
    # Out of order, one seed the reference lacks, one undefined value.
    run = [{"seed": 3, "success_rate": 0.5}, {"seed": 1, "success_rate": 0.75},
           {"seed": 9, "success_rate": 1.0}, {"seed": 2, "success_rate": 1.0},
           {"seed": 4, "success_rate": None}]
    d = paired_difference(run, ref, ["success_rate"])["success_rate"]
    diffs = [0.5, 0.25, 0.0]
    mean = sum(diffs) / 3
    half = t95(2) * (sum((x - mean) ** 2 for x in diffs) / 2 / 3) ** 0.5
    assert d["n"] == 3 and d["mean"] == pytest.approx(0.25) and d["ci_method"] == "t_paired"
    assert d["ci95_low"] == pytest.approx(max(-1.0, mean - half))
    assert d["ci95_high"] == pytest.approx(min(1.0, mean + half))
    # Rates' differences stay in [-1, 1]; one pair has no interval, none has no mean.
    wide = paired_difference([{"seed": 1, "success_rate": 1.0}, {"seed": 2, "success_rate": 0.0}],
                             [{"seed": 1, "success_rate": 0.0}, {"seed": 2, "success_rate": 0.0}],
                             ["success_rate"])["success_rate"]
    assert wide["ci95_low"] == -1.0 and wide["ci95_high"] == 1.0
    one = paired_difference(run[:1], ref, ["success_rate"])["success_rate"]
    assert one["mean"] == 0.5 and one["ci95_low"] is None
    assert paired_difference([], ref, ["success_rate"])["success_rate"]["mean"] is None


def test_bench_reports_differences_to_orca(tmp_path):
    s = load_suite().select(["doorway"]).with_episodes(3)
    report = run_bench(s, ["random", "orca"], out_dir=tmp_path)
    assert report["reference"] == "orca"  # pure ORCA, though it is not the first policy
    assert set(report["differences"]["doorway"]) == {"random"}
    diff = report["differences"]["doorway"]["random"]
    assert set(diff) == set(HEADLINE)
    eps = {lab: json.loads((tmp_path / "entries" / "doorway" / lab / "metrics.json")
                           .read_text())["episodes"] for lab in ("random", "orca")}
    for m in HEADLINE:
        per_seed = [a[m] - b[m] for a, b in zip(eps["random"], eps["orca"], strict=True)]
        assert diff[m]["mean"] == pytest.approx(sum(per_seed) / 3) and diff[m]["n"] == 3
    # Without orca the first policy is the reference; a single policy has none.
    assert run_bench(s.with_episodes(1), ["random"])["reference"] is None
    no_safety = run_bench(s.with_episodes(2), [BenchPolicy("random"),
                                                BenchPolicy("orca", safety_layer=False)])
    assert no_safety["reference"] == "random"
    assert set(no_safety["differences"]["doorway"]) == {"orca (no safety layer)"}
