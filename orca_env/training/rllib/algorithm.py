"""The RLlib algorithm of a training config: its ``PPOConfig`` and the shared module's spec.

What the RLlib trainer (:mod:`orca_env.training.rllib.trainer`) trains and what the loader
(:mod:`orca_env.training.rllib.loader`) rebuilds a trained module from: both come from the run's
resolved config here, so that a loaded network is the network that was trained. Ray, RLlib and
torch are imported only when a function runs (``pip install 'orca-env[rllib]'``); so is the env
adapter, which imports ray.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

from ..config import extractor_arguments
from ..model_files import MissingExtraError, env_spaces

__all__ = ["RLLIB_EXTRA", "require_ray", "algorithm_config", "module_spec"]

#: What to install for this backend.
RLLIB_EXTRA = "pip install 'orca-env[rllib]'"


def require_ray(what: str) -> None:
    """Import ray, RLlib and torch, or raise a one-line :class:`MissingExtraError`.

    Also quiets Ray's harmless notices (:func:`orca_env.training.rllib.quiet.quiet_ray`).

    Args:
        what: What needs them, for the message (``"training with backend rllib"``).
    """
    try:
        import ray  # noqa: F401, PLC0415
        import ray.rllib  # noqa: F401, PLC0415
        import torch  # noqa: F401, PLC0415
    except ImportError as exc:
        raise MissingExtraError(f"{what} needs ray[rllib] and torch ({exc}); install the rllib "
                                f"extra: {RLLIB_EXTRA}") from exc
    from .quiet import quiet_ray  # noqa: PLC0415

    quiet_ray()  # Ray's harmless notices off stderr; its warnings and errors stay


def algorithm_config(cfg: dict) -> Any:
    """The ``PPOConfig`` of a resolved config (no Ray session needed to build it).

    Raises:
        ValueError: If RLlib rejects ``hyperparams`` or ``policy_kwargs`` (the message names
            them).
    """
    from ray.rllib.algorithms.ppo import PPOConfig  # noqa: PLC0415
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig  # noqa: PLC0415

    from .adapter import (  # noqa: PLC0415  (imports ray)
        SHARED_MODULE_ID,
        OrcaRLlibEnv,
        limit_torch_threads,
        shared_policy_mapping,
    )

    pk = dict(cfg["policy_kwargs"])
    crowd = extractor_arguments(pk, cfg["env"])
    pk.pop("extractor", None)
    pk.pop("extractor_kwargs", None)
    try:
        model = DefaultModelConfig(**pk)
    except TypeError as exc:
        raise ValueError(f"training config key 'policy_kwargs' {cfg['policy_kwargs']!r}: not "
                         f"RLlib DefaultModelConfig fields ({exc})") from exc
    rl_module: dict[str, Any] = {"model_config": model}
    if crowd is not None:  # a crowd network (orca_env.training.rllib.module)
        from ray.rllib.core.rl_module.rl_module import RLModuleSpec  # noqa: PLC0415

        from .module import CROWD_KEY, CrowdPPOModule  # noqa: PLC0415

        rl_module = {"model_config": {**dataclasses.asdict(model), CROWD_KEY: crowd},
                     "rl_module_spec": RLModuleSpec(module_class=CrowdPPOModule)}
    threads = cfg["torch_threads"]
    config = (
        PPOConfig()
        .environment(OrcaRLlibEnv, env_config={"env": cfg["env"], "seed": cfg["seed"],
                                               "envs_per_runner": cfg["n_envs"],
                                               "infos": "compact"})
        .env_runners(num_env_runners=cfg["num_env_runners"],
                     num_envs_per_env_runner=cfg["n_envs"], num_cpus_per_env_runner=1,
                     rollout_fragment_length="auto")
        .multi_agent(policies={SHARED_MODULE_ID}, policy_mapping_fn=shared_policy_mapping,
                     count_steps_by="agent_steps")
        .rl_module(**rl_module)
        .learners(num_learners=0)
        .debugging(seed=cfg["seed"], log_level="WARN")
        .reporting(log_gradients=False)
        .callbacks(on_environment_created=functools.partial(limit_torch_threads, threads))
    )
    try:
        config.training(**cfg["hyperparams"])
    except (TypeError, ValueError) as exc:
        raise ValueError(f"training config key 'hyperparams' {cfg['hyperparams']!r}: "
                         f"PPOConfig.training rejects it ({exc})") from exc
    return config


def module_spec(cfg: dict, inference_only: bool = True) -> Any:
    """The ``RLModuleSpec`` of the shared module a config trains (spaces from its env config)."""
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec  # noqa: PLC0415

    config = algorithm_config(cfg)
    obs_space, act_space = env_spaces(cfg["env"])
    module_class = config.rl_module_spec.module_class  # the default, or CrowdPPOModule
    return RLModuleSpec(module_class=module_class, observation_space=obs_space,
                        action_space=act_space, model_config=config.model_config,
                        inference_only=inference_only)
