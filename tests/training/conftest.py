"""Fixtures of the training tests: one tiny trained run, and a fresh copy of it per test."""

import shutil

import pytest
from tiny_training import tiny_config


@pytest.fixture(scope="session")
def trained(tmp_path_factory):
    """The tiny config trained once (512 steps, checkpoints every 128): read it, never change it."""
    pytest.importorskip("stable_baselines3")
    from orca_env.training.cli import EXIT_OK, main

    d = tmp_path_factory.mktemp("trained")
    assert main(["--config", str(tiny_config(d)), "--run-dir", str(d / "run"), "--no-eval",
                 "--no-progress"]) == EXIT_OK
    return d / "run"


@pytest.fixture
def run(trained, tmp_path):
    shutil.copytree(trained, tmp_path / "run")
    return tmp_path / "run"
