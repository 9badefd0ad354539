"""``--set KEY=VALUE`` overrides: list items by index (``groups.0.count=2``), errors naming the
key, plain keys unchanged, shipped config names."""

import json

import pytest
from eval_checks import BOTTLENECK

from orca_env.cli import main
from orca_env.evaluation import evaluate
from orca_env.evaluation.overrides import config_overrides, dotted_overrides, parse_set_items


def test_set_overrides_list_items(tmp_path, capsys):
    rep = evaluate(BOTTLENECK, "orca", episodes=1, overrides=dotted_overrides(
        parse_set_items(["groups.0.count=2", "groups.1.count=3"]),
        {"groups": [{"population": "learned", "count": 4, "on_goal": "stop"},
                    {"population": "orca", "count": 12, "on_goal": "stop"}]}))
    assert rep["env"]["num_learned"] == 2 and rep["env"]["num_agents"] == 5
    # Through the command line: the file's list, one item changed, the rest kept.
    assert main(["eval", BOTTLENECK, "--episodes", "1", "--quiet", "--print-hash",
                 "--set", "groups.0.count=2", "--set", "max_steps=5"]) == 0
    ref = evaluate(BOTTLENECK, "orca", episodes=1, overrides={"max_steps": 5, "groups": [
        {"name": "learners", "population": "learned", "count": 2, "on_goal": "stop"},
        {"name": "crowd", "population": "orca", "count": 12, "on_goal": "stop"}]})
    from orca_env.evaluation import report_hash

    assert capsys.readouterr().out.strip() == report_hash(ref)
    # A config without groups: the scenario's default groups are the list.
    cfg = tmp_path / "c.yaml"
    cfg.write_text("scenario: bottleneck_v0\nmax_steps: 5\n")
    assert main(["eval", str(cfg), "--episodes", "1", "--quiet", "--out", str(tmp_path / "o"),
                 "--set", "groups.0.count=1"]) == 0
    with open(tmp_path / "o" / "metrics.json", encoding="utf-8") as fh:
        assert json.load(fh)["env"]["num_learned"] == 1


@pytest.mark.parametrize("items, match", [
    (["groups.5.count=2"], "'groups' is a list of 2 items: expected an index 0 .. 1, got '5'"),
    (["groups.x.count=2"], "'groups' is a list of 2 items: expected an index 0 .. 1, got 'x'"),
    (["groups.-1.count=2"], "'groups' is a list of 2 items: expected an index 0 .. 1, got '-1'"),
    (["max_steps.x=1"], "'max_steps' was set to 100 in the config, so it has no key 'x'"),
    (["groups.0.count.x=1"], "'groups.0.count' was set to 4 in the config"),
    (["a=1", "a.b=2"], "'a' was set to 1 by an earlier --set, so it has no key 'b'"),
])
def test_set_errors_name_the_key(items, match):
    base = {"max_steps": 100, "groups": [{"count": 4}, {"count": 12}]}
    with pytest.raises(ValueError, match="--set '.*': " + match.replace(".", r"\.")
                       .replace("(", r"\(").replace(")", r"\)")):
        dotted_overrides(parse_set_items(items), base)


def test_set_without_list_items_is_unchanged():
    assert dotted_overrides(parse_set_items(
        ["observation.range=6", "max_steps=5", "rewards.goal=2"])) == {
        "observation": {"range": 6}, "max_steps": 5, "rewards": {"goal": 2}}


def test_set_list_items_with_a_shipped_config_name():
    out = config_overrides("crowdnav_circle", parse_set_items(["groups.1.count=2",
                                                                "max_steps=1e2"]))
    assert out["groups"][1]["count"] == 2 and out["groups"][0]["population"] == "learned"
    assert out["max_steps"] == 100.0  # 1e2 is a number, as in config files


def test_eval_of_a_layout_that_cannot_be_placed_is_one_line(tmp_path, capsys):
    # A circle too small for its agents: the scenario's SpawnError, as a one-line error.
    from eval_checks import one_line_error

    with pytest.raises(SystemExit) as stop:
        main(["eval", "circle_dense", "--episodes", "1", "--quiet",
              "--set", "scenario_kwargs.circle_radius=0.5", "--set", "scenario_kwargs.jitter=0",
              "--out", str(tmp_path / "out")])
    assert stop.value.code == 2
    assert "circle_v0" in one_line_error(capsys, "eval")
    assert not (tmp_path / "out").exists()  # the rejected command leaves no empty --out
