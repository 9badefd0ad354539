"""Fixtures of the evaluation tests: a short episode log, and a guard that no episode runs."""

import pytest
from eval_checks import CROWDNAV, SHORT

import orca_env.evaluation.suite as suite
from orca_env.evaluation import evaluate


@pytest.fixture(scope="session")
def log_path(tmp_path_factory):
    """An episode log of pure ORCA on crowdnav_circle, 8 steps (read it, never change it)."""
    out = tmp_path_factory.mktemp("eval")
    evaluate(CROWDNAV, "orca", episodes=1, out_dir=str(out), logs=1, overrides=SHORT)
    return str(out / "logs" / "episode_10000.npz")


@pytest.fixture
def no_episodes(monkeypatch):
    """Fail the test if an episode runs: checks must come before the work."""
    def run_episode(*args, **kwargs):
        raise AssertionError("an episode ran before the failing check")
    monkeypatch.setattr(suite, "run_episode", run_episode)
