"""The training progress bar counts the steps that really run (issue 25 item 9: SB3's bar showed
``1,507,328/1,500,000``: PPO stops only between whole rollouts)."""

import re
from types import SimpleNamespace

import pytest
from tiny_training import tiny_config

pytest.importorskip("stable_baselines3")

from orca_env.training.sb3.trainer import steps_to_run  # noqa: E402


def test_steps_to_run_rounds_up_to_whole_rollouts():
    # The default config (configs/train/circle_ppo.yaml): 8 worlds x 16 agents, n_steps 64.
    ppo = SimpleNamespace(n_envs=128, n_steps=64)
    assert steps_to_run(ppo, 1_500_000) == (1_507_328, 8_192)  # issue 25's 1,507,328
    assert steps_to_run(ppo, 8_192) == (8_192, 8_192)
    assert steps_to_run(ppo, 1) == (8_192, 8_192)
    assert steps_to_run(ppo, 0) == (0, 1)
    from stable_baselines3.common.type_aliases import TrainFreq, TrainFrequencyUnit

    sac = SimpleNamespace(n_envs=6, train_freq=TrainFreq(4, TrainFrequencyUnit.STEP))
    assert steps_to_run(sac, 100) == (120, 24)
    # Rollouts of whole episodes: their length is unknown, the bound is a step of every row.
    by_episode = SimpleNamespace(n_envs=6, train_freq=TrainFreq(1, TrainFrequencyUnit.EPISODE))
    assert steps_to_run(by_episode, 100) == (102, 6)


@pytest.mark.filterwarnings("ignore::tqdm.TqdmExperimentalWarning")  # SB3 filters it at import
def test_the_bar_ends_at_its_total_and_says_why_it_is_not_n_timesteps(tmp_path, capfd,
                                                                      monkeypatch):
    from stable_baselines3.common import callbacks

    from orca_env.training.cli import EXIT_OK, main

    bars = []

    class Recording(callbacks.tqdm):
        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            bars.append(self)

    monkeypatch.setattr(callbacks, "tqdm", Recording)
    # 4 agents x 2 worlds x n_steps 32: rollouts of 256 entry-steps; 600 is 2.34 of them.
    cfg = tiny_config(tmp_path, n_timesteps=600)
    assert main(["--config", str(cfg), "--run-dir", str(tmp_path / "run"), "--no-eval"]) \
        == EXIT_OK
    out = capfd.readouterr().out
    assert "Training 768 entry-steps: 600 rounded up to whole rollouts of 256" in out
    assert len(bars) == 1
    assert bars[0].total == 768 and bars[0].n == 768
    assert not re.search(r"\b\d[\d,]*/600\b", out), "a count of n_timesteps, not of the steps run"
    stats = (tmp_path / "run" / "train_stats.json").read_text()
    assert '"timesteps": 768' in stats


def test_no_rounding_no_line_and_no_bar_without_progress(tmp_path, capfd, monkeypatch):
    from stable_baselines3.common import callbacks

    from orca_env.training.cli import EXIT_OK, main

    made = []
    monkeypatch.setattr(callbacks, "tqdm", lambda *a, **kw: made.append(kw))
    cfg = tiny_config(tmp_path, n_timesteps=512)  # two whole rollouts
    assert main(["--config", str(cfg), "--run-dir", str(tmp_path / "run"), "--no-eval",
                 "--no-progress"]) == EXIT_OK
    assert "rounded up" not in capfd.readouterr().out
    assert made == []
