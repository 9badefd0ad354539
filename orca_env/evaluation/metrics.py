"""Evaluation metrics: definitions, aggregates with 95% intervals, the canonical report, CSV, table.

Metrics
-------
Per episode, over the learned agents (``agent_0 ..``); see :data:`METRICS` for units and the
exact definitions. Outcomes are final statuses: ``success`` (at_goal), ``timeout`` (timed_out)
and ``deadlock`` (truncated as deadlocked) are exclusive; ``collision`` counts an agent that
collided at least once (with ``on_collision: continue`` it may still succeed), split into
agent-agent and agent-obstacle (an agent can have both). ``time_to_goal`` and ``path_ratio``
average over the agents that reached their goal only, so they are survivor-biased: compare them
between policies only when the success rates are similar.

Aggregates are means over episodes of the per-episode values with a 95% confidence interval
``[ci95_low, ci95_high]`` (see :func:`aggregate`): Wilson score for the 0/1 metric
``all_success``, Student-t clipped to [0, 1] for the fractions, Student-t otherwise. Metrics
that are undefined in an episode (``time_to_goal`` without a success, ``makespan`` unless every
learned agent succeeded) are left out of their mean, and ``n`` says how many episodes count.

Overlap depth (:data:`OVERLAP_METRICS`): ``collision_rate`` counts overlaps beyond the config's
``collision_tolerance`` (swept along each step); ``contact_rate`` counts any overlap at the end
of a step, and ``max_overlap`` / ``max_overlap_relative`` say how deep the deepest one was, so
"touched" and "really collided" can both be read. They are reported when the config gives
``collision_tolerance`` in its size-aware mapping form (``{relative: 0.01}``), or when
:func:`~orca_env.evaluation.suite.evaluate` is asked for them (``overlap_metrics=True``); the
reports of other configs do not hold them (their old keys are as before these metrics existed).

Social navigation (:data:`SOCIAL_METRICS`, computed by :mod:`~orca_env.evaluation.social`):
how the learned agents treat the humans (the non-learned agents): the minimum clearance to
them, CrowdNav's discomfort frequency, the personal-space intrusion (its radius an argument of
:func:`~orca_env.evaluation.suite.evaluate`), the minimum time to collision, and SocNavBench's
path length ratio, path irregularity, acceleration and jerk. They are in every report, after
the others, whose values they leave as they were; :func:`format_table` shows them in a table
of their own. A ``min_time_to_collision`` of infinity (never on a collision course) is
``None``, so its mean is over the episodes with a finite value (``n`` counts them).

Paired time to goal: each episode also records ``arrival_times`` (:data:`ARRIVAL_TIMES`), when
each learned agent that succeeded arrived (``None`` for the others). It is not a metric (no
aggregate, no CSV column): :func:`paired_time_ratio` pairs two policies' runs by seed and agent
and compares their times over the agents that arrived in both, which the ratio of two
``time_to_goal`` means does not do when the success rates differ (pure ORCA's mean in a
bottleneck where 60% of its agents collide is the mean of the 40% that got through first).

The report's JSON (:func:`report_json`) is canonical: sorted keys and shortest round-trip
floats, so :func:`report_hash` identifies a result bit for bit.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
from collections.abc import Sequence
from statistics import NormalDist

from ..files import atomic_write_text

__all__ = ["METRICS", "OVERLAP_METRICS", "SOCIAL_METRICS", "ALL_METRICS", "ARRIVAL_TIMES",
           "social_metric_definitions", "t95", "t_quantile", "wilson95", "aggregate",
           "paired_difference", "paired_time_ratio", "decision_interval", "decidable_episodes",
           "format_ci", "report_json", "report_hash", "write_csv", "format_table"]

#: Metric name -> (unit, definition). Per-episode values; the aggregate averages them.
METRICS: dict[str, tuple[str, str]] = {
    "success_rate": ("fraction", "learned agents whose final status is at_goal"),
    "collision_rate": ("fraction", "learned agents that collided at least once (agent or "
                                   "obstacle)"),
    "agent_collision_rate": ("fraction", "learned agents that hit another agent at least once"),
    "obstacle_collision_rate": ("fraction", "learned agents that hit an obstacle (or the "
                                            "boundary) at least once"),
    "timeout_rate": ("fraction", "learned agents whose final status is timed_out"),
    "deadlock_rate": ("fraction", "learned agents whose final status is deadlocked"),
    "all_success": ("0/1", "every learned agent reached its goal"),
    "time_to_goal": ("s", "mean time at which successful agents reached their goal (averaged "
                          "over the agents that reached it only: survivor-biased when success "
                          "rates differ)"),
    "makespan": ("s", "time at which the last learned agent reached its goal (only when all "
                      "succeed)"),
    "path_ratio": ("ratio", "successful agents: distance travelled / initial distance to goal "
                            "(straight line, or roadmap path length with guidance); can be "
                            "slightly below 1 since the goal counts as reached within a "
                            "tolerance; averaged over the agents that reached their goal only "
                            "(survivor-biased when success rates differ)"),
    "min_separation": ("m", "smallest clearance (distance minus radii) from a learned agent to "
                            "any agent or obstacle within its observation range, over the "
                            "episode"),
    "intervention": ("m/s", "mean |safe velocity - preferred velocity| over learned agent-steps "
                            "(how much ORCA changed the actions)"),
    "lp3_rate": ("fraction", "learned agent-steps where ORCA's LP was infeasible and LP3 "
                             "(least violation) ran"),
    "episode_return": ("reward", "mean over learned agents of the summed reward"),
    "episode_steps": ("steps", "steps until the episode ended"),
}

#: Overlap depth metrics, reported on request (see the module docstring). Overlaps are read at
#: the end of each step from the clearance of ``min_separation`` (distance minus radii to the
#: nearest agent or obstacle within the observation range): overlap = max(0, -clearance).
OVERLAP_METRICS: dict[str, tuple[str, str]] = {
    "contact_rate": ("fraction", "learned agents that overlapped another agent or an obstacle "
                                 "at the end of some step (overlap > 0 m, however small; "
                                 "collision_rate counts only overlaps beyond the collision "
                                 "tolerance, swept along the step)"),
    "max_overlap": ("m", "deepest overlap of a learned agent with another agent or an obstacle "
                         "at the end of a step, over the episode (0 without contact)"),
    "max_overlap_relative": ("ratio", "deepest overlap of a learned agent divided by its own "
                                      "radius, over the episode (0 without contact): 0.01 is "
                                      "an overlap of 1% of the radius"),
}


def social_metric_definitions(personal_space: float = 0.5) -> dict[str, tuple[str, str]]:
    """The social-navigation metrics, ``{name: (unit, definition)}``, for a personal space.

    Reported in every evaluation after :data:`METRICS` (and the overlap depth), computed by
    :mod:`~orca_env.evaluation.social`; formulas and sources in ``docs/evaluation.md``.
    *Humans* are the non-learned agents (any population but ``learned``); clearance is the
    distance minus both radii.

    Args:
        personal_space: The radius of ``personal_space_intrusion``, m of clearance; it is
            written into that metric's definition.
    """
    ps = f"{personal_space:g}"
    return {
        "min_distance_to_humans": ("m", "smallest clearance (distance minus radii) from a "
                                        "learned agent to a human (a non-learned agent) over "
                                        "the episode, swept along each step; HuNavSim's "
                                        "minimum distance to people"),
        "discomfort_frequency": ("fraction", "learned agent-steps whose clearance to the "
                                             "nearest human falls below 0.2 m during the step "
                                             "(CrowdNav's discomfort distance)"),
        "personal_space_intrusion": ("fraction", f"learned agent-steps ending with a clearance "
                                                 f"below {ps} m to the nearest human (the "
                                                 f"personal-space radius; fraction of time, as "
                                                 f"HuNavSim's space intrusions)"),
        "min_time_to_collision": ("s", "smallest constant-velocity time until a learned agent "
                                       "touches a human, at the end of each step (velocities: "
                                       "the step's displacement / time step); null when no "
                                       "agent was ever on a collision course (infinite)"),
        "path_length_ratio": ("ratio", "successful agents: distance travelled / straight "
                                       "start-goal distance (SocNavBench's, always the straight "
                                       "line; averaged over the agents that reached their goal "
                                       "only)"),
        "path_irregularity": ("rad", "mean over learned agent-steps of the angle between the "
                                     "step's displacement and the direction to the goal from "
                                     "its start (SocNavBench's; steps without motion left "
                                     "out)"),
        "mean_acceleration": ("m/s^2", "mean over learned agent-steps of |a|, a the finite "
                                       "difference of the velocity (displacement / time step) "
                                       "over the time step"),
        "peak_acceleration": ("m/s^2", "largest |a| of a learned agent over the episode"),
        "mean_jerk": ("m/s^3", "mean over learned agent-steps of |j|, j the finite difference "
                               "of the acceleration over the time step (SocNavBench's "
                               "robot_jerk)"),
        "peak_jerk": ("m/s^3", "largest |j| of a learned agent over the episode"),
    }


#: The social-navigation metrics with the default personal space (0.5 m); see
#: :func:`social_metric_definitions`.
SOCIAL_METRICS: dict[str, tuple[str, str]] = social_metric_definitions()
#: Every metric, in report order: :data:`METRICS`, :data:`OVERLAP_METRICS`, then
#: :data:`SOCIAL_METRICS`.
ALL_METRICS: dict[str, tuple[str, str]] = {**METRICS, **OVERLAP_METRICS, **SOCIAL_METRICS}

_Z95 = 1.959963984540054

# Two-sided 95% Student-t quantiles, df = 1 .. 30.
_T95 = (12.706204736, 4.302652730, 3.182446305, 2.776445105, 2.570581836, 2.446911851,
        2.364624252, 2.306004135, 2.262157163, 2.228138852, 2.200985160, 2.178812830,
        2.160368656, 2.144786688, 2.131449546, 2.119905299, 2.109815578, 2.100922040,
        2.093024054, 2.085963447, 2.079613845, 2.073873068, 2.068657610, 2.063898562,
        2.059538553, 2.055529439, 2.051830516, 2.048407142, 2.045229642, 2.042272456)


def t95(df: int) -> float:
    """Two-sided 95% Student-t quantile with ``df`` degrees of freedom (``df >= 1``)."""
    if df <= 30:
        return _T95[df - 1]
    # Cornish-Fisher expansion around the normal quantile; error < 1e-5 for df > 30.
    z = _Z95
    return (z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2)
            + (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / (384 * df ** 3))


def _t_two_sided(t: float, df: int) -> float:
    """``P(|T| <= t)`` for Student's t with an integer ``df >= 1`` (Abramowitz-Stegun 26.7.3-4).

    The finite series in ``cos(theta)``, ``theta = atan(t / sqrt(df))``: exact up to rounding.
    """
    theta = math.atan(t / math.sqrt(df))
    c2, sin, cos = math.cos(theta) ** 2, math.sin(theta), math.cos(theta)
    if df % 2 == 1:
        total, term = 0.0, 1.0
        if df > 1:
            total = 1.0
            for k in range(1, (df - 3) // 2 + 1):  # 1 + 2/3 c^2 + 2*4/(3*5) c^4 + ...
                term *= (2 * k) / (2 * k + 1) * c2
                total += term
        return 2.0 / math.pi * (theta + (sin * cos * total if df > 1 else 0.0))
    total, term = 1.0, 1.0
    for k in range(1, (df - 2) // 2 + 1):  # 1 + 1/2 c^2 + 1*3/(2*4) c^4 + ...
        term *= (2 * k - 1) / (2 * k) * c2
        total += term
    return sin * total


def t_quantile(level: float, df: int) -> float:
    """The two-sided Student-t quantile: ``t`` with ``P(|T| <= t) = level``, ``df >= 1``.

    :func:`t95` at other levels (the Bonferroni-adjusted levels of the target decisions):
    bisection on the exact distribution function of an integer ``df``.
    """
    if not 0.0 < level < 1.0 or df < 1:
        raise ValueError(f"t_quantile needs 0 < level < 1 and df >= 1, got {level!r}, {df!r}")
    lo, hi = 0.0, 1.0
    while _t_two_sided(hi, df) < level:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if _t_two_sided(mid, df) < level:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * hi:
            break
    return 0.5 * (lo + hi)


def wilson95(successes: float, n: int) -> tuple[float, float]:
    """The 95% Wilson score interval ``(low, high)`` of a proportion ``successes / n``.

    Unlike the Student-t interval it stays in [0, 1] and has a positive width when every trial
    agrees (20 successes out of 20 give about [0.84, 1]).
    """
    p = successes / n
    z2 = _Z95 * _Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = _Z95 / (1 + z2 / n) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def _t_half_width(vals: Sequence[float], mean: float) -> float:
    """Half the width of the 95% Student-t interval of the mean of ``vals`` (two or more)."""
    n = len(vals)
    var = math.fsum((v - mean) ** 2 for v in vals) / (n - 1)
    return t95(n - 1) * math.sqrt(var / n)


def aggregate(episodes: Sequence[dict], metrics: dict | None = None) -> dict:
    """``{metric: {"mean", "ci95_low", "ci95_high", "ci95", "ci_method", "n"}}``.

    ``metrics`` names the metrics to aggregate, ``{name: (unit, definition)}`` (default
    :data:`METRICS`; :data:`ALL_METRICS` adds the overlap depth).

    Over the episodes' defined values: ``mean`` is their mean (``None`` when no episode defines
    the metric) and ``[ci95_low, ci95_high]`` a 95% confidence interval of it, by
    ``ci_method``:

    * ``wilson`` for the 0/1 metric (``all_success``): the Wilson score interval of the
      proportion of episodes (defined from one episode on; never zero width, never outside
      [0, 1]);
    * ``t_clipped`` for the fractions (unit ``fraction``): the Student-t interval of the mean,
      clipped to [0, 1] (zero width when every episode has the same value: the episodes agreed,
      the rate is not known exactly);
    * ``t`` for the rest: the Student-t interval, ``mean +- ci95``.

    ``ci95`` is half the interval's width, ``(ci95_high - ci95_low) / 2``; the interval is
    centred on the mean only for ``t``, so read the bounds for the others. Intervals from
    Student-t need two values (``None`` otherwise).
    """
    out = {}
    for key, (unit, _) in (METRICS if metrics is None else metrics).items():
        vals = [float(e[key]) for e in episodes if e.get(key) is not None]
        n = len(vals)
        method = "wilson" if unit == "0/1" else "t_clipped" if unit == "fraction" else "t"
        row = {"mean": None, "ci95_low": None, "ci95_high": None, "ci95": None,
               "ci_method": method, "n": n}
        out[key] = row
        if n == 0:
            continue
        mean = math.fsum(vals) / n
        row["mean"] = mean
        if method == "wilson":
            lo, hi = wilson95(math.fsum(vals), n)
        elif n > 1:
            half = _t_half_width(vals, mean)
            lo, hi = mean - half, mean + half
            if method == "t_clipped":
                lo, hi = max(0.0, lo), min(1.0, hi)
        else:
            continue
        row["ci95_low"], row["ci95_high"] = lo, hi
        row["ci95"] = (hi - lo) / 2
    return out


def paired_difference(episodes: Sequence[dict], reference: Sequence[dict],
                      keys: Sequence[str]) -> dict:
    """``{metric: {"mean", "ci95_low", "ci95_high", "ci95", "ci_method", "n", "sd"}}``, paired.

    The mean of ``episode[key] - reference episode[key]`` over the seeds both runs share and
    both define the metric for (episodes are paired by their ``seed``), with the 95% Student-t
    interval of that mean (``ci_method`` ``t_paired``; ``None`` below two pairs), clipped to
    [-1, 1] for the fractions of :data:`METRICS` (the rates; ``ci95`` is then half the clipped
    width, as in :func:`aggregate`: read the bounds). Pairing by
    seed removes what the two runs' episodes have in common (the same starts, goals and crowd),
    so the interval is usually much narrower than the two runs' own intervals suggest, and a
    difference whose interval holds 0 is not told apart from none by these episodes. ``sd`` is
    the differences' sample standard deviation (``None`` below two pairs): with ``n`` and
    ``mean`` it is all :func:`decision_interval` needs.
    """
    ref = {r["seed"]: r for r in reference}
    out = {}
    for key in keys:
        diffs = [float(e[key]) - float(ref[e["seed"]][key]) for e in episodes
                 if e["seed"] in ref and e.get(key) is not None
                 and ref[e["seed"]].get(key) is not None]
        n = len(diffs)
        row = {"mean": None, "ci95_low": None, "ci95_high": None, "ci95": None,
               "ci_method": "t_paired", "n": n, "sd": None}
        out[key] = row
        if n == 0:
            continue
        mean = math.fsum(diffs) / n
        row["mean"] = mean
        if n > 1:
            row["sd"] = math.sqrt(math.fsum((v - mean) ** 2 for v in diffs) / (n - 1))
            half = _t_half_width(diffs, mean)
            lo, hi = mean - half, mean + half
            if ALL_METRICS.get(key, ("",))[0] in ("fraction", "0/1"):
                lo, hi = max(-1.0, lo), min(1.0, hi)
            row["ci95_low"], row["ci95_high"], row["ci95"] = lo, hi, (hi - lo) / 2
    return out


#: The per-episode key of each learned agent's arrival time, s (``None``: it did not succeed);
#: what :func:`paired_time_ratio` pairs.
ARRIVAL_TIMES = "arrival_times"


def paired_time_ratio(episodes: Sequence[dict], reference: Sequence[dict]) -> dict:
    """Time to goal of ``episodes`` over ``reference``'s, paired by seed and agent.

    Over the agents that arrived in both runs of the same seed (agent ``k`` of an episode is
    the same learned slot, start and goal in both), the ratio of the summed arrival times,
    ``R = sum(t) / sum(t_ref)``. Unlike the ratio of the two runs' ``time_to_goal`` means, it
    compares the same agents: the agents one policy loses (collisions, time-outs) leave both
    sums. Its 95% interval is the ratio estimator's (delta method) with the episodes as the
    units, since agents of one episode share a crowd: with ``A_e`` and ``B_e`` the episode's
    sums, ``R +- t95(n - 1) * sqrt(sum((A_e - R B_e)^2) / (n (n - 1))) / mean(B_e)`` over
    the ``n`` episodes that pair at least one agent.

    Episodes without :data:`ARRIVAL_TIMES` (reports written before it existed) pair nothing.

    Returns:
        ``{"ratio", "ci95_low", "ci95_high", "ci_method", "episodes", "agents"}``: ``ratio``
        ``None`` when no agent pairs (or the paired reference times sum to 0), the interval
        ``None`` below two episodes (of zero width when every episode's sums are in the same
        ratio: episodes that all agree do not bound it); ``episodes`` and ``agents`` count what
        was paired.

    Raises:
        ValueError: Naming the argument, on an episode without a ``seed``, a seed twice in one
            run, arrival times that are not a list of finite times >= 0 (or None), or an
            episode whose two runs have different numbers of learned agents.
    """
    ref = {}
    for r in _seeded(reference, "reference"):
        ref[r["seed"]] = _arrivals(r, "reference")
    sums = []
    agents = 0
    for e in _seeded(episodes, "episodes"):
        mine, theirs = _arrivals(e, "episodes"), ref.get(e["seed"])
        if mine is None or theirs is None:
            continue
        if len(mine) != len(theirs):
            raise ValueError(f"paired_time_ratio: seed {e['seed']} has {len(mine)} learned "
                             f"agents in episodes and {len(theirs)} in reference")
        pairs = [(a, b) for a, b in zip(mine, theirs, strict=True)
                 if a is not None and b is not None]
        if pairs:
            sums.append((math.fsum(a for a, _ in pairs), math.fsum(b for _, b in pairs)))
            agents += len(pairs)
    n = len(sums)
    row = {"ratio": None, "ci95_low": None, "ci95_high": None,
           "ci_method": "ratio_delta_t", "episodes": n, "agents": agents}
    total_ref = math.fsum(b for _, b in sums)
    if n == 0 or total_ref <= 0.0:
        return row
    ratio = math.fsum(a for a, _ in sums) / total_ref
    row["ratio"] = ratio
    if n > 1:
        resid = math.fsum((a - ratio * b) ** 2 for a, b in sums)
        half = t95(n - 1) * math.sqrt(resid / (n * (n - 1))) / (total_ref / n)
        row["ci95_low"], row["ci95_high"] = ratio - half, ratio + half
    return row


def _seeded(episodes: Sequence[dict], arg: str) -> Sequence[dict]:
    """``episodes``, checked to hold one ``seed`` each and no seed twice."""
    seen = set()
    for e in episodes:
        if not isinstance(e, dict) or "seed" not in e:
            raise ValueError(f"paired_time_ratio: {arg} holds an episode without a seed: "
                             f"{e!r:.80}")
        if e["seed"] in seen:
            raise ValueError(f"paired_time_ratio: {arg} has seed {e['seed']!r} twice")
        seen.add(e["seed"])
    return episodes


def _arrivals(e: dict, arg: str) -> list | None:
    """An episode's :data:`ARRIVAL_TIMES`, checked (``None`` if it has none)."""
    times = e.get(ARRIVAL_TIMES)
    if times is None:
        return None
    if not isinstance(times, (list, tuple)) or not all(
            t is None or (isinstance(t, (int, float)) and math.isfinite(t) and t >= 0)
            for t in times):
        raise ValueError(f"paired_time_ratio: {arg} seed {e['seed']!r}: {ARRIVAL_TIMES} must "
                         f"be a list of finite times >= 0 or None, got {times!r:.80}")
    return list(times)


def decision_interval(n: int, mean: float, sd: float | None, *, level: float,
                      resolution: float = 1.0) -> tuple[float, float] | None:
    """The interval a target is decided on: the mean of paired per-episode rate differences.

    The Student-t interval (``df = n - 1``, two-sided ``level``) of the mean of ``n`` paired
    differences of a rate (values in [-1, 1]; ``mean`` and their sample standard deviation
    ``sd``), ``mean +- t sd / sqrt(n)``, with its half-width at least ``resolution * z^2 /
    (n + z^2)`` (``z`` the normal quantile of ``level``): Wilson's score bound on the share of
    episodes that differ when none did, times the smallest step of the rate (``resolution``, 1
    over the learned agents of an episode: 1 for one robot). Without the floor, episodes that
    all agree give an interval of zero width, which would call any target on them: 50 episodes
    of one robot that never differ from the reference's bound a rare difference only to about
    +-0.1 at the level of three looks (0.983), and about 110 are needed to call it within
    0.05. For rates of many agents the floor is negligible. Clipped to [-1, 1].

    Returns:
        ``(low, high)``, or ``None`` below two pairs.
    """
    if n < 2 or sd is None:
        return None
    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    half = max(t_quantile(level, n - 1) * sd / math.sqrt(n), resolution * z * z / (n + z * z))
    return max(-1.0, mean - half), min(1.0, mean + half)


def decidable_episodes(margin: float, *, level: float, resolution: float = 1.0) -> int:
    """The fewest paired episodes whose :func:`decision_interval` can fit within ``margin``.

    Episodes that never differ from the reference's give the interval of the floor alone,
    ``resolution * z^2 / (n + z^2)``; below this count it is ``margin`` or wider, so no target
    with that margin (``difference <= +margin``, ``>= -margin``) can be met, however good the
    policy. 109 for one robot at the level of three looks (0.983) and a margin of 0.05; 23 for
    four learned agents.
    """
    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    zz = z * z
    n = max(2, math.floor(resolution * zz / margin - zz) + 1)
    while resolution * zz / (n + zz) >= margin:  # floating-point guard: strictly inside
        n += 1
    return n


def format_ci(a: dict, digits: int = 3) -> str:
    """An aggregate's 95% interval as text.

    ``[low, high]`` for bounded metrics, ``+-half`` for ``t`` ones, ``-`` when undefined.
    """
    if a["ci95_low"] is None:
        return "-"
    if a["ci_method"] == "t":
        return f"+-{a['ci95']:.{digits}g}"
    return f"[{a['ci95_low']:.{digits}g}, {a['ci95_high']:.{digits}g}]"


def report_json(report: dict) -> str:
    """The canonical JSON text of a report (sorted keys, shortest round-trip floats)."""
    return json.dumps(report, sort_keys=True, indent=1, allow_nan=False) + "\n"


def report_hash(report: dict) -> str:
    """SHA-256 of :func:`report_json`."""
    return hashlib.sha256(report_json(report).encode("utf-8")).hexdigest()


def write_csv(episodes: Sequence[dict], path: str | os.PathLike,
              metrics: dict | None = None) -> None:
    """One row per episode: seed and every metric (empty when undefined); written atomically.

    ``metrics`` as for :func:`aggregate` (default :data:`METRICS`).
    """
    keys = ["seed", *(METRICS if metrics is None else metrics)]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(keys)
    for e in episodes:
        w.writerow(["" if e.get(k) is None else repr(e[k]) if isinstance(e[k], float) else e[k]
                    for k in keys])
    atomic_write_text(path, buf.getvalue())


def _table_rows(agg: dict, metrics: dict) -> list[tuple[str, ...]]:
    rows = [("metric", "mean", "95% CI", "n", "unit")]
    for key, (unit, _) in metrics.items():
        if key not in agg:
            continue  # the overlap depth, when the report does not hold it
        a = agg[key]
        mean = "-" if a["mean"] is None else f"{a['mean']:.4g}"
        rows.append((key, mean, format_ci(a), str(a["n"]), unit))
    return rows


def _table_lines(rows: list[tuple[str, ...]]) -> list[str]:
    widths = [max(len(r[c]) for r in rows) for c in range(5)]
    lines = []
    for j, r in enumerate(rows):
        lines.append("  ".join(s.ljust(w) if c in (0, 4) else s.rjust(w)
                               for c, (s, w) in enumerate(zip(r, widths, strict=True))).rstrip())
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))
    return lines


def format_table(report: dict) -> str:
    """A plain-text table of the aggregate metrics (the CI column as :func:`format_ci`).

    The metrics of :data:`METRICS` (and the overlap depth) first, as they always were; then,
    when the report holds them, the social-navigation metrics (:data:`SOCIAL_METRICS`) in a
    table of their own, headed with the personal-space radius.
    """
    agg = report["aggregate"]
    scenario = report["config"].get("scenario", "mixture")  # a mixture holds only its entries
    head = (f"policy {report['policy']}  scenario {scenario}  "
            f"episodes {report['num_episodes']}  seeds {report['seeds'][0]}.."
            f"{report['seeds'][-1]}" if report["seeds"] else "no episodes")
    margin = report["config"].get("learned_orca_padding")
    if margin is not None:  # a policy's deploy margin (or --set): it changes what ORCA does
        head += f"  learned_orca_padding {margin:g} m (learned groups with the safety layer)"
    lines = [head, *_table_lines(_table_rows(agg, {**METRICS, **OVERLAP_METRICS}))]
    lines.append("95% CI: [low, high] for rates (Wilson score for 0/1, Student-t clipped to [0, 1] "
                 "for fractions), +- Student-t half-width otherwise")
    social = _table_rows(agg, SOCIAL_METRICS)
    if len(social) > 1:
        ps = report.get("social", {}).get("personal_space")
        lines += ["", "social navigation: learned agents and the humans (non-learned agents)"
                  + ("" if ps is None else f"; personal space {ps:g} m"),
                  *_table_lines(social),
                  "min_time_to_collision: n counts the episodes with a finite value (the others "
                  "were never on a collision course)"]
    return "\n".join(lines)
