"""Model, normaliser and replay-buffer files, read without unpickling anything from them.

A pickle runs code when it is loaded, so a run folder from someone else (or a tampered one) must
never be unpickled. SB3's own loaders unpickle: ``BaseAlgorithm.load`` the cloudpickled entries
of a model zip's ``data`` JSON (``lr_schedule``, ``policy_class``, the spaces, ...), and
``VecNormalize.load`` and ``load_replay_buffer`` whole pickle files. Here instead:

* A model ``.zip`` is opened with :mod:`zipfile`; its ``.pth`` members (weights, optimizer
  states, ``pytorch_variables``) go through ``torch.load(weights_only=True)``, which accepts
  tensors and plain containers only, and its ``data`` JSON is parsed as plain JSON (the
  ``:serialized:`` entries are left as strings and never decoded): only ``num_timesteps`` and
  ``_n_updates`` are read from it. The network is rebuilt from the run's own ``config.yaml``
  (algo, ``policy_kwargs``, ``hyperparams``, env config) and the env's spaces.
* The normaliser's statistics are an NPZ (:func:`save_normalizer`), read with
  ``allow_pickle=False``. Its keys (format version :data:`NORMALIZER_FORMAT`):
  ``format``, ``norm_obs``, ``norm_reward``, ``clip_obs``, ``clip_reward``, ``gamma``,
  ``epsilon``, ``ret_mean``, ``ret_var``, ``ret_count`` and, when ``norm_obs``, ``obs_mean``,
  ``obs_var``, ``obs_count`` (float64; the counts are scalars).
* An off-policy replay buffer is an NPZ of its arrays (:func:`save_replay_buffer`).

A legacy pickle (``vecnormalize.pkl``, ``replay_buffer.pkl``) is refused
(:class:`LegacyPickleError`); :func:`orca_env.policies.sb3.convert_legacy_normalizer` converts a
trusted normaliser.
"""

from __future__ import annotations

import inspect
import json
import math
import os
import zipfile
from typing import Any, NamedTuple

import numpy as np

from orca_env.environment import parallel_env
from orca_env.files import (
    MAX_MEMBER_BYTES,
    ArchiveError,
    atomic_path,
    check_zip_members,
    read_npz,
)

from .config import THREADS_ENV, default_torch_threads, policy_kwargs_from_config

__all__ = ["NORMALIZER_FORMAT", "REPLAY_BUFFER_FORMAT", "LegacyPickleError", "MissingExtraError",
           "ModelFile", "THREADS_ENV", "default_torch_threads", "resolve_torch_threads",
           "set_torch_threads", "set_inference_threads", "require_train_extra", "read_model_zip",
           "normalizer_stats",
           "write_normalizer_stats", "save_normalizer", "load_normalizer", "apply_normalizer",
           "save_replay_buffer", "load_replay_buffer", "env_spaces", "build_policy",
           "load_policy_weights", "check_hyperparams", "restore_parameters", "save_model",
           "check_checkpoint", "legacy_path", "legacy_normalizer_message",
           "MODEL_DATA_MAX_BYTES", "MODEL_MEMBER_MAX_BYTES", "model_member_cap"]

#: Version of the normaliser NPZ layout (its ``format`` entry).
NORMALIZER_FORMAT = 1
#: Version of the replay-buffer NPZ layout (its ``format`` entry).
REPLAY_BUFFER_FORMAT = 1
#: What to install when stable-baselines3 or torch is missing.
TRAIN_EXTRA = 'pip install "orca-env[train]"'
#: Normaliser NPZ entries: flags, scalars, and the statistics' arrays.
_NORM_FLAGS = ("norm_obs", "norm_reward")
_NORM_SCALARS = ("clip_obs", "clip_reward", "gamma", "epsilon")
#: Replay-buffer arrays stored in the NPZ (``next_observations`` unless memory-optimised).
_BUFFER_ARRAYS = ("observations", "next_observations", "actions", "rewards", "dones",
                  "timeouts", "valid")


class LegacyPickleError(ValueError):
    """A run file is a legacy pickle, which is refused: loading a pickle runs code."""


class MissingExtraError(ImportError):
    """stable-baselines3 or torch is not installed; the message says what to install."""


def require_train_extra(what: str) -> None:
    """Import stable-baselines3 and torch, or raise a one-line :class:`MissingExtraError`.

    Args:
        what: What needs them, for the message (``"training"``, ``"loading a trained model"``).

    Raises:
        MissingExtraError: If either import fails.
    """
    try:
        import stable_baselines3  # noqa: F401, PLC0415
        import torch  # noqa: F401, PLC0415
    except ImportError as exc:
        raise MissingExtraError(f"{what} needs stable-baselines3 and torch ({exc}); install the "
                                f"train extra: {TRAIN_EXTRA}") from exc


def resolve_torch_threads(threads: int | str | None) -> int | None:
    """``threads`` checked, with ``"auto"`` resolved to :func:`default_torch_threads`.

    Raises:
        ValueError: If ``threads`` is not ``"auto"``, ``None`` or a positive integer.
    """
    if threads == "auto":
        return default_torch_threads()
    if threads is None:
        return None
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"torch_threads must be a positive integer, 'auto' or None, "
                         f"got {threads!r}")
    return threads


def set_torch_threads(threads: int | str | None = "auto") -> int | None:
    """Set torch's intra-op threads for this process; return what was set (``None``: nothing).

    ``"auto"`` (the default wherever the project builds or loads a model): the value of
    ``$ORCA_ENV_TORCH_THREADS`` if set, else 1 (:func:`default_torch_threads`). An integer is
    the caller's explicit choice and wins over the variable; ``None`` leaves torch's setting
    alone (torch's own default: the physical cores, or ``OMP_NUM_THREADS``). Measured with
    ``benchmarks/bench_torch_threads.py``: for the shipped networks one thread is never
    slower than two, and much faster on a busy machine (docs/training.md).

    Raises:
        ValueError: If ``threads`` is not ``"auto"``, ``None`` or a positive integer, or the
            variable is malformed; nothing is changed then.
    """
    threads = resolve_torch_threads(threads)
    if threads is not None:
        import torch  # noqa: PLC0415

        torch.set_num_threads(threads)
    return threads


def set_inference_threads(threads: int | str | None = "auto") -> None:
    """Set torch's intra-op threads for a loaded policy's process: :func:`set_torch_threads`.

    Raises:
        ValueError: If ``threads`` is not ``"auto"``, ``None`` or a positive integer.
    """
    set_torch_threads(threads)


def _legacy_message(pkl: str, kind: str) -> str:
    return (f"refusing to load the legacy {kind} {pkl!r}: it is a pickle, and loading a pickle "
            f"runs any code in it. If you trust the file, convert it once with: python -c "
            f"\"from orca_env.policies.sb3 import convert_legacy_normalizer as c; "
            f"c('{pkl}')\" (it writes the .npz beside it)")


# -- model zips ---------------------------------------------------------------------------------
class ModelFile(NamedTuple):
    """The parts of an SB3 model zip read without unpickling.

    Attributes:
        path: The zip.
        data: The ``data`` JSON as plain JSON; cloudpickled entries stay undecoded dicts.
        params: ``{name: state_dict}`` of the ``.pth`` members (``policy``,
            ``policy.optimizer``, ...).
        variables: ``pytorch_variables.pth`` (SAC's ``log_ent_coef``), or ``{}``.
    """

    path: str
    data: dict
    params: dict
    variables: dict

    @property
    def num_timesteps(self) -> int:
        """The model's ``num_timesteps`` (a plain JSON integer)."""
        n = self.data.get("num_timesteps", 0)
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"model {self.path!r}: 'num_timesteps' in its data must be an "
                             f"integer >= 0, got {n!r}")
        return n


#: The cap on a model zip's ``data`` member (SB3's JSON: hyperparameters and serialised spaces).
MODEL_DATA_MAX_BYTES = 64 * 2**20
#: The cap on each ``.pth`` member of a model zip when the network is not known
#: (:data:`orca_env.files.MAX_MEMBER_BYTES`, 1 GiB: Adam's state of a network of about 130
#: million parameters); a loader that has built the network passes :func:`model_member_cap`.
MODEL_MEMBER_MAX_BYTES = MAX_MEMBER_BYTES


def model_member_cap(module: Any) -> int:
    """The most a model zip's ``.pth`` member may declare for the network ``module``.

    The largest member is an optimizer's state (Adam keeps two moments per parameter): twice
    the bytes of every parameter and buffer of ``module``, plus 16 MiB for torch's file format.
    """
    state = module.state_dict()
    return 2 * sum(int(t.numel()) * t.element_size() for t in state.values()) + 16 * 2**20


def read_model_zip(path: str | os.PathLike, device: str = "cpu",
                   max_member_bytes: int = MODEL_MEMBER_MAX_BYTES) -> ModelFile:
    """Read a model zip's JSON and weights; nothing in it is unpickled.

    Every member read is size-checked first (from the zip's directory, before anything is
    inflated): ``data`` against :data:`MODEL_DATA_MAX_BYTES`, each ``.pth`` against
    ``max_member_bytes``; so a small zip that would inflate to gigabytes is refused unread.

    Args:
        path: The model ``.zip``.
        device: Where the tensors go.
        max_member_bytes: The cap of each ``.pth`` member (:func:`model_member_cap` of the
            network the caller built, else :data:`MODEL_MEMBER_MAX_BYTES`).

    Raises:
        ValueError: If the file is not a readable model zip (truncated, not a zip, no
            ``policy.pth``, a ``.pth`` member that is not plain tensors, bad JSON), or a member
            it reads declares more than its cap (one line naming the file and the member).
    """
    import pickle  # noqa: PLC0415  (only for its exception class; nothing is unpickled)

    import torch  # noqa: PLC0415

    path = os.fspath(path)
    params: dict[str, Any] = {}
    variables: dict[str, Any] = {}
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            read = [n for n in names if n == "data" or n.endswith(".pth")]
            check_zip_members(archive, {n: MODEL_DATA_MAX_BYTES if n == "data"
                                        else max_member_bytes for n in read})
            data = json.loads(archive.read("data").decode("utf-8")) if "data" in names else {}
            for name in names:
                if not name.endswith(".pth"):
                    continue
                with archive.open(name) as fh:
                    obj = torch.load(fh, map_location=device, weights_only=True)
                if name in ("pytorch_variables.pth", "tensors.pth"):
                    variables = obj or {}
                else:
                    params[name[: -len(".pth")]] = obj
    except ArchiveError as exc:
        raise ValueError(f"model {path!r}: {exc}") from None
    except MemoryError:
        raise ValueError(f"model {path!r}: not enough memory to read it") from None
    except (OSError, EOFError, zipfile.BadZipFile, zipfile.LargeZipFile, RuntimeError,
            pickle.UnpicklingError, UnicodeDecodeError, json.JSONDecodeError,
            RecursionError) as exc:
        raise ValueError(f"model {path!r} is not a readable model zip "
                         f"({type(exc).__name__}: {str(exc)[:300]})") from exc
    if not isinstance(data, dict):
        raise ValueError(f"model {path!r}: its 'data' member is not a JSON object")
    if not isinstance(params.get("policy"), dict):
        raise ValueError(f"model {path!r} holds no policy weights (policy.pth)")
    if not isinstance(variables, dict):
        raise ValueError(f"model {path!r}: pytorch_variables.pth is not a mapping")
    return ModelFile(path, data, params, variables)


def save_model(model: Any, path: str | os.PathLike) -> None:
    """``model.save`` to a temporary name, renamed to ``path`` when complete."""
    with atomic_path(path) as tmp:
        model.save(tmp)


# -- the observation normaliser -----------------------------------------------------------------
def normalizer_stats(vn: Any) -> dict[str, np.ndarray]:
    """The statistics and settings of a ``VecNormalize`` (or an unpickled legacy one).

    Raises:
        ValueError: If it normalises dict observations (per-key statistics are not supported).
    """
    stats = {"format": np.array(NORMALIZER_FORMAT)}
    for key in _NORM_FLAGS:
        stats[key] = np.array(bool(getattr(vn, key)))
    for key in _NORM_SCALARS:
        stats[key] = np.array(float(getattr(vn, key)), dtype=np.float64)
    rms = {"ret": vn.ret_rms}
    if stats["norm_obs"]:
        if isinstance(vn.obs_rms, dict):
            raise ValueError("normalisers of dict observations are not supported")
        rms["obs"] = vn.obs_rms
    for name, r in rms.items():
        stats[f"{name}_mean"] = np.asarray(r.mean, dtype=np.float64)
        stats[f"{name}_var"] = np.asarray(r.var, dtype=np.float64)
        stats[f"{name}_count"] = np.array(float(r.count), dtype=np.float64)
    return stats


def write_normalizer_stats(stats: dict[str, np.ndarray], path: str | os.PathLike) -> None:
    """Write normaliser statistics (:func:`normalizer_stats`) to an NPZ, atomically."""
    with atomic_path(path, suffix=".npz") as tmp:
        np.savez(tmp, **stats)


def save_normalizer(venv: Any, path: str | os.PathLike) -> None:
    """Write a ``VecNormalize``'s statistics to the NPZ ``path`` (no pickle), atomically."""
    write_normalizer_stats(normalizer_stats(venv), path)



#: The largest member a normaliser NPZ may declare (its arrays are one observation long).
NORMALIZER_MAX_BYTES = 64 * 2**20


def _read_npz(path: str, what: str, fmt: int, legacy_message: str,
              max_bytes: int = MAX_MEMBER_BYTES,
              shapes: dict[str, tuple[int, ...]] | None = None) -> dict:
    """The arrays of one of our NPZ files (never a pickle), checked for its ``format`` number.

    Every member's declared size (and ``.npy`` header: shape times item size, and ``shapes``
    where given) is checked against ``max_bytes`` before it is read
    (:func:`orca_env.files.read_npz`), so a small file that inflates to gigabytes (a zip bomb)
    is refused without being unpacked.

    Raises:
        LegacyPickleError: If ``path`` is a ``.pkl`` (``legacy_message`` says why and how).
        ValueError: If the file is not a readable NPZ of format ``fmt``, declares a member over
            ``max_bytes`` or of another shape than ``shapes`` says, or holds a member that is
            not a ``.npy`` array; one line naming the file and the member.
    """
    if path.endswith(".pkl"):
        raise LegacyPickleError(legacy_message)
    try:
        raw = read_npz(path, max_bytes=max_bytes, shapes=shapes)
    except ArchiveError as exc:
        raise ValueError(f"{what} {path!r}: {exc}") from None
    except (OSError, EOFError, ValueError, zipfile.BadZipFile, MemoryError) as exc:
        raise ValueError(f"{what} {path!r} is not a readable NPZ "
                         f"({type(exc).__name__}: {exc})") from exc
    if raw.get("format", np.array(-1)).shape != () or int(raw["format"]) != fmt:
        raise ValueError(f"{what} {path!r}: 'format' must be {fmt}, got {raw.get('format')!r}")
    return raw


def load_normalizer(path: str | os.PathLike) -> dict[str, Any]:
    """Read a normaliser NPZ (``allow_pickle=False``).

    Returns:
        ``{"norm_obs", "norm_reward"}`` as bools, the scalars as floats, and ``obs_mean``,
        ``obs_var`` (float64 arrays), ``obs_count`` when ``norm_obs``, ``ret_*`` always.

    Raises:
        LegacyPickleError: If ``path`` is a ``.pkl`` (the message says how to convert it).
        ValueError: If the file is not a normaliser NPZ of this format.
    """
    path = os.fspath(path)
    raw = _read_npz(path, "normaliser", NORMALIZER_FORMAT, _legacy_message(path, "normaliser"),
                    max_bytes=NORMALIZER_MAX_BYTES)
    want = [*_NORM_FLAGS, *_NORM_SCALARS, "ret_mean", "ret_var", "ret_count"]
    if "norm_obs" in raw and bool(raw["norm_obs"]):
        want += ["obs_mean", "obs_var", "obs_count"]
    missing = [k for k in want if k not in raw]
    if missing:
        raise ValueError(f"normaliser {path!r} lacks {missing}")
    out: dict[str, Any] = {k: bool(raw[k]) for k in _NORM_FLAGS}
    out.update({k: float(raw[k]) for k in _NORM_SCALARS})
    for name in ("ret", "obs") if out["norm_obs"] else ("ret",):
        mean, var = raw[f"{name}_mean"], raw[f"{name}_var"]
        if mean.dtype.kind != "f" or var.dtype.kind != "f" or mean.shape != var.shape:
            raise ValueError(f"normaliser {path!r}: {name}_mean and {name}_var must be float "
                             f"arrays of one shape, got {mean.dtype}{mean.shape} and "
                             f"{var.dtype}{var.shape}")
        out[f"{name}_mean"] = mean.astype(np.float64)
        out[f"{name}_var"] = var.astype(np.float64)
        out[f"{name}_count"] = float(raw[f"{name}_count"])
        # Values: a policy fed inf means or a negative variance acts on garbage.
        if not np.isfinite(out[f"{name}_mean"]).all():
            raise ValueError(f"normaliser {path!r}: {name}_mean must be finite")
        if not (np.isfinite(out[f"{name}_var"]).all() and (out[f"{name}_var"] >= 0).all()):
            raise ValueError(f"normaliser {path!r}: {name}_var must be finite and >= 0")
        if not (math.isfinite(out[f"{name}_count"]) and out[f"{name}_count"] >= 0):
            raise ValueError(f"normaliser {path!r}: {name}_count must be finite and >= 0, got "
                             f"{out[f'{name}_count']!r}")
    # A clip may be inf (no clipping); NaN compares false and is refused with the rest.
    for key, ok, rule in (("clip_obs", out["clip_obs"] > 0, "> 0"),
                          ("clip_reward", out["clip_reward"] > 0, "> 0"),
                          ("gamma", 0 < out["gamma"] <= 1, "in (0, 1]"),
                          ("epsilon", 0 < out["epsilon"] < math.inf, "finite and > 0")):
        if not ok:
            raise ValueError(f"normaliser {path!r}: {key} must be {rule}, got {out[key]!r}")
    return out


def apply_normalizer(venv: Any, stats: dict[str, Any], path: str = "") -> None:
    """Set a fresh ``VecNormalize``'s statistics and settings from :func:`load_normalizer`.

    Raises:
        ValueError: If the file normalises observations of another shape than ``venv``'s.
    """
    from stable_baselines3.common.running_mean_std import RunningMeanStd  # noqa: PLC0415

    if stats["norm_obs"]:
        want = tuple(venv.observation_space.shape)
        got = tuple(stats["obs_mean"].shape)
        if got != want:
            raise ValueError(f"normaliser {path!r} has observation statistics of shape {got}, "
                             f"the env's observations have shape {want}")
        venv.obs_rms = RunningMeanStd(shape=want)
        venv.obs_rms.mean, venv.obs_rms.var = stats["obs_mean"], stats["obs_var"]
        venv.obs_rms.count = stats["obs_count"]
    venv.ret_rms = RunningMeanStd(shape=())
    venv.ret_rms.mean, venv.ret_rms.var = stats["ret_mean"], stats["ret_var"]
    venv.ret_rms.count = stats["ret_count"]
    for key in (*_NORM_FLAGS, *_NORM_SCALARS):
        setattr(venv, key, stats[key])


# -- replay buffers -----------------------------------------------------------------------------
def save_replay_buffer(buffer: Any, path: str | os.PathLike) -> None:
    """Write an SB3 ``ReplayBuffer``'s arrays, position and fill flag to an NPZ, atomically."""
    arrays = {k: getattr(buffer, k) for k in _BUFFER_ARRAYS
              if getattr(buffer, k, None) is not None}
    with atomic_path(path, suffix=".npz") as tmp:
        np.savez(tmp, format=np.array(REPLAY_BUFFER_FORMAT), pos=np.array(int(buffer.pos)),
                 full=np.array(bool(buffer.full)), **arrays)


def load_replay_buffer(buffer: Any, path: str | os.PathLike) -> None:
    """Fill a freshly built ``ReplayBuffer`` from :func:`save_replay_buffer`'s NPZ.

    Raises:
        LegacyPickleError: If ``path`` is a ``.pkl``.
        ValueError: If the file is unreadable or its arrays do not fit ``buffer`` (another
            ``buffer_size``, ``n_envs`` or observation shape).
    """
    path = os.fspath(path)
    # The model's buffer says what each array must be: shapes checked from the headers, and
    # no member may be larger than the largest of them (a zip bomb is refused unread).
    shapes = {k: tuple(getattr(buffer, k).shape) for k in _BUFFER_ARRAYS
              if getattr(buffer, k, None) is not None}
    cap = max([getattr(buffer, k).nbytes for k in shapes] + [2**20])
    raw = _read_npz(path, "replay buffer", REPLAY_BUFFER_FORMAT,
                    f"refusing to load the legacy replay buffer {path!r}: it is a pickle, and "
                    f"loading a pickle runs any code in it", max_bytes=cap, shapes=shapes)
    for key in _BUFFER_ARRAYS:
        mine = getattr(buffer, key, None)
        if mine is None:
            continue
        got = raw.get(key)
        if got is None or got.shape != mine.shape or got.dtype != mine.dtype:
            raise ValueError(f"replay buffer {path!r}: {key} is "
                             f"{None if got is None else (got.dtype, got.shape)}, the model's "
                             f"buffer needs {(mine.dtype, mine.shape)}")
    pos = int(raw["pos"])
    if not 0 <= pos < buffer.buffer_size:
        raise ValueError(f"replay buffer {path!r}: pos {pos} outside 0..{buffer.buffer_size - 1}")
    for key in _BUFFER_ARRAYS:
        if getattr(buffer, key, None) is not None:
            getattr(buffer, key)[...] = raw[key]
    buffer.pos, buffer.full = pos, bool(raw["full"])


# -- building networks from the config ----------------------------------------------------------
def env_spaces(env_config: Any) -> tuple[Any, Any]:
    """``(observation space, action space)`` of one learned agent of an env config."""
    env = parallel_env(env_config)
    agent = env.possible_agents[0]
    return env.observation_space(agent), env.action_space(agent)


def _algo_class(algo: str) -> Any:
    from stable_baselines3 import PPO, SAC  # noqa: PLC0415

    algos = {"ppo": PPO, "sac": SAC}
    if algo not in algos:
        raise ValueError(f"unknown algo {algo!r}; known: {sorted(algos)}")
    return algos[algo]


def check_hyperparams(algo: str, hyperparams: dict) -> None:
    """Check the names of ``hyperparams`` against the algorithm's constructor.

    Raises:
        ValueError: On a name the algorithm does not take (or one training sets itself).
    """
    cls = _algo_class(algo)
    own = {"self", "policy", "env", "seed", "device", "tensorboard_log", "policy_kwargs",
           "verbose", "_init_setup_model", "rollout_buffer_class", "replay_buffer_class"}
    valid = sorted(set(inspect.signature(cls.__init__).parameters) - own)
    for key in hyperparams:
        if key not in valid:
            raise ValueError(f"training config key 'hyperparams.{key}' is not a {algo} "
                             f"hyperparameter; valid: {valid}")


def build_policy(config: dict, observation_space: Any, action_space: Any,
                 device: str = "cpu") -> Any:
    """The untrained policy network of a run's config, as its algorithm would build it.

    Args:
        config: The resolved training config (``algo``, ``policy_kwargs``, ``hyperparams``).
        observation_space: The model's observation space.
        action_space: The model's action space.
        device: torch device.

    Returns:
        The SB3 policy (``ActorCriticPolicy`` for PPO, ``SACPolicy`` for SAC), in eval mode.
    """
    algo = str(config.get("algo", "ppo")).lower()
    cls = _algo_class(algo)
    kwargs = policy_kwargs_from_config(config.get("policy_kwargs") or {}, config.get("env"))
    # As the algorithms pass it: PPO as an argument, SAC through policy_kwargs.
    kwargs["use_sde"] = bool((config.get("hyperparams") or {}).get("use_sde", False))
    policy = cls.policy_aliases["MlpPolicy"](observation_space, action_space, lambda _: 0.0,
                                             **kwargs)
    policy = policy.to(device)
    policy.set_training_mode(False)
    return policy


def load_policy_weights(policy: Any, model: ModelFile) -> None:
    """Load ``policy.pth`` into a policy built by :func:`build_policy`.

    Raises:
        ValueError: If the weights do not fit the network the config describes.
    """
    try:
        policy.load_state_dict(model.params["policy"], strict=True)
    except (RuntimeError, KeyError, TypeError) as exc:
        raise ValueError(f"model {model.path!r}: its weights do not fit the network its "
                         f"config.yaml describes ({exc})") from exc


def restore_parameters(algo_model: Any, model: ModelFile) -> None:
    """Load weights, optimizer states and torch variables into a freshly built algorithm.

    Only the names the algorithm itself saves are accepted; ``num_timesteps`` and
    ``_n_updates`` come from the plain JSON.

    Raises:
        ValueError: If the file's parameters do not match the algorithm's.
    """
    names, var_names = algo_model._get_torch_save_params()
    if set(model.params) != set(names):
        raise ValueError(f"model {model.path!r} holds parameters {sorted(model.params)}, the "
                         f"config's {type(algo_model).__name__} needs {sorted(names)}")
    try:
        algo_model.set_parameters(model.params, exact_match=True, device=algo_model.device)
        for name in var_names:
            value = model.variables.get(name)
            if value is None:
                continue
            target = algo_model
            for part in name.split("."):
                target = getattr(target, part)
            target.data = value.data.to(target.device)
    except (RuntimeError, KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ValueError(f"model {model.path!r}: its parameters do not fit the config's "
                         f"{type(algo_model).__name__} ({exc})") from exc
    algo_model.num_timesteps = model.num_timesteps
    n_updates = model.data.get("_n_updates")
    if isinstance(n_updates, int) and not isinstance(n_updates, bool) and n_updates >= 0:
        algo_model._n_updates = n_updates


def check_checkpoint(model_path: str, norm_path: str | None) -> ModelFile:
    """Read a checkpoint (zip, weights) and its normaliser (if given) to see they are sound.

    Raises:
        ValueError: If either is unreadable (:class:`LegacyPickleError` for a pickle).
        FileNotFoundError: If ``norm_path`` is given and missing.
    """
    model = read_model_zip(model_path)
    _ = model.num_timesteps
    if norm_path is not None:
        if not os.path.isfile(norm_path):
            legacy = legacy_path(norm_path)
            if os.path.isfile(legacy):
                raise LegacyPickleError(_legacy_message(legacy, "normaliser"))
            raise FileNotFoundError(f"the normaliser of {model_path!r} is missing: expected "
                                    f"{norm_path!r}")
        load_normalizer(norm_path)
    return model


def legacy_path(npz_path: str) -> str:
    """The legacy pickle name of an NPZ run file (``x.npz`` -> ``x.pkl``)."""
    return npz_path[: -len(".npz")] + ".pkl" if npz_path.endswith(".npz") else npz_path


def legacy_normalizer_message(pkl: str) -> str:
    """Why a legacy normaliser pickle is refused, and how to convert a trusted one."""
    return _legacy_message(pkl, "normaliser")
