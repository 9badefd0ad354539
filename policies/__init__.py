"""``orca_env.policies``: policies acting on observation dicts, ``policy(observations, env)``.

Every policy here is a callable taking the env's observation dict (``{agent: (obs_dim,)
float32}``) and the env itself (so scripted policies may read its public state) and returning an
action dict ``{agent: (2,) action}`` for exactly the live agents ``env.agents``, as
``env.step`` expects (agents that finished on the previous step get no action).

* :mod:`orca_env.policies.orca`: pure ORCA (goal-directed preferred velocity, seeded
  symmetry-breaking noise); with the safety layer this is exactly an ORCA crowd agent.
* :mod:`orca_env.policies.random`: uniform random actions (seeded).
* :mod:`orca_env.policies.sb3`: a trained stable-baselines3 model from a run folder or ``.zip``
  (the SB3 backend's loader, :mod:`orca_env.training.sb3.loader`).
* :mod:`orca_env.policies.rllib`: a policy trained with ``backend: rllib`` from its run folder
  (chosen by :func:`load_policy` and :func:`make_policy` when the folder holds
  ``rllib_module.npz``; the RLlib backend's loader, :mod:`orca_env.training.rllib.loader`).

``make_policy(name_or_path)`` builds one from a name (``orca``, ``random``, ``shipped``) or a
path; ``load_policy(model_path, env)`` is the default loader of :mod:`orca_env.evaluation`
(``--policy run/model.zip`` uses it). ``load_policy.env_settings(model_path)``
(:func:`env_settings`) gives the env config keys a model needs (its ``action`` mode and, for a
model trained with the universal layout, its observation settings), which evaluation applies to
the env so that the model runs on any config; ``load_policy.deploy_settings(model_path)``
(:func:`deploy_settings`) the part of them its run config's ``deploy`` section gives.
The shipped models live in ``trained/`` (package data).

The sources sit in the repository's top-level ``policies/`` folder, installed as
``orca_env.policies`` (see ``package-dir`` in ``pyproject.toml``). Importing this package is
light: torch, stable-baselines3 and ray load when a trained model is.
"""

from __future__ import annotations

import os
from typing import Any

from orca_env.config import load_yaml, policy_settings
from orca_env.training.config import check_deploy
from orca_env.training.run_folder import CONFIG_FILE, resolve_model

from .orca import OrcaPolicy
from .random import RandomPolicy
from .rllib import is_rllib_run
from .rllib import load as load_rllib
from .sb3 import load as load_sb3

__all__ = ["make_policy", "load_policy", "env_settings", "deploy_settings",
           "observation_settings", "TRAINED_DIR", "SHIPPED_MODEL"]

#: Folder of the shipped trained policies (``train.py --ship`` writes ``<name>/`` here).
TRAINED_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "trained")
#: The small trained policy shipped with the package (the default config's result).
SHIPPED_MODEL = os.path.join(TRAINED_DIR, "circle_ppo")


def make_policy(spec: str, **kwargs: Any):
    """A policy callable from ``"orca"``, ``"random"``, ``"shipped"`` or a model path.

    Args:
        spec: Policy name or path to a run folder / model ``.zip``.
        **kwargs: Passed to the policy's constructor (e.g. ``seed``, ``noise``,
            ``deterministic``).
    """
    if spec == "orca":
        return OrcaPolicy(**kwargs)
    if spec == "random":
        return RandomPolicy(**kwargs)
    if spec != "shipped" and is_rllib_run(spec):
        return load_rllib(spec, **kwargs)
    return load_sb3(SHIPPED_MODEL if spec == "shipped" else spec, **kwargs)


def load_policy(model_path: str, env: Any = None):
    """Loader for :mod:`orca_env.evaluation`: a trained SB3 model as a policy callable.

    Args:
        model_path: Run folder, ``model.zip`` or checkpoint.
        env: The evaluation env; when given, the model is checked against it (observation shape:
            ``ValueError``; different ``observation`` or ``groups`` config: ``UserWarning``).
    """
    if is_rllib_run(model_path):  # an RLlib run folder (or its rllib_module.npz)
        return load_rllib(model_path, env=env)
    return load_sb3(model_path, env=env)


def _run_config(model_path: str | os.PathLike) -> tuple[str, dict] | None:
    """The run's ``config.yaml`` path and mapping, or ``None`` when the run has none."""
    path = os.fspath(model_path)
    if is_rllib_run(path):
        run_dir = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
        cfg_path = os.path.join(run_dir, CONFIG_FILE)
        cfg_path = cfg_path if os.path.isfile(cfg_path) else None
    else:
        cfg_path = resolve_model(path)[1]
    if cfg_path is None:
        return None  # the loader itself says that config.yaml is missing
    config = load_yaml(cfg_path) or {}
    if not isinstance(config, dict):
        raise ValueError(f"{cfg_path}: a training config must be a mapping")
    return cfg_path, config


def env_settings(model_path: str | os.PathLike) -> dict | None:
    """The env config keys a model needs from any env it acts in.

    :func:`orca_env.config.policy_settings` of the env config the model was trained with:
    ``{"action": ...}`` (what its actions mean) plus ``"observation"`` for a model trained with
    ``observation.layout: universal`` (directly or in every entry of a ``mixture``), updated
    with the run config's ``deploy`` section (:data:`orca_env.training.config.DEPLOY_KEYS`:
    e.g. ``learned_orca_padding``, a safety margin chosen for the trained weights). Applied to
    any env config, they give it the model's observation space and action semantics, so
    :func:`orca_env.evaluation.evaluate` and ``orca-env bench`` apply them before they build the
    env (``orca-env eval CONFIG --policy RUN`` runs such a model on every config). ``None`` when
    the run has no readable env config (the loader reports that).

    Args:
        model_path: Run folder, ``model.zip``, checkpoint, or RLlib run folder.

    Raises:
        FileNotFoundError: If there is no model at ``model_path``.
        ValueError: If the run's ``config.yaml`` is not a mapping or its env config is invalid.
    """
    found = _run_config(model_path)
    if found is None:
        return None
    env = found[1].get("env")
    if not isinstance(env, dict):
        return None
    settings = policy_settings(env)
    settings.update(deploy_settings(model_path) or {})
    return settings


def deploy_settings(model_path: str | os.PathLike) -> dict | None:
    """The run config's ``deploy`` section, checked: the part of :func:`env_settings` it gives.

    ``orca-env bench`` reports with it where each policy's ``learned_orca_padding`` came from
    (the deploy section, or the env config the model was trained with). ``None`` when the run
    has no readable config or no ``deploy`` section.

    Raises:
        FileNotFoundError: If there is no model at ``model_path``.
        ValueError: Naming the run's ``config.yaml``, on a deploy section
            :func:`orca_env.training.config.check_deploy` refuses.
    """
    found = _run_config(model_path)
    if found is None:
        return None
    cfg_path, config = found
    env = config.get("env")
    if config.get("deploy") is None or not isinstance(env, dict):
        return None
    try:  # what the policy runs with beyond its training env
        check_deploy(config["deploy"], env)
    except ValueError as exc:
        raise ValueError(f"{cfg_path}: {exc}") from None
    return dict(config["deploy"])


def observation_settings(model_path: str | os.PathLike) -> dict | None:
    """The observation settings a model needs from any env, if it was trained with them.

    The ``observation`` part of :func:`env_settings`: for a model trained with
    ``observation.layout: universal`` (directly or in every entry of a ``mixture``) this is
    ``{"layout": "universal", "frame", "num_agents", "num_obstacles"}``
    (:func:`orca_env.config.universal_observation`); ``None`` for any other model (it runs on
    the configs whose observations match its own).

    Args:
        model_path: Run folder, ``model.zip``, checkpoint, or RLlib run folder.

    Raises:
        FileNotFoundError: If there is no model at ``model_path``.
        ValueError: If the run's ``config.yaml`` is not a mapping or its env config is invalid.
    """
    settings = env_settings(model_path)
    return None if settings is None else settings.get("observation")


load_policy.env_settings = env_settings
load_policy.observation_settings = observation_settings
load_policy.deploy_settings = deploy_settings
