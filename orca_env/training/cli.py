"""The training command line: ``python train.py ...`` and ``orca-env train ...``.

Examples::

    python train.py                                    # default config, ~1-2 min
    python train.py --config configs/train/circle_ppo.yaml --n-timesteps 20000 --seed 3
    python train.py --resume runs/circle_ppo_s0_20250101-120000   # continue to n_timesteps
"""

from __future__ import annotations

import argparse
import os
import signal
import sys

from ..argtypes import positive_int
from ..configs import names
from ..files import WriteError
from .config import DEFAULT_CONFIG, TrainConfigError, resolve_config_path
from .experiment import (
    NoCheckpointError,
    TrainingInterrupted,
    TrainingWriteError,
    resume_command,
    run_experiment,
)
from .model_files import MissingExtraError

__all__ = ["EXIT_OK", "EXIT_FAILURE", "EXIT_USAGE", "build_parser", "main"]

EXIT_OK = 0
#: A run that cannot start: nothing to resume, or the train extra is missing.
EXIT_FAILURE = 1
#: Bad arguments (argparse's own code).
EXIT_USAGE = 2
DESCRIPTION = ("Train a shared navigation policy (stable-baselines3, or Ray RLlib with "
               "backend: rllib in the YAML) and compare it with pure ORCA.")


def build_parser(prog: str = "train.py") -> argparse.ArgumentParser:
    """The argument parser of the training command.

    Args:
        prog: The command's name in usage and help (``train.py``, ``orca-env train``).
    """
    cmd = f"python {prog}" if prog.endswith(".py") else prog  # a script runs through python
    p = argparse.ArgumentParser(
        prog=prog, description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=f"examples:\n  {cmd}\n  {cmd} --config {DEFAULT_CONFIG} --n-timesteps 20000 "
               f"--seed 3\n  {cmd} --resume runs/circle_ppo_s0_20250101-120000")
    p.add_argument("--config", default=None,
                   help=f"training YAML, looked up in the current folder, then in the "
                        f"repository root, or a shipped config's name "
                        f"({', '.join(names('train'))}) (default: {DEFAULT_CONFIG})")
    p.add_argument("--run-dir", default=None, help="run folder, new or empty (default: "
                   "<runs-root>/<name>_s<seed>_<time>); to continue a run use --resume")
    p.add_argument("--runs-root", default="runs",
                   help="folder of new run folders (default: %(default)s, in the current folder)")
    p.add_argument("--resume", default=None, metavar="RUN_DIR",
                   help="continue the run in RUN_DIR from its newest checkpoint")
    p.add_argument("--n-timesteps", type=positive_int, default=None, help="override n_timesteps")
    p.add_argument("--n-envs", type=positive_int, default=None, help="override n_envs")
    p.add_argument("--num-env-runners", type=int, default=None, metavar="N",
                   help="override num_env_runners (backend rllib: env runner processes, 0 "
                        "samples in the driver)")
    p.add_argument("--seed", type=int, default=None, help="override seed")
    p.add_argument("--eval-episodes", type=positive_int, default=None,
                   help="override eval.n_episodes (>= 1)")
    p.add_argument("--no-eval", action="store_true", help="skip the final comparison")
    p.add_argument("--no-video", action="store_true", help="skip the video")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--ship", action="store_true",
                   help="copy the result to orca_env.policies' trained/<config name> (the "
                        "shipped policy; in a checkout policies/trained/)")
    return p


def main(argv: list[str] | None = None, prog: str = "train.py") -> int:
    """Command-line entry point of training.

    Args:
        argv: The arguments (default: ``sys.argv[1:]``).
        prog: The command's name in usage and help.

    Returns:
        The exit code: :data:`EXIT_OK`; :data:`EXIT_FAILURE` if there is nothing to resume, or
        if stable-baselines3 or torch is missing (one line names the extra to install, as
        ``orca-env eval`` does for the video extra), or a file cannot be written (a full or
        read-only disk: one line naming the file and what was kept; during training also the
        newest complete checkpoint and the ``--resume`` command); ``128 + signal`` (130 for
        Ctrl-C, 143 for SIGTERM) when a signal stopped training, after saving a checkpoint
        (the lines printed say where, and the command that resumes); :data:`EXIT_USAGE` when
        the config file is missing or unreadable, or training refuses the config, its seeds,
        the ship name or the run folder (``--run-dir``, ``--runs-root``, ``--resume``: a
        file, a read-only place, a folder of another run), all before anything is written
        (one line on stderr). Bad arguments exit through argparse (``SystemExit`` with code
        2).
    """
    args = build_parser(prog).parse_args(argv)
    try:
        if args.resume is None:
            resolve_config_path(args.config or DEFAULT_CONFIG)
        elif not os.path.isfile(os.path.join(args.resume, "config.yaml")):
            raise FileNotFoundError(f"--resume {args.resume!r} is not a run folder (it has no "
                                    f"config.yaml)")
        if args.resume is None and args.run_dir is None and os.path.exists(args.runs_root) \
                and not os.path.isdir(args.runs_root):
            raise FileNotFoundError(f"--runs-root {args.runs_root!r} is not a folder")
    except FileNotFoundError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        run_experiment(args.config, run_dir=args.run_dir, runs_root=args.runs_root,
                       resume=args.resume, n_timesteps=args.n_timesteps, n_envs=args.n_envs,
                       seed=args.seed, eval_episodes=args.eval_episodes,
                       evaluate=not args.no_eval, video=not args.no_video,
                       progress_bar=not args.no_progress, ship_result=args.ship,
                       num_env_runners=args.num_env_runners)
    except TrainConfigError as exc:  # before the run folder is made: one line, no traceback
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except MissingExtraError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    except NoCheckpointError as exc:
        print(exc, file=sys.stderr)
        return EXIT_FAILURE
    except TrainingWriteError as exc:  # a full disk during training: what is kept, and resume
        print(f"{prog}: error: {exc}", file=sys.stderr)
        if exc.checkpoint is None:
            print(f"Training stopped at {exc.steps:,} steps with no complete checkpoint in the "
                  f"run folder {exc.run_dir}: free some space and start again", flush=True)
        else:
            print(f"Training stopped at {exc.steps:,} steps; the newest complete checkpoint "
                  f"{exc.checkpoint} is kept in the run folder {exc.run_dir}", flush=True)
            print(f"Free some space, then resume with: {resume_command(prog, exc.run_dir)}",
                  flush=True)
        return EXIT_FAILURE
    except WriteError as exc:  # a file not written completely (a full disk): its own line
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    except OSError as exc:  # a read-only or full disk, a path that is a file: one line
        where = f": {exc.filename}" if exc.filename else ""
        print(f"{prog}: error: {exc.strerror or exc}{where}", file=sys.stderr)
        return EXIT_FAILURE
    except TrainingInterrupted as exc:
        where = f"saved the checkpoint {exc.checkpoint}" if exc.checkpoint else "nothing saved"
        print(f"Training stopped by {signal_name(exc.signum)}; {where} (with its normaliser "
              f"and replay buffer, if any) in the run folder {exc.run_dir}", flush=True)
        print(f"Resume with: {resume_command(prog, exc.run_dir)}", flush=True)
        return exc.exit_code
    return EXIT_OK


def signal_name(signum: int) -> str:
    """``SIGINT`` for 2, ...; the number if the platform has no name for it."""
    try:
        return signal.Signals(signum).name
    except ValueError:
        return str(signum)
