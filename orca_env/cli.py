r"""The ``orca-env`` command line (``python -m orca_env``): train, eval, replay and bench.

Examples::

    # The ORCA baseline on 100 evaluation episodes, with 3 videos, 6 plotted episodes and logs.
    orca-env eval configs/crowdnav_circle.yaml --policy orca \\
        --episodes 100 --out runs/eval_orca --videos 3 --trajectories 6 --logs all

    # A saved model through a loader loader(path, env) -> policy.
    orca-env eval configs/bottleneck.yaml --policy orca_env.policies:load_policy \\
        --model runs/ppo/model.zip --out runs/eval_ppo

    # Replay a log in a window, to a video, or to an HTML page that plays in a browser,
    # without re-running anything.
    orca-env replay runs/eval_orca/logs/episode_10000.npz
    python -m orca_env replay runs/eval_orca/logs/episode_10000.npz --video ep.mp4
    orca-env replay runs/eval_orca/logs/episode_10000.npz --html episode.html

    # Train (the options are those of orca_env.training.cli; needs the train extras).
    orca-env train --help

    # The standard benchmark suite (configs/suites/standard.yaml) for two policies, into
    # runs/bench_standard/ (bench.json, bench.md, bench.png); --quick runs 2 episodes per entry.
    orca-env bench --policy orca --policy random
    orca-env bench --policy runs/my_run --no-safety runs/my_run --tags deadlock,crush

``eval`` prints the aggregate table on stdout and progress on stderr, and writes
``metrics.json`` (canonical, bit-reproducible), ``episodes.csv`` and the requested extras to
``--out`` (created and checked before the first episode; every file is written atomically),
then lists every file it wrote under the folder; without ``--out`` it writes nothing and says
so. A policy has one label in the table, ``metrics.json``, video titles, logs and progress, as
``bench`` labels it: the shipped policy's or run folder's name, or ``NAME`` of
``--policy NAME=SPEC``.
A file that cannot be written completely (a full disk; for a video also ffmpeg's exit status
and a truncated file) is one line naming it and what was kept, exit status 1, and nothing
renamed into place (:class:`orca_env.files.WriteError`).
``--set key=value`` overrides a config key (dotted for sections: ``--set observation.range=6``;
integers for list items: ``--set groups.0.count=32``; values are parsed as YAML); ``bench
--set`` overrides it in every entry of the suite, after the suite's own ``set``.
``--print-hash`` prints the SHA-256 of ``metrics.json``. ``bench`` runs each policy on each
entry of a suite through the same evaluation (:mod:`orca_env.evaluation.bench` documents the
suite file and its seeds) and writes ``bench.json`` (canonical), ``bench.md`` and
``bench.png``. Videos, trajectory plots, ``bench.png`` and replay need the video extra,
``pip install "orca-env[video]"`` (pygame-ce, imageio, imageio-ffmpeg, matplotlib); without it
the command says so before any work.

A custom policy is ``--policy package.module:callable``: ``policy(observations, env) ->
actions``, where ``actions`` maps exactly the live agents ``env.agents`` to ``(2,)`` arrays in
``[-1, 1]``; a class is instantiated with no arguments; with ``--model PATH`` the callable is a
loader, called as ``loader(PATH, env) -> policy``. ``replay`` without ``--video`` opens a window
and refuses to run where there is no display (``SDL_VIDEODRIVER=dummy``, or no ``DISPLAY`` on
Linux).

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
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import __version__, warmup
from .argtypes import (
    count_or_all,
    frames_per_second,
    names,
    non_negative_int,
    pixels,
    positive_int,
)
from .files import WriteError

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


# -- train --------------------------------------------------------------------------------------
def _train_arguments(p: argparse.ArgumentParser) -> None:
    # Everything after "train" goes to orca_env.training.cli.main, with its own parser and help.
    p.add_argument("argv", nargs=argparse.REMAINDER, help="options of the training command")


def _train_run(args: argparse.Namespace) -> int:
    # Imported here: the training package pulls in stable-baselines3 and torch, which eval and
    # replay must not need.
    try:
        from .training.cli import main as train_main  # noqa: PLC0415
    except ImportError as exc:
        raise CommandError(f"training is unavailable: cannot import orca_env.training.cli "
                           f"({exc}); install the train extras: pip install 'orca-env[train]'",
                           code=1) from exc
    return int(train_main(args.argv, prog=f"{args.prog} train") or 0)


# -- eval ---------------------------------------------------------------------------------------
def _eval_arguments(e: argparse.ArgumentParser) -> None:
    e.description = (
        "Run a policy on a scenario config over the frozen evaluation seeds (episode k: seed\n"
        "10000 + k). Prints the table of aggregates (mean and 95% interval) on stdout and\n"
        "progress on stderr. Writes files only with --out DIR (nothing is written without it):\n"
        "  metrics.json      the report (canonical: the same run gives the same bytes)\n"
        "  episodes.csv      one row of metrics per episode\n"
        "  trajectories.png  with --trajectories K\n"
        "  videos/           episode_<seed>.mp4 with --videos K\n"
        "  logs/             episode_<seed>.npz with --logs K (orca-env replay plays them)\n"
        "and then lists every file it wrote. The policy's label (table, metrics.json, video\n"
        "titles) is its name (orca, orca_margin, random, cadrl, ga3c_cadrl, a shipped\n"
        "policy's), a run folder's name, or NAME from --policy NAME=SPEC.")
    e.epilog = (
        "examples:\n"
        "  %(prog)s circle_dense\n"
        "  %(prog)s bottleneck --policy generalist --episodes 50 --out runs/eval_bottleneck\n"
        "  %(prog)s crowdnav_circle --policy runs/my_run --out runs/eval_my_run --videos 2 "
        "--logs all\n"
        "  %(prog)s doorway --policy mine=runs/my_run/model.zip --set max_steps=200\n"
        "  %(prog)s configs/my_scene.yaml --policy mypkg.policies:greedy --quiet --print-hash")
    e.formatter_class = argparse.RawDescriptionHelpFormatter
    e.add_argument("config", help="scenario config: a YAML path or a shipped config's name "
                   "(circle_dense, bottleneck, ...)")
    e.add_argument("--policy", default="orca", metavar="[NAME=]SPEC",
                   help="orca (default), orca_margin (pure ORCA with the 0.10 m "
                        "safety margin the shipped generalists deploy with), random, the "
                        "published baselines "
                        "cadrl and ga3c_cadrl "
                        "(weights from gym-collision-avoidance: pip install --no-deps "
                        "gym-collision-avoidance==0.0.3), a model file or run folder for the "
                        "default loader orca_env.policies:load_policy, a shipped policy by name "
                        "(circle_ppo, crowdnav, crowdnav_circle, crowdnav_unicycle, generalist, "
                        "generalist_residual, generalist_sarl, generalist_sarl2), or "
                        "package.module:callable. A "
                        "callable is a policy, policy(observations, env) -> actions, returning "
                        "{agent: (2,) action in [-1, 1]} for exactly the live agents env.agents; "
                        "a class is instantiated with no arguments and the instance is the "
                        "policy; with --model the callable is a loader, called as "
                        "loader(path, env) -> policy. A dotted path imports that module and "
                        "calls that callable: it runs arbitrary code, pass only code you "
                        "trust. NAME= labels the policy (default: the shipped policy's or run "
                        "folder's name, or SPEC). A trained model brings its action mode, "
                        "observation settings and its run config's deploy keys (a safety "
                        "margin, learned_orca_padding; --set learned_orca_padding=null runs "
                        "without it)")
    e.add_argument("--model", default=None, help="saved model passed to the loader --policy")
    e.add_argument("--episodes", type=positive_int, default=20,
                   help="episodes, >= 1; episode k uses evaluation seed 10000 + k (default 20)")
    e.add_argument("--first-episode", type=non_negative_int, default=0,
                   help="index of the first episode (default 0)")
    e.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config key (repeatable; dotted for sections, integers for "
                        "list items: --set groups.0.count=32)")
    e.add_argument("--out", default=None, metavar="DIR",
                   help="output folder (metrics.json, episodes.csv, and the videos, logs and "
                        "plot asked for), created and checked before the first episode; "
                        "default: none, nothing is written")
    e.add_argument("--videos", type=non_negative_int, default=0,
                   help="videos of the first K episodes")
    e.add_argument("--video-format", choices=("mp4", "gif"), default="mp4")
    e.add_argument("--video-size", type=pixels, default=720,
                   help="long side, pixels (240 .. 8192)")
    e.add_argument("--trajectories", type=non_negative_int, default=0,
                   help="plot the first K episodes into trajectories.png")
    e.add_argument("--logs", type=count_or_all, default=0,
                   help="episode logs of the first K episodes, or 'all'")
    e.add_argument("--debug-agent", type=non_negative_int, default=None,
                   help="slot whose ORCA half-planes videos and logs show (0 .. slots - 1)")
    e.add_argument("--personal-space", type=float, default=0.5, metavar="M",
                   help="personal-space radius of the social metrics, m of clearance to a human "
                        "(surface to surface, >= 0; default 0.5): personal_space_intrusion is "
                        "the fraction of steps ending closer")
    e.add_argument("--quiet", action="store_true", help="no progress, no table")
    e.add_argument("--print-hash", action="store_true", help="print the SHA-256 of the JSON")


def _drop_empty(folder: str | None) -> None:
    """Remove ``folder`` if it exists and is empty: the one a rejected command just created."""
    if folder is not None and os.path.isdir(folder) and not os.listdir(folder):
        os.rmdir(folder)


def _personal_space(value: float) -> float:
    """``--personal-space`` checked (a ValueError naming the option), before any work."""
    from .evaluation.social import check_personal_space  # noqa: PLC0415

    return check_personal_space(value, arg="--personal-space")


def _eval_run(args: argparse.Namespace) -> int:
    from .evaluation import eval_seeds, evaluate, format_table, report_hash  # noqa: PLC0415
    from .evaluation.bench import BenchPolicy  # noqa: PLC0415
    from .evaluation.overrides import config_overrides, parse_set_items  # noqa: PLC0415
    from .evaluation.suite import check_no_links, prepare_out_dir  # noqa: PLC0415
    from .scenarios import SpawnError  # noqa: PLC0415

    # The --out folder this command creates, removed again if the command is rejected.
    new_out = args.out if args.out is not None and not os.path.exists(args.out) else None
    try:
        personal_space = _personal_space(args.personal_space)
        overrides = config_overrides(args.config, parse_set_items(args.set))
        if args.out is not None:
            # Before any episode: a bad folder must not cost a whole evaluation.
            prepare_out_dir(args.out, arg="--out")
            check_no_links(args.out, [sub for sub, k in (("logs", args.logs),
                                                         ("videos", args.videos)) if k],
                           arg="--out")
        policy = BenchPolicy.parse(args.policy)  # NAME=SPEC, as bench takes it
        report = evaluate(
            args.config, policy.spec, model=args.model, name=policy.name,
            seeds=eval_seeds(args.episodes, args.first_episode),
            overrides=overrides, out_dir=args.out, videos=args.videos,
            trajectories=args.trajectories, logs=args.logs, debug_agent=args.debug_agent,
            video_size=args.video_size, video_format=args.video_format,
            progress=not args.quiet, personal_space=personal_space)
    except (ValueError, FileNotFoundError, SpawnError) as exc:  # bad input: a message
        _drop_empty(new_out)
        raise CommandError(str(exc)) from exc
    except ImportError as exc:  # a missing extra: what to install
        _drop_empty(new_out)
        raise CommandError(str(exc), code=1) from exc
    except WriteError as exc:  # a full disk (a video, a log, metrics.json): one line, exit 1
        raise CommandError(str(exc), code=1) from exc
    if not args.quiet:
        print(format_table(report))
        if args.out:
            print(_written(args.out, report["seeds"], args))
        else:
            print("nothing written (pass --out DIR to keep metrics.json, episodes.csv, "
                  "videos and logs)")
    if args.print_hash:
        print(report_hash(report))
    return 0


def _written(out: str, seeds: list[int], args: argparse.Namespace) -> str:
    """The files eval wrote into ``out``, one a line under the folder (many logs as a range)."""
    n_logs = len(seeds) if args.logs < 0 else min(args.logs, len(seeds))
    files = ["metrics.json", "episodes.csv"]
    if args.trajectories:
        files.append("trajectories.png")
    files += [f"videos/episode_{s}.{args.video_format}" for s in seeds[:args.videos]]
    logs = [f"logs/episode_{s}.npz" for s in seeds[:n_logs]]
    # Listed only if there: the list is what the folder holds, not what was asked for.
    files = [f for f in files if os.path.isfile(os.path.join(out, f))]
    logs = [f for f in logs if os.path.isfile(os.path.join(out, f))]
    if len(logs) > 4:
        logs = [f"{logs[0]} .. {logs[-1]} ({len(logs)} logs)"]
    return "\n".join([f"wrote into {out}{'' if out.endswith(os.sep) else os.sep}:"]
                     + [f"  {f}" for f in files + logs])


# -- replay -------------------------------------------------------------------------------------
def _replay_arguments(r: argparse.ArgumentParser) -> None:
    r.description = (
        "Draw an episode log (eval --logs writes them to <out>/logs/) in a window, into a\n"
        "video with --video, or into one self-contained HTML file with --html that plays the\n"
        "episode in any browser (play, pause, scrub, speed; no server, no network, nothing to\n"
        "install: a file to share); nothing is re-run.")
    r.epilog = (
        "examples:\n"
        "  %(prog)s runs/eval_orca/logs/episode_10000.npz\n"
        "  %(prog)s runs/eval_orca/logs/episode_10000.npz --html episode.html\n"
        "  %(prog)s runs/eval_orca/logs/episode_10000.npz --video ep.mp4 --fps 8\n"
        "  %(prog)s runs/eval_orca/logs/episode_10000.npz --video ep.gif --size 480")
    r.formatter_class = argparse.RawDescriptionHelpFormatter
    r.add_argument("log", help="episode log (.npz)")
    r.add_argument("--video", default=None,
                   help="write an mp4 (or .gif) instead of opening a window (needed without a "
                        "display)")
    r.add_argument("--html", default=None, metavar="FILE",
                   help="write a self-contained HTML player of the episode (.html appended "
                        "when FILE has no extension) instead of opening a window; needs no "
                        "video extra; with --video, both are written")
    r.add_argument("--fps", type=frames_per_second, default=None,
                   help="frames per second of the window and the video, > 0 (default: the "
                        "log's, 4; the HTML player plays at simulated time, 0.25x .. 4x)")
    r.add_argument("--size", type=pixels, default=720,
                   help="long side of the window and the video, pixels (240 .. 8192; the "
                        "HTML player fits the browser's window)")


def _headless() -> str | None:
    """Why no window can open here (``None``: a display seems available)."""
    driver = os.environ.get("SDL_VIDEODRIVER", "")
    if driver in ("dummy", "offscreen"):
        return f"SDL_VIDEODRIVER={driver}"
    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY")
                                                 or os.environ.get("WAYLAND_DISPLAY")):
        return "neither DISPLAY nor WAYLAND_DISPLAY is set"
    return None


def _replay_run(args: argparse.Namespace) -> int:
    from .evaluation import load_log, replay  # noqa: PLC0415
    from .evaluation.suite import prepare_out_dir  # noqa: PLC0415

    try:
        log = load_log(args.log)
    except (ValueError, OSError) as exc:  # a missing or broken file: a message, no traceback
        raise CommandError(str(exc)) from exc
    if args.video is None and args.html is None:
        reason = _headless()
        if reason:
            raise CommandError(f"no display to open a replay window on ({reason}): pass --video "
                               f"out.mp4 to write a video, or --html out.html for a page that "
                               f"plays in a browser, instead")
    for option, path in (("--video", args.video), ("--html", args.html)):
        if path is None:
            continue
        if os.path.isdir(path):
            raise CommandError(f"{option} {path!r} is a folder: give a file name")
        try:
            prepare_out_dir(os.path.dirname(os.path.abspath(path)), arg="folder")
        except ValueError as exc:
            raise CommandError(f"{option} {path!r}: {exc}") from exc
    if args.html is not None:
        from .evaluation.html_viewer import write_html  # noqa: PLC0415

        try:
            page = write_html(log, args.html)
        except WriteError as exc:  # a full disk: one line
            raise CommandError(str(exc), code=1) from exc
        print(f"wrote {page} ({os.path.getsize(page) / 1e6:.2f} MB; open it in a browser)")
        if args.video is None:
            return 0
    try:
        # pygame (and imageio for --video) are checked before the first frame.
        path = replay(log, video=args.video, fps=args.fps, size=args.size)
    except ImportError as exc:  # a missing extra: what to install
        raise CommandError(str(exc), code=1) from exc
    except WriteError as exc:  # an incomplete video (a full disk, ffmpeg failed): one line
        raise CommandError(str(exc), code=1) from exc
    if path:
        print(f"wrote {path}")
    return 0


# -- bench --------------------------------------------------------------------------------------
class _PolicyAction(argparse.Action):
    """``--policy`` and ``--no-safety`` append ``(spec, safety_layer)`` to one list, in order."""

    def __call__(self, parser, namespace, values, option_string=None):
        items = list(getattr(namespace, self.dest, None) or [])
        items.append((values, self.const))
        setattr(namespace, self.dest, items)


#: Episodes per entry of ``bench --quick``.
QUICK_EPISODES = 2


def _bench_arguments(b: argparse.ArgumentParser) -> None:
    b.description = (
        "Run policies on every entry of a benchmark suite (scenario configs with overrides,\n"
        "episode counts and tags) on frozen evaluation seeds. Writes to --out:\n"
        "  bench.json  entry -> policy -> metric -> mean and 95% interval (the metrics of\n"
        "              eval's metrics.json), and each policy's difference to pure ORCA (or\n"
        "              to the first policy), paired by seed, with its time to goal over the\n"
        "              reference's, paired by seed and agent; the same suite and policies\n"
        "              give the same bytes. Also the --set items and each policy's safety\n"
        "              margin (learned_orca_padding) per entry, and where it came from\n"
        "  bench.md    the same margins, then tables of success, collision, deadlock and\n"
        "              timeout rates and of the paired differences and time ratios\n"
        "  bench.png   the same rates with their intervals, policies side by side\n"
        "  entries/<entry>/<policy>/metrics.json, episodes.csv  each run, as eval writes them\n"
        "              (runs of an earlier bench into the same folder that this one does not\n"
        "              list are removed)\n"
        "Episode k of an entry uses seed <suite seed> + <entry seed_offset> + k: evaluation\n"
        "seeds, which training refuses. Progress goes to stderr, the table to stdout.")
    b.epilog = (
        "examples:\n"
        "  %(prog)s --policy orca --policy random\n"
        "  %(prog)s --policy runs/my_run --no-safety runs/my_run --policy orca\n"
        "  %(prog)s --policy old=runs/a/ppo --policy new=runs/b/ppo\n"
        "  %(prog)s --entries doorway,circle_nojitter --episodes 5 --out runs/bench_small\n"
        "  %(prog)s --tags deadlock,crush --quick\n"
        "  %(prog)s --policy generalist --set learned_orca_padding=null --out runs/no_margin\n"
        "  %(prog)s my_suite.yaml --list")
    b.formatter_class = argparse.RawDescriptionHelpFormatter
    b.add_argument("suite", nargs="?", default="standard",
                   help="suite file: a YAML path or a shipped suite's name: standard (the "
                        "default, configs/suites/standard.yaml), heldout, and validation and "
                        "validation_heldout for choosing among runs")
    b.add_argument("--policy", dest="policies", action=_PolicyAction, const=True,
                   metavar="[NAME=]SPEC",
                   help="a policy to run, with the safety layer as the configs set it "
                        "(repeatable; default: orca): orca, orca_margin (pure ORCA with the "
                        "generalists' 0.10 m safety margin, the baseline that "
                        "tells what their learning adds to it; the reference when it comes "
                        "first and orca does not run), random, cadrl, ga3c_cadrl, a model "
                        "file or run folder, "
                        "a shipped policy by name (generalist), or package.module:callable "
                        "(imported and called: pass only code you trust), as eval --policy, "
                        "with the settings a trained model brings (its deploy margin too, "
                        "as orca_margin brings its own; --set learned_orca_padding=null runs "
                        "every policy without one). "
                        "Labelled by its folder's or file's name, or by NAME (letters, digits, "
                        "'.', '_', '-', starting with a letter or digit)")
    b.add_argument("--no-safety", dest="policies", action=_PolicyAction, const=False,
                   metavar="[NAME=]SPEC",
                   help="a policy to run without the safety layer: safety_layer false for every "
                        "learned group, so the action is the velocity itself (repeatable; "
                        "policies appear in the order of --policy and --no-safety); "
                        "'--no-safety orca' walks straight at the goal, avoiding nothing")
    n = b.add_mutually_exclusive_group()
    n.add_argument("--episodes", type=positive_int, default=None,
                   help="episodes per entry instead of the suite's counts (its first episodes: "
                        "the seeds do not move)")
    n.add_argument("--quick", action="store_true",
                   help=f"{QUICK_EPISODES} episodes per entry (a smoke test for CI)")
    b.add_argument("--entries", type=names, action="extend", default=[], metavar="NAMES",
                   help="run only these entries (comma-separated, repeatable)")
    b.add_argument("--tags", type=names, action="extend", default=[], metavar="TAGS",
                   help="run only the entries with these tags (comma-separated, repeatable; "
                        "with --entries: entries matching either)")
    b.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config key in every entry, after the suite's own set, as "
                        "eval --set does (repeatable; dotted for sections, integers for list "
                        "items: --set groups.0.count=32; values are YAML); recorded in "
                        "bench.json and bench.md. --set learned_orca_padding=null runs the "
                        "policies without the safety margin their deploy section brings")
    b.add_argument("--out", default=None,
                   help="output folder (default: runs/bench_<suite name>), created and checked "
                        "before the first episode")
    b.add_argument("--no-figure", action="store_true",
                   help="skip bench.png (which needs matplotlib, from the video extra)")
    b.add_argument("--list", action="store_true",
                   help="list the suite's entries (config, tag, episodes, seeds) and exit")
    b.add_argument("--personal-space", type=float, default=0.5, metavar="M",
                   help="personal-space radius of the social metrics, m of clearance to a human "
                        "(>= 0; default 0.5), as eval --personal-space")
    b.add_argument("--quiet", action="store_true", help="no progress, no table")
    b.add_argument("--print-hash", action="store_true", help="print the SHA-256 of bench.json")


def _bench_list(suite: Any) -> str:
    rows = [("entry", "tag", "config", "episodes", "seeds", "set")]
    for e in suite.entries:
        seeds = suite.seeds(e)
        rows.append((e.name, e.tag, e.config, str(e.episodes), f"{seeds[0]}..{seeds[-1]}",
                     ", ".join(f"{k}={v}" for k, v in e.set.items()) or "-"))
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    lines = [f"suite {suite.name} ({suite.path}): {len(suite.entries)} entries"
             + (f"; {suite.description}" if suite.description else "")]
    if suite.extra_set:
        lines.append("--set (every entry, after its set): "
                     + ", ".join(f"{k}={json.dumps(v)}" for k, v in suite.extra_set.items()))
    lines += ["  ".join(s.ljust(w) for s, w in zip(r, widths, strict=True)).rstrip()
              for r in rows]
    return "\n".join(lines)


def _bench_run(args: argparse.Namespace) -> int:
    from .evaluation.bench import BenchPolicy, load_suite, run_bench, write_bench  # noqa: PLC0415
    from .evaluation.plots import require_matplotlib  # noqa: PLC0415
    from .evaluation.suite import prepare_out_dir  # noqa: PLC0415

    t0 = time.perf_counter()
    new_out = None
    try:
        personal_space = _personal_space(args.personal_space)
        suite = load_suite(args.suite)
        suite = suite.select(args.entries, args.tags, arg="--entries")
        suite = suite.with_episodes(QUICK_EPISODES if args.quick else args.episodes,
                                    arg="--episodes")
        suite = suite.with_set(args.set)  # checked against every entry's config
        if args.list:
            print(_bench_list(suite))
            return 0
        if not args.no_figure:
            require_matplotlib()  # before any episode
        out = args.out if args.out is not None else os.path.join("runs", f"bench_{suite.name}")
        new_out = out if not os.path.exists(out) else None
        prepare_out_dir(out, arg="--out")
        policies = [BenchPolicy.parse(spec, safe)
                    for spec, safe in (args.policies or [("orca", True)])]
        report = run_bench(suite, policies, out_dir=out, progress=not args.quiet,
                           personal_space=personal_space)
        paths = write_bench(report, out, figure=not args.no_figure)
    except (ValueError, FileNotFoundError) as exc:  # bad input: a message, no traceback
        _drop_empty(new_out)
        raise CommandError(str(exc)) from exc
    except ImportError as exc:  # a missing extra: what to install
        _drop_empty(new_out)
        raise CommandError(f"{exc} (or pass --no-figure)", code=1) from exc
    if not args.quiet:
        from .evaluation.bench import format_markdown  # noqa: PLC0415

        print(format_markdown(report), end="")
        files = [paths["json"], paths["markdown"]] + ([paths["figure"]] if paths["figure"] else [])
        print(f"wrote {', '.join(files)} and entries/ ({time.perf_counter() - t0:.1f} s)")
    if args.print_hash:
        print(paths["hash"])
    return 0


#: The subcommands, in the order of the help.
COMMANDS: tuple[Command, ...] = (
    Command("train", "train a policy with stable-baselines3 (options: train --help)",
            _train_arguments, _train_run, forward=True),
    Command("eval", "run a policy on the frozen evaluation seeds", _eval_arguments, _eval_run),
    Command("replay", "render an episode log to the screen, a video or an HTML player",
            _replay_arguments, _replay_run),
    Command("bench", "run policies on a benchmark suite of scenarios (default: standard)",
            _bench_arguments, _bench_run),
    Command("warmup", "compile and cache every numba kernel ahead of use (Docker builds, "
            "cluster workers)", warmup.add_arguments, warmup.run),
)


def build_parser(prog: str = PROG) -> argparse.ArgumentParser:
    """The argument parser: ``--version`` and one subparser per entry of :data:`COMMANDS`."""
    p = argparse.ArgumentParser(prog=prog, description="Train, evaluate and benchmark policies on "
                                "orca-env scenarios, and replay episode logs.")
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
