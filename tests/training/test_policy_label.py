"""One label per policy (issue 25 item 7, the training side): the comparison's reports, logs and
video title name the trained policy as eval and bench do (the run folder's name), not ``sb3``."""

import json
import shutil

import pytest

pytest.importorskip("stable_baselines3")

from orca_env.evaluation import load_log  # noqa: E402
from orca_env.evaluation.suite import model_label, resolve_policy  # noqa: E402
from orca_env.training.comparison import compare  # noqa: E402
from orca_env.training.config import load_train_config  # noqa: E402
from orca_env.training.sb3.loader import load  # noqa: E402


@pytest.fixture
def my_run(trained, tmp_path):
    shutil.copytree(trained, tmp_path / "my_run")
    return tmp_path / "my_run"


def test_the_loader_names_the_policy_as_eval_labels_it(my_run):
    assert load(str(my_run)).name == "my_run"
    assert load(str(my_run / "model.zip")).name == "my_run"
    ckpt = sorted((my_run / "checkpoints").glob("*.zip"))[-1]
    assert load(str(ckpt)).name == model_label(str(ckpt)) == ckpt.stem
    # eval --policy runs/my_run gives the same label.
    assert resolve_policy(str(my_run))[1] == "my_run"


def test_the_comparison_labels_the_trained_policy_by_its_run(my_run):
    cfg = load_train_config(str(my_run / "config.yaml"))
    cfg["eval"]["video"] = True  # the tiny config's is off
    reports = compare(cfg, str(my_run), video=True)
    assert reports["trained+safety"]["policy"] == "my_run"
    assert reports["trained, no safety"]["policy"] == "my_run"
    saved = json.loads((my_run / "eval" / "comparison.json").read_text())
    assert saved["trained+safety"]["policy"] == saved["trained, no safety"]["policy"] == "my_run"
    # The video is drawn from this log: its title is the video's title.
    log = load_log(my_run / "eval" / "trained_safety" / "logs" / "episode_10000.npz")
    assert log.meta["policy"] == "my_run"
    assert log.meta["title"].startswith("policy my_run   scenario ")
    assert "sb3" not in log.meta["title"]
    assert list((my_run / "eval" / "trained_safety" / "videos").glob("episode_10000.*"))


def test_another_loader_gets_the_run_label_in_the_comparison(my_run):
    # The RLlib backend passes its own loader; whatever it names its policy, the run's label
    # is the one in the reports.
    cfg = load_train_config(str(my_run / "config.yaml"))

    def loader(path):
        policy = load(path)
        policy.name = "rllib"
        return policy

    reports = compare(cfg, str(my_run), video=False, load=loader)
    assert reports["trained+safety"]["policy"] == "my_run"
