"""The stable-baselines3 trainer: the training env, training and resuming, the run, shipping.

:func:`run_experiment` is the whole SB3 pipeline behind ``train.py`` (and ``orca-env train``;
:func:`orca_env.training.experiment.run_experiment` chooses it for ``backend: sb3``): resolve
the config, write the run folder (:mod:`orca_env.training.run_folder`), train or resume, save
the statistics, run the three-way comparison (:mod:`orca_env.training.comparison`) and, on
request, :func:`ship` the result as the package's shipped policy. stable-baselines3 and torch
(and the env adapter, :mod:`orca_env.training.sb3.adapter`, which imports stable-baselines3)
are imported inside the functions that need them.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
import threading
import time
import warnings

from orca_env.evaluation import is_eval_seed
from orca_env.files import WriteError, atomic_write_text
from orca_env.policies import TRAINED_DIR

from .. import model_files
from ..comparison import compare
from ..config import (
    DEFAULT_CONFIG,
    NORMALIZE_DEFAULTS,
    TrainConfigError,
    load_train_config,
    policy_kwargs_from_config,
    resolve_config_path,
    resolve_init,
    stage_schedule,
)
from ..run_folder import (
    CHECKPOINT_DIR,
    CHECKPOINT_PREFIX,
    COMMAND_FILE,
    COMPARISON_JSON,
    COMPARISON_TXT,
    CONFIG_FILE,
    EVAL_DIR,
    GIT_FILE,
    MODEL_FILE,
    TB_DIR,
    TRAIN_STATS_FILE,
    VECNORMALIZE_FILE,
    check_creatable,
    check_new_run_dir,
    check_ship_name,
    checkpoint_candidates,
    latest_checkpoint,
    model_siblings,
    resolve_model,
    new_run_dir,
    run_name,
    write_run_info,
)

__all__ = ["NoCheckpointError", "TrainingInterrupted", "TrainingWriteError", "SHIP_FILES",
           "SHIP_EVAL_FILES",
           "make_training_env", "training_seeds", "check_training_seeds", "find_checkpoint",
           "save_checkpoint", "steps_to_run", "train", "print_throughput", "ship", "run_experiment"]

#: Files of a run that :func:`ship` copies (run folder, then its ``eval/``).
SHIP_FILES = (MODEL_FILE, CONFIG_FILE, VECNORMALIZE_FILE, GIT_FILE, COMMAND_FILE)
SHIP_EVAL_FILES = (COMPARISON_TXT, COMPARISON_JSON)
#: Offset of the env seeds on resume: fresh episodes, far from the evaluation seeds 10_000+.
RESUME_SEED_OFFSET = 1_000_000
#: SB3's default discount, the normaliser's when the hyperparameters set none.
DEFAULT_GAMMA = 0.99
#: The signals that stop training with a checkpoint (Ctrl-C, and what kill and schedulers send).
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class NoCheckpointError(FileNotFoundError):
    """A run folder to resume holds no usable checkpoint or model."""


class TrainingInterrupted(Exception):
    """Training stopped on SIGINT or SIGTERM after saving a resumable checkpoint.

    Attributes:
        signum: The signal.
        run_dir: The run folder (what ``--resume`` takes).
        checkpoint: The checkpoint saved (``None`` if there was nothing to save).
        exit_code: ``128 + signum`` (130 for SIGINT, 143 for SIGTERM), as a shell reports it.
    """

    def __init__(self, signum: int, run_dir: str, checkpoint: str | None) -> None:
        self.signum, self.run_dir, self.checkpoint = int(signum), run_dir, checkpoint
        self.exit_code = 128 + self.signum
        name = signal.Signals(self.signum).name
        super().__init__(f"training stopped by {name}" + (
            f"; checkpoint {checkpoint}" if checkpoint else ""))


class TrainingWriteError(WriteError):
    """Training stopped because a file of the run could not be written (a full disk).

    The message is the :class:`~orca_env.files.WriteError`'s one line (the file, the cause,
    what was kept). The run folder holds every checkpoint completed before it: atomic writes
    leave no partial one.

    Attributes:
        run_dir: The run folder (what ``--resume`` takes).
        steps: The step count training had reached.
        checkpoint: The newest complete checkpoint (or final model) in the run folder, the one
            ``--resume`` continues from; ``None`` if there is none.
    """

    def __init__(self, exc: WriteError, run_dir: str, steps: int) -> None:
        super().__init__(exc.errno, exc.message, exc.filename)
        self.run_dir, self.steps = run_dir, int(steps)
        newest = latest_checkpoint(run_dir)
        self.checkpoint = newest[0] if newest else None


def make_training_env(cfg: dict):
    """The training ``VecEnv``: the adapter -> (``MaskedVecNormalize``).

    The adapter reports SB3 ``Monitor`` episodes itself (one per agent), so there is no
    ``VecMonitor``; the normaliser's statistics leave out finished agents' masked rows.

    Returns:
        ``(venv, base)``: the outermost ``VecEnv`` and the adapter (its throughput counters).
    """
    from .adapter import MaskedVecNormalize, make_vec_env  # noqa: PLC0415  (imports SB3)

    base = make_vec_env(cfg["env"], cfg["n_envs"], bootstrap=cfg["bootstrap"])
    venv = base
    norm = cfg["normalize"]
    if norm:
        kwargs = dict(NORMALIZE_DEFAULTS) if norm is True else {**NORMALIZE_DEFAULTS, **norm}
        kwargs.setdefault("gamma", cfg["hyperparams"].get("gamma", DEFAULT_GAMMA))
        venv = MaskedVecNormalize(venv, **kwargs)
    return venv, base


def training_seeds(cfg: dict, num_timesteps: int | None = None) -> range:
    """The reset seeds of the env copies: ``seed + i``, or on resume the shifted ones.

    Args:
        cfg: The resolved training config.
        num_timesteps: The step count resumed from (``None`` for a fresh run).
    """
    base = cfg["seed"] if num_timesteps is None else \
        cfg["seed"] + RESUME_SEED_OFFSET + num_timesteps
    return range(base, base + cfg["n_envs"])


def check_training_seeds(cfg: dict, num_timesteps: int | None = None) -> None:
    """Refuse seeds that would reset an env copy with an evaluation seed (10_000..19_999).

    Args:
        cfg: The resolved training config (on resume, the run's saved one).
        num_timesteps: The step count resumed from (``None`` for a fresh run).

    Raises:
        ValueError: If the run's seed, or a seed it resets copies with, is an evaluation seed.
    """
    seeds = [s for n in {None, num_timesteps} for s in training_seeds(cfg, n)]
    if any(is_eval_seed(s) for s in seeds):
        fresh = training_seeds(cfg)
        raise ValueError(f"seed {cfg['seed']}: training would reset env copies with seeds "
                         f"{fresh.start}..{fresh.stop - 1}"
                         + ("" if num_timesteps is None else
                            f" (on resume at {num_timesteps} steps: "
                            f"{training_seeds(cfg, num_timesteps).start}..)")
                         + ", which overlap the evaluation seeds 10_000..19_999; pick another "
                           "seed")


def find_checkpoint(run_dir: str, cfg: dict) -> tuple[tuple[str, str, str], int]:
    """The newest sound checkpoint of a run, skipping broken ones with a warning.

    A checkpoint is sound when its zip opens, its weights load (weights only) and, if ``cfg``
    normalises, its normaliser NPZ loads.

    Returns:
        ``((model zip, normaliser npz, replay buffer npz), num_timesteps)``.

    Raises:
        NoCheckpointError: If no checkpoint or model is sound (the message lists why).
    """
    candidates = checkpoint_candidates(run_dir)
    if not candidates:
        raise NoCheckpointError(f"--resume: no checkpoint or model in {run_dir!r}")
    problems = []
    for found in candidates:
        model_path, norm_path, _ = found
        try:
            mf = model_files.check_checkpoint(model_path, norm_path if cfg["normalize"] else None)
        except (ValueError, FileNotFoundError) as exc:
            problems.append(str(exc))
            warnings.warn(f"--resume: skipping the checkpoint {model_path!r}: {exc}",
                          stacklevel=2)
            continue
        return found, mf.num_timesteps
    raise NoCheckpointError(f"--resume: no usable checkpoint in {run_dir!r}: "
                            + "; ".join(problems))


def save_checkpoint(model, venv, run_dir: str) -> str:
    """Save a resumable checkpoint ``checkpoints/rl_model_<n>_steps.zip`` and its siblings.

    The normaliser and replay buffer go first, the zip last, each atomically: a checkpoint zip
    that exists has its siblings.

    Returns:
        The checkpoint zip.
    """
    folder = os.path.join(run_dir, CHECKPOINT_DIR)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{CHECKPOINT_PREFIX}_{model.num_timesteps}_steps.zip")
    norm_path, buffer_path = model_siblings(path)
    _save_siblings(model, venv, norm_path, buffer_path)
    model_files.save_model(model, path)
    return path


def _save_siblings(model, venv, norm_path: str, buffer_path: str) -> None:
    from stable_baselines3.common.vec_env import VecNormalize  # noqa: PLC0415

    if getattr(model, "replay_buffer", None) is not None:
        model_files.save_replay_buffer(model.replay_buffer, buffer_path)
    if isinstance(venv, VecNormalize):
        model_files.save_normalizer(venv, norm_path)


class _StopOnSignal:
    """Turns the first SIGINT/SIGTERM during ``learn`` into a clean stop at the next step.

    The handlers are installed only in the main thread (Python delivers signals there) and only
    while training; the previous ones come back after the first signal, so a second Ctrl-C
    aborts at once (without a checkpoint).
    """

    def __init__(self) -> None:
        self.signum: int | None = None
        self._old: dict[int, object] = {}

    def _handler(self, signum, frame) -> None:
        self.signum = signum
        self._restore()
        print(f"\n{signal.Signals(signum).name}: stopping at the next step to save a checkpoint "
              f"(send it again to abort without one)", flush=True)

    def _restore(self) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)
        self._old = {}

    def __enter__(self) -> _StopOnSignal:
        if threading.current_thread() is threading.main_thread():
            for sig in STOP_SIGNALS:
                self._old[sig] = signal.signal(sig, self._handler)
        return self

    def __exit__(self, *exc) -> None:
        self._restore()

    def callback(self):
        """An SB3 callback that ends ``learn`` once a signal arrived."""
        from stable_baselines3.common.callbacks import BaseCallback  # noqa: PLC0415

        stopper = self

        class _Stop(BaseCallback):
            def _on_step(self) -> bool:
                return stopper.signum is None

        return _Stop()


def _checkpoint_callback(cfg: dict, run_dir: str, venv):
    """Every ``checkpoint_freq`` entry-steps: :func:`save_checkpoint` (atomic, no pickle)."""
    from stable_baselines3.common.callbacks import BaseCallback  # noqa: PLC0415

    class _Checkpoint(BaseCallback):
        def __init__(self, save_freq: int) -> None:
            super().__init__()
            self.save_freq = save_freq

        def _on_step(self) -> bool:
            if self.n_calls % self.save_freq == 0:
                save_checkpoint(self.model, venv, run_dir)
            return True

    return _Checkpoint(max(cfg["checkpoint_freq"] // venv.num_envs, 1))


def steps_to_run(model, remaining: int) -> tuple[int, int]:
    """The entry-steps ``model.learn(remaining)`` really takes, and the unit it takes them in.

    SB3 stops only between rollouts: PPO and A2C collect ``n_steps`` steps of every env row per
    rollout, an off-policy algorithm ``train_freq`` steps of every row (with a step unit), and
    ``learn`` goes on while fewer than ``remaining`` were taken. So ``remaining`` is rounded up
    to whole rollouts (the default config's 1,500,000 are 184 rollouts of 8,192: 1,507,328).

    Returns:
        ``(steps, unit)``: the steps that will run and the rollout's size (``n_envs`` when the
        rollout counts episodes, whose length is not known in advance: then ``steps`` is a
        lower bound).
    """
    if remaining <= 0:
        return 0, 1
    n_envs = int(model.n_envs)
    n_steps = getattr(model, "n_steps", None)
    freq = getattr(model, "train_freq", None)
    if n_steps is not None:  # on-policy
        unit = int(n_steps) * n_envs
    elif freq is not None and getattr(freq.unit, "value", None) == "step":
        unit = int(freq.frequency) * n_envs
    else:
        unit = n_envs
    return -(-int(remaining) // unit) * unit, unit


def _progress_callback(model, remaining: int):
    """SB3's progress bar (tqdm with rich) counting the entry-steps that will really run.

    SB3's own bar counts up to ``remaining`` and then past it to the end of the last rollout
    (issue 25: ``1,507,328/1,500,000``); this one's total is :func:`steps_to_run`, a line says
    when that differs from ``remaining``, and the count never passes the total (a rollout
    counted in episodes may run longer than known in advance: the bar then stays full).
    """
    from stable_baselines3.common import callbacks  # noqa: PLC0415

    total, unit = steps_to_run(model, remaining)
    if total != remaining:
        print(f"Training {total:,} entry-steps: {remaining:,} rounded up to whole rollouts of "
              f"{unit:,} (SB3 stops between rollouts)", flush=True)

    class _Progress(callbacks.ProgressBarCallback):
        def _on_training_start(self) -> None:
            self.pbar = callbacks.tqdm(total=total)

        def _on_step(self) -> bool:
            self.pbar.update(min(self.training_env.num_envs, total - self.pbar.n))
            return True

    return _Progress()


def _entry_label(cfg: dict, k: int) -> str:
    """A mixture entry in messages: its config's name if it is one, else ``#k``."""
    name = cfg["env"]["mixture"][k].get("config")
    return name if isinstance(name, str) else f"#{k}"


def _stages_callback(cfg: dict, base):
    """The config's ``stages`` (:func:`~orca_env.training.config.stage_schedule`) as a callback.

    At the start of training (a resumed run may start inside a stage) and of every rollout, the
    stage of the model's step count is applied if it is not yet: the learning rate (from the
    next gradient step on) and the mixture weights of every env copy (from each copy's next
    reset on). It prints what the stage changes and logs ``train/stage`` (0 before the first)
    with the other training scalars. It draws nothing from any generator, so a run is the same
    as without ``stages`` up to the first stage.
    """
    from stable_baselines3.common.callbacks import BaseCallback  # noqa: PLC0415

    schedule = stage_schedule(cfg)
    initial = [e.get("weight", 1.0) for e in cfg["env"].get("mixture") or []]

    class _Stages(BaseCallback):
        def __init__(self) -> None:
            super().__init__()
            self.current = -1  # the config's own values

        def _apply(self) -> None:
            n = self.model.num_timesteps
            k = max((i for i, st in enumerate(schedule) if st["from"] <= n), default=-1)
            if k == self.current:
                return
            self.current, st = k, schedule[k]
            if st["learning_rate"] is not None:
                self.model.learning_rate = st["learning_rate"]
                self.model._setup_lr_schedule()
            if st["weights"] is not None:
                for env in base.envs:
                    env.set_mixture_weights(st["weights"])
            # The weights in force before this stage (a resumed run applies stage k at once).
            old = (schedule[k - 1]["weights"] if k > 0 else None) or initial
            what = []
            if "learning_rate" in st["changes"]:
                what.append(f"learning rate {st['learning_rate']:g}")
            if "weights" in st["changes"]:
                what.append("weights " + ", ".join(
                    f"{_entry_label(cfg, j)} {old[j]:g} -> {w:g}"
                    for j, w in st["changes"]["weights"].items()))
            print(f"Stage {k + 1} of {len(schedule)} (from {st['from']:,} entry-steps) at "
                  f"{n:,}: " + "; ".join(what), flush=True)

        def _on_training_start(self) -> None:
            self._apply()

        def _on_rollout_start(self) -> None:
            self._apply()

        def _on_step(self) -> bool:
            return True

        def _on_rollout_end(self) -> None:
            self.logger.record("train/stage", self.current + 1)

    return _Stages()


def _build(cfg: dict, run_dir: str, resume: tuple[str, ...] | None, init: str | None = None):
    """Build the env and the model (fresh, or resumed from a checkpoint).

    Nothing is written: a config the algorithm rejects fails here, before the run folder is
    touched. ``init`` (a fresh run only): the model whose policy weights the new model starts
    from (:func:`init_weights`).

    Returns:
        ``(model, venv, base)``.
    """
    from stable_baselines3 import PPO, SAC  # noqa: PLC0415
    from stable_baselines3.common.vec_env import VecNormalize  # noqa: PLC0415

    from .adapter import (  # noqa: PLC0415  (imports SB3)
        MaskedReplayBuffer,
        MaskedRolloutBuffer,
        attach_masks,
    )

    model_files.check_hyperparams(cfg["algo"], cfg["hyperparams"])
    model_files.set_torch_threads(cfg["torch_threads"])  # resolved by load_train_config
    algo_cls = {"ppo": PPO, "sac": SAC}[cfg["algo"]]
    resumed = None
    if resume is not None:
        model_path, norm_path, buffer_path = (*resume, None, None)[:3]
        resumed = model_files.read_model_zip(model_path)
        check_training_seeds(cfg, resumed.num_timesteps)
    try:
        import tensorboard  # noqa: F401, PLC0415

        tb = os.path.join(run_dir, TB_DIR)
    except ImportError:
        tb = None
        print("tensorboard is not installed: no TensorBoard logs")
    venv, base = make_training_env(cfg)
    try:
        try:
            # A resumed run is built like a fresh one from its config; the file contributes
            # weights, optimizer states and step count only (nothing is unpickled).
            # Train on the steps of agents that acted only (finished agents' masked steps
            # are left out: see orca_env.training.sb3.adapter).
            masked = {"rollout_buffer_class": MaskedRolloutBuffer} if cfg["algo"] == "ppo" \
                else {"replay_buffer_class": MaskedReplayBuffer}
            model = algo_cls("MlpPolicy", venv, seed=cfg["seed"], device="cpu",
                             tensorboard_log=tb,
                             policy_kwargs=policy_kwargs_from_config(cfg["policy_kwargs"],
                                                                     cfg["env"]),
                             verbose=0, **masked, **cfg["hyperparams"])
        except (TypeError, ValueError, AssertionError) as exc:
            raise ValueError(f"training config: {cfg['algo']} rejects its hyperparams "
                             f"{cfg['hyperparams']!r} or policy_kwargs "
                             f"{cfg['policy_kwargs']!r}: {exc}") from exc
        attach_masks(model, base)
        if resumed is None:
            if init is not None:
                init_weights(model, venv, cfg, init)
            return model, venv, base
        if isinstance(venv, VecNormalize):
            if norm_path is None or not os.path.isfile(norm_path):
                legacy = model_files.legacy_path(norm_path or "")
                if norm_path and os.path.isfile(legacy):
                    raise model_files.LegacyPickleError(
                        model_files.legacy_normalizer_message(legacy))
                raise FileNotFoundError(f"--resume: the config normalises (normalize: "
                                        f"{cfg['normalize']!r}) but the normaliser of "
                                        f"{model_path!r} is missing: expected {norm_path!r}")
            model_files.apply_normalizer(venv, model_files.load_normalizer(norm_path), norm_path)
        model_files.restore_parameters(model, resumed)
        if getattr(model, "replay_buffer", None) is not None:  # off-policy (SAC)
            _restore_replay_buffer(model, cfg, buffer_path)
        venv.seed(training_seeds(cfg, model.num_timesteps).start)
        print(f"Resuming from {model_path} at {model.num_timesteps} timesteps")
        return model, venv, base
    except BaseException:
        venv.close()
        raise


def init_weights(model, venv, cfg: dict, init: str) -> None:
    """Start a fresh model from the policy weights of the trained model ``init`` (``init:``).

    The model must have been trained with this config's network (``algo``, ``policy_kwargs``),
    observation and action spaces and action mode, and the universal layout's settings if it
    used it; a config that normalises observations takes its normaliser's statistics too (and
    goes on updating them). The optimizer state, step count and learning-rate schedule stay the
    new run's: this is fine-tuning, not resuming. Nothing is unpickled.

    Raises:
        ValueError: Naming ``init`` and what differs, if the model does not fit the config.
        FileNotFoundError: If the model has no ``config.yaml``, or the config normalises and
            the model has no normaliser.
    """
    from stable_baselines3.common.vec_env import VecNormalize  # noqa: PLC0415

    from orca_env.config import load_yaml, policy_settings  # noqa: PLC0415

    from ..config import check_model_config  # noqa: PLC0415

    model_path, cfg_path, norm_path = resolve_model(init)
    what = f"training config key 'init' ({cfg['init']!r}: {model_path})"
    if cfg_path is None:
        raise FileNotFoundError(f"{what}: the model has no config.yaml in its run folder (its "
                                f"network is rebuilt from it; the file is never unpickled)")
    saved = load_yaml(cfg_path) or {}
    if not isinstance(saved, dict) or not isinstance(saved.get("env"), dict):
        raise ValueError(f"{what}: {cfg_path} is not a training config with an env section")
    check_model_config(saved, "sb3", where=cfg_path)
    for key in ("algo", "policy_kwargs"):
        if saved.get(key) != cfg[key]:
            raise ValueError(f"{what}: trained with {key} {saved.get(key)!r}, this config has "
                             f"{cfg[key]!r}; the weights fit the same network only")
    obs_space, act_space = model_files.env_spaces(saved["env"])
    if obs_space != model.observation_space or act_space != model.action_space:
        raise ValueError(f"{what}: its observation and action spaces ({obs_space}, "
                         f"{act_space}) are not this config's ({model.observation_space}, "
                         f"{model.action_space})")
    theirs, ours = policy_settings(saved["env"]), policy_settings(cfg["env"])
    for key in ("action", "observation"):
        if theirs.get(key) != ours.get(key):
            raise ValueError(f"{what}: trained with {key} {theirs.get(key)!r}, this config "
                             f"has {ours.get(key)!r}; the same weights would mean something "
                             f"else")
    loaded = model_files.read_model_zip(model_path,
                                        max_member_bytes=model_files.model_member_cap(model.policy))
    model_files.load_policy_weights(model.policy, loaded)
    if isinstance(venv, VecNormalize):
        if not os.path.isfile(norm_path):
            raise FileNotFoundError(f"{what}: this config normalises observations, but the "
                                    f"model has no normaliser {norm_path!r}")
        model_files.apply_normalizer(venv, model_files.load_normalizer(norm_path), norm_path)
    elif os.path.isfile(norm_path) and model_files.load_normalizer(norm_path)["norm_obs"]:
        raise ValueError(f"{what}: the model saw normalised observations ({norm_path}), this "
                         f"config does not normalise them (normalize: {cfg['normalize']!r})")
    print(f"Starting from the policy weights of {model_path} ({loaded.num_timesteps:,} "
          f"entry-steps trained; optimizer and step count fresh)")


def _restore_replay_buffer(model, cfg: dict, buffer_path: str | None) -> None:
    """Fill a resumed off-policy model's replay buffer from its NPZ, or warn and go on empty."""
    if buffer_path is not None and os.path.isfile(buffer_path):
        try:
            model_files.load_replay_buffer(model.replay_buffer, buffer_path)
        except ValueError as exc:
            warnings.warn(f"--resume: {exc}; {cfg['algo']} continues with an empty replay "
                          f"buffer", stacklevel=3)
            return
        print(f"Loaded the replay buffer {buffer_path} ({model.replay_buffer.size()} "
              f"transitions)")
        return
    legacy = model_files.legacy_path(buffer_path or "")
    if buffer_path is not None and os.path.isfile(legacy):
        warnings.warn(f"--resume: not loading the legacy replay buffer {legacy!r}: it is a "
                      f"pickle, and loading a pickle runs any code in it; {cfg['algo']} "
                      f"continues with an empty one", stacklevel=3)
    else:
        warnings.warn(f"--resume: no replay buffer at {buffer_path!r}; {cfg['algo']} "
                      f"continues with an empty one", stacklevel=3)


def train(cfg: dict, run_dir: str, resume: tuple[str, ...] | None = None,
          progress_bar: bool = True, built: tuple | None = None) -> dict:
    """Train per ``cfg`` into ``run_dir``; returns the training statistics.

    On SIGINT or SIGTERM, training stops at the next step, a checkpoint (with normaliser and
    replay buffer) is saved and :class:`TrainingInterrupted` is raised.

    Args:
        cfg: The resolved training config.
        run_dir: The run folder.
        resume: ``(model zip, vecnormalize npz, replay buffer npz)`` to continue from (see
            :func:`find_checkpoint`); the replay buffer is optional.
        progress_bar: Show SB3's progress bar, its total the entry-steps that will really run
            (:func:`steps_to_run`: whole rollouts).
        built: ``(model, venv, base)`` already built from ``cfg`` and ``resume``
            (:func:`run_experiment` builds them before it writes the run folder).

    Raises:
        ValueError: If the env copies would use evaluation seeds, or the algorithm rejects the
            config, or the checkpoint does not fit it.
        FileNotFoundError: On resume, if ``cfg`` normalises and the normaliser is missing.
        TrainingInterrupted: On SIGINT or SIGTERM, after saving the checkpoint.
        TrainingWriteError: When a checkpoint, its siblings or the final model cannot be
            written (a full disk); it names the file, the newest complete checkpoint and the
            run folder to resume.
    """
    if built is None:
        check_training_seeds(cfg)
        built = _build(cfg, run_dir, resume)
    model, venv, base = built
    remaining = cfg["n_timesteps"] - model.num_timesteps
    for i, st in enumerate(stage_schedule(cfg)):
        if st["from"] >= cfg["n_timesteps"]:
            warnings.warn(f"training config key 'stages[{i}]' starts at {st['from']:,} "
                          f"entry-steps, not below n_timesteps ({cfg['n_timesteps']:,}): it "
                          f"will not run", stacklevel=2)
    start_steps = model.num_timesteps
    stopper = _StopOnSignal()
    t0 = time.perf_counter()
    try:
        if remaining > 0:
            with stopper:
                callback = [_checkpoint_callback(cfg, run_dir, venv),
                            _stages_callback(cfg, base), stopper.callback()]
                if progress_bar:  # SB3's bar, counting the steps that will really run
                    callback.append(_progress_callback(model, remaining))
                model.learn(total_timesteps=remaining, callback=callback, progress_bar=False,
                            reset_num_timesteps=resume is None, tb_log_name=cfg["algo"])
        wall = time.perf_counter() - t0
        if stopper.signum is not None:
            path = save_checkpoint(model, venv, run_dir)
            raise TrainingInterrupted(stopper.signum, run_dir, path)
        norm_path, buffer_path = model_siblings(os.path.join(run_dir, MODEL_FILE))
        _save_siblings(model, venv, norm_path, buffer_path)
        model_files.save_model(model, os.path.join(run_dir, MODEL_FILE))
    except WriteError as exc:  # a full disk at a checkpoint or the final model
        raise TrainingWriteError(exc, run_dir, model.num_timesteps) from exc
    finally:
        venv.close()
    done = model.num_timesteps - start_steps
    return {
        "timesteps": int(model.num_timesteps),
        "timesteps_this_run": int(done),
        "wall_seconds": round(wall, 2),
        "samples_per_second": round(done / wall, 1) if wall > 0 else None,
        "live_agent_samples_per_second": round(base.agent_steps / wall, 1) if wall > 0 else None,
        "live_fraction": round(base.live_fraction, 4),
        "env_seconds": round(base.step_seconds, 2),
        "env_share_of_wall": round(base.step_seconds / wall, 4) if wall > 0 else None,
        "env_only_samples_per_second": round(base.entry_steps / base.step_seconds, 1)
        if base.step_seconds > 0 else None,
    }


def print_throughput(stats: dict) -> None:
    """The training throughput lines printed at the end of every run."""
    if not stats.get("timesteps_this_run"):
        print("No training steps in this run.")
        return
    print(f"Training throughput: {stats['samples_per_second']:,.0f} env samples/s during "
          f"{stats['algo'].upper()} ({stats['timesteps_this_run']:,} samples in "
          f"{stats['wall_seconds']:.0f} s; agents that acted {stats['live_fraction']:.0%} of them, "
          f"{stats['live_agent_samples_per_second']:,.0f}/s"
          f": {stats['algo'].upper()} trains on those only).")
    print(f"Env side: {stats['env_seconds']:.0f} s of {stats['wall_seconds']:.0f} s "
          f"({stats['env_share_of_wall']:.0%}); the env alone steps "
          f"{stats['env_only_samples_per_second']:,.0f} samples/s, so the "
          f"{'env' if stats['env_share_of_wall'] > 0.5 else 'learner'} is the bottleneck.")


def ship(run_dir: str, name: str, trained_dir: str | None = None) -> str:
    """Replace ``<trained_dir>/<name>`` with the model, config and normaliser of a run.

    The files go to a temporary folder next to the destination, which then takes the
    destination's place, so nothing of an earlier shipment survives (an old
    ``vecnormalize.npz`` next to a model trained without normalisation would be loaded with it).

    Args:
        run_dir: The run folder.
        name: The shipped policy's name.
        trained_dir: Folder of the shipped policies (default: ``trained/`` of the installed
            :mod:`orca_env.policies`; in an editable install the repository's
            ``policies/trained/``).

    Returns:
        The destination folder.

    Raises:
        ValueError: If ``name`` is not a bare folder name (:func:`check_ship_name`): it comes
            from the run's ``name.txt`` and must not lead outside ``trained_dir``.
    """
    check_ship_name(name)
    if trained_dir is None:
        trained_dir = TRAINED_DIR
    dest = os.path.join(trained_dir, name)
    os.makedirs(trained_dir, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=f".{name}-", dir=trained_dir)
    try:
        for src_dir, files in ((run_dir, SHIP_FILES),
                               (os.path.join(run_dir, EVAL_DIR), SHIP_EVAL_FILES)):
            for f in files:
                if os.path.isfile(os.path.join(src_dir, f)):
                    shutil.copy2(os.path.join(src_dir, f), os.path.join(tmp, f))
        os.chmod(tmp, 0o755)  # mkdtemp makes it private
        old = None
        if os.path.exists(dest):
            old = tempfile.mkdtemp(prefix=f".{name}-old-", dir=trained_dir)
            os.rename(dest, os.path.join(old, name))
        os.rename(tmp, dest)
        tmp = None
        if old is not None:
            shutil.rmtree(old)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"Shipped to {dest}")
    return dest


def _prepare(config, run_dir, runs_root, resume, n_timesteps, n_envs, seed, eval_episodes,
             ship_result):
    """Everything :func:`run_experiment` checks and builds before it writes the run folder.

    Returns:
        ``(cfg, run_dir, config_name, resume_from, built)``.
    """
    resume_from, init = None, None
    if resume:  # the weights come from the checkpoint: a saved `init` is not read again
        run_dir = resume
        cfg = load_train_config(os.path.join(run_dir, CONFIG_FILE), n_timesteps=n_timesteps)
        config_name = run_name(run_dir)
    else:
        cfg_path = config or DEFAULT_CONFIG
        cfg = load_train_config(cfg_path, n_timesteps=n_timesteps, n_envs=n_envs, seed=seed)
        config_name = os.path.splitext(os.path.basename(cfg_path))[0]
        if cfg.get("init"):
            init = resolve_init(cfg["init"],
                                os.path.dirname(os.path.abspath(resolve_config_path(cfg_path))))
    if eval_episodes is not None:
        cfg["eval"]["n_episodes"] = eval_episodes
    model_files.check_hyperparams(cfg["algo"], cfg["hyperparams"])  # a misspelt name
    if ship_result:
        check_ship_name(config_name)  # before hours of training, not after
    check_training_seeds(cfg)
    if resume:
        check_creatable(run_dir, "--resume")
        resume_from, _ = find_checkpoint(run_dir, cfg)
    elif run_dir is not None:
        check_new_run_dir(run_dir)  # before anything is built or written
        check_creatable(run_dir, "--run-dir")
    else:
        check_creatable(runs_root, "--runs-root")
        run_dir = new_run_dir(cfg, cfg_path, runs_root)
    built = _build(cfg, run_dir, resume_from, init=init)
    return cfg, run_dir, config_name, resume_from, built


def run_experiment(config: str | os.PathLike | None = None, *, run_dir: str | None = None,
                   runs_root: str = "runs", resume: str | None = None,
                   n_timesteps: int | None = None, n_envs: int | None = None,
                   seed: int | None = None, eval_episodes: int | None = None,
                   evaluate: bool = True, video: bool = True, progress_bar: bool = True,
                   ship_result: bool = False, num_env_runners: int | None = None) -> dict:
    """Train (or resume), evaluate and optionally ship one SB3 run.

    The arguments are those of :func:`orca_env.training.experiment.run_experiment`, which
    dispatches here for every backend but rllib; ``num_env_runners`` must be ``None`` (only
    backend rllib has env runners). Everything that can reject the run is checked before the
    run folder is created or changed.

    Returns:
        ``{"run_dir", "stats" (training statistics), "results" (comparison reports or None)}``.

    Raises:
        ImportError: If stable-baselines3 or torch is missing (the message names the extra).
        NoCheckpointError: If ``resume`` holds no usable checkpoint or model.
        TrainConfigError: On a config, seed, ship name or run folder that training refuses
            (a ``ValueError``; raised before the run folder is made or changed).
        TrainingInterrupted: On SIGINT or SIGTERM, after saving a checkpoint.
        TrainingWriteError: When a checkpoint or the final model cannot be written (a full
            disk).
    """
    if num_env_runners is not None:
        raise ValueError(f"num_env_runners={num_env_runners!r}: only backend rllib has env "
                         f"runners")
    model_files.require_train_extra("training")
    try:  # whatever refuses the run does so here, before the run folder is made or changed
        cfg, run_dir, config_name, resume_from, built = _prepare(
            config, run_dir, runs_root, resume, n_timesteps, n_envs, seed, eval_episodes,
            ship_result)
    except TrainConfigError:
        raise
    except ValueError as exc:  # the seeds, the ship name, what SB3 rejects: a config error
        raise TrainConfigError(str(exc)) from exc
    try:
        write_run_info(run_dir, cfg, config_name)
    except BaseException:
        built[1].close()
        raise
    print(f"Run folder: {run_dir}")

    t_all = time.perf_counter()
    stats = train(cfg, run_dir, resume=resume_from, progress_bar=progress_bar, built=built)
    stats["algo"] = cfg["algo"]
    atomic_write_text(os.path.join(run_dir, TRAIN_STATS_FILE), json.dumps(stats, indent=1))
    results = None
    if evaluate:
        results = compare(cfg, run_dir, video=video)
    if ship_result:
        ship(run_dir, config_name)
    print_throughput(stats)
    print(f"Total wall time {time.perf_counter() - t_all:.0f} s; run folder {run_dir}")
    return {"run_dir": run_dir, "stats": stats, "results": results}
