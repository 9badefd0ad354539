"""Test-wide settings: headless pygame (no window, no audio, no banner)."""

import os

import pytest

# pygame must never open a window in tests (rendering is exercised headless).
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")


@pytest.fixture(scope="session")
def train_tiny():
    """``train(folder, env, **options) -> run folder``: a tiny PPO run through ``train.py``'s code.

    The run is ``folder / "run"`` (its config is written as ``folder / "tiny.yaml"``). Options:
    ``n_envs`` (2), ``n_timesteps`` (256), ``checkpoint_freq`` (n_timesteps), ``n_steps`` (32),
    ``batch_size`` (64), ``net_arch`` ([16], relu), ``evaluate`` (False: ``--no-eval``) and
    ``eval_episodes`` (2).
    """
    pytest.importorskip("stable_baselines3")
    import yaml

    from orca_env.training.cli import main

    def train(folder, env, *, n_envs=2, n_timesteps=256, checkpoint_freq=None, n_steps=32,
              batch_size=64, net_arch=(16,), evaluate=False, eval_episodes=2):
        cfg_path = folder / "tiny.yaml"
        cfg_path.write_text(yaml.safe_dump({
            "env": env, "n_envs": n_envs, "n_timesteps": n_timesteps, "seed": 0,
            "checkpoint_freq": checkpoint_freq or n_timesteps,
            "hyperparams": {"n_steps": n_steps, "batch_size": batch_size, "n_epochs": 1},
            "policy_kwargs": {"net_arch": list(net_arch), "activation_fn": "relu"},
            "eval": {"n_episodes": eval_episodes, "video": False}}))
        run_dir = folder / "run"
        main(["--config", str(cfg_path), "--run-dir", str(run_dir), "--no-progress"]
             + ([] if evaluate else ["--no-eval"]))
        return run_dir

    return train
