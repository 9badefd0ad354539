r"""Command line: ``python -m orca_env.evaluate {eval,replay} ...`` (also ``orca-env ...``).

Examples::

    # The ORCA baseline on 100 evaluation episodes, with 3 videos, 6 plotted episodes and logs.
    python -m orca_env.evaluate eval configs/crowdnav_circle.yaml --policy orca \\
        --episodes 100 --out runs/eval_orca --videos 3 --trajectories 6 --logs all

    # A saved model through a loader loader(path, env) -> policy.
    python -m orca_env.evaluate eval configs/bottleneck.yaml --policy policies.sb3:load \\
        --model runs/ppo/model.zip --out runs/eval_ppo

    # Replay a log in a window, or to a video, without re-running anything.
    python -m orca_env.evaluate replay runs/eval_orca/logs/episode_10000.npz
    python -m orca_env.evaluate replay runs/eval_orca/logs/episode_10000.npz --video ep.mp4

``eval`` prints the aggregate table on stdout and progress on stderr, and writes
``metrics.json`` (canonical, bit-reproducible), ``episodes.csv`` and the requested extras to
``--out``. ``--set key=value`` overrides a config key (dotted for sections:
``--set observation.range=6``; values are parsed as YAML). ``--print-hash`` prints the SHA-256
of ``metrics.json``.
"""

from __future__ import annotations

import argparse
import sys

__all__ = ["main", "build_parser"]


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


def build_parser(prog: str = "python -m orca_env.evaluate") -> argparse.ArgumentParser:
    """The argument parser with the ``eval`` and ``replay`` subcommands."""
    p = argparse.ArgumentParser(prog=prog, description="Evaluate policies on orca-env scenarios "
                                "and replay episode logs.")
    sub = p.add_subparsers(dest="command", required=True)

    e = sub.add_parser("eval", help="run a policy on the frozen evaluation seeds")
    e.add_argument("config", help="scenario config (YAML path)")
    e.add_argument("--policy", default="orca",
                   help="orca (default), random, package.module:policy, a loader with --model, "
                        "or a model file for the default loader policies:load_policy")
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

    r = sub.add_parser("replay", help="render an episode log to the screen or a video")
    r.add_argument("log", help="episode log (.npz)")
    r.add_argument("--video", default=None, help="write an mp4 (or .gif) instead of a window")
    r.add_argument("--fps", type=float, default=None, help="frames per second (default: 4)")
    r.add_argument("--size", type=int, default=720, help="long side, pixels")
    return p


def main(argv: list[str] | None = None, prog: str = "python -m orca_env.evaluate") -> int:
    """Run the command line; returns the exit code."""
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    if args.command == "eval":
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
            parser.exit(2, f"{parser.prog} eval: error: {exc}\n")
        if not args.quiet:
            print(format_table(report))
            if args.out:
                print(f"wrote {args.out}/metrics.json and episodes.csv")
        if args.print_hash:
            print(report_hash(report))
        return 0
    from .evaluation import replay  # noqa: PLC0415

    path = replay(args.log, video=args.video, fps=args.fps, size=args.size)
    if path:
        print(f"wrote {path}")
    return 0



if __name__ == "__main__":
    sys.exit(main())
