"""Load a policy trained with the RLlib backend (``backend: rllib``) from its run folder.

An RLlib run folder (:mod:`orca_env.training.rllib.trainer`) holds ``config.yaml`` (the
resolved training config) and ``rllib_module.npz`` (the shared module's weights as plain
arrays), besides RLlib's own checkpoint ``rllib_checkpoint/``. :func:`load` rebuilds the
network from ``config.yaml`` (RLlib's PPO module class, the env config's spaces and
``policy_kwargs`` as RLlib's ``DefaultModelConfig``,
:func:`orca_env.training.rllib.algorithm.module_spec`) and fills in the weights from the NPZ.

What is trusted: the installed ray and orca-env packages (their code builds the network).
What is read from the run folder: ``config.yaml`` through the strict YAML loader
(``orca_env.config.load_yaml``: plain data) and ``rllib_module.npz`` through
:func:`orca_env.files.read_npz` (plain arrays, whose names and shapes must match the rebuilt
network's, checked from their headers before anything is inflated); ``policy_kwargs`` are
checked by training's own validator (:func:`orca_env.training.config.check_model_config`)
before RLlib builds anything. Nothing is unpickled: ``rllib_checkpoint/`` (RLlib's
``class_and_ctor_args.pkl`` and state pickles, which run code when loaded) is never opened
here; load it with RLlib's ``Algorithm.from_checkpoint`` only if you trust its author.

Actions are the mean of the Gaussian the module outputs (``deterministic=True``, for
evaluation) or samples from it drawn with ``numpy`` from ``seed``, clipped to the action box.
No Ray session is started.

Example::

    from orca_env.policies.rllib import load
    policy = load("runs/circle_rllib_s0_20260101-120000")
    env = orca_env.parallel_env(policy.env_config)
    obs, _ = env.reset(seed=123)
    while env.agents:
        obs, *_ = env.step(policy(obs, env))
"""

from __future__ import annotations

import os
import zipfile
from typing import Any

import numpy as np

from orca_env.config import load_yaml
from orca_env.files import ArchiveError, read_npz

from ..config import check_model_config
from ..model_files import set_inference_threads
from ..run_folder import CONFIG_FILE, RLLIB_WEIGHTS_FILE
from ..sb3.loader import check_env
from .algorithm import module_spec, require_ray

__all__ = ["RLlibPolicy", "is_rllib_run", "load"]


def is_rllib_run(path: str | os.PathLike) -> bool:
    """Whether ``path`` is an RLlib run folder (it holds ``rllib_module.npz``) or that file."""
    path = os.fspath(path)
    if os.path.isdir(path):
        return os.path.isfile(os.path.join(path, RLLIB_WEIGHTS_FILE))
    return os.path.basename(path) == RLLIB_WEIGHTS_FILE and os.path.isfile(path)


class RLlibPolicy:
    """An RLlib PPO module as ``policy(observations, env) -> actions``.

    Args:
        module: The torch ``RLModule`` (RLlib's default PPO module).
        config: The resolved training config (``config["env"]`` is the env config).
        deterministic: Act with the Gaussian's mean (True) or sample from it.
        seed: Seed of the sampling generator (used only when ``deterministic`` is False).

    Attributes:
        env_config: The env config the module was trained on.
    """

    name = "rllib"

    def __init__(self, module: Any, config: dict, deterministic: bool = True,
                 seed: int | None = 0) -> None:
        self.module = module
        self.config = config
        self.env_config = config.get("env")
        self.deterministic = deterministic
        self.rng = np.random.default_rng(seed)
        space = module.action_space
        self._low, self._high = space.low, space.high

    def act(self, obs: np.ndarray) -> np.ndarray:
        """Actions ``(k, 2)`` for observations ``(k, obs_dim)``."""
        import torch  # noqa: PLC0415

        with torch.no_grad():
            out = self.module.forward_inference(
                {"obs": torch.as_tensor(np.asarray(obs, dtype=np.float32))})
        logits = out["action_dist_inputs"].cpu().numpy().astype(np.float64)
        mean, log_std = np.split(logits, 2, axis=-1)  # RLlib's diagonal Gaussian inputs
        a = mean if self.deterministic else \
            mean + np.exp(log_std) * self.rng.standard_normal(mean.shape)
        return np.clip(a, self._low, self._high)

    def __call__(self, observations: dict, env: Any) -> dict:
        """Actions of the live agents (``env.agents``) from their observations."""
        agents = [k for k in env.agents if k in observations]
        if not agents:
            return {}
        a = self.act(np.stack([observations[k] for k in agents]))
        return {k: a[i].astype(np.float32) for i, k in enumerate(agents)}


def load(path: str | os.PathLike, deterministic: bool = True, env: Any = None,
         seed: int | None = 0, torch_threads: int | str | None = "auto") -> RLlibPolicy:
    """Load an RLlib run folder (or its ``rllib_module.npz``) as an :class:`RLlibPolicy`.

    Args:
        path: The run folder, or its ``rllib_module.npz``.
        deterministic: Mean actions (evaluation) or sampled ones.
        env: The env the policy will act in; if given, its observation shape is checked and
            differing ``observation``/``groups`` configs warn (as for SB3 models).
        seed: Seed of the action sampling (``deterministic=False`` only).
        torch_threads: torch's intra-op threads for this process, set on load (default
            ``"auto"``: ``$ORCA_ENV_TORCH_THREADS`` or 1; ``None`` leaves them), as
            :func:`orca_env.training.sb3.loader.load`.

    Raises:
        ImportError: If ray[rllib] or torch is missing (the message names the extra).
        FileNotFoundError: If the weights or ``config.yaml`` are missing.
        ValueError: If the config is not an RLlib one or breaks training's rules for the model
            (``algo``, ``policy_kwargs``: one line naming the file and the key), or the weights
            do not fit the network rebuilt from it (names, shapes, finite floats), or the
            env's observations do not fit, or
            ``torch_threads`` is not a positive integer, ``"auto"`` or ``None``.
    """
    path = os.fspath(path)
    run_dir = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
    weights = os.path.join(run_dir, RLLIB_WEIGHTS_FILE)
    cfg_path = os.path.join(run_dir, CONFIG_FILE)
    if not os.path.isfile(weights):
        raise FileNotFoundError(f"no RLlib weights at {weights!r} (expected a run folder "
                                f"trained with backend rllib)")
    if not os.path.isfile(cfg_path):
        raise FileNotFoundError(f"RLlib run {run_dir!r} has no {CONFIG_FILE}: the network is "
                                f"rebuilt from it")
    require_ray(f"loading the RLlib run {path!r}")
    config = load_yaml(cfg_path) or {}
    if not isinstance(config, dict) or config.get("backend") != "rllib":
        raise ValueError(f"{cfg_path}: not a config of backend rllib (backend "
                         f"{config.get('backend') if isinstance(config, dict) else None!r})")
    # Training's own rules for the keys that build the network, before RLlib builds anything.
    check_model_config(config, "rllib", where=cfg_path)
    if not isinstance(config.get("env"), dict):
        raise ValueError(f"{cfg_path}: training config key 'env' must be a mapping (the env "
                         f"config the module was trained on)")
    import torch  # noqa: PLC0415

    set_inference_threads(torch_threads)
    module = module_spec(config, inference_only=True).build()
    own = module.state_dict()
    # The rebuilt network says what each array is: names and shapes are checked from the
    # .npy headers before anything is inflated (a small file claiming gigabytes is refused
    # unread), and no member may be larger than the largest weight.
    shapes = {k: tuple(v.shape) for k, v in own.items()}
    cap = max([v.numel() * v.element_size() for v in own.values()] + [2**20])
    try:
        arrays = read_npz(weights, list(own), max_bytes=cap, shapes=shapes)
    except ArchiveError as exc:
        raise ValueError(f"{weights!r}: {exc} (the network rebuilt from {cfg_path})") from None
    except (OSError, EOFError, zipfile.BadZipFile) as exc:
        raise ValueError(f"{weights!r} is not a readable NPZ ({type(exc).__name__}: "
                         f"{exc})") from None
    missing = sorted(set(own) - set(arrays))
    if missing:
        raise ValueError(f"{weights!r} lacks the weights {missing[:3]} of the network rebuilt "
                         f"from {cfg_path}")
    for k in own:
        if arrays[k].dtype.kind != "f" or not np.isfinite(arrays[k]).all():
            raise ValueError(f"{weights!r}: weight {k!r} must hold finite floats, got "
                             f"dtype {arrays[k].dtype}")
    module.load_state_dict({k: torch.as_tensor(arrays[k], dtype=v.dtype)
                            for k, v in own.items()})
    module.eval()
    if env is not None:  # the same checks as for SB3 models
        check_env(module, config, env, weights)
    return RLlibPolicy(module, config, deterministic=deterministic, seed=seed)
