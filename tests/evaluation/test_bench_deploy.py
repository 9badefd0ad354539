"""``orca-env bench``: each policy's safety margin (its deploy keys) in bench.md and bench.json,
and ``bench --set KEY=VALUE`` (:meth:`Suite.with_set`), applied to every entry as ``eval --set``
applies it, with eval's errors before any episode."""

import json
import shutil

import pytest
import yaml
from orca_env.policies import TRAINED_DIR

from orca_env.cli import main
from orca_env.evaluation import evaluate
from orca_env.evaluation.bench import format_markdown, load_suite, run_bench
from orca_env.evaluation.overrides import config_overrides, parse_set_items

pytest.importorskip("stable_baselines3")  # the shipped crowdnav robot is an SB3 model

#: Two cheap entries (one robot, five humans, 40 steps): the suite's set and an entry's set.
SUITE = """\
name: margins
seed: 18800
episodes: 2
set: {max_steps: 40}
entries:
  - {name: circle, config: crowdnav_circle_invisible, tag: standard, seed_offset: 0}
  - {name: square, config: crowdnav_square_invisible, tag: standard, seed_offset: 10,
     set: {learned_orca_padding: 0.05}}
"""
POLICIES = ["--policy", "orca", "--policy", "crowdnav", "--no-safety", "crowdnav"]


@pytest.fixture
def suite_file(tmp_path):
    path = tmp_path / "margins.yaml"
    path.write_text(SUITE)
    return str(path)


def _bench(suite_file, out, *extra):
    assert main(["bench", suite_file, *POLICIES, "--no-figure", "--quiet", "--out", str(out),
                 *extra]) == 0
    report = json.loads((out / "bench.json").read_text())
    return report, (out / "bench.md").read_text(), {p["label"]: p for p in report["policies"]}


def _run_config(out, entry, policy):
    with open(out / "entries" / entry / policy / "metrics.json", encoding="utf-8") as fh:
        return json.load(fh)


def test_each_policy_s_margin_and_its_source_are_in_bench_json_and_bench_md(suite_file,
                                                                             tmp_path):
    report, md, pols = _bench(suite_file, tmp_path / "a")
    assert report["extra_set"] == {}
    assert pols["crowdnav"]["deploy"]["learned_orca_padding"] == {
        "policy": 0.1, "entries": {"circle": {"value": 0.1, "source": "deploy"},
                                   "square": {"value": 0.05, "source": "entry set"}}}
    assert pols["orca"]["deploy"]["learned_orca_padding"] == {
        "policy": None, "entries": {"circle": {"value": None, "source": "none"},
                                    "square": {"value": 0.05, "source": "entry set"}}}
    # What the runs ran with (their metrics.json) is what the report says.
    assert _run_config(tmp_path / "a", "circle", "crowdnav")["config"][
        "learned_orca_padding"] == 0.1
    assert _run_config(tmp_path / "a", "square", "crowdnav")["config"][
        "learned_orca_padding"] == 0.05
    assert _run_config(tmp_path / "a", "circle", "orca")["config"]["learned_orca_padding"] is None
    lines = md.splitlines()
    assert "- `orca`: none, on circle; 0.05 m, from the entry's set, on square" in lines
    assert ("- `crowdnav`: 0.1 m, from the policy's deploy section, on circle; 0.05 m, from the "
            "entry's set, on square (the policy brings 0.1 m)") in lines
    assert ("- `crowdnav (no safety layer)`: 0.1 m, from the policy's deploy section, on "
            "circle; 0.05 m, from the entry's set, on square (the policy brings 0.1 m) (no "
            "effect: it runs without the safety layer)") in lines
    assert "--set" not in md
    # The legend comes before the tables.
    legend = lines.index("- `orca`: none, on circle; 0.05 m, from the entry's set, on square")
    assert legend < lines.index(next(x for x in lines if x.startswith("| entry |")))


def test_bench_set_null_runs_the_policies_without_their_margin(suite_file, tmp_path):
    out = tmp_path / "b"
    report, md, pols = _bench(suite_file, out, "--set", "learned_orca_padding=null",
                              "--set", "max_steps=30")
    assert report["extra_set"] == {"learned_orca_padding": None, "max_steps": 30}
    for label in ("orca", "crowdnav", "crowdnav (no safety layer)"):
        entries = pols[label]["deploy"]["learned_orca_padding"]["entries"]
        assert entries == {name: {"value": None, "source": "--set"}
                           for name in ("circle", "square")}, label
    assert "Every entry ran with --set `learned_orca_padding=null`, `max_steps=30` (after the " \
           "suite's and the entry's own set)." in md
    assert "- `crowdnav`: none, from --set (the policy brings 0.1 m)" in md.splitlines()
    # The runs: without the margin (the entry's own 0.05 too), the suite's set overridden, and
    # exactly what eval gives with the same overrides.
    suite = load_suite(suite_file)
    for entry in suite.entries:
        run = _run_config(out, entry.name, "crowdnav")
        assert run["config"]["learned_orca_padding"] is None
        assert run["config"]["max_steps"] == 30
        same = evaluate(entry.path, "crowdnav", seeds=run["seeds"],
                        overrides={**entry.overrides, "learned_orca_padding": None,
                                   "max_steps": 30})
        assert run["episodes"] == same["episodes"]


def test_with_set_applies_the_items_as_eval_set_after_the_suite_s_set(suite_file):
    suite = load_suite(suite_file)
    items = ["learned_orca_padding=0.02", "groups.1.count=3", "max_steps=25"]
    out = suite.with_set(items)
    for before, after in zip(suite.entries, out.entries, strict=True):
        # eval --set's overrides, from the entry's own set on.
        assert after.overrides == config_overrides(
            before.path, [*before.set_items, *parse_set_items(items)])
        assert after.overrides["groups"][1]["count"] == 3 and after.overrides["max_steps"] == 25
        assert after.origins == {"max_steps": "--set", "learned_orca_padding": "--set",
                                 "groups": "--set"}
        assert after.set == before.set  # the suite's own set, as the suite writes it
    assert out.extra_set == {"learned_orca_padding": 0.02, "groups.1.count": 3, "max_steps": 25}
    assert suite.entries[1].origins == {"max_steps": "suite set",
                                        "learned_orca_padding": "entry set"}
    # A mapping of values is the same; applied twice, the items add up.
    mapping = suite.with_set({"learned_orca_padding": 0.02, "groups.1.count": 3,
                              "max_steps": 25})
    assert [e.overrides for e in mapping.entries] == [e.overrides for e in out.entries]
    assert mapping.extra_set == out.extra_set
    twice = suite.with_set(items[:1]).with_set(items[1:])
    assert [e.overrides for e in twice.entries] == [e.overrides for e in out.entries]
    assert suite.with_set([]) is suite
    # A key below one the suite's set gave a plain value: as eval's error, naming both layers.
    with pytest.raises(ValueError, match=r"^--set 'max_steps\.x=1': 'max_steps' was set to 40 "
                                         r"by an earlier set key or --set, so it has no key 'x' "
                                         r"\(suite 'margins', entry 'circle', config "):
        suite.with_set(["max_steps.x=1"])


@pytest.mark.parametrize("item, message", [
    ("learned_orca_padding=-1",
     "--set 'learned_orca_padding=-1': config key 'learned_orca_padding' must be >= 0.0, got "
     "-1.0"),
    ("learned_orca_padding=.nan",
     "--set 'learned_orca_padding=.nan': config key 'learned_orca_padding' must be finite, got "
     "nan"),
    ("learned_orca_padding=wide",
     "--set 'learned_orca_padding=wide': config key 'learned_orca_padding' must be a number, "
     "got 'wide' (str)"),
    ("bogus=1", "--set 'bogus=1': unknown config key 'bogus'; valid keys: ['action', "),
    ("groups.9.count=1", "--set 'groups.9.count=1': 'groups' is a list of 2 items: expected an "
                         "index 0 .. 1, got '9' (suite 'margins', entry 'circle', config "
                         "'crowdnav_circle_invisible')"),
    ("learned_orca_padding", "--set expects key=value, got 'learned_orca_padding'"),
    ("max_steps=[1", "--set 'max_steps=[1': the value is not valid YAML ('[1' is not a valid "
                     "YAML value: expected ',' or ']', but got '<stream end>' at character 3)"),
])
def test_a_bad_set_is_eval_s_one_line_error_before_any_episode(suite_file, tmp_path, capsys,
                                                               no_episodes, item, message):
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as stop:
        main(["bench", suite_file, "--policy", "orca", "--no-figure", "--out", str(out),
              "--set", item])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"orca-env bench: error: {message}"), err
    assert not out.exists()
    # eval says the same of the same --set (bench names the item first where eval does not).
    with pytest.raises(SystemExit) as stop:
        main(["eval", "crowdnav_circle_invisible", "--quiet", "--set", item])
    assert stop.value.code == 2
    said = capsys.readouterr().err.removeprefix("orca-env eval: error: ").strip()
    assert said in err


def test_bench_list_shows_the_set(suite_file, capsys):
    assert main(["bench", suite_file, "--list", "--set", "learned_orca_padding=null"]) == 0
    out = capsys.readouterr().out
    assert "--set (every entry, after its set): learned_orca_padding=null" in out


def test_a_report_from_before_the_deploy_keys_has_no_margin_lines(suite_file, tmp_path):
    report, md, _ = _bench(suite_file, tmp_path / "c", "--episodes", "1", "--set",
                           "max_steps=5")
    assert "`learned_orca_padding` of each policy" in md
    old = {k: v for k, v in report.items() if k != "extra_set"}
    old["policies"] = [{k: v for k, v in p.items() if k != "deploy"} for p in report["policies"]]
    text = format_markdown(old)
    assert "learned_orca_padding" not in text and "--set" not in text
    assert text.splitlines()[2].startswith("| entry |")


def test_a_margin_the_policy_was_trained_with_is_named_so(suite_file, tmp_path):
    run = tmp_path / "trained_with"
    shutil.copytree(f"{TRAINED_DIR}/crowdnav", run)
    cfg = yaml.safe_load((run / "config.yaml").read_text())
    del cfg["deploy"]
    cfg["env"]["learned_orca_padding"] = 0.07
    (run / "config.yaml").write_text(yaml.safe_dump(cfg))
    report = run_bench(load_suite(suite_file).select(["circle"]).with_episodes(1), [str(run)])
    (pol,) = report["policies"]
    assert pol["deploy"]["learned_orca_padding"] == {
        "policy": 0.07, "entries": {"circle": {"value": 0.07, "source": "training"}}}
    assert ("- `trained_with`: 0.07 m, from the env config the policy was trained with"
            in format_markdown(report).splitlines())
