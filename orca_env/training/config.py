"""Training configs: the schema, its defaults, strict loading and validation.

A training config is YAML in rl-baselines3-zoo style; unknown keys are errors:

    backend:        sb3 (default: stable-baselines3) | rllib (Ray RLlib: the keys below as
                    orca_env.training.rllib.trainer reads them, plus num_env_runners)
    env:            env config (orca_env.config keys); ``config: <yaml>`` loads a base file
    algo:           ppo | sac
    n_envs:         env copies (VecEnv entries = n_envs * learned agents per copy)
    n_timesteps:    training budget in entry-steps
    seed:           the one seed of the run (torch, numpy, env copies seed + i)
    normalize:      false, true, or VecNormalize kwargs merged into the defaults
                    {norm_obs: true, norm_reward: false} (unknown keys are errors)
    hyperparams:    passed verbatim to the SB3 algorithm
    policy_kwargs:  (sb3) plain map of the policy network's keyword arguments, checked by
                    check_model_config: net_arch (layer sizes 1 .. 4096, at most 16 layers;
                    a list, or {pi, vf} for ppo and {pi, qf} for sac), activation_fn by name
                    (tanh, relu, elu, leaky_relu, gelu, silu), log_std_init and a few flags;
                    classes (optimizer_class, features_extractor_class) are refused;
                    extractor (mlp, deepsets, sarl) and extractor_kwargs select a crowd
                    network over the universal layout (check_extractor; either backend);
                    (rllib) RLlib DefaultModelConfig fields, checked alike: fcnet_hiddens and
                    head_fcnet_hiddens (as net_arch), their activations by name, layernorm
                    flags, free_log_std, log_std_clip_param, vf_share_layers (no initializers)
    torch_threads:  torch.set_num_threads (default: $ORCA_ENV_TORCH_THREADS if set, else 1;
                    see default_torch_threads)
    bootstrap:      (sb3) which truncated agent episodes PPO/SAC bootstrap from the value of the
                    last observation: truncated (default: the time limit and a deadlock end),
                    time_limit (a deadlock end is terminal), never (use with observation.time:
                    running out of time is then part of the task); see
                    orca_env.training.sb3.adapter
    stages:         (sb3) later phases of the run, a list of {from, learning_rate, weights}:
                    from that entry-step count on, a new learning rate and new weights of
                    env.mixture entries (by index or config name; the others keep theirs); see
                    stage_schedule
    checkpoint_freq: entry-steps between checkpoints
    init:           (sb3, optional) start from a trained model's policy weights: a shipped
                    policy's name (generalist_sarl), a run folder or a model .zip (relative to
                    the current folder, the repository root or the config's folder); its network,
                    observation and action spaces must be this config's; the optimizer, step
                    count and schedule start fresh (see resolve_init). Fine-tuning, not resuming:
                    ``--resume`` continues a run with its own config
    eval:           {n_episodes, video}: the final comparison (on the evaluation suite's
                    frozen seeds 10_000.., which training never uses)

A relative config path is looked up in the current folder first, then in the repository root
(for an editable install, the folder above the ``orca_env`` package), so the default config
``configs/train/circle_ppo.yaml`` is found from anywhere in a checkout.

Every key is checked here, the backends' own keys included (:func:`check_bootstrap`,
:func:`check_rllib_config`), without importing a training library. The keys that build a
model's network (``algo``, ``policy_kwargs``) are checked by :func:`check_model_config`, which
the model loader (:func:`orca_env.training.sb3.loader.load`) runs on a run folder's
``config.yaml`` too: one set of rules for a config that trains and one that is loaded (a
downloaded run folder is data; nothing in it reaches SB3 or torch unchecked).
"""

from __future__ import annotations

import copy
import math
import os
from typing import Any

from orca_env import mixture as _mixture  # noqa: F401  (registers the config's mixture parser)
from orca_env.config import _deep_merge, load_config, load_yaml
from orca_env.configs import resolve as resolve_shipped

__all__ = ["TrainConfigError", "DEFAULT_CONFIG", "REPO_ROOT", "DEFAULTS", "EVAL_KEYS",
           "DEPLOY_KEYS", "OPTIONAL_KEYS", "check_deploy",
           "NORMALIZE_DEFAULTS", "NORMALIZE_KEYS", "ALGOS", "ACTIVATIONS", "BACKENDS",
           "BACKEND_KEYS", "STAGE_KEYS", "BOOTSTRAP_MODES", "resolve_config_path", "resolve_init",
           "load_train_config", "config_backend", "check_bootstrap", "check_rllib_config",
           "stage_schedule", "normalizes_observations", "policy_kwargs_from_config",
           "check_model_config", "check_extractor", "extractor_arguments", "EXTRACTORS",
           "EXTRACTOR_DEFAULTS", "EXTRACTOR_NORMALIZE_REASON", "SB3_POLICY_KWARGS",
           "RLLIB_POLICY_KWARGS", "MAX_LAYER_WIDTH", "MAX_LAYERS",
           "THREADS_ENV", "default_torch_threads"]

#: The default training config (a dense symmetric circle crossing where pure ORCA jams).
DEFAULT_CONFIG = os.path.join("configs", "train", "circle_ppo.yaml")
#: The folder above the ``orca_env`` package: the repository root of an editable install.
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

#: Top-level keys of a training config and their defaults.
DEFAULTS: dict[str, Any] = {
    "backend": "sb3",
    "env": {},
    "algo": "ppo",
    "n_envs": 8,
    "n_timesteps": 1_000_000,
    "seed": 0,
    "normalize": {"norm_obs": True, "norm_reward": False},
    "hyperparams": {},
    "policy_kwargs": {},
    "torch_threads": "auto",  # $ORCA_ENV_TORCH_THREADS or 1: default_torch_threads
    "checkpoint_freq": 200_000,
    "eval": {"n_episodes": 20, "video": True},
}
EVAL_KEYS = {"n_episodes", "video"}
#: Env config keys a training config's optional ``deploy`` section may set: settings the
#: trained policy brings to every env it acts in (``orca-env eval``/``bench``, ``evaluate``)
#: although it was not trained with them, such as a safety margin chosen for its weights on
#: validation episodes. Training ignores the section.
DEPLOY_KEYS = ("learned_orca_padding",)
#: Top-level keys a training config may have without a default (not written when absent).
OPTIONAL_KEYS = ("deploy", "init")
#: The training engines a config may name: stable-baselines3 or Ray RLlib.
BACKENDS = ("sb3", "rllib")
#: Keys only a config of that backend has, and their defaults.
BACKEND_KEYS: dict[str, dict[str, Any]] = {"sb3": {"bootstrap": "truncated", "stages": []},
                                           "rllib": {"num_env_runners": 0}}
#: ``normalize: true`` means these VecNormalize arguments; a mapping is merged into them.
NORMALIZE_DEFAULTS = {"norm_obs": True, "norm_reward": False}
#: VecNormalize keyword arguments a ``normalize`` mapping may set.
NORMALIZE_KEYS = ("norm_obs", "norm_reward", "clip_obs", "clip_reward", "gamma", "epsilon")
#: The stable-baselines3 algorithms a config may name.
ALGOS = ("ppo", "sac")
ACTIVATIONS = ("tanh", "relu", "elu", "leaky_relu", "gelu", "silu")
#: The SB3 policy keyword arguments a config may set, per algorithm: plain data only (a class
#: such as ``optimizer_class`` cannot be named; ``use_sde`` is ``hyperparams.use_sde``).
SB3_POLICY_KWARGS = {
    "ppo": ("net_arch", "activation_fn", "log_std_init", "ortho_init", "full_std", "use_expln",
            "squash_output", "share_features_extractor", "normalize_images", "extractor",
            "extractor_kwargs"),
    "sac": ("net_arch", "activation_fn", "log_std_init", "use_expln", "clip_mean", "n_critics",
            "share_features_extractor", "normalize_images", "extractor", "extractor_kwargs"),
}
#: The networks ``policy_kwargs.extractor`` may name (both backends): ``mlp`` (the default:
#: the flat observation into the MLP), or the crowd networks of
#: :mod:`orca_env.training.networks` over the universal layout.
EXTRACTORS = ("mlp", "deepsets", "sarl")
#: ``policy_kwargs.extractor_kwargs`` of each crowd network and their defaults (layer sizes as
#: ``net_arch``'s; see :class:`orca_env.training.networks.CrowdEncoder`).
EXTRACTOR_DEFAULTS: dict[str, dict[str, Any]] = {
    "deepsets": {"embed": [64, 32], "segment": [32, 32], "pooling": "mean"},
    "sarl": {"embed": [64, 32], "attention": [32], "value": [32], "segment": [32, 32],
             "pooling": "mean", "global_state": True},
}
#: Why the crowd networks need raw observations (the message of the error, and the docs').
EXTRACTOR_NORMALIZE_REASON = (
    "the crowd networks read the present flags of the universal layout to mask padded slots, "
    "and VecNormalize would shift the flags and the padding's zeros; the universal layout is "
    "already scaled to about [-1, 1]")
#: The RLlib ``DefaultModelConfig`` fields a config's ``policy_kwargs`` may set (backend
#: rllib): plain data only (no initializer, which RLlib resolves by name or takes as a
#: callable; no LSTM or convolution, which the flat observations do not use).
RLLIB_POLICY_KWARGS = ("fcnet_hiddens", "fcnet_activation", "fcnet_use_layernorm",
                       "head_fcnet_hiddens", "head_fcnet_activation", "head_fcnet_use_layernorm",
                       "free_log_std", "log_std_clip_param", "vf_share_layers", "extractor",
                       "extractor_kwargs")
#: The activations RLlib's torch models take by name.
RLLIB_ACTIVATIONS = ("tanh", "relu", "elu", "silu", "swish", "linear")
#: The sub-networks a ``net_arch`` mapping may name, per algorithm.
_NET_ARCH_KEYS = {"ppo": ("pi", "vf"), "sac": ("pi", "qf")}
#: Bounds of ``policy_kwargs.net_arch``: the widest layer and the most layers of a sub-network.
#: 16 layers of 4096 units are about 270 M weights (1 GB of float32), beyond any policy here;
#: a larger request would only exhaust the memory.
MAX_LAYER_WIDTH = 4096
MAX_LAYERS = 16
#: Keys of one entry of ``stages``.
STAGE_KEYS = ("from", "learning_rate", "weights")
#: Which truncated agent episodes SB3 bootstraps from (:mod:`orca_env.training.sb3.adapter`):
#: all, only those the time limit ended (a deadlock end is terminal), none.
BOOTSTRAP_MODES = ("truncated", "time_limit", "never")


class TrainConfigError(ValueError):
    """A training config that training refuses: a missing file, an unknown key or a bad value.

    ``train.py`` prints it as one line (``train.py: error: ...``) and exits with status 2.
    """


def resolve_config_path(path: str | os.PathLike) -> str:
    """A config file's path: as given if it exists, else in the repo, else a shipped config.

    Args:
        path: The config path, or the name of a shipped training config (``"circle_ppo"``,
            see :mod:`orca_env.configs`).

    Returns:
        ``path`` if it names a file, else ``REPO_ROOT/path`` if that does, else the shipped
        config of that name.

    Raises:
        FileNotFoundError: If none exists.
    """
    path = os.fspath(path)
    if os.path.isfile(path):
        return path
    in_repo = os.path.join(REPO_ROOT, path)
    if not os.path.isabs(path) and os.path.isfile(in_repo):
        return in_repo
    try:
        return resolve_shipped(path, kind="train")
    except FileNotFoundError as exc:
        raise FileNotFoundError(f"no training config {path!r} (looked in the current folder, in "
                                f"{REPO_ROOT!r} and among the shipped ones): {exc}") from None



#: The environment variable that overrides the project's default of one torch thread.
THREADS_ENV = "ORCA_ENV_TORCH_THREADS"


def default_torch_threads() -> int:
    """The torch threads the project sets where no one chose: ``$ORCA_ENV_TORCH_THREADS`` or 1.

    One thread, as the env's kernels: the networks here are MLPs (2x64 to 2x256) on a few
    hundred rows at most, which gain nothing from a second thread, while a second thread on
    cores that the env, other env processes or other work share oversubscribes them
    (``benchmarks/bench_torch_threads.py``; docs/training.md gives the figures).

    Raises:
        ValueError: If the variable is set to anything but a positive integer (the message
            names it).
    """
    raw = os.environ.get(THREADS_ENV, "").strip()
    if not raw:
        return 1
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"{THREADS_ENV} must be a positive integer, got {raw!r}")
    return value


def load_train_config(path: str | os.PathLike | None = None, **overrides: Any) -> dict:
    """Read a training config strictly and fill in the defaults.

    Args:
        path: YAML file (default: :data:`DEFAULT_CONFIG`); a relative path is looked up as in
            :func:`resolve_config_path`.
        **overrides: Top-level keys replacing the file's values (``None`` values are ignored).

    Returns:
        The resolved config (a plain dict; ``env`` with a ``config`` base file merged in).

    Raises:
        FileNotFoundError: If the config file does not exist.
        TrainConfigError: On an unknown key or a bad value (the message names the key); a
            ``ValueError``.
    """
    try:
        return _load_train_config(path, **overrides)
    except TrainConfigError:
        raise
    except ValueError as exc:
        raise TrainConfigError(str(exc)) from exc


def _trained_dir() -> str:
    """The shipped policies' folder (``orca_env.policies``' ``trained/``), found without importing
    that package (it imports this module)."""
    import importlib.util  # noqa: PLC0415

    spec = importlib.util.find_spec("orca_env.policies")
    return os.path.join(list(spec.submodule_search_locations)[0], "trained")


def resolve_init(spec: Any, config_dir: str | None = None) -> str:
    """The model that a training config's ``init`` names: a run folder or a model ``.zip``.

    Args:
        spec: ``init``'s value: a path (tried relative to the current folder, the repository
            root and ``config_dir``), or a shipped policy's name (``generalist_sarl``).
        config_dir: The training config's folder.

    Raises:
        ValueError: If ``spec`` is not a non-empty string, or names no run folder, model file
            or shipped policy (the message lists the shipped ones).
    """
    if not isinstance(spec, str) or not spec:
        raise ValueError(f"training config key 'init' must be a shipped policy's name, a run "
                         f"folder or a model .zip, got {spec!r}")
    bases = [os.getcwd(), REPO_ROOT] + ([config_dir] if config_dir else [])
    for base in bases:
        cand = os.path.join(base, spec)
        for path in (cand, cand + ".zip"):
            if os.path.isdir(path) or (os.path.isfile(path) and path.endswith(".zip")):
                return os.path.abspath(path)
    trained = _trained_dir()
    shipped = sorted(n for n in os.listdir(trained)
                     if os.path.isfile(os.path.join(trained, n, "config.yaml"))) \
        if os.path.isdir(trained) else []
    if spec in shipped:
        return os.path.join(trained, spec)
    raise ValueError(f"training config key 'init': no run folder, model .zip or shipped policy "
                     f"{spec!r} (shipped: {', '.join(shipped) or 'none'})")


def _load_train_config(path: str | os.PathLike | None = None, **overrides: Any) -> dict:
    """:func:`load_train_config` without the wrapping of its errors."""
    path = resolve_config_path(path or DEFAULT_CONFIG)
    data = load_yaml(path) or {}
    if not isinstance(data, dict):
        raise ValueError(f"training config {path!r} must be a mapping")
    backend = overrides.get("backend") or data.get("backend", DEFAULTS["backend"])
    if backend not in BACKENDS:
        raise ValueError(f"training config key 'backend' must be one of {list(BACKENDS)}, got "
                         f"{backend!r}")
    extra = BACKEND_KEYS.get(backend, {})
    unknown = sorted(set(data) - set(DEFAULTS) - set(extra) - set(OPTIONAL_KEYS))
    if unknown:
        owner = [b for b, keys in BACKEND_KEYS.items() if unknown[0] in keys]
        if owner:
            raise ValueError(f"training config key {unknown[0]!r} is a key of backend "
                             f"{owner[0]}, but {path!r} has backend {backend!r}")
        raise ValueError(f"unknown training config key {unknown[0]!r} in {path!r}; valid keys: "
                         f"{sorted([*DEFAULTS, *extra, *OPTIONAL_KEYS])}")
    cfg = copy.deepcopy(DEFAULTS)
    cfg.update(copy.deepcopy(extra))
    cfg.update(copy.deepcopy(data))
    cfg.update({k: v for k, v in overrides.items() if v is not None})
    ev = dict(DEFAULTS["eval"])
    if not isinstance(cfg["eval"], dict) or set(cfg["eval"]) - EVAL_KEYS:
        raise ValueError(f"training config key 'eval' must be a mapping with keys "
                         f"{sorted(EVAL_KEYS)}, got {cfg['eval']!r}")
    ev.update(cfg["eval"])
    cfg["eval"] = ev
    env = cfg["env"]
    if not isinstance(env, dict):
        raise ValueError(f"training config key 'env' must be a mapping, got {env!r}")
    if "config" in env:  # a base env YAML, relative to the cwd, the repo root or the config file
        base_path = env["config"]
        for cand in (base_path, os.path.join(REPO_ROOT, base_path),
                     os.path.join(os.path.dirname(os.path.abspath(path)), base_path)):
            if os.path.isfile(cand):
                break
        else:
            try:  # a shipped env config, by name (or by its path in the repository)
                cand = resolve_shipped(base_path, kind="env")
            except FileNotFoundError:
                raise ValueError(f"training config key 'env.config': no file {base_path!r}"
                                 ) from None
        base = load_yaml(cand) or {}
        rest = {k: v for k, v in env.items() if k != "config"}
        cfg["env"] = _deep_merge(base, rest)
    load_config(cfg["env"])  # validates the env section (its errors name the key)
    if "deploy" in cfg:
        if cfg["deploy"] is None:  # `deploy:` with every key commented out: no section
            del cfg["deploy"]
        else:
            check_deploy(cfg["deploy"], cfg["env"])
    if "init" in cfg:
        if cfg["init"] is None:  # `init:` left empty: start from random weights
            del cfg["init"]
        elif backend != "sb3":
            raise ValueError(f"training config key 'init' (start from a trained model's "
                             f"weights) is a key of backend sb3, but {path!r} has backend "
                             f"{backend!r}")
        elif not isinstance(cfg["init"], str) or not cfg["init"]:
            raise ValueError(f"training config key 'init' must be a shipped policy's name, a "
                             f"run folder or a model .zip, got {cfg['init']!r}")
        # Found (resolve_init) when a fresh run is prepared, not here: a resumed run's saved
        # config names it too, and resuming does not need it.
    if cfg["torch_threads"] == "auto":  # not in the file: the user's variable, else 1
        cfg["torch_threads"] = default_torch_threads()
    for key in ("n_envs", "n_timesteps", "torch_threads", "checkpoint_freq"):
        count = _count(cfg[key])
        if count is None or count < 1:
            raise ValueError(f"training config key {key!r} must be a positive integer, "
                             f"got {cfg[key]!r}")
        cfg[key] = count
    if isinstance(cfg["seed"], bool) or not isinstance(cfg["seed"], int):
        raise ValueError(f"training config key 'seed' must be an integer, got {cfg['seed']!r}")
    check_model_config(cfg, backend)
    for key in _INT_HYPERPARAMS:  # 1.6e1 (a float to the loader) is the integer 16
        if (count := _count(cfg["hyperparams"].get(key))) is not None:
            cfg["hyperparams"][key] = count
    norm = cfg["normalize"]
    if not isinstance(norm, (bool, dict)):
        raise ValueError(f"training config key 'normalize' must be true, false or a mapping, "
                         f"got {norm!r}")
    if isinstance(norm, dict):
        unknown = sorted(set(norm) - set(NORMALIZE_KEYS))
        if unknown:
            raise ValueError(f"unknown key {unknown[0]!r} in training config key 'normalize'; "
                             f"valid keys: {list(NORMALIZE_KEYS)}")
        # Merged into the defaults: a partial mapping must not fall back to VecNormalize's own
        # defaults (norm_reward=True).
        cfg["normalize"] = {**NORMALIZE_DEFAULTS, **norm}
    elif norm:
        cfg["normalize"] = dict(NORMALIZE_DEFAULTS)
    ev = cfg["eval"]
    if isinstance(ev["n_episodes"], bool) or not isinstance(ev["n_episodes"], int) \
            or ev["n_episodes"] < 1:
        raise ValueError(f"training config key 'eval.n_episodes' must be a positive integer, "
                         f"got {ev['n_episodes']!r}")
    if not isinstance(ev["video"], bool):
        raise ValueError(f"training config key 'eval.video' must be true or false, "
                         f"got {ev['video']!r}")
    if backend == "sb3":
        check_bootstrap(cfg["bootstrap"], "training config key 'bootstrap'")
        stage_schedule(cfg)
    if backend == "rllib":
        check_rllib_config(cfg)
    return cfg


def check_deploy(deploy: Any, env: dict) -> None:
    """Check a training config's ``deploy`` section against its ``env`` section.

    Raises:
        ValueError: Naming the key, if ``deploy`` is not a mapping, sets a key outside
            :data:`DEPLOY_KEYS`, or gives a value the env config refuses.
    """
    if not isinstance(deploy, dict):
        raise ValueError(f"training config key 'deploy' must be a mapping of env config keys "
                         f"({list(DEPLOY_KEYS)}), got {deploy!r}")
    unknown = sorted(set(deploy) - set(DEPLOY_KEYS))
    if unknown:
        raise ValueError(f"unknown key {unknown[0]!r} in training config key 'deploy'; valid "
                         f"keys: {list(DEPLOY_KEYS)}")
    try:
        load_config({**env, **deploy})
    except ValueError as exc:
        raise ValueError(f"training config key 'deploy': {exc}") from None


def check_model_config(cfg: dict, backend: str = "sb3", where: str | None = None) -> None:
    """Check the keys of a training config that build the model: ``algo``, ``policy_kwargs``.

    The one set of rules for both a config that trains (:func:`load_train_config`) and a run
    folder's ``config.yaml`` that is loaded (:func:`orca_env.training.sb3.loader.load`), so a
    downloaded run cannot hand SB3 or torch an unknown algorithm, a class or function name
    (``activation_fn: torch.nn.Tanh``, ``optimizer_class: os.system``: nothing is imported or
    called by name), or layer sizes that are negative or would allocate gigabytes
    (``net_arch`` sizes 1 .. :data:`MAX_LAYER_WIDTH`, at most :data:`MAX_LAYERS` layers). All
    checks are on the plain data, before torch is imported.

    Args:
        cfg: The config (a mapping); ``algo`` defaults to ``ppo``, ``policy_kwargs`` and
            ``hyperparams`` to empty mappings.
        backend: ``sb3`` checks ``policy_kwargs`` as SB3's (:data:`SB3_POLICY_KWARGS`);
            ``rllib`` as RLlib's ``DefaultModelConfig`` fields (:data:`RLLIB_POLICY_KWARGS`:
            layer sizes as ``net_arch``'s, activations by name, flags, no initializers).
        where: The file to name in messages (``None``: none, as training's messages).

    Raises:
        ValueError: One line naming the key (and ``where``) and the value.
    """
    pre = f"{where}: " if where else ""

    def fail(msg: str) -> ValueError:
        return ValueError(pre + msg)

    algo = cfg.get("algo", DEFAULTS["algo"])
    if not isinstance(algo, str) or algo not in ALGOS:
        raise fail(f"training config key 'algo' must be ppo or sac, got {_short(algo)}")
    for key in ("hyperparams", "policy_kwargs"):
        if not isinstance(cfg.get(key, {}), dict):
            raise fail(f"training config key {key!r} must be a mapping, got "
                       f"{_short(cfg.get(key))}")
    if backend in ("sb3", "rllib"):
        check_extractor(cfg, fail)
    if backend == "rllib":
        _check_rllib_policy_kwargs(cfg.get("policy_kwargs", {}), fail)
        return
    if backend != "sb3":
        return
    pk = cfg.get("policy_kwargs", {})
    allowed = SB3_POLICY_KWARGS[algo]
    for key, value in pk.items():
        name = f"policy_kwargs.{key}"
        if key not in allowed:
            hint = (" (set hyperparams.use_sde)" if key == "use_sde" else
                    " (classes cannot be named in a config)" if str(key).endswith("_class")
                    else "")
            raise fail(f"training config key {name!r} is not a {algo} policy argument a "
                       f"config may set{hint}; valid: {list(allowed)}")
        if key in ("extractor", "extractor_kwargs"):
            continue  # check_extractor
        if key == "activation_fn":
            if not isinstance(value, str) or value not in ACTIVATIONS:
                raise fail(f"policy_kwargs.activation_fn must be one of {list(ACTIVATIONS)}, "
                           f"got {_short(value)}")
        elif key == "net_arch":
            _check_net_arch(value, algo, fail)
        elif key == "n_critics":
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 16:
                raise fail(f"training config key {name!r} must be an integer in 1 .. 16, got "
                           f"{_short(value)}")
        elif key in ("log_std_init", "clip_mean"):
            ok = isinstance(value, (int, float)) and not isinstance(value, bool) \
                and math.isfinite(value) and abs(value) <= 100 and (key != "clip_mean"
                                                                    or value > 0)
            if not ok:
                raise fail(f"training config key {name!r} must be a finite number"
                           f"{' > 0' if key == 'clip_mean' else ''} of at most 100 in size, "
                           f"got {_short(value)}")
        elif not isinstance(value, bool):
            raise fail(f"training config key {name!r} must be true or false, got "
                       f"{_short(value)}")


def check_extractor(cfg: dict, fail: Any = ValueError) -> None:
    """``policy_kwargs.extractor`` and ``extractor_kwargs`` of a config (either backend).

    A crowd network (``deepsets``, ``sarl``) needs the env's universal layout with K >= 1 (it
    splits the observation by it) and raw observations (``normalize: false`` or
    ``{norm_obs: false}``: :data:`EXTRACTOR_NORMALIZE_REASON`).

    Args:
        cfg: The training config (``policy_kwargs``, ``env``, ``normalize``).
        fail: Makes the exception of a message (check_model_config's prefixes the file).

    Raises:
        ValueError: One line naming the key and the value.
    """
    pk = cfg.get("policy_kwargs") or {}
    name = pk.get("extractor", "mlp")
    if not isinstance(name, str) or name not in EXTRACTORS:
        raise fail(f"training config key 'policy_kwargs.extractor' must be one of "
                   f"{list(EXTRACTORS)}, got {_short(name)}")
    kw = pk.get("extractor_kwargs", {})
    if not isinstance(kw, dict):
        raise fail(f"training config key 'policy_kwargs.extractor_kwargs' must be a mapping, "
                   f"got {_short(kw)}")
    if name == "mlp":
        if kw:
            raise fail(f"training config key 'policy_kwargs.extractor_kwargs' needs "
                       f"policy_kwargs.extractor deepsets or sarl, got extractor mlp and "
                       f"{_short(kw)}")
        return
    allowed = EXTRACTOR_DEFAULTS[name]
    for key, value in kw.items():
        where = f"policy_kwargs.extractor_kwargs.{key}"
        if key not in allowed:
            raise fail(f"training config key {where!r} is not a {name} setting; valid: "
                       f"{list(allowed)}")
        if isinstance(allowed[key], list):
            _check_layer_sizes(where, value, fail)
            if not value:
                raise fail(f"training config key {where!r} needs at least one layer, got []")
        elif key == "pooling":
            if value not in ("mean", "sum"):
                raise fail(f"training config key {where!r} must be mean or sum, got "
                           f"{_short(value)}")
        elif not isinstance(value, bool):
            raise fail(f"training config key {where!r} must be true or false, got "
                       f"{_short(value)}")
    from orca_env.config import universal_observation  # noqa: PLC0415

    env = cfg.get("env")
    layout = universal_observation(env if env is not None else {})
    if layout is None:
        raise fail(f"training config key 'policy_kwargs.extractor' {name} needs env "
                   f"observation.layout: universal (it splits the observation into own, "
                   f"neighbour and segment blocks by that layout), got layout metric")
    if layout["num_agents"] < 1:
        raise fail(f"training config key 'policy_kwargs.extractor' {name} needs env "
                   f"observation.num_agents >= 1, got {layout['num_agents']}")
    if normalizes_observations(cfg):
        raise fail(f"training config key 'normalize' must be false (or {{norm_obs: false}}) "
                   f"with policy_kwargs.extractor {name}: {EXTRACTOR_NORMALIZE_REASON}; got "
                   f"{_short(cfg.get('normalize', DEFAULTS['normalize']))}")


def extractor_arguments(pk: dict, env: Any) -> dict | None:
    """The :class:`~orca_env.training.networks.CrowdEncoder` arguments of checked policy_kwargs.

    Args:
        pk: ``policy_kwargs`` (checked by :func:`check_extractor`).
        env: The env config: K and M come from its universal layout.

    Returns:
        ``{kind, num_agents, num_obstacles, embed, ...}`` (defaults filled in), or ``None``
        for ``extractor: mlp`` (or none).
    """
    from orca_env.config import universal_observation  # noqa: PLC0415

    name = pk.get("extractor", "mlp")
    if name == "mlp":
        return None
    layout = universal_observation(env if env is not None else {})
    if layout is None:
        raise ValueError(f"policy_kwargs.extractor {name} needs env observation.layout: "
                         f"universal, got layout metric")
    out = {**copy.deepcopy(EXTRACTOR_DEFAULTS[name]), **copy.deepcopy(pk.get(
        "extractor_kwargs") or {})}
    if name == "deepsets":
        out.pop("global_state", None)
    return {"kind": name, "num_agents": int(layout["num_agents"]),
            "num_obstacles": int(layout["num_obstacles"]), **out}


def _check_layer_sizes(name: str, sizes: Any, fail: Any) -> None:
    """A list of at most :data:`MAX_LAYERS` integers in 1 .. :data:`MAX_LAYER_WIDTH`."""
    if not isinstance(sizes, list) or len(sizes) > MAX_LAYERS:
        raise fail(f"training config key {name!r} must be a list of at most {MAX_LAYERS} "
                   f"layer sizes, got {_short(sizes)}")
    for n in sizes:
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_LAYER_WIDTH:
            raise fail(f"training config key {name!r}: layer sizes must be integers in "
                       f"1 .. {MAX_LAYER_WIDTH}, got {_short(n)}")


def _check_rllib_policy_kwargs(pk: dict, fail: Any) -> None:
    """Backend rllib's ``policy_kwargs`` (RLlib's ``DefaultModelConfig``), as SB3's are checked."""
    for key, value in pk.items():
        name = f"policy_kwargs.{key}"
        if key in ("extractor", "extractor_kwargs"):
            continue  # check_extractor
        if key not in RLLIB_POLICY_KWARGS:
            hint = (" (initializers cannot be named in a config)" if "initializer" in str(key)
                    else "")
            raise fail(f"training config key {name!r} is not an RLlib model setting a config "
                       f"may set{hint}; valid: {list(RLLIB_POLICY_KWARGS)}")
        if key.endswith("_hiddens"):
            _check_layer_sizes(name, value, fail)
        elif key.endswith("_activation"):
            if not isinstance(value, str) or value not in RLLIB_ACTIVATIONS:
                raise fail(f"training config key {name!r} must be one of "
                           f"{list(RLLIB_ACTIVATIONS)}, got {_short(value)}")
        elif key == "log_std_clip_param":
            ok = isinstance(value, (int, float)) and not isinstance(value, bool) \
                and math.isfinite(value) and 0 < value <= 100
            if not ok:
                raise fail(f"training config key {name!r} must be a finite number in (0, 100], "
                           f"got {_short(value)}")
        elif not isinstance(value, bool):
            raise fail(f"training config key {name!r} must be true or false, got "
                       f"{_short(value)}")


def _check_net_arch(value: Any, algo: str, fail: Any) -> None:
    """``policy_kwargs.net_arch``: a list of layer sizes, or a mapping of sub-networks to one."""
    subs = _NET_ARCH_KEYS[algo]
    form = f"a list of layer sizes or a mapping {{{', '.join(f'{k}: [...]' for k in subs)}}}"
    if isinstance(value, dict):
        unknown = sorted(str(k) for k in set(value) - set(subs))
        if unknown:
            raise fail(f"training config key 'policy_kwargs.net_arch' must be {form}; "
                       f"{unknown[0]!r} is not a {algo} sub-network")
        lists = {f"policy_kwargs.net_arch.{k}": v for k, v in value.items()}
    elif isinstance(value, list):
        lists = {"policy_kwargs.net_arch": value}
    else:
        raise fail(f"training config key 'policy_kwargs.net_arch' must be {form}, got "
                   f"{_short(value)}")
    for name, sizes in lists.items():
        _check_layer_sizes(name, sizes, fail)


def _short(value: Any, limit: int = 80) -> str:
    """``repr(value)``, cut to ``limit`` characters (a message stays one short line)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def config_backend(path: str | os.PathLike | None) -> str:
    """The ``backend`` a training YAML names (``sb3`` when it names none or is not a mapping).

    Args:
        path: The YAML file, resolved as :func:`resolve_config_path` does (a config that cannot
            be found or read is ``sb3``'s: its loader reports it).
    """
    try:
        data = load_yaml(resolve_config_path(path or DEFAULT_CONFIG)) or {}
    except (FileNotFoundError, ValueError):
        return "sb3"
    return str(data.get("backend", "sb3")) if isinstance(data, dict) else "sb3"


def check_bootstrap(bootstrap: Any, name: str = "bootstrap") -> str:
    """``bootstrap`` if it is one of :data:`BOOTSTRAP_MODES`, else a ValueError naming ``name``."""
    if not isinstance(bootstrap, str) or bootstrap not in BOOTSTRAP_MODES:
        raise ValueError(f"{name} must be one of {list(BOOTSTRAP_MODES)}, got {bootstrap!r}")
    return bootstrap


def check_rllib_config(cfg: dict) -> None:
    """Validate the keys of a resolved config that matter to the RLlib backend.

    Raises:
        ValueError: Naming the key and its value.
    """
    n = cfg.get("num_env_runners")
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"training config key 'num_env_runners' must be an integer >= 0, "
                         f"got {n!r}")
    if cfg["algo"] != "ppo":
        raise ValueError(f"training config key 'algo' must be ppo with backend rllib, got "
                         f"{cfg['algo']!r}")
    if cfg["normalize"]:
        raise ValueError(f"training config key 'normalize' must be false with backend rllib "
                         f"(observation normalisation is not wired up for RLlib), got "
                         f"{cfg['normalize']!r}")


def normalizes_observations(config: dict) -> bool:
    """Whether a resolved training config normalised observations.

    ``normalize`` is ``false``, ``true`` (observations only) or VecNormalize keyword arguments,
    whose ``norm_obs`` defaults to true.
    """
    norm = config.get("normalize", False)
    if isinstance(norm, dict):
        return bool(norm.get("norm_obs", NORMALIZE_DEFAULTS["norm_obs"]))
    return bool(norm)


def policy_kwargs_from_config(pk: dict, env: Any = None) -> dict:
    """SB3 ``policy_kwargs`` from the plain map: ``activation_fn`` by name, no ``eval``.

    ``extractor: deepsets | sarl`` becomes SB3's ``features_extractor_class``
    (:class:`orca_env.training.sb3.extractor.CrowdExtractor`) and its kwargs
    (:func:`extractor_arguments`: K and M from ``env``, the env config).
    """
    import torch.nn as nn  # noqa: PLC0415  (torch loads only when a model is built)

    out = copy.deepcopy(pk)
    crowd = extractor_arguments(out, env)
    out.pop("extractor", None)
    out.pop("extractor_kwargs", None)
    if crowd is not None:
        from .sb3.extractor import CrowdExtractor  # noqa: PLC0415  (imports SB3)

        out["features_extractor_class"] = CrowdExtractor
        out["features_extractor_kwargs"] = crowd
    names = {"tanh": nn.Tanh, "relu": nn.ReLU, "elu": nn.ELU, "leaky_relu": nn.LeakyReLU,
             "gelu": nn.GELU, "silu": nn.SiLU}
    if "activation_fn" in out:
        out["activation_fn"] = names[out["activation_fn"]]
    return out


#: SB3 hyperparameters that are counts: an integral float (``1e6``) is taken as the integer.
_INT_HYPERPARAMS = ("n_steps", "batch_size", "n_epochs", "buffer_size", "learning_starts",
                    "train_freq", "gradient_steps", "target_update_interval",
                    "stats_window_size")


def _count(value: Any) -> int | None:
    """``value`` as an int: an int, or a float with an integer value; else ``None``.

    The config loader reads ``1e7`` and ``1.2e7`` as floats, and step counts are often written so.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer() and abs(value) < 2 ** 53:
        return int(value)
    return None


def _positive_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) \
        and math.isfinite(value) and value > 0


def stage_schedule(cfg: dict) -> list[dict]:
    """The resolved ``stages`` of a training config, validated.

    A stage starts at the first rollout (PPO; SAC: the first step) whose entry-step count is at
    least its ``from``, and holds until the next one's. It sets the optimiser's learning rate
    (``learning_rate``, a number > 0), the weights of the env's mixture entries (``weights``:
    ``{entry: weight}``, the entry by its index in ``env.mixture`` or by its ``config`` name
    when exactly one entry has it; a weight is > 0, so a tiny weight switches an entry all but
    off), or both. What a stage leaves out stays as the stage before set it (the config's own
    values before the first stage). The episodes under way finish as they were drawn (and SAC's
    replay buffer keeps its older samples). A resumed run starts in the stage of its step count.
    Everything before the first stage's ``from`` is the run without ``stages``, step for step.

    Returns:
        ``[{"from": int, "learning_rate": float or None, "weights": [one per entry] or None,
        "changes": {"learning_rate": float, "weights": {index: weight}}}]``, in order:
        ``learning_rate`` and ``weights`` are the values in force (``None`` where the config's
        own value holds; no ``weights`` without a mixture), ``changes`` what the stage itself
        sets.

    Raises:
        ValueError: On a bad stage (the message names the key and the value).
    """
    stages = cfg.get("stages", [])
    if not isinstance(stages, list):
        raise ValueError(f"training config key 'stages' must be a list, got {stages!r}")
    mixture = cfg["env"].get("mixture") if isinstance(cfg["env"], dict) else None
    weights = [e.get("weight", 1.0) for e in mixture] if isinstance(mixture, list) else None
    lr, staged, out, last = None, False, [], 0
    for i, st in enumerate(stages):
        where = f"stages[{i}]"
        if not isinstance(st, dict) or "from" not in st or set(st) - set(STAGE_KEYS) \
                or len(st) < 2:
            raise ValueError(f"training config key '{where}' must be a mapping with 'from' and "
                             f"at least one of 'learning_rate', 'weights', got {st!r}")
        start = _count(st["from"])
        if start is None or start <= last:
            raise ValueError(f"training config key '{where}.from' must be an integer entry-step "
                             f"count > {last}" + (" (the previous stage's)" if i else "")
                             + f", got {st['from']!r}")
        last = start
        key_ = f"training config key '{where}"
        changes: dict[str, Any] = {}
        if "learning_rate" in st:
            if not _positive_number(st["learning_rate"]):
                raise ValueError(f"{key_}.learning_rate' must be a finite number > 0, got "
                                 f"{st['learning_rate']!r}")
            lr = changes["learning_rate"] = float(st["learning_rate"])
        if "weights" in st:
            new = st["weights"]
            if weights is None:
                raise ValueError(f"{key_}.weights' needs an env with a 'mixture'; this "
                                 f"config's env has none")
            if not isinstance(new, dict) or not new:
                raise ValueError(f"{key_}.weights' must be a mapping {{entry: weight}}, got "
                                 f"{new!r}")
            weights, named = list(weights), {}
            for key, w in new.items():
                k = _mixture_entry(mixture, key, f"{key_}.weights'")
                if k in named:
                    raise ValueError(f"{key_}.weights' names mixture entry {k} twice "
                                     f"({named[k]!r} and {key!r})")
                named[k] = key
                if not _positive_number(w):
                    raise ValueError(f"{key_}.weights.{key}' must be a finite number > 0, "
                                     f"got {w!r}")
                weights[k] = float(w)
            changes["weights"] = {k: weights[k] for k in sorted(named)}
            staged = True
        out.append({"from": start, "learning_rate": lr,
                    "weights": [float(w) for w in weights] if staged else None,
                    "changes": changes})
    return out


def _mixture_entry(mixture: list, key: Any, where: str) -> int:
    """Index of the mixture entry ``key`` names: its index, or its unique ``config`` name."""
    if isinstance(key, int) and not isinstance(key, bool):
        if 0 <= key < len(mixture):
            return key
        raise ValueError(f"{where}: entry {key} is not an index of env.mixture "
                         f"(0..{len(mixture) - 1})")
    names = [e.get("config") if isinstance(e.get("config"), str) else None for e in mixture]
    hits = [k for k, n in enumerate(names) if n == key]
    if len(hits) == 1:
        return hits[0]
    known = sorted({n for n in names if n is not None and names.count(n) == 1})
    raise ValueError(f"{where}: {key!r} names {'several' if hits else 'no'} env.mixture "
                     f"entries; name one by its index (0..{len(mixture) - 1}) or by a config "
                     f"name that one entry has: {known}")
