"""Which entries of an ``orca-env bench`` run meet the generalist's targets, per policy.

Reads a ``bench.json`` and prints, for each policy but the reference (pure ORCA if the bench ran
it), a markdown table: per entry the success / collision / deadlock rates of the policy and of
the reference, and ``met`` or what is missed. The targets are those of the results tables
(``docs/evaluation.md#targets``, used in ``docs/results.md``, "One generalist policy for the
whole suite"; :func:`orca_env.evaluation.bench.missed_targets`): success at
least the reference's or inside its 95% interval, +0.15 on the ``deadlock`` and ``crush``
entries, collision and deadlock rates at most the reference's. Usage:

    orca-env bench validation --policy runs/my_run --policy orca --out runs/val
    python benchmarks/suite_targets.py runs/val/bench.json [--policy my_run]

Choose among training runs with the ``validation`` and ``validation_heldout`` suites; the
``standard`` and ``heldout`` suites' seeds should only report.
"""

import argparse
import json
import sys

from orca_env.evaluation.bench import missed_targets


def _rates(agg: dict) -> str:
    return " / ".join("-" if agg[k]["mean"] is None else f"{agg[k]['mean']:.3f}"
                      for k in ("success_rate", "collision_rate", "deadlock_rate"))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("bench_json", help="a bench.json written by orca-env bench")
    p.add_argument("--policy", action="append", default=[],
                   help="a policy label to check (repeatable; default: every policy but the "
                        "reference)")
    p.add_argument("--reference", default=None,
                   help="the label to compare with (default: the bench's reference)")
    args = p.parse_args(argv)
    try:
        with open(args.bench_json, encoding="utf-8") as fh:
            report = json.load(fh)
    except (OSError, ValueError) as exc:
        p.error(f"bench_json {args.bench_json!r}: {exc}")
    reference = args.reference or report.get("reference")
    if reference is None:
        p.error(f"bench_json {args.bench_json!r}: a bench of one policy has no reference")
    labels = args.policy or [q["label"] for q in report["policies"] if q["label"] != reference]
    tags = {e["name"]: e["tag"] for e in report["entries"]}
    for label in labels:
        try:
            missed = missed_targets(report, label, reference=reference)
        except ValueError as exc:
            p.error(str(exc))
        print(f"| entry | tag | {label}: success / collision / deadlock | {reference} | target |")
        print("|---|---|---|---|---|")
        for name, what in missed.items():
            res = report["results"][name]
            print(f"| {name} | {tags[name]} | {_rates(res[label])} | {_rates(res[reference])} | "
                  + ("met" if not what else "**missed**: " + ", ".join(what)) + " |")
        met = sum(not w for w in missed.values())
        print(f"\n{label}: targets met on {met} of {len(missed)} entries\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
