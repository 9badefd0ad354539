"""Load a trained stable-baselines3 model as a policy acting on observation dicts.

A run folder written by training (``train.py``, :mod:`orca_env.training`) holds ``model.zip``,
``config.yaml`` (the resolved training config: algorithm, network and env config) and, when
observations were normalised, ``vecnormalize.npz``; :mod:`orca_env.training.run_folder` defines
these names. Actions go to the env as the model outputs them (the env reads them in the
observation's frame, goal-aligned by default). :func:`load` accepts the folder, its
``model.zip`` or a checkpoint ``checkpoints/rl_model_<n>_steps.zip`` (whose
``rl_model_vecnormalize_<n>_steps.npz`` is used). When the saved config says observations were
normalised, a missing normaliser is an error (the model would otherwise act on raw observations
it never saw). Given the evaluation ``env``, :func:`load` checks that the model's observation
shape matches the env's and warns when the env's ``observation`` or ``groups`` differ from the
ones the model was trained with.

Loading unpickles nothing from the files (a pickle runs code when loaded): the network is
rebuilt from ``config.yaml`` (its ``algo`` and ``policy_kwargs`` checked first by the rules
training uses, :func:`orca_env.training.config.check_model_config`) and the env config's
spaces, its weights come from the zip's ``policy.pth`` through
``torch.load(weights_only=True)``, and the normaliser is an NPZ read without pickle
(:mod:`orca_env.training.model_files`). A legacy ``vecnormalize.pkl`` is refused;
:func:`convert_legacy_normalizer` converts one you trust.

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

import glob
import os
import warnings
from typing import Any

import numpy as np

from orca_env.config import load_config, load_yaml, policy_settings, universal_observation

from .. import model_files
from ..config import check_model_config, normalizes_observations
from ..run_folder import CHECKPOINT_DIR, model_label, resolve_model

__all__ = ["SB3Policy", "load", "check_env", "normalizes_observations",
           "convert_legacy_normalizer"]


def check_env(model: Any, config: dict, env: Any, model_path: str) -> None:
    """Check a loaded model against the env it is about to act in.

    Args:
        model: The SB3 model or policy (anything with an ``observation_space``).
        config: Its training config (``config["env"]`` is the env config; may be empty).
        env: The env (``OrcaEnv``) the policy will act in.
        model_path: The model's path, for the messages.

    Raises:
        ValueError: If the model's learned agents' kinematics, observation shape or ``action``
            mode differs from the env's.

    Warns:
        UserWarning: If the env's ``observation`` or ``groups`` config differs from the one the
            model was trained with (the observation layout or the agents' dynamics changed).
            A model trained with ``observation.layout: universal`` is made to run on any
            config: then only its layout settings (:func:`orca_env.config.universal_observation`)
            are compared.
    """
    saved = config.get("env")
    trained_kin = _learned_kinematics(saved)
    here_kin = env.world_config.learned_kinematics
    if trained_kin is not None and trained_kin != here_kin:
        # Checked first: a unicycle's and a differential drive's actions have the same shape
        # and mean different things; a holonomic model on a robot fails its shape check.
        raise ValueError(f"model {model_path!r} was trained with kinematics {trained_kin!r}, "
                         f"but the env's learned agents have {here_kin!r}: its actions would "
                         f"mean something else; evaluate it on a config with "
                         f"groups[i].kinematics: {trained_kin}")
    want = tuple(model.observation_space.shape)
    for agent in env.possible_agents:
        got = tuple(env.observation_space(agent).shape)
        if got != want:
            hint = "evaluate it on the env config it was trained with"
            try:
                trained_obs = universal_observation(saved) if isinstance(saved, dict) else None
            except ValueError:
                trained_obs = None
            if trained_obs is not None:
                hint = (f"it was trained with the universal layout: give the env the "
                        f"observation settings {trained_obs} (orca-env eval and evaluate() do "
                        f"so by themselves)")
            if here_kin != "holonomic":
                hint = (f"the env's learned agents are {here_kin} robots, which observe their "
                        f"heading too; {hint}")
            raise ValueError(f"model {model_path!r} expects observations of shape {want}, but "
                             f"the env's observation space of {agent!r} has shape {got}; {hint}")
    if not isinstance(saved, dict):
        return

    try:
        trained_cfg = load_config(saved)
        trained = trained_cfg.to_dict()
    except ValueError as exc:
        warnings.warn(f"model {model_path!r}: its saved env config is not valid any more "
                      f"({exc}); cannot compare it with the env's", UserWarning, stacklevel=3)
        return
    acts, acts_here = policy_settings(trained_cfg)["action"], policy_settings(env.config)["action"]
    if acts != acts_here:
        raise ValueError(f"model {model_path!r} was trained with action: {acts}, but the env "
                         f"has action: {acts_here}; its actions would mean something else: "
                         f"build the env with action: {acts} (orca-env eval, bench and "
                         f"evaluate() set it themselves unless the config or an override "
                         f"sets another)")
    universal = universal_observation(trained_cfg)
    if universal is not None:
        # Made to run on every config: only the settings that define the layout must agree.
        here = universal_observation(env.config)
        if here != universal:
            warnings.warn(f"model {model_path!r} was trained with the universal observation "
                          f"layout {universal!r}, but the env observes with {here!r}",
                          UserWarning, stacklevel=3)
        return
    current = env.config.to_dict()
    for key in ("observation", "groups"):
        if trained.get(key) != current.get(key):
            warnings.warn(f"model {model_path!r} was trained with env {key} "
                          f"{trained.get(key)!r}, but the env has {current.get(key)!r}",
                          UserWarning, stacklevel=3)


def _learned_kinematics(saved: Any) -> str | None:
    """The learned groups' motion model of a saved env config (None: unknown, e.g. a mixture)."""
    if not isinstance(saved, dict) or "mixture" in saved:
        return None
    groups = saved.get("groups")
    if not isinstance(groups, list):
        return "holonomic"  # the scenario's default groups are holonomic
    kins = {g.get("kinematics") or "holonomic" for g in groups
            if isinstance(g, dict) and (g.get("population") or "learned") == "learned"}
    return kins.pop() if len(kins) == 1 else None


class SB3Policy:
    """A trained SB3 model as ``policy(observations, env) -> actions``.

    Args:
        model: The SB3 policy network (``ActorCriticPolicy`` for PPO, ``SACPolicy`` for SAC) or
            model; anything with SB3's ``predict``.
        obs_rms: Optional ``(mean, var)`` of the observation normaliser used in training.
        clip_obs: Clip bound of normalised observations (VecNormalize's ``clip_obs``).
        epsilon: VecNormalize's ``epsilon``.
        deterministic: Act with the mean action (True, for evaluation) or sample.
        config: The resolved training config (``config["env"]`` is the env config).

    Attributes:
        env_config: The env config the model was trained on (``None`` if unknown).
        name: The policy's label in reports and video titles: :func:`load` sets the run's
            (:func:`orca_env.training.run_folder.model_label`), as eval and bench label it;
            ``"sb3"`` for a policy built otherwise.
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
         env: Any = None, torch_threads: int | str | None = "auto") -> SB3Policy:
    """Load a run folder, ``model.zip`` or checkpoint as an :class:`SB3Policy`, unpickling nothing.

    Args:
        path: Run folder, model ``.zip`` or checkpoint ``.zip``; its run folder must hold the
            run's ``config.yaml`` (the network is rebuilt from it).
        deterministic: Mean actions (evaluation) or sampled ones.
        device: torch device.
        env: The env the policy will act in; if given, the model is checked against it
            (:func:`check_env`).
        torch_threads: torch's intra-op threads for this process, set on load (default
            ``"auto"``: ``$ORCA_ENV_TORCH_THREADS`` if set, else 1, one thread per env process;
            an integer wins over the variable; ``None`` leaves torch's setting alone): see
            :func:`orca_env.training.model_files.set_torch_threads`.

    Raises:
        ImportError: If stable-baselines3 or torch is missing (the message names the extra).
        FileNotFoundError: If no model or no ``config.yaml`` is found, or the saved config says
            observations were normalised and the normaliser file is missing.
        ValueError: If the config's ``algo`` or ``policy_kwargs`` break training's rules
            (:func:`orca_env.training.config.check_model_config`: an unknown algorithm, a
            class or function by name, layer sizes out of bounds; one line naming the file
            and the key, checked before torch builds anything), the model file is not a
            readable model zip (or holds anything but plain tensors), the normaliser is a
            legacy pickle (refused; the message says how to convert it) or not a normaliser
            NPZ, or the model's observation shape differs from ``env``'s, or
            ``torch_threads`` is not a positive integer, ``"auto"`` or ``None``.
    """
    model_files.require_train_extra(f"loading the trained model {os.fspath(path)!r}")
    model_path, cfg_path, norm_path = resolve_model(path)
    model_files.set_inference_threads(torch_threads)
    if cfg_path is None:
        raise FileNotFoundError(f"model {model_path!r} has no config.yaml in its run folder: the "
                                f"network is rebuilt from the run's config (its model file is "
                                f"never unpickled)")
    config = load_yaml(cfg_path) or {}
    if not isinstance(config, dict):
        raise ValueError(f"{cfg_path}: a training config must be a mapping")
    # Training's own rules for the keys that build the network, before torch builds anything.
    check_model_config(config, "sb3", where=cfg_path)
    if not os.path.isfile(norm_path):
        legacy = model_files.legacy_path(norm_path)
        if os.path.isfile(legacy):
            raise model_files.LegacyPickleError(model_files.legacy_normalizer_message(legacy))
        if normalizes_observations(config):
            raise FileNotFoundError(f"{cfg_path} says observations were normalised, but the "
                                    f"normaliser {norm_path!r} is missing")
        norm_path = None
    stats = model_files.load_normalizer(norm_path) if norm_path is not None else None
    saved_env = config.get("env")
    if isinstance(saved_env, dict):
        obs_space, act_space = model_files.env_spaces(saved_env)
    elif env is not None:
        agent = env.possible_agents[0]
        obs_space, act_space = env.observation_space(agent), env.action_space(agent)
    else:
        raise ValueError(f"{cfg_path} has no env config: pass the env the model acts in")
    policy = model_files.build_policy(config, obs_space, act_space, device=device)
    if env is not None:
        check_env(policy, config, env, model_path)
    # The members may declare what this network's weights and optimizer state need, no more.
    model_files.load_policy_weights(policy, model_files.read_model_zip(
        model_path, device=device, max_member_bytes=model_files.model_member_cap(policy)))
    obs_rms, clip_obs, eps = None, 10.0, 1e-8
    if stats is not None:
        if stats["norm_obs"]:
            obs_rms = (stats["obs_mean"], stats["obs_var"])
        clip_obs, eps = stats["clip_obs"], stats["epsilon"]
    loaded = SB3Policy(policy, obs_rms=obs_rms, clip_obs=clip_obs, epsilon=eps,
                       deterministic=deterministic, config=config)
    loaded.name = model_label(path)  # as eval and bench label it: the run's, not "sb3"
    return loaded


def convert_legacy_normalizer(pkl: str | os.PathLike, out: str | os.PathLike | None = None
                              ) -> list[str]:
    """Convert a legacy pickled ``VecNormalize`` (``.pkl``) to the NPZ format. UNPICKLES IT.

    Loading a pickle runs any code in it: use this only on files you trust (ones you trained
    yourself). Loaders refuse ``.pkl`` normalisers for that reason and point here.

    Args:
        pkl: A legacy ``vecnormalize.pkl`` (or checkpoint ``*_vecnormalize_<n>_steps.pkl``), or
            a run folder: then its ``vecnormalize.pkl`` and every pickled normaliser in its
            ``checkpoints/`` are converted.
        out: The NPZ to write (default: ``pkl`` with ``.npz`` for ``.pkl``); only for a file.

    Returns:
        The NPZ files written. The pickles are left in place (delete them once converted).

    Raises:
        ValueError: If ``out`` is given with a folder, or the pickle is not a ``VecNormalize``.
        FileNotFoundError: If ``pkl`` does not exist.
    """
    import pickle  # noqa: PLC0415  (deliberate: this function exists to unpickle trusted files)

    from stable_baselines3.common.vec_env import VecNormalize  # noqa: PLC0415

    pkl = os.fspath(pkl)
    if os.path.isdir(pkl):
        if out is not None:
            raise ValueError(f"out={out!r}: a run folder {pkl!r} converts each normaliser beside "
                             f"itself; out is for one file")
        files = glob.glob(os.path.join(pkl, "vecnormalize.pkl")) + glob.glob(
            os.path.join(pkl, CHECKPOINT_DIR, "*_vecnormalize_*_steps.pkl"))
        return [p for f in sorted(files) for p in convert_legacy_normalizer(f)]
    if not os.path.isfile(pkl):
        raise FileNotFoundError(f"no legacy normaliser at {pkl!r}")
    dest = os.fspath(out) if out is not None else (
        pkl[: -len(".pkl")] + ".npz" if pkl.endswith(".pkl") else pkl + ".npz")
    with open(pkl, "rb") as fh:
        vn = pickle.load(fh)  # trusted input only (see the docstring)
    if not isinstance(vn, VecNormalize):
        raise ValueError(f"{pkl!r} holds a {type(vn).__name__}, not a VecNormalize")
    model_files.write_normalizer_stats(model_files.normalizer_stats(vn), dest)
    return [dest]
