"""Load a trained stable-baselines3 model as a policy acting on observation dicts.

A run folder written by training (``train.py``, :mod:`orca_env.training`) holds ``model.zip``,
``config.yaml`` (the resolved training config: algorithm and env config) and, when observations
were normalised, ``vecnormalize.pkl``; :mod:`orca_env.training.run_folder` defines these names.
Actions go to the env as the model outputs them (the env reads them in the observation's frame,
goal-aligned by default). :func:`load` accepts the folder, its ``model.zip`` or a checkpoint
``checkpoints/rl_model_<n>_steps.zip`` (whose ``rl_model_vecnormalize_<n>_steps.pkl`` is used).
When the saved config says observations were normalised, a missing normaliser is an error (the
model would otherwise act on raw observations it never saw). Given the evaluation ``env``,
:func:`load` checks that the model's observation shape matches the env's and warns when the
env's ``observation`` or ``groups`` differ from the ones the model was trained with.

Example::

    import orca_env
    from orca_env.policies import SHIPPED_MODEL
    from orca_env.policies.sb3 import load
    policy = load(SHIPPED_MODEL)
    env = orca_env.parallel_env(policy.env_config)
    obs, _ = env.reset(seed=123)
    while env.agents:
        obs, *_ = env.step(policy(obs, env))
"""

from __future__ import annotations

import os
import pickle
import warnings
from typing import Any

import numpy as np
import yaml

from orca_env.training.config import normalizes_observations
from orca_env.training.run_folder import resolve_model

__all__ = ["SB3Policy", "load", "check_env", "normalizes_observations"]


def check_env(model: Any, config: dict, env: Any, model_path: str) -> None:
    """Check a loaded model against the env it is about to act in.

    Args:
        model: The SB3 model.
        config: Its training config (``config["env"]`` is the env config; may be empty).
        env: The env (``OrcaEnv``) the policy will act in.
        model_path: The model's path, for the messages.

    Raises:
        ValueError: If the model's observation shape differs from the env's.

    Warns:
        UserWarning: If the env's ``observation`` or ``groups`` config differs from the one the
            model was trained with (the observation layout or the agents' dynamics changed).
    """
    want = tuple(model.observation_space.shape)
    for agent in env.possible_agents:
        got = tuple(env.observation_space(agent).shape)
        if got != want:
            raise ValueError(f"model {model_path!r} expects observations of shape {want}, but "
                             f"the env's observation space of {agent!r} has shape {got}; "
                             f"evaluate it on the env config it was trained with")
    saved = config.get("env")
    if not isinstance(saved, dict):
        return
    from orca_env.config import load_config  # noqa: PLC0415

    try:
        trained = load_config(saved).to_dict()
    except ValueError as exc:
        warnings.warn(f"model {model_path!r}: its saved env config is not valid any more "
                      f"({exc}); cannot compare it with the env's", UserWarning, stacklevel=3)
        return
    current = env.config.to_dict()
    for key in ("observation", "groups"):
        if trained.get(key) != current.get(key):
            warnings.warn(f"model {model_path!r} was trained with env {key} "
                          f"{trained.get(key)!r}, but the env has {current.get(key)!r}",
                          UserWarning, stacklevel=3)


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


def load(path: str | os.PathLike, deterministic: bool = True, device: str = "cpu",
         env: Any = None) -> SB3Policy:
    """Load a run folder, ``model.zip`` or checkpoint as an :class:`SB3Policy`.

    Args:
        path: Run folder, model ``.zip`` or checkpoint ``.zip``.
        deterministic: Mean actions (evaluation) or sampled ones.
        device: torch device.
        env: The env the policy will act in; if given, the model is checked against it
            (:func:`check_env`).

    Raises:
        FileNotFoundError: If no model is found, or the saved config says observations were
            normalised and the normaliser file is missing.
        ValueError: If the config names an unknown algorithm, or the model's observation shape
            differs from ``env``'s.
    """
    model_path, cfg_path, norm_path = resolve_model(path)
    config: dict = {}
    if cfg_path is not None:
        with open(cfg_path, encoding="utf-8") as fh:
            config = yaml.safe_load(fh) or {}
    algo = str(config.get("algo", "ppo")).lower()
    from stable_baselines3 import PPO, SAC  # noqa: PLC0415

    algos = {"ppo": PPO, "sac": SAC}
    if algo not in algos:
        raise ValueError(f"unknown algo {algo!r} in {cfg_path}; known: {sorted(algos)}")
    if not os.path.isfile(norm_path):
        if normalizes_observations(config):
            raise FileNotFoundError(f"{cfg_path} says observations were normalised, but the "
                                    f"normaliser {norm_path!r} is missing")
        norm_path = None
    model = algos[algo].load(model_path, device=device)
    if env is not None:
        check_env(model, config, env, model_path)
    obs_rms, clip_obs, eps = None, 10.0, 1e-8
    if norm_path is not None:
        with open(norm_path, "rb") as fh:
            vn = pickle.load(fh)
        if getattr(vn, "norm_obs", False):
            obs_rms = (np.asarray(vn.obs_rms.mean), np.asarray(vn.obs_rms.var))
        clip_obs, eps = float(vn.clip_obs), float(vn.epsilon)
    return SB3Policy(model, obs_rms=obs_rms, clip_obs=clip_obs, epsilon=eps,
                     deterministic=deterministic, config=config)
