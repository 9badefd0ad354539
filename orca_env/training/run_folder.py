"""Run folders: the one definition of their layout, names and checkpoint conventions.

Training writes everything of a run into one folder (the names are the constants below)::

    runs/<config>_s<seed>_<time>/
        config.yaml        resolved config (the defaults filled in; what --resume and the
                           loader of trained models rebuild the network from)
        command.txt        the command line (one line per invocation)
        git.txt            commit and whether the tree was dirty
        name.txt           the config's name (what --resume and --ship call the run)
        model.zip          the final model (load with orca_env.policies.sb3.load(run_folder))
        vecnormalize.npz   observation normaliser statistics (when normalize is on)
        replay_buffer.npz  SAC's replay buffer (what --resume continues from)
        checkpoints/       rl_model_<n>_steps.zip (+ rl_model_vecnormalize_<n>_steps.npz and
                           rl_model_replay_buffer_<n>_steps.npz, SB3's CheckpointCallback names
                           with NPZ instead of pickle)
        tb/                TensorBoard logs (when tensorboard is installed)
        rllib_checkpoint/  backend rllib: RLlib's checkpoint (Algorithm.save_to_path; pickles,
                           never loaded by orca-env); instead of model.zip and checkpoints/
        rllib_module.npz   backend rllib: the shared module's weights as plain arrays (load with
                           orca_env.policies.rllib.load(run_folder))
        train_stats.json   timesteps, wall time, throughput
        eval/              comparison.txt, comparison.json; per policy (trained_safety, orca,
                           trained_no_safety) the suite's metrics.json, episodes.csv;
                           trained_safety/logs/episode_10000.npz and videos/episode_10000.mp4

A model's normaliser and replay buffer are its siblings: ``vecnormalize.npz`` and
``replay_buffer.npz`` beside ``model.zip``, ``<prefix>_vecnormalize_<n>_steps.npz`` and
``<prefix>_replay_buffer_<n>_steps.npz`` beside a checkpoint ``<prefix>_<n>_steps.zip``
(:func:`model_siblings`). Nothing of a run folder is a pickle: runs written before that have
``.pkl`` siblings, which loaders refuse (:mod:`orca_env.training.model_files`). Every file is
written to a temporary name and renamed (:mod:`orca_env.files`). The trainers
(:mod:`orca_env.training.sb3.trainer`, :mod:`orca_env.training.rllib.trainer`) and the loaders
of trained models (:mod:`orca_env.training.sb3.loader`, :mod:`orca_env.training.rllib.loader`)
all go through this module.
"""

from __future__ import annotations

import glob
import os
import re
import shlex
import subprocess
import sys
import time

import yaml

from orca_env.files import atomic_write_text

from .config import REPO_ROOT, TrainConfigError

__all__ = ["MODEL_FILE", "CONFIG_FILE", "NAME_FILE", "COMMAND_FILE", "GIT_FILE",
           "VECNORMALIZE_FILE", "REPLAY_BUFFER_FILE", "TRAIN_STATS_FILE", "CHECKPOINT_DIR",
           "CHECKPOINT_PREFIX", "TB_DIR", "EVAL_DIR", "COMPARISON_TXT", "COMPARISON_JSON",
           "RUN_NAME", "CHECKPOINT_ZIP", "SHIP_NAME", "git_info", "new_run_dir",
           "check_new_run_dir", "check_creatable", "run_name",
           "check_ship_name", "write_run_info", "RLLIB_CHECKPOINT_DIR", "RLLIB_WEIGHTS_FILE",
           "checkpoint_steps", "model_siblings",
           "checkpoint_candidates", "latest_checkpoint", "resolve_model", "model_label"]

MODEL_FILE = "model.zip"
CONFIG_FILE = "config.yaml"
NAME_FILE = "name.txt"
COMMAND_FILE = "command.txt"
GIT_FILE = "git.txt"
VECNORMALIZE_FILE = "vecnormalize.npz"
REPLAY_BUFFER_FILE = "replay_buffer.npz"
TRAIN_STATS_FILE = "train_stats.json"
CHECKPOINT_DIR = "checkpoints"
#: SB3 ``CheckpointCallback``'s ``name_prefix`` (its default, passed explicitly).
CHECKPOINT_PREFIX = "rl_model"
TB_DIR = "tb"
EVAL_DIR = "eval"
COMPARISON_TXT = "comparison.txt"
COMPARISON_JSON = "comparison.json"
#: Backend rllib: RLlib's own checkpoint folder and the shared module's weights (NPZ).
RLLIB_CHECKPOINT_DIR = "rllib_checkpoint"
RLLIB_WEIGHTS_FILE = "rllib_module.npz"
#: A run folder's default name: ``<config name>_s<seed>_<YYYYmmdd-HHMMSS>[-<i>]``.
RUN_NAME = re.compile(r"^(?P<name>.+)_s-?\d+_\d{8}-\d{6}(?:-\d+)?$")
#: A checkpoint's file name, as SB3's ``CheckpointCallback`` writes it.
CHECKPOINT_ZIP = re.compile(r"^(?P<prefix>.*)_(?P<steps>\d+)_steps\.zip$")
#: A shipped policy's name: one folder under ``trained/``, never a path (``..``, ``/``).
SHIP_NAME = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9_.-]*$")


def git_info() -> dict:
    """Commit hash and dirty flag of the repository holding ``orca_env`` (``unknown`` if none).

    Only an editable install's repository counts: an installed package's parent folder
    (site-packages) may sit inside some unrelated repository.
    """
    def run(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=REPO_ROOT, capture_output=True, text=True,
                              timeout=10).stdout.strip()

    if not os.path.exists(os.path.join(REPO_ROOT, ".git")):
        return {"commit": "unknown", "dirty": False}
    try:
        commit = run("rev-parse", "HEAD") or "unknown"
        dirty = bool(run("status", "--porcelain", "--untracked-files=no"))
    except (OSError, subprocess.SubprocessError):
        commit, dirty = "unknown", False
    return {"commit": commit, "dirty": dirty}


def new_run_dir(cfg: dict, config_path: str, runs_root: str) -> str:
    """``<runs_root>/<config name>_s<seed>_<YYYYmmdd-HHMMSS>`` (suffixed if it exists)."""
    name = os.path.splitext(os.path.basename(config_path))[0]
    base = os.path.join(runs_root, f"{name}_s{cfg['seed']}_{time.strftime('%Y%m%d-%H%M%S')}")
    path, i = base, 1
    while os.path.exists(path):
        path, i = f"{base}-{i}", i + 1
    return path


def check_new_run_dir(run_dir: str) -> None:
    """Refuse a ``--run-dir`` that would mix two runs: an existing non-empty folder, or a file.

    A new run writes ``model.zip``, ``config.yaml`` and numbered checkpoints; into a folder of
    an earlier run it would overwrite some of them and leave the others, so that a later
    ``--resume`` continues the wrong weights. Resuming is what ``--resume`` is for.

    Raises:
        TrainConfigError: Naming the folder and what to do instead.
    """
    if os.path.isdir(run_dir):
        if os.listdir(run_dir):
            raise TrainConfigError(f"--run-dir {run_dir!r} exists and is not empty: pass "
                                   f"--resume {run_dir} to continue that run, or name a new "
                                   f"folder")
    elif os.path.lexists(run_dir):
        raise TrainConfigError(f"--run-dir {run_dir!r} exists and is not a folder")


def check_creatable(folder: str, option: str) -> None:
    """Refuse a folder that cannot be created (or written into), before a run starts.

    The nearest part of ``folder`` that exists must be a folder this process may write into
    (a read-only filesystem says no even to root); a file on the way is refused.

    Raises:
        TrainConfigError: Naming ``option``, the folder and what is in the way.
    """
    here = os.path.abspath(folder)
    while not os.path.lexists(here):
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    if not os.path.isdir(here):
        raise TrainConfigError(f"{option} {folder!r}: {here!r} is a file, not a folder")
    if not os.access(here, os.W_OK | os.X_OK):
        raise TrainConfigError(f"{option} {folder!r}: cannot write into {here!r} (read-only "
                               f"or no permission)")


def run_name(run_dir: str) -> str:
    """The config name of a run folder: ``name.txt`` if written, else parsed from the folder name.

    The default folder name is ``<name>_s<seed>_<YYYYmmdd-HHMMSS>[-<i>]``; the suffix is matched
    at the end, so names containing ``_s`` (``crowdnav_square_ppo``) survive. A folder named
    otherwise (``--run-dir``) without ``name.txt`` keeps its own name.
    """
    path = os.path.join(run_dir, NAME_FILE)
    if os.path.isfile(path):
        with open(path, "rb") as fh:
            # Bytes that are not UTF-8 stay visible (as escapes) for check_ship_name to refuse.
            name = fh.read(4096).decode("utf-8", errors="backslashreplace").strip()
        if name:
            return name
    base = os.path.basename(os.path.normpath(run_dir))
    m = RUN_NAME.match(base)
    return m.group("name") if m else base


def check_ship_name(name: str) -> str:
    """``name`` if it can name a shipped policy's folder, else a ``ValueError``.

    A name comes from a run folder's ``name.txt``, which anyone holding the folder can edit; a
    path there (``/../../tmp/x``) would make ``--ship`` write outside ``trained/``.

    Raises:
        ValueError: Unless ``name`` is letters, digits, ``_``, ``-`` and ``.``, not starting
            with a dot.
    """
    if not isinstance(name, str) or not SHIP_NAME.match(name):
        raise ValueError(f"run name {name!r} cannot name a shipped policy: use letters, digits, "
                         f"'_', '-' and '.' only, not starting with a dot (check {NAME_FILE})")
    return name


def write_run_info(run_dir: str, cfg: dict, config_name: str) -> None:
    """Create ``run_dir`` and write its name, resolved config, command line and git state.

    ``command.txt`` gets one more line per invocation (a resumed run keeps its history); the
    other files are rewritten. Each file is replaced atomically.
    """
    os.makedirs(run_dir, exist_ok=True)
    atomic_write_text(os.path.join(run_dir, NAME_FILE), config_name + "\n")
    atomic_write_text(os.path.join(run_dir, CONFIG_FILE), yaml.safe_dump(cfg, sort_keys=False))
    command = os.path.join(run_dir, COMMAND_FILE)
    history = ""
    if os.path.isfile(command):
        with open(command, encoding="utf-8", errors="replace") as fh:
            history = fh.read()
        if history and not history.endswith("\n"):
            history += "\n"
    atomic_write_text(command, history + shlex.join([sys.executable, *sys.argv]) + "\n")
    gi = git_info()
    atomic_write_text(os.path.join(run_dir, GIT_FILE),
                      f"commit: {gi['commit']}\ndirty: {str(gi['dirty']).lower()}\n")


def checkpoint_steps(model_path: str) -> int | None:
    """The step count of a checkpoint ``<prefix>_<n>_steps.zip``, ``None`` for other models."""
    m = CHECKPOINT_ZIP.match(os.path.basename(model_path))
    return int(m.group("steps")) if m else None


def model_siblings(model_path: str) -> tuple[str, str]:
    """``(vecnormalize npz, replay buffer npz)`` that belong to a model ``.zip``.

    They are where training writes them; they may not exist.
    """
    here = os.path.dirname(model_path)
    m = CHECKPOINT_ZIP.match(os.path.basename(model_path))
    if m:
        prefix, n = m.group("prefix"), m.group("steps")
        return (os.path.join(here, f"{prefix}_vecnormalize_{n}_steps.npz"),
                os.path.join(here, f"{prefix}_replay_buffer_{n}_steps.npz"))
    return os.path.join(here, VECNORMALIZE_FILE), os.path.join(here, REPLAY_BUFFER_FILE)


def checkpoint_candidates(run_dir: str) -> list[tuple[str, str, str]]:
    """Every model of a run to resume from, newest first.

    Checkpoints by step count, newest first; the final ``model.zip`` goes before the first
    checkpoint older than it (a run resumed from an early checkpoint writes a final model newer
    than its later ones).

    Returns:
        ``(model zip, vecnormalize npz, replay buffer npz)`` per model; the siblings are where
        they belong to that model and may not exist.
    """
    ckpts = glob.glob(os.path.join(run_dir, CHECKPOINT_DIR, f"{CHECKPOINT_PREFIX}_*_steps.zip"))
    steps = {checkpoint_steps(c): c for c in ckpts}
    steps.pop(None, None)  # a stray file the glob matched without a step count
    order = [steps[n] for n in sorted(steps, reverse=True)]
    final = os.path.join(run_dir, MODEL_FILE)
    if os.path.isfile(final):
        t = os.path.getmtime(final)
        i = next((i for i, c in enumerate(order) if t > os.path.getmtime(c)), len(order))
        order.insert(i, final)
    return [(m, *model_siblings(m)) for m in order]


def latest_checkpoint(run_dir: str) -> tuple[str, str, str] | None:
    """The newest checkpoint (or the final model, if newer) of a run, or ``None``.

    Returns:
        ``(model zip, vecnormalize npz, replay buffer npz)``: the two ``.npz`` are where they
        belong to that model; they may not exist (the caller decides whether they must).
    """
    found = checkpoint_candidates(run_dir)
    return found[0] if found else None


def model_label(path: str | os.PathLike) -> str:
    """The label of a model file or run folder in tables, reports, logs and video titles.

    A run folder by its name, a run's ``model.zip`` by its folder's, another ``.zip`` by its
    file name without the extension; a shipped policy is its folder, so ``generalist``. No
    host paths: the same run gives the same label wherever it lies. ``orca-env eval`` and
    ``bench`` label a model with it (:func:`orca_env.evaluation.suite.resolve_policy`), and
    the loaders name the policies they load with it, so a run has one label everywhere.
    """
    path = os.path.normpath(os.path.abspath(os.fspath(path)))
    base, ext = os.path.splitext(os.path.basename(path))
    if not os.path.isfile(path):
        return os.path.basename(path)
    if base == "model":
        return os.path.basename(os.path.dirname(path))
    return base if ext == ".zip" else os.path.basename(path)


def resolve_model(path: str | os.PathLike) -> tuple[str, str | None, str]:
    """``(model zip, config yaml or None, expected vecnormalize npz)`` of a run path.

    Args:
        path: A run folder (its ``model.zip``), a model ``.zip`` (the suffix may be left out) or
            a checkpoint ``checkpoints/<prefix>_<n>_steps.zip`` (whose run folder is the one
            above ``checkpoints/``).

    Returns:
        The model, the run's resolved config if it exists, and where the model's normaliser
        would be (it may not exist).

    Raises:
        FileNotFoundError: If there is no model.
    """
    path = os.fspath(path)
    if os.path.isdir(path):
        model = os.path.join(path, MODEL_FILE)
        run_dir = path
        norm = model_siblings(model)[0]
    else:
        model = path if path.endswith(".zip") else path + ".zip"
        here = os.path.dirname(os.path.abspath(model))
        norm = model_siblings(os.path.abspath(model))[0]
        run_dir = os.path.dirname(here) if checkpoint_steps(model) is not None else here
    if not os.path.isfile(model):
        raise FileNotFoundError(f"no model at {model!r} (expected a run folder with model.zip "
                                f"or a .zip file)")
    cfg = os.path.join(run_dir, CONFIG_FILE)
    return model, (cfg if os.path.isfile(cfg) else None), norm
