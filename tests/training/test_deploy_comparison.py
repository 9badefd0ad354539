"""train.py's closing comparison runs the trained policy with its config's deploy settings (the
safety margin ``orca-env eval`` gives the saved policy), pure ORCA without them."""

import shutil

import pytest

pytest.importorskip("stable_baselines3")

from orca_env.training.comparison import compare  # noqa: E402
from orca_env.training.config import load_train_config  # noqa: E402


def test_the_trained_policy_runs_with_its_deploy_margin(trained, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(trained, run)
    cfg = load_train_config(str(run / "config.yaml"))
    cfg["deploy"] = {"learned_orca_padding": 0.07}
    cfg["eval"] = {"n_episodes": 1, "video": False}
    reports = compare(cfg, str(run), video=False)
    assert reports["trained+safety"]["config"]["learned_orca_padding"] == 0.07
    assert reports["pure ORCA"]["config"]["learned_orca_padding"] is None
