"""Load a trained stable-baselines3 model as a policy acting on observation dicts.

A run folder written by ``train.py`` holds ``model.zip``, ``config.yaml`` (the resolved training
config: algorithm and env config) and, when observations were normalised, ``vecnormalize.pkl``.
Actions go to the env as the model outputs them (the env reads them in the observation's frame,
goal-aligned by default). :func:`load` accepts the folder, its ``model.zip`` or a checkpoint
``checkpoints/rl_model_<n>_steps.zip`` (whose ``rl_model_vecnormalize_<n>_steps.pkl`` is used).

Example::

    from policies.sb3 import load
    import orca_env
    policy = load("policies/trained/circle_ppo")
    env = orca_env.parallel_env(policy.env_config)
    obs, _ = env.reset(seed=123)
    while env.agents:
        obs, *_ = env.step(policy(obs, env))
"""

from __future__ import annotations

import os
import pickle
import re
from typing import Any

import numpy as np
import yaml

__all__ = ["SB3Policy", "load"]


def _resolve(path: str | os.PathLike) -> tuple[str, str | None, str | None]:
    """``(model_zip, config_yaml or None, vecnormalize_pkl or None)`` for a run path."""
    path = os.fspath(path)
    if os.path.isdir(path):
        model = os.path.join(path, "model.zip")
        run_dir = path
        norm = os.path.join(path, "vecnormalize.pkl")
    else:
        model = path if path.endswith(".zip") else path + ".zip"
        here = os.path.dirname(os.path.abspath(model))
        m = re.match(r"(.*)_(\d+)_steps\.zip$", os.path.basename(model))
        if m:  # a CheckpointCallback checkpoint inside <run>/checkpoints/
            norm = os.path.join(here, f"{m.group(1)}_vecnormalize_{m.group(2)}_steps.pkl")
            run_dir = os.path.dirname(here)
        else:
            norm = os.path.join(here, "vecnormalize.pkl")
            run_dir = here
    if not os.path.isfile(model):
        raise FileNotFoundError(f"no model at {model!r} (expected a run folder with model.zip "
                                f"or a .zip file)")
    cfg = os.path.join(run_dir, "config.yaml")
    return model, (cfg if os.path.isfile(cfg) else None), (norm if os.path.isfile(norm) else None)


class SB3Policy:
    """A trained SB3 model as ``policy(observations, env) -> actions``.

    Args:
        model: The SB3 model (``PPO`` or ``SAC``).
        obs_rms: Optional ``(mean, var)`` of the observation normaliser used in training.
        clip_obs: Clip bound of normalised observations (VecNormalize's ``clip_obs``).
        epsilon: VecNormalize's ``epsilon``.
        deterministic: Act with the mean action (True, for evaluation) or sample.
        config: The resolved training config (``config["env"]`` is the env config).

    Attributes:
        env_config: The env config the model was trained on (``None`` if unknown).
    """

    name = "sb3"

    def __init__(self, model: Any, obs_rms: tuple[np.ndarray, np.ndarray] | None = None,
                 clip_obs: float = 10.0, epsilon: float = 1e-8, deterministic: bool = True,
                 config: dict | None = None) -> None:
        self.model = model
        self.obs_rms = obs_rms
        self.clip_obs = clip_obs
        self.epsilon = epsilon
        self.deterministic = deterministic
        self.config = config or {}
        self.env_config = self.config.get("env")

    def normalize(self, obs: np.ndarray) -> np.ndarray:
        """Observations as the model saw them in training."""
        if self.obs_rms is None:
            return obs
        mean, var = self.obs_rms
        return np.clip((obs - mean) / np.sqrt(var + self.epsilon), -self.clip_obs,
                       self.clip_obs).astype(np.float32)

    def act(self, obs: np.ndarray) -> np.ndarray:
        """Model actions ``(k, 2)`` (clipped to the box) for observations ``(k, obs_dim)``."""
        actions, _ = self.model.predict(self.normalize(np.asarray(obs, dtype=np.float32)),
                                        deterministic=self.deterministic)
        return np.clip(np.asarray(actions, dtype=np.float64), -1.0, 1.0)

    def __call__(self, observations: dict, env: Any) -> dict:
        """Actions of the live agents (``env.agents``) from their observations."""
        agents = [k for k in env.agents if k in observations]  # only live agents act
        if not agents:
            return {}
        a = self.act(np.stack([observations[k] for k in agents]))
        return {k: a[i].astype(np.float32) for i, k in enumerate(agents)}


def load(path: str | os.PathLike, deterministic: bool = True, device: str = "cpu") -> SB3Policy:
    """Load a run folder, ``model.zip`` or checkpoint as an :class:`SB3Policy`.

    Args:
        path: Run folder, model ``.zip`` or checkpoint ``.zip``.
        deterministic: Mean actions (evaluation) or sampled ones.
        device: torch device.

    Raises:
        FileNotFoundError: If no model is found.
        ValueError: If the config names an unknown algorithm.
    """
    model_path, cfg_path, norm_path = _resolve(path)
    config: dict = {}
    if cfg_path is not None:
        with open(cfg_path, encoding="utf-8") as fh:
            config = yaml.safe_load(fh) or {}
    algo = str(config.get("algo", "ppo")).lower()
    from stable_baselines3 import PPO, SAC  # noqa: PLC0415

    algos = {"ppo": PPO, "sac": SAC}
    if algo not in algos:
        raise ValueError(f"unknown algo {algo!r} in {cfg_path}; known: {sorted(algos)}")
    model = algos[algo].load(model_path, device=device)
    obs_rms, clip_obs, eps = None, 10.0, 1e-8
    if norm_path is not None:
        with open(norm_path, "rb") as fh:
            vn = pickle.load(fh)
        if getattr(vn, "norm_obs", False):
            obs_rms = (np.asarray(vn.obs_rms.mean), np.asarray(vn.obs_rms.var))
        clip_obs, eps = float(vn.clip_obs), float(vn.epsilon)
    return SB3Policy(model, obs_rms=obs_rms, clip_obs=clip_obs, epsilon=eps,
                     deterministic=deterministic, config=config)
