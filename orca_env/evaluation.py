"""Reproducible evaluation of a policy on a scenario config.

:func:`evaluate` runs a policy on the frozen evaluation seeds (:func:`eval_seeds`), one env
reset per seed, and reports metrics per episode and in aggregate (mean with a 95% confidence
interval). The report is plain JSON data; :func:`report_json` serialises it canonically, so the
same policy, config and seeds give the same bytes on every run and every machine that produces
the same simulation (the core is deterministic and independent of the thread count; nothing in
the report depends on wall-clock time, paths or the host).

Evaluation seeds
----------------
Episode ``k`` of an evaluation uses seed ``EVAL_SEED_BASE + k`` = 10_000 + k. Seeds
``10_000 .. 19_999`` (``EVAL_SEEDS``) are reserved for evaluation: training and tuning must
never reset an env with them (check with :func:`is_eval_seed`). Episodes are independent of one
another (each resets with its own seed, and the random policy reseeds from it), so the first
``N`` episodes of a longer evaluation are the same episodes.

Policies
--------
A policy is any callable ``policy(observations: dict, env) -> actions dict`` (keyed by
``env.agents``; see :data:`Policy`). It may define ``reset(seed: int)``, called before every
episode with the episode's seed (for any randomness of its own), and ``name``. Built in:
``orca`` (``env.heuristic_actions()``: pure ORCA with the safety layer) and ``random`` (uniform
actions in the box, seeded per episode). Anything else is a dotted path
``package.module:attribute`` (or ``package.module.attribute``) to a policy; with ``model`` the
attribute is a *loader* ``loader(model_path: str, env) -> policy`` (the saved-model loaders in
``policies/`` follow this interface). A spec that is an existing file or folder
(``run/model.zip``, ``run/``) is a model for the default loader :data:`DEFAULT_LOADER`; the
built-in names come first, so a folder called ``orca`` or ``random`` never shadows them (pass
``./orca`` for such a folder).

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
"""

from __future__ import annotations

import csv
import hashlib
import importlib
import io
import json
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import __version__
from .baselines import OrcaPolicy, RandomPolicy
from .codes import Population, Status
from .episode_log import EpisodeRecorder, snapshot

__all__ = ["EVAL_SEED_BASE", "EVAL_SEEDS", "METRICS", "DEFAULT_LOADER", "Policy", "OrcaPolicy",
           "RandomPolicy", "eval_seeds", "is_eval_seed", "resolve_policy", "run_episode",
           "aggregate", "wilson95", "format_ci", "evaluate", "report_json", "report_hash",
           "write_csv", "format_table", "plot_trajectories", "REPORT_FORMAT"]

#: First evaluation seed; episode k uses EVAL_SEED_BASE + k.
EVAL_SEED_BASE = 10_000
#: Seeds reserved for evaluation: training must never use them.
EVAL_SEEDS = range(EVAL_SEED_BASE, EVAL_SEED_BASE + 10_000)
#: Loader used when the policy spec is a model file.
DEFAULT_LOADER = "policies:load_policy"
REPORT_FORMAT = "orca-env-eval/1"

#: ``policy(observations, env) -> actions``: observations and actions are dicts keyed by the
#: live agents (``env.agents``); actions are (2,) arrays in [-1, 1].
Policy = Callable[[dict, Any], dict]

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

_Z95 = 1.959963984540054

# Two-sided 95% Student-t quantiles, df = 1 .. 30.
_T95 = (12.706204736, 4.302652730, 3.182446305, 2.776445105, 2.570581836, 2.446911851,
        2.364624252, 2.306004135, 2.262157163, 2.228138852, 2.200985160, 2.178812830,
        2.160368656, 2.144786688, 2.131449546, 2.119905299, 2.109815578, 2.100922040,
        2.093024054, 2.085963447, 2.079613845, 2.073873068, 2.068657610, 2.063898562,
        2.059538553, 2.055529439, 2.051830516, 2.048407142, 2.045229642, 2.042272456)


def eval_seeds(n: int, start: int = 0) -> list[int]:
    """The frozen evaluation seeds of episodes ``start .. start + n - 1``.

    Raises:
        ValueError: If the episodes leave the reserved range (10_000 episodes).
    """
    if not (isinstance(n, int) and n >= 0 and isinstance(start, int) and start >= 0):
        raise ValueError(f"eval_seeds needs integers n >= 0 and start >= 0, got {n!r}, {start!r}")
    if start + n > len(EVAL_SEEDS):
        raise ValueError(f"at most {len(EVAL_SEEDS)} evaluation episodes, asked for "
                         f"{start}..{start + n - 1}")
    return [EVAL_SEED_BASE + start + k for k in range(n)]


def is_eval_seed(seed: int) -> bool:
    """Whether ``seed`` is reserved for evaluation (training code should assert it is not)."""
    return seed in EVAL_SEEDS


def t95(df: int) -> float:
    """Two-sided 95% Student-t quantile with ``df`` degrees of freedom (``df >= 1``)."""
    if df <= 30:
        return _T95[df - 1]
    # Cornish-Fisher expansion around the normal quantile; error < 1e-5 for df > 30.
    z = _Z95
    return (z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2)
            + (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / (384 * df ** 3))


# -- policies (the built-ins live in orca_env.baselines) ----------------------------------------
def _import_object(path: str) -> Any:
    mod_name, sep, attr = path.partition(":")
    if not sep:
        mod_name, _, attr = path.rpartition(".")
    if not mod_name or not attr:
        raise ValueError(f"policy {path!r}: expected 'orca', 'random', a model file or a dotted "
                         f"path 'package.module:attribute'")
    try:
        obj = importlib.import_module(mod_name)
    except ImportError as exc:
        raise ValueError(f"policy {path!r}: cannot import module {mod_name!r} ({exc})") from exc
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError as exc:
            raise ValueError(f"policy {path!r}: module {mod_name!r} has no attribute "
                             f"{attr!r}") from exc
    return obj


def resolve_policy(spec: Any, model: str | os.PathLike | None = None,
                   env: Any = None) -> tuple[Policy, str]:
    """Turn a policy spec into ``(policy, name)``.

    Args:
        spec: ``"orca"``, ``"random"``, a callable policy, a dotted path to one, a dotted path
            to a loader (with ``model``), or a model file or run folder (loaded by
            :data:`DEFAULT_LOADER`).
        model: Path of a saved model, passed to the loader ``spec``.
        env: The env, passed to a loader (for its spaces).

    Returns:
        The policy and a name for the report (the spec, or the model's file name).
    """
    # The built-in names first: a folder called "orca" or "random" in the cwd (train.py writes
    # runs/<x>/eval/orca/) must not shadow them.
    if spec == "orca" and model is None:
        return OrcaPolicy(), "orca"
    if spec == "random" and model is None:
        return RandomPolicy(), "random"
    if isinstance(spec, str) and model is None and (os.path.isfile(spec) or os.path.isdir(spec)):
        # A model file or a run folder (model.zip + normaliser), for the default loader.
        spec, model = DEFAULT_LOADER, spec
    name = spec if isinstance(spec, str) else getattr(spec, "name", None) or \
        getattr(spec, "__name__", type(spec).__name__)
    obj = _import_object(spec) if isinstance(spec, str) else spec
    if model is not None:
        if not callable(obj):
            raise ValueError(f"loader {spec!r} is not callable")
        policy = obj(os.fspath(model), env)
        name = f"{name}({os.path.basename(os.fspath(model))})"
    elif isinstance(obj, type):
        policy = obj()
    else:
        policy = obj
    if not callable(policy):
        raise ValueError(f"policy {spec!r} is not callable: expected "
                         f"policy(observations, env) -> actions")
    return policy, str(name)


# -- one episode -------------------------------------------------------------------------------
def _nan_to_none(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def run_episode(env: Any, policy: Policy, seed: int, *, recorder: EpisodeRecorder | None = None,
                debug_agent: int | None = None) -> dict:
    """Run one episode from ``env.reset(seed=seed)`` to its end; return its metrics.

    Args:
        env: An ``OrcaEnv``.
        policy: ``policy(observations, env) -> actions``; its ``reset(seed)`` is called first.
        seed: Reset seed.
        recorder: Receives a snapshot of every state (for logs, videos and plots); the
            statuses in it are the env's own (``env.render_data()["statuses"]``).
        debug_agent: Slot whose ORCA lines go into the snapshots.

    Returns:
        ``{"seed": seed, <metric>: value, ...}`` with the keys of :data:`METRICS`; undefined
        values are ``None``.

    Raises:
        ValueError: If ``debug_agent`` is not a slot of the env.
    """
    obs, infos = env.reset(seed=seed)
    if hasattr(policy, "reset"):
        policy.reset(seed)
    data = env.render_data()
    # agent_k is the k-th learned slot, as in the env.
    slots = np.flatnonzero(np.asarray(data["populations"]) == Population.LEARNED)
    n_slots = int(np.asarray(data["populations"]).shape[0])
    if debug_agent is not None and not (isinstance(debug_agent, (int, np.integer))
                                        and 0 <= debug_agent < n_slots):
        raise ValueError(f"debug_agent {debug_agent!r} is not a slot of the env: expected an "
                         f"integer in 0 .. {n_slots - 1}")
    n_l = slots.size
    dt = float(env.time_step)
    d0 = np.array([infos[a]["distance_to_goal"] for a in env.possible_agents])
    travelled = np.zeros(n_l)
    hit_agent = np.zeros(n_l, dtype=bool)
    hit_obst = np.zeros(n_l, dtype=bool)
    reached_at = np.full(n_l, np.nan)
    final = ["active"] * n_l
    ret = np.zeros(n_l)
    min_sep = math.inf
    inter_sum, lp3_sum, agent_steps = 0.0, 0, 0
    index = {a: k for k, a in enumerate(env.possible_agents)}
    if recorder is not None:
        recorder.add(snapshot(env, 0, debug_agent, data=data))
    steps = 0
    prev = env.sim.positions[slots].copy()
    while env.agents:
        actions = policy(obs, env)
        obs, rewards, terms, truncs, infos = env.step(actions)
        steps += 1
        pos = env.sim.positions[slots]
        for a, info in infos.items():
            k = index[a]
            travelled[k] += math.hypot(pos[k, 0] - prev[k, 0], pos[k, 1] - prev[k, 1])
            ret[k] += rewards[a]
            status = info["status"]
            final[k] = status
            if status == "at_goal" and math.isnan(reached_at[k]):
                reached_at[k] = steps * dt
            cw = info["collided_with"]
            if cw == "agent":
                hit_agent[k] = True
            elif cw == "obstacle":
                hit_obst[k] = True
            sep = info["nearest_separation"]
            if sep < min_sep:
                min_sep = sep
            inter_sum += info["intervention"]
            lp3_sum += bool(info["used_lp3"])
            agent_steps += 1
        prev = pos.copy()
        if recorder is not None:
            recorder.add(snapshot(env, steps, debug_agent))
    success = np.array([s == "at_goal" for s in final])
    ok = np.flatnonzero(success)
    collided = hit_agent | hit_obst
    out = {
        "seed": int(seed),
        "success_rate": float(success.mean()),
        "collision_rate": float(collided.mean()),
        "agent_collision_rate": float(hit_agent.mean()),
        "obstacle_collision_rate": float(hit_obst.mean()),
        "timeout_rate": float(np.mean([s == "timed_out" for s in final])),
        "deadlock_rate": float(np.mean([s == "deadlocked" for s in final])),
        "all_success": float(success.all()),
        "time_to_goal": math.fsum(reached_at[ok]) / ok.size if ok.size else None,
        "makespan": float(reached_at.max()) if success.all() else None,
        "path_ratio": (math.fsum(travelled[ok] / np.maximum(d0[ok], 1e-9)) / ok.size
                       if ok.size else None),
        "min_separation": _nan_to_none(min_sep),
        "intervention": inter_sum / agent_steps if agent_steps else None,
        "lp3_rate": lp3_sum / agent_steps if agent_steps else None,
        "episode_return": math.fsum(ret) / n_l,
        "episode_steps": steps,
    }
    return out


# -- aggregation and output --------------------------------------------------------------------
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


def aggregate(episodes: Sequence[dict]) -> dict:
    """``{metric: {"mean", "ci95_low", "ci95_high", "ci95", "ci_method", "n"}}``.

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
    for key, (unit, _) in METRICS.items():
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
            var = math.fsum((v - mean) ** 2 for v in vals) / (n - 1)
            half = t95(n - 1) * math.sqrt(var / n)
            lo, hi = mean - half, mean + half
            if method == "t_clipped":
                lo, hi = max(0.0, lo), min(1.0, hi)
        else:
            continue
        row["ci95_low"], row["ci95_high"] = lo, hi
        row["ci95"] = (hi - lo) / 2
    return out


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


def write_csv(episodes: Sequence[dict], path: str | os.PathLike) -> None:
    """One row per episode: seed and every metric (empty when undefined)."""
    keys = ["seed", *METRICS]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(keys)
    for e in episodes:
        w.writerow(["" if e.get(k) is None else repr(e[k]) if isinstance(e[k], float) else e[k]
                    for k in keys])
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(buf.getvalue())


def format_table(report: dict) -> str:
    """A plain-text table of the aggregate metrics (the CI column as :func:`format_ci`)."""
    agg = report["aggregate"]
    head = (f"policy {report['policy']}  scenario {report['config']['scenario']}  "
            f"episodes {report['num_episodes']}  seeds {report['seeds'][0]}.."
            f"{report['seeds'][-1]}" if report["seeds"] else "no episodes")
    rows = [("metric", "mean", "95% CI", "n", "unit")]
    for key, (unit, _) in METRICS.items():
        a = agg[key]
        mean = "-" if a["mean"] is None else f"{a['mean']:.4g}"
        rows.append((key, mean, format_ci(a), str(a["n"]), unit))
    widths = [max(len(r[c]) for r in rows) for c in range(5)]
    lines = [head]
    for j, r in enumerate(rows):
        lines.append("  ".join(s.ljust(w) if c in (0, 4) else s.rjust(w)
                               for c, (s, w) in enumerate(zip(r, widths, strict=True))).rstrip())
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))
    lines.append("95% CI: [low, high] for rates (Wilson score for 0/1, Student-t clipped to [0, 1] "
                 "for fractions), +- Student-t half-width otherwise")
    return "\n".join(lines)


def plot_trajectories(logs: Sequence[Any], path: str | os.PathLike, titles: Sequence[str] = ()
                      ) -> str:
    """Plot episode logs into a PNG, one panel per episode.

    Each panel shows the obstacles, the paths coloured by population, the starts (dots), the
    learned agents' goals (crosses) and where they collided (red x). Draws on a bare
    ``matplotlib.figure.Figure`` (no pyplot, no display, the global backend untouched); returns
    the path.
    """
    from matplotlib.figure import Figure  # noqa: PLC0415
    from matplotlib.patches import Polygon  # noqa: PLC0415

    from .render import COLORS, fit_view  # noqa: PLC0415

    k = len(logs)
    cols = min(k, 3)
    rows = -(-k // cols)
    fig = Figure(figsize=(4.2 * cols, 4.2 * rows), dpi=100)
    for j, log in enumerate(logs):
        ax = fig.add_subplot(rows, cols, j + 1)
        s = log.static
        first = log.frame_data(0)
        x0, y0, x1, y1 = fit_view(first)
        if s["boundary"] is not None:
            ax.add_patch(Polygon(s["boundary"], closed=True, fill=False,
                                 ec=np.array(COLORS["obstacle"]) / 255, lw=1.5))
        for poly in s["obstacles"]:
            ax.add_patch(Polygon(poly, closed=True, fc=np.array(COLORS["obstacle"]) / 255,
                                 ec="none"))
        pos = log.positions.astype(np.float64)
        act = log.arrays["active"]
        for i in range(pos.shape[1]):
            pop = Population(int(s["populations"][i])).name.lower()
            col = np.array(COLORS[pop]) / 255
            alive = np.flatnonzero(act[:, i])
            if alive.size == 0:
                continue
            # Include the first inactive state: where the agent was when it left.
            last = min(int(alive[-1]) + 1, pos.shape[0] - 1)
            p = pos[: last + 1, i]
            learned = pop == "learned"
            ax.plot(p[:, 0], p[:, 1], color=col, lw=1.2 if learned else 0.6,
                    alpha=1.0 if learned else 0.6, zorder=3 if learned else 2)
            ax.plot(*p[0], "o", ms=3, color=col, zorder=3)
            if learned:
                ax.plot(*log.arrays["goals"][0, i], "x", ms=5, color=col, zorder=3)
                hit = log.arrays["statuses"][:, i] == Status.COLLIDED
                if hit.any():
                    t = int(np.argmax(hit))
                    ax.plot(*pos[t, i], "x", ms=8, mew=2, color="red", zorder=4)
        ax.set_xlim(x0, x1)
        ax.set_ylim(y0, y1)
        ax.set_aspect("equal")
        ax.tick_params(labelsize=7)
        ax.set_title(titles[j] if j < len(titles) else f"seed {log.seed}", fontsize=9)
    fig.tight_layout()
    path = os.fspath(path)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path)
    return path


class _Progress:
    """Episode counter on stderr: a rewritten line on a terminal, a few lines otherwise."""

    def __init__(self, total: int, enabled: bool, label: str) -> None:
        self.total, self.enabled, self.label = total, enabled and total > 0, label
        self.t0 = time.perf_counter()
        self.tty = sys.stderr.isatty()
        self.every = max(1, total // 10)
        self.succ = 0.0

    def update(self, done: int, episode: dict) -> None:
        if not self.enabled:
            return
        self.succ += episode["success_rate"]
        if not self.tty and done % self.every and done != self.total:
            return
        el = time.perf_counter() - self.t0
        eta = el / done * (self.total - done)
        msg = (f"[{self.label}] {done}/{self.total} episodes  success {self.succ / done:.3f}  "
               f"{el:.1f}s elapsed  eta {eta:.1f}s")
        sys.stderr.write(("\r" + msg + " " * 4) if self.tty else msg + "\n")
        if self.tty and done == self.total:
            sys.stderr.write("\n")
        sys.stderr.flush()


# -- the whole evaluation ----------------------------------------------------------------------
def evaluate(config: Any, policy: Any = "orca", *, episodes: int = 20,
             seeds: Sequence[int] | None = None, model: str | os.PathLike | None = None,
             overrides: dict | None = None, out_dir: str | os.PathLike | None = None,
             videos: int = 0, trajectories: int = 0, logs: int = 0,
             debug_agent: int | None = None, video_size: int = 720, video_format: str = "mp4",
             progress: bool = False, log_dtype: Any = np.float32) -> dict:
    """Evaluate a policy on a config over the frozen evaluation seeds.

    Args:
        config: A YAML path, dict or ``EnvConfig`` (as ``OrcaEnv`` takes it).
        policy: See :func:`resolve_policy`.
        episodes: Number of episodes (seeds ``eval_seeds(episodes)``) when ``seeds`` is None.
        seeds: Explicit seeds (must all be evaluation seeds).
        model: A saved model, for a loader ``policy``.
        overrides: Config keys overriding ``config`` (nested sections merge), e.g.
            ``{"max_steps": 50}``; ``render_mode`` is always ``None``.
        out_dir: Folder for ``metrics.json``, ``episodes.csv`` and, on request, ``videos/``,
            ``logs/`` and ``trajectories.png``; ``None`` writes nothing.
        videos: Write a video of each of the first ``videos`` episodes (needs ``out_dir``).
        trajectories: Plot the first ``trajectories`` episodes into ``trajectories.png``.
        logs: Write an episode log of each of the first ``logs`` episodes (-1: all).
        debug_agent: Slot whose ORCA half-planes the videos and logs show (checked against the
            env's slots even when nothing is recorded).
        video_size: Long side of the video frames, pixels.
        video_format: ``mp4`` or ``gif``.
        progress: Print progress to stderr.
        log_dtype: Float type of the logs.

    Returns:
        The report: ``format``, ``orca_env_version``, ``policy``, ``config`` (resolved),
        ``env`` (time step, step limit and agent counts after scenario defaults), ``seeds``,
        ``num_episodes``, ``metrics`` (unit and definition of each), ``aggregate`` and
        ``episodes``. It holds nothing that depends on the host or the time.

    Raises:
        ValueError: On a bad argument (the message names it): a negative ``videos`` or
            ``trajectories``, ``logs`` below -1, a ``debug_agent`` that is not a slot, a seed
            outside the evaluation seeds, an unknown video format, or an unusable policy.
    """
    from .environment import OrcaEnv  # noqa: PLC0415

    for arg, value, least in (("videos", videos, 0), ("trajectories", trajectories, 0),
                              ("logs", logs, -1)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
            raise ValueError(f"{arg} must be an integer >= {least}"
                             f"{' (-1: all)' if least < 0 else ''}, got {value!r}")
    if video_format not in ("mp4", "gif"):
        raise ValueError(f"video_format must be 'mp4' or 'gif', got {video_format!r}")
    kwargs = dict(overrides or {})
    kwargs["render_mode"] = None
    env = OrcaEnv(config, **kwargs)
    if seeds is None:
        seeds = eval_seeds(int(episodes))
    seeds = [int(s) for s in seeds]
    bad = [s for s in seeds if not is_eval_seed(s)]
    if bad:
        raise ValueError(f"seed {bad[0]} is not an evaluation seed (reserved range "
                         f"{EVAL_SEEDS.start}..{EVAL_SEEDS.stop - 1})")
    pol, name = resolve_policy(policy, model, env)
    if out_dir is None and (videos or trajectories or logs):
        raise ValueError("videos, trajectories and logs need an out_dir")
    n_logs = len(seeds) if logs < 0 else logs
    n_rec = max(videos, trajectories, n_logs)
    cfg = env.config.to_dict()
    prog = _Progress(len(seeds), progress, f"eval {name}")
    rows, plotted = [], []
    fps = env.metadata["render_fps"]
    for k, seed in enumerate(seeds):
        rec = None
        if k < n_rec:
            rec = EpisodeRecorder(cfg, seed, name, dtype=log_dtype,
                                  extra={"render_fps": fps, "title": f"{name}  seed {seed}"})
        row = run_episode(env, pol, seed, recorder=rec, debug_agent=debug_agent)
        rows.append(row)
        if rec is not None:
            log = rec.to_log()
            log.meta["metrics"] = row
            if k < n_logs:
                log.save(os.path.join(out_dir, "logs", f"episode_{seed}.npz"))
            if k < videos:
                from .episode_log import replay  # noqa: PLC0415

                replay(log, video=os.path.join(out_dir, "videos",
                                               f"episode_{seed}.{video_format}"),
                       fps=fps, size=video_size)
            if k < trajectories:
                plotted.append(log)
        prog.update(k + 1, row)
    env.close()
    report = {
        "format": REPORT_FORMAT,
        "orca_env_version": __version__,
        "policy": name,
        "config": cfg,
        # Scenario defaults the config left as None, resolved.
        "env": {"time_step": float(env.time_step), "max_steps": int(env.max_steps),
                "num_learned": len(env.possible_agents),
                "num_agents": int(np.asarray(env.sim.radii).shape[0]) if env.sim else None},
        "seeds": seeds,
        "num_episodes": len(seeds),
        "metrics": {k: {"unit": u, "definition": d} for k, (u, d) in METRICS.items()},
        "aggregate": aggregate(rows),
        "episodes": rows,
    }
    if out_dir is not None:
        os.makedirs(out_dir, exist_ok=True)
        with open(os.path.join(out_dir, "metrics.json"), "w", encoding="utf-8") as fh:
            fh.write(report_json(report))
        write_csv(rows, os.path.join(out_dir, "episodes.csv"))
        if plotted:
            plot_trajectories(plotted, os.path.join(out_dir, "trajectories.png"),
                              [f"seed {lg.seed}" for lg in plotted])
    return report
