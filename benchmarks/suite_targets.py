"""Which entries of a suite meet the targets against a reference, pure ORCA by default (rates;
time, paired by agent).

The targets (``docs/evaluation.md#targets``; :func:`orca_env.evaluation.bench.missed_targets`)
are paired differences, policy minus reference on the same seeds, with their interval: success
at least -0.05 (at least +0.15 on the ``deadlock`` and ``crush`` entries), collision and
deadlock at most +0.05. An entry is ``met`` when every interval is on its target's side,
``missed`` when one is wholly on the other side, else ``undecided at N episodes``.

Beside them it prints issue 24's absolute targets for a generalist: success >= 0.90 with
collision <= 0.05 (entries not tagged deadlock or crush), and time to goal at most 1.3 times the
reference's, decided on the time ratio paired by seed and agent
(``docs/evaluation.md#time-to-goal-paired-by-agent``).

Two ways to run it:

    # The protocol: run the suite for the policy and pure ORCA, and give every undecided entry
    # follow-up episodes (from the suite's followup_seeds) up to 4x its own (at least as many
    # as could meet the 0.05 margin: 109 for one robot, 23 for four agents), then call it.
    python benchmarks/suite_targets.py --run validation --policy runs/my_run --out runs/val

    # One look at an existing bench (its episodes only; the same intervals as the protocol's
    # first look):
    orca-env bench validation --policy runs/my_run --policy orca --out runs/val
    python benchmarks/suite_targets.py runs/val/bench.json [--policy my_run]

Choose among training runs with the ``validation`` and ``validation_heldout`` suites; the
``standard`` and ``heldout`` suites' seeds should only report. ``--reference orca_margin``
decides the same targets against pure ORCA with the policies' 0.10 m safety margin (what the
learning adds to the margin; docs/results.md, "What the margin does alone"); the gain targets
of the deadlock and crush entries (+0.15) were written for pure ORCA, which crushes there, and
a reference that does not may leave them missed however well the policy does.
"""

import argparse
import json
import math
import os
import sys

from orca_env.evaluation.bench import (
    GAIN_TAGS,
    LOOKS,
    decide_targets,
    describe_call,
    load_suite,
    missed_targets,
    ratio_cell,
    write_bench,
)


def _rates(agg: dict) -> str:
    return " / ".join("-" if agg[k]["mean"] is None else f"{agg[k]['mean']:.3f}"
                      for k in ("success_rate", "collision_rate", "deadlock_rate"))


#: The second generalist's absolute targets (issue 24): success at least this and collision at
#: most that on every entry but the deadlock and crush ones (GAIN_TAGS, which need the gain over
#: the reference instead), time to goal at most this many times the reference's where both
#: arrive.
SUCCESS_FLOOR, COLLISION_CAP, TIME_RATIO_CAP = 0.90, 0.05, 1.3


def _mean(agg: dict, key: str) -> float | None:
    value = agg.get(key, {}).get("mean")
    return None if value is None or not math.isfinite(value) else float(value)


def time_ratio(res: dict, label: str, reference: str) -> float | None:
    """Mean time to goal of ``label`` over ``reference``'s on one entry (``None`` unless both
    have agents that arrived)."""
    mine, theirs = _mean(res[label], "time_to_goal"), _mean(res[reference], "time_to_goal")
    return None if mine is None or theirs is None or theirs <= 0 else mine / theirs


def time_call(ratio: dict | None, exact: bool = False) -> str | None:
    """The time target's call on a paired ratio (``metrics.paired_time_ratio``).

    ``met`` when its 95% interval is at most :data:`TIME_RATIO_CAP`, ``missed`` when wholly
    above it, else ``undecided``, as is an interval of zero width (episodes whose times all
    agree in ratio do not bound it: the rate targets' floor has no counterpart here) or none
    (one episode); ``None`` when no agent arrived in both runs (or the report predates the
    paired ratio). ``exact``: a seed-independent entry, whose one episode gives the ratio
    exactly (the point is called). The interval is the plain 95% one over the episodes the
    rate targets' protocol ran: the time target asks for no follow-up episodes of its own.
    """
    if ratio is None or ratio["ratio"] is None:
        return None
    if exact:
        return "met" if ratio["ratio"] <= TIME_RATIO_CAP else "missed"
    if ratio["ci95_low"] is None or ratio["ci95_low"] == ratio["ci95_high"]:
        return "undecided"
    if ratio["ci95_high"] <= TIME_RATIO_CAP:
        return "met"
    return "missed" if ratio["ci95_low"] > TIME_RATIO_CAP else "undecided"


def absolute_ok(agg: dict) -> bool:
    """Success at least :data:`SUCCESS_FLOOR` and collision at most :data:`COLLISION_CAP`
    (point estimates)."""
    success, collision = _mean(agg, "success_rate"), _mean(agg, "collision_rate")
    return success is not None and collision is not None and success >= SUCCESS_FLOOR \
        and collision <= COLLISION_CAP


def print_calls(report: dict, label: str, reference: str) -> None:
    """The markdown table of one policy's calls, and the counts.

    Beside the paired targets: whether the policy's success and collision rates meet
    :data:`SUCCESS_FLOOR` and :data:`COLLISION_CAP` (point estimates; ``-`` on the deadlock and
    crush entries, whose target is the gain), and its time to goal over the reference's,
    twice: paired by seed and agent over the agents that arrived in both runs, with its 95%
    interval and the call against :data:`TIME_RATIO_CAP` (:func:`time_call`), which decides
    the time target; and the ratio of the two runs' means over the agents each got there,
    which compares different agents when the success rates differ (kept for comparison with
    earlier tables).
    """
    calls = (report["targets"]["calls"] if report.get("targets", {}).get("policy") == label
             else missed_targets(report, label, reference=reference))
    tags = {e["name"]: e["tag"] for e in report["entries"]}
    exact = {e["name"]: bool(e.get("seed_independent")) for e in report["entries"]}
    print(f"| entry | tag | episodes | {label}: success / collision / deadlock | {reference} | "
          f"target | success >= {SUCCESS_FLOOR:.2f}, collision <= {COLLISION_CAP:.2f} | "
          f"time to goal / {reference}'s, paired by agent | call | ratio of the means |")
    print("|---|---|---:|---|---|---|---|---:|---|---:|")
    n_abs = n_floor = 0
    ratios = []
    time_calls = []
    for name, call in calls.items():
        res = report["results"][name]
        text = describe_call(call)
        if call["call"] == "missed":
            text = "**missed**" + text[len("missed"):]
        floor = tags[name] not in GAIN_TAGS
        ok = absolute_ok(res[label]) if floor else None
        n_floor += floor
        n_abs += bool(ok)
        ratio = time_ratio(res, label, reference)
        if ratio is not None:
            ratios.append(ratio)
        paired = report.get("time_ratios", {}).get(name, {}).get(label)
        tcall = time_call(paired, exact[name])
        if tcall is not None:
            time_calls.append(tcall)
        absolute = "-" if ok is None else "yes" if ok else "no"
        means = "-" if ratio is None else f"{ratio:.2f}"
        print(f"| {name} | {tags[name]} | {call['episodes']} | {_rates(res[label])} | "
              f"{_rates(res[reference])} | {text} | {absolute} | {ratio_cell(paired)} | "
              f"{tcall or '-'} | {means} |")
    counts = {k: sum(c["call"] == k for c in calls.values()) for k in ("met", "missed",
                                                                       "undecided")}
    print(f"\n{label}: targets met on {counts['met']} of {len(calls)} entries, missed on "
          f"{counts['missed']}, undecided on {counts['undecided']}; success >= "
          f"{SUCCESS_FLOOR:.2f} with collision <= {COLLISION_CAP:.2f} on {n_abs} of the "
          f"{n_floor} entries not tagged {' or '.join(GAIN_TAGS)}; time to goal at most "
          f"{TIME_RATIO_CAP:g}x {reference}'s, paired by agent: met on "
          f"{time_calls.count('met')}, missed on {time_calls.count('missed')}, undecided on "
          f"{time_calls.count('undecided')} of the {len(time_calls)} entries where some agent "
          f"arrives in both runs (ratio of the means at most {TIME_RATIO_CAP:g} on "
          f"{sum(r <= TIME_RATIO_CAP for r in ratios)} of {len(ratios)})\n")
    if reference != "orca":
        print(f"(The gain targets of the {' and '.join(GAIN_TAGS)} entries, +0.15 success, were "
              f"written for pure ORCA, which crushes or deadlocks there; against {reference} a "
              f"'missed' on them may only mean that {reference} does not.)\n")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("bench_json", nargs="?", help="a bench.json written by orca-env bench")
    p.add_argument("--run", metavar="SUITE", default=None,
                   help="run the protocol on this suite (a shipped name or a YAML path) instead "
                        "of reading a bench.json; needs one --policy")
    p.add_argument("--policy", action="append", default=[],
                   help="a policy label to check in bench_json (repeatable; default: every "
                        "policy but the reference), or with --run the policy to run (as "
                        "orca-env eval --policy takes it)")
    p.add_argument("--reference", default=None,
                   help="the label to compare with (default: the bench's reference), or with "
                        "--run the policy to compare with (default: orca; orca_margin: pure "
                        "ORCA with the shipped generalists' 0.10 m safety margin, to see what "
                        "the learning adds to the margin)")
    p.add_argument("--out", default=None, help="with --run: output folder (bench.json, bench.md "
                                               "and each run's files; default: none written)")
    p.add_argument("--entries", default="", help="with --run: only these entries (comma-"
                                                 "separated)")
    p.add_argument("--episodes", type=int, default=None,
                   help="with --run: episodes per entry at the first look (default: the "
                        "suite's)")
    p.add_argument("--looks", type=int, default=LOOKS,
                   help=f"with --run: looks, the first included (default {LOOKS}: the entry's "
                        f"episodes, then up to 2x and 4x)")
    p.add_argument("--quiet", action="store_true", help="with --run: no progress on stderr")
    args = p.parse_args(argv)
    if (args.run is None) == (args.bench_json is None):
        p.error("give a bench_json or --run SUITE (one of them)")
    if args.run is not None:
        if len(args.policy) != 1:
            p.error("--run needs exactly one --policy")
        try:
            suite = load_suite(args.run)
            names = [n for n in args.entries.split(",") if n]
            suite = suite.select(names, arg="--entries").with_episodes(args.episodes,
                                                                       arg="--episodes")
            report = decide_targets(suite, args.policy[0], args.reference or "orca",
                                    looks=args.looks, out_dir=args.out,
                                    progress=not args.quiet)
            if args.out is not None:
                write_bench(report, args.out, figure=False)
        except (ValueError, FileNotFoundError) as exc:
            p.error(str(exc))
        t = report["targets"]
        print_calls(report, t["policy"], t["reference"])
        if args.out is not None:
            print(f"wrote {os.path.join(args.out, 'bench.json')} and bench.md")
        return 0
    try:
        with open(args.bench_json, encoding="utf-8") as fh:
            report = json.load(fh)
    except (OSError, ValueError) as exc:
        p.error(f"bench_json {args.bench_json!r}: {exc}")
    reference = args.reference or report.get("reference")
    if reference is None:
        p.error(f"bench_json {args.bench_json!r}: a bench of one policy has no reference")
    labels = args.policy or [q["label"] for q in report["policies"] if q["label"] != reference]
    for label in labels:
        try:
            print_calls(report, label, reference)
        except (ValueError, KeyError) as exc:
            p.error(str(exc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
