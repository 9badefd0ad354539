r"""The ``orca-env`` command line (also ``python -m orca_env``): ``train``, ``eval``, ``replay``.

Examples::

    # The ORCA baseline on 100 evaluation episodes, with 3 videos, 6 plotted episodes and logs.
    orca-env eval configs/crowdnav_circle.yaml --policy orca \\
        --episodes 100 --out runs/eval_orca --videos 3 --trajectories 6 --logs all

    # A saved model through a loader loader(path, env) -> policy.
    orca-env eval configs/bottleneck.yaml --policy orca_env.policies:load_policy \\
        --model runs/ppo/model.zip --out runs/eval_ppo

    # Replay a log in a window, or to a video, without re-running anything.
    orca-env replay runs/eval_orca/logs/episode_10000.npz
    python -m orca_env replay runs/eval_orca/logs/episode_10000.npz --video ep.mp4

    # Train (the options are those of orca_env.training; needs the train extras).
    orca-env train --help

``eval`` prints the aggregate table on stdout and progress on stderr, and writes
``metrics.json`` (canonical, bit-reproducible), ``episodes.csv`` and the requested extras to
``--out``. ``--set key=value`` overrides a config key (dotted for sections:
``--set observation.range=6``; values are parsed as YAML). ``--print-hash`` prints the SHA-256
of ``metrics.json``.

``--policy package.module:callable`` imports that module and calls that callable: it runs
arbitrary code with your privileges. It is the plug-in mechanism for your own policies and
loaders, and only this explicit dotted syntax (or a model file, for the default loader) leads
to it; pass only code you trust.

The subcommands are the entries of :data:`COMMANDS`, each a :class:`Command` with
``add_arguments(parser)`` and ``run(args) -> int``; a new subcommand is one more entry.
Importing this module is light: numpy, numba, the env, torch, pygame and matplotlib load only
when a command runs.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["main", "build_parser", "Command", "COMMANDS", "CommandError"]

PROG = "orca-env"


class CommandError(Exception):
    """A failure a command reports as one line on stderr (no traceback) with an exit code.

    Args:
        message: The line, without the ``prog command: error:`` prefix.
        code: The exit code: 2 for bad input (as argparse), 1 otherwise.
    """

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Command:
    """A subcommand of the command line.

    Attributes:
        name: The subcommand (``orca-env <name> ...``).
        help: One line for the top-level help.
        add_arguments: Adds the subcommand's options to its parser.
        run: Runs the subcommand on the parsed arguments; returns the exit code, or raises
            :class:`CommandError`.
        forward: The subcommand parses its own arguments: the parser leaves them untouched in
            ``args.argv`` (``--help`` included) for ``run`` to pass on.
    """

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
    forward: bool = False


# -- argument types -----------------------------------------------------------------------------
def _parse_set(items: list[str]) -> dict:
    """Nested overrides from ``--set key=value`` items (dotted keys for sections).

    Raises:
        ValueError: On an item without ``=`` or key, an empty key part, or a dotted key below
            a key an earlier item set to a plain value (``--set a=1 --set a.b=2``).
    """
    import yaml  # noqa: PLC0415

    out: dict = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--set expects key=value, got {item!r}")
        parts = key.split(".")
        if not all(parts):
            raise ValueError(f"--set {item!r}: empty part in the key {key!r}")
        try:
            value = yaml.safe_load(raw)
        except yaml.YAMLError as exc:
            raise ValueError(f"--set {item!r}: the value is not valid YAML ({exc})") from exc
        node = out
        for depth, p in enumerate(parts[:-1]):
            node = node.setdefault(p, {})
            if not isinstance(node, dict):
                raise ValueError(f"--set {item!r}: {'.'.join(parts[:depth + 1])!r} was set to "
                                 f"{node!r} by an earlier --set, so it has no key "
                                 f"{parts[depth + 1]!r}")
        node[parts[-1]] = value
    return out


def _non_negative(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {value!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {value!r}")
    return n


def _count(value: str) -> int:
    if value == "all":
        return -1
    try:
        n = int(value)
    except ValueError:
        n = -1
    if n < 0:
        raise argparse.ArgumentTypeError(f"expected a count >= 0 or 'all', got {value!r}")
    return n


# -- train --------------------------------------------------------------------------------------
def _train_arguments(p: argparse.ArgumentParser) -> None:
    # Everything after "train" goes to orca_env.training.main, which has its own parser and help.
    p.add_argument("argv", nargs=argparse.REMAINDER, help="options of the training command")


def _train_run(args: argparse.Namespace) -> int:
    # Imported here: the training package pulls in stable-baselines3 and torch, which eval and
    # replay must not need.
    try:
        from .training import main as train_main  # noqa: PLC0415
    except ImportError as exc:
        raise CommandError(f"training is unavailable: cannot import orca_env.training.main "
                           f"({exc}); install the train extras: pip install 'orca-env[train]'",
                           code=1) from exc
    return int(train_main(args.argv, prog=f"{args.prog} train") or 0)


# -- eval ---------------------------------------------------------------------------------------
def _eval_arguments(e: argparse.ArgumentParser) -> None:
    e.add_argument("config", help="scenario config (YAML path)")
    e.add_argument("--policy", default="orca",
                   help="orca (default), random, a model file or run folder for the default "
                        "loader orca_env.policies:load_policy, or package.module:callable (a "
                        "policy, or a loader with --model). A dotted path imports that module "
                        "and calls that callable: it runs arbitrary code, pass only code you "
                        "trust")
    e.add_argument("--model", default=None, help="saved model passed to the loader --policy")
    e.add_argument("--episodes", type=_non_negative, default=20,
                   help="episodes; episode k uses evaluation seed 10000 + k (default 20)")
    e.add_argument("--first-episode", type=_non_negative, default=0,
                   help="index of the first episode (default 0)")
    e.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config key (repeatable; dotted for sections)")
    e.add_argument("--out", default=None, help="output folder (metrics.json, episodes.csv, ...)")
    e.add_argument("--videos", type=_non_negative, default=0,
                   help="videos of the first K episodes")
    e.add_argument("--video-format", choices=("mp4", "gif"), default="mp4")
    e.add_argument("--video-size", type=int, default=720, help="long side, pixels")
    e.add_argument("--trajectories", type=_non_negative, default=0,
                   help="plot the first K episodes into trajectories.png")
    e.add_argument("--logs", type=_count, default=0,
                   help="episode logs of the first K episodes, or 'all'")
    e.add_argument("--debug-agent", type=_non_negative, default=None,
                   help="slot whose ORCA half-planes videos and logs show (0 .. slots - 1)")
    e.add_argument("--quiet", action="store_true", help="no progress, no table")
    e.add_argument("--print-hash", action="store_true", help="print the SHA-256 of the JSON")


def _eval_run(args: argparse.Namespace) -> int:
    from .evaluation import eval_seeds, evaluate, format_table, report_hash  # noqa: PLC0415

    try:
        report = evaluate(
            args.config, args.policy, model=args.model,
            seeds=eval_seeds(args.episodes, args.first_episode),
            overrides=_parse_set(args.set), out_dir=args.out, videos=args.videos,
            trajectories=args.trajectories, logs=args.logs, debug_agent=args.debug_agent,
            video_size=args.video_size, video_format=args.video_format,
            progress=not args.quiet)
    except (ValueError, FileNotFoundError) as exc:  # bad input: a message, no traceback
        raise CommandError(str(exc)) from exc
    if not args.quiet:
        print(format_table(report))
        if args.out:
            print(f"wrote {args.out}/metrics.json and episodes.csv")
    if args.print_hash:
        print(report_hash(report))
    return 0


# -- replay -------------------------------------------------------------------------------------
def _replay_arguments(r: argparse.ArgumentParser) -> None:
    r.add_argument("log", help="episode log (.npz)")
    r.add_argument("--video", default=None, help="write an mp4 (or .gif) instead of a window")
    r.add_argument("--fps", type=float, default=None, help="frames per second (default: 4)")
    r.add_argument("--size", type=int, default=720, help="long side, pixels")


def _replay_run(args: argparse.Namespace) -> int:
    from .evaluation import load_log, replay  # noqa: PLC0415

    try:
        log = load_log(args.log)
    except (ValueError, OSError) as exc:  # a missing or foreign file: a message, no traceback
        raise CommandError(str(exc)) from exc
    path = replay(log, video=args.video, fps=args.fps, size=args.size)
    if path:
        print(f"wrote {path}")
    return 0


#: The subcommands, in the order of the help.
COMMANDS: tuple[Command, ...] = (
    Command("train", "train a policy with stable-baselines3 (options: train --help)",
            _train_arguments, _train_run, forward=True),
    Command("eval", "run a policy on the frozen evaluation seeds", _eval_arguments, _eval_run),
    Command("replay", "render an episode log to the screen or a video", _replay_arguments,
            _replay_run),
)


def build_parser(prog: str = PROG) -> argparse.ArgumentParser:
    """The argument parser: ``--version`` and one subparser per entry of :data:`COMMANDS`."""
    from . import __version__  # noqa: PLC0415

    p = argparse.ArgumentParser(prog=prog, description="Train and evaluate policies on orca-env "
                                "scenarios, and replay episode logs.")
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    for cmd in COMMANDS:
        # A forwarding command's --help belongs to the command it forwards to.
        s = sub.add_parser(cmd.name, help=cmd.help, add_help=not cmd.forward)
        cmd.add_arguments(s)
        s.set_defaults(_command=cmd, _parser=s)
    return p


def main(argv: list[str] | None = None, prog: str = PROG) -> int:
    """Run the command line; returns the exit code.

    Args:
        argv: The arguments (default ``sys.argv[1:]``).
        prog: The program's name in usage and messages (``orca-env``, ``python -m orca_env``).

    Raises:
        SystemExit: On bad arguments or input (code 2, one line on stderr), and for
            ``--help`` and ``--version`` (code 0).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(prog)
    forward = {c.name: c for c in COMMANDS if c.forward}
    if argv and argv[0] in forward:
        # Parsed by the command itself: argparse would take its options (--help) for ours.
        cmd = forward[argv[0]]
        args = argparse.Namespace(command=cmd.name, argv=argv[1:], _command=cmd,
                                  _parser=parser)
    else:
        args = parser.parse_args(argv)
    args.prog = prog
    cmd = args._command
    try:
        return cmd.run(args)
    except CommandError as exc:
        args._parser.exit(exc.code, f"{prog} {cmd.name}: error: {exc}\n")


if __name__ == "__main__":
    sys.exit(main())
