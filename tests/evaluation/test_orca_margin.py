"""The ``orca_margin`` baseline: pure ORCA with the shipped generalists' safety margin.

It is the reference that separates what a learned policy adds from what its deploy margin
adds (issue 24: an evaluation that cannot fool us), so it must run exactly as ``orca`` with
``learned_orca_padding`` set to :data:`~orca_env.baselines.ORCA_MARGIN`, report its margin as
a deploy margin, and let ``--set`` override it as it overrides a trained policy's.
"""

import json
import warnings

import pytest
from orca_env.policies import TRAINED_DIR

import orca_env
from orca_env.baselines import ORCA_MARGIN, OrcaMarginPolicy
from orca_env.cli import main
from orca_env.evaluation import evaluate
from orca_env.evaluation.bench import decide_targets
from orca_env.evaluation.suite import (
    policy_deploy,
    policy_settings,
    resolve_policy,
    shipped_policies,
)

SUITE = """\
name: margin_baseline
seed: 18810
episodes: 2
set: {max_steps: 60}
entries:
  - {name: bottleneck, config: bottleneck, tag: standard, seed_offset: 0}
  - {name: headon, config: corridor_headon, tag: crush, seed_offset: 10,
     set: {learned_orca_padding: 0.05}}
"""


def test_its_settings_and_deploy_section_are_the_generalists_margin():
    assert ORCA_MARGIN == 0.1
    settings = policy_settings("orca_margin")
    assert settings == {"learned_orca_padding": ORCA_MARGIN}
    assert policy_deploy("orca_margin") == {"learned_orca_padding": ORCA_MARGIN}
    settings["learned_orca_padding"] = 3.0  # a caller's copy: the next call is unchanged
    assert policy_settings("orca_margin") == {"learned_orca_padding": ORCA_MARGIN}
    assert policy_settings("orca") is None and policy_deploy("orca") is None
    policy, label = resolve_policy("orca_margin")
    assert label == "orca_margin" and isinstance(policy, OrcaMarginPolicy)
    # Every shipped policy with a deploy margin deploys this one (what makes it their
    # reference), the four generalists among them.
    margins = {name: policy_deploy(f"{TRAINED_DIR}/{name}") for name in shipped_policies()}
    deployed = {name for name, d in margins.items() if d}
    assert {"generalist", "generalist_sarl", "generalist_sarl2",
            "generalist_residual"} <= deployed
    assert all(margins[name] == {"learned_orca_padding": ORCA_MARGIN} for name in deployed)


def test_it_runs_the_episodes_of_orca_with_the_margin_set():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the env has the margin: no warning
        margin = evaluate("bottleneck", "orca_margin", episodes=2)
    by_hand = evaluate("bottleneck", "orca", episodes=2,
                       overrides={"learned_orca_padding": ORCA_MARGIN})
    plain = evaluate("bottleneck", "orca", episodes=2)
    assert margin["config"]["learned_orca_padding"] == ORCA_MARGIN
    assert plain["config"]["learned_orca_padding"] is None
    assert margin["policy"] == "orca_margin"
    assert margin["episodes"] == by_hand["episodes"]
    assert margin["episodes"] != plain["episodes"]  # the margin changes the bottleneck
    # An explicit override wins, as over a trained policy's deploy section, and the policy
    # says once that these are pure ORCA's episodes with another margin.
    with pytest.warns(UserWarning, match=r"orca_margin: the env runs "
                                         r"learned_orca_padding=None, not the baseline's 0.1 m"):
        off = evaluate("bottleneck", "orca_margin", episodes=2,
                       overrides={"learned_orca_padding": None})
    assert off["config"]["learned_orca_padding"] is None and off["episodes"] == plain["episodes"]


def test_the_policy_in_an_env_built_by_hand_warns_without_the_margin():
    policy = OrcaMarginPolicy()
    for margin, warns in ((None, True), (ORCA_MARGIN, False)):
        env = orca_env.parallel_env("bottleneck", learned_orca_padding=margin).unwrapped
        obs, _ = env.reset(seed=0)
        policy = OrcaMarginPolicy()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for _ in range(3):  # once, not at every step
                obs, *_ = env.step(policy(obs, env))
        said = [w for w in caught if "orca_margin" in str(w.message)]
        assert len(said) == (1 if warns else 0), (margin, [str(w.message) for w in caught])


def test_bench_reports_its_margin_as_a_deploy_margin_and_pure_orca_stays_the_reference(tmp_path):
    suite = tmp_path / "suite.yaml"
    suite.write_text(SUITE)
    out = tmp_path / "bench"
    with pytest.warns(UserWarning, match="learned_orca_padding=0.05"):  # the headon entry's
        assert main(["bench", str(suite), "--policy", "orca_margin", "--policy", "orca",
                     "--no-figure", "--quiet", "--out", str(out)]) == 0
    report = json.loads((out / "bench.json").read_text())
    assert report["reference"] == "orca"
    pols = {p["label"]: p for p in report["policies"]}
    assert pols["orca_margin"]["deploy"]["learned_orca_padding"] == {
        "policy": ORCA_MARGIN,
        "entries": {"bottleneck": {"value": ORCA_MARGIN, "source": "built-in"},
                    "headon": {"value": 0.05, "source": "entry set"}}}
    md = (out / "bench.md").read_text().splitlines()
    assert ("- `orca_margin`: 0.1 m, from the built-in policy's own margin, on bottleneck; "
            "0.05 m, from the entry's set, on headon (the policy brings 0.1 m)") in md
    # Where the entry's set gives both the same margin, their episodes are the same.
    with open(out / "entries" / "headon" / "orca" / "metrics.json", encoding="utf-8") as fh:
        orca_headon = json.load(fh)
    with open(out / "entries" / "headon" / "orca_margin" / "metrics.json",
              encoding="utf-8") as fh:
        margin_headon = json.load(fh)
    assert orca_headon["episodes"] == margin_headon["episodes"]
    # orca_margin is compared with pure ORCA like any policy (time paired by seed and agent).
    assert set(report["time_ratios"]["bottleneck"]) == {"orca_margin"}


def test_the_targets_protocol_takes_it_as_the_reference(tmp_path):
    suite = tmp_path / "suite.yaml"
    suite.write_text(SUITE)
    with pytest.warns(UserWarning, match="learned_orca_padding=0.05"):
        report = decide_targets(str(suite), "orca", "orca_margin", looks=1)
    assert report["reference"] == "orca_margin"
    assert report["targets"]["reference"] == "orca_margin"
    assert set(report["targets"]["calls"]) == {"bottleneck", "headon"}
    pols = {p["label"]: p for p in report["policies"]}
    assert pols["orca_margin"]["deploy"]["learned_orca_padding"]["entries"]["bottleneck"] == {
        "value": ORCA_MARGIN, "source": "built-in"}
    # Pure ORCA against the margin: its own time over the margin's, paired by agent.
    assert set(report["time_ratios"]["bottleneck"]) == {"orca"}


@pytest.mark.parametrize("command", ["eval", "bench"])
def test_the_help_states_the_margin_it_runs(command, capsys):
    # The CLI does not import numpy to format it (test_cli: importing the CLI is light).
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert f"orca_margin (pure ORCA with the {ORCA_MARGIN:.2f} m" in text or \
        f"generalists' {ORCA_MARGIN:.2f} m safety margin" in text


@pytest.mark.parametrize("bad", ["orca-margin", "orca_margins"])
def test_a_near_miss_of_the_name_is_not_taken_for_it(bad):
    with pytest.raises(ValueError, match=bad):
        resolve_policy(bad)
