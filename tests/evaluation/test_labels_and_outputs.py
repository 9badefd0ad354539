"""Issue 25 item 7: one label per policy (eval, bench, video titles, logs), eval's list of the
files it wrote, its help, and ``--episodes 0`` refused by eval and bench."""

import json
import os
import shutil

import pytest
from eval_checks import CROWDNAV

from orca_env.cli import main
from orca_env.evaluation import evaluate
from orca_env.evaluation.bench import BenchPolicy
from orca_env.evaluation.episode_log import load_log
from orca_env.evaluation.suite import TRAINED_DIR, model_label

SHORT = ["--set", "max_steps=6"]


@pytest.fixture(scope="module")
def my_run(tmp_path_factory):
    """A copy of the shipped generalist as a run folder called ``my_run``."""
    run = tmp_path_factory.mktemp("runs") / "my_run"
    shutil.copytree(os.path.join(TRAINED_DIR, "generalist"), run)
    return run


def _eval(capsys, *argv):
    assert main(["eval", CROWDNAV, "--episodes", "2", *SHORT, *argv]) == 0
    return capsys.readouterr()


def test_model_label_is_the_run_folders_or_the_files_name(tmp_path, my_run):
    assert model_label(str(my_run)) == "my_run"
    assert model_label(str(my_run) + os.sep) == "my_run"
    assert model_label(str(my_run / "model.zip")) == "my_run"
    other = tmp_path / "best_policy.zip"
    shutil.copy(my_run / "model.zip", other)
    assert model_label(str(other)) == "best_policy"
    assert model_label(os.path.join(TRAINED_DIR, "generalist")) == "generalist"


@pytest.mark.parametrize("policy,label", [
    ("generalist", "generalist"),                      # a shipped policy by its name
    ("{run}", "my_run"),                               # a run folder
    ("{run}/model.zip", "my_run"),                     # a run's model file
    ("mine={run}", "mine"),                            # NAME=SPEC, as bench takes it
    ("orca_env.policies:load_policy", "my_run"),       # the default loader named, with --model
])
def test_eval_labels_a_policy_as_bench_does(policy, label, my_run, tmp_path, capsys):
    spec = policy.format(run=my_run)
    extra = ["--model", str(my_run)] if ":" in spec else []
    out = tmp_path / "out"
    res = _eval(capsys, "--policy", spec, *extra, "--out", str(out), "--logs", "1")
    assert res.out.startswith(f"policy {label}  scenario ")  # the table's header
    assert f"[eval {label}] 2/2 episodes" in res.err  # the progress line
    with open(out / "metrics.json", encoding="utf-8") as fh:
        assert json.load(fh)["policy"] == label
    meta = load_log(out / "logs" / "episode_10000.npz").meta
    assert meta["policy"] == label
    assert meta["title"].startswith(f"policy {label}   scenario ")  # the video's title
    if "=" not in spec and ":" not in spec:  # bench's label of the same --policy
        assert BenchPolicy.parse(spec).label == label
    assert "load_policy(" not in res.out + res.err


def test_eval_lists_every_file_it_wrote_under_its_folder(tmp_path, capsys):
    out = tmp_path / "out"
    res = _eval(capsys, "--out", str(out), "--logs", "all", "--trajectories", "1")
    listed = res.out[res.out.index(f"wrote into {out}{os.sep}:"):].splitlines()[1:]
    assert listed == ["  metrics.json", "  episodes.csv", "  trajectories.png",
                      "  logs/episode_10000.npz", "  logs/episode_10001.npz"]
    written = sorted(os.path.relpath(os.path.join(d, f), out)
                     for d, _, files in os.walk(out) for f in files)
    assert written == sorted(line.strip() for line in listed)


def test_eval_gives_many_logs_as_a_range(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["eval", CROWDNAV, "--episodes", "6", *SHORT, "--out", str(out),
                 "--logs", "all"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-3:] == ["  metrics.json", "  episodes.csv",
                          "  logs/episode_10000.npz .. logs/episode_10005.npz (6 logs)"]
    assert len(os.listdir(out / "logs")) == 6


def test_eval_without_out_says_nothing_was_written(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = _eval(capsys)
    assert res.out.splitlines()[-1].startswith("nothing written (pass --out DIR")
    assert os.listdir(tmp_path) == []


def test_eval_help_has_examples_and_says_where_results_go(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["eval", "--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    assert "examples:\n  orca-env eval circle_dense\n" in text
    assert "nothing is written without it" in text
    for name in ("metrics.json", "episodes.csv", "trajectories.png", "videos/", "logs/"):
        assert name in text
    assert "--policy [NAME=]SPEC" in text


@pytest.mark.parametrize("command", [["eval", CROWDNAV], ["bench", "--entries", "doorway"]])
@pytest.mark.parametrize("value", ["0", "-3"])
def test_episodes_below_one_is_an_error(command, value, capsys, no_episodes):
    with pytest.raises(SystemExit) as exc:
        main([*command, "--episodes", value])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.splitlines()[-1].endswith(
        f"error: argument --episodes: expected an integer >= 1, got '{value}'")


@pytest.mark.parametrize("kwargs,match", [
    ({"episodes": 0}, "episodes must be an integer >= 1, got 0"),
    ({"episodes": -2}, "episodes must be an integer >= 1, got -2"),
    ({"seeds": []}, "seeds: empty"),
])
def test_evaluate_refuses_no_episodes_before_any_work(kwargs, match, tmp_path, no_episodes):
    out = tmp_path / "out"
    with pytest.raises(ValueError, match=match):
        evaluate(CROWDNAV, "orca", out_dir=str(out), **kwargs)
    assert not out.exists()  # refused before the folder is made


@pytest.mark.parametrize("command", ["eval", "replay", "bench"])
def test_every_subcommands_help_has_examples(command, capsys):
    with pytest.raises(SystemExit) as exc:
        main([command, "--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    examples = text[text.index("examples:\n"):].splitlines()[1:]
    assert len(examples) >= 3 and all(e.startswith(f"  orca-env {command}") for e in examples)
