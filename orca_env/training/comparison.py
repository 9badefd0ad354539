"""The three-way comparison at the end of a run, and its table.

On the evaluation suite's frozen seeds (``10_000 +``, never used by training): the trained policy
with the ORCA safety layer, pure ORCA and the trained policy without the safety layer.
"""

from __future__ import annotations

import copy
import glob
import json
import os
import time
from collections.abc import Callable
from typing import Any

from orca_env import evaluation
from orca_env.baselines import OrcaPolicy
from orca_env.config import load_config
from orca_env.environment import OrcaEnv
from orca_env.evaluation import episode_log, format_ci
from orca_env.files import WriteError, atomic_write_text

from .run_folder import COMPARISON_JSON, COMPARISON_TXT, EVAL_DIR, model_label
from .sb3.loader import load as load_sb3

__all__ = ["without_safety_layer", "format_comparison", "compare"]


def without_safety_layer(env_cfg: dict) -> dict:
    """The env config with ``safety_layer: false`` for every learned group (of every entry)."""
    out = copy.deepcopy(env_cfg)
    if out.get("mixture") is not None:  # each entry's own groups
        resolved = load_config(out).to_dict()
        for entry in resolved["mixture"]:
            entry["config"] = without_safety_layer(entry["config"])
        return resolved
    groups = out.get("groups")
    if groups is None:  # the scenario's default groups
        groups = [dict(g) for g in OrcaEnv(out).scenario.DEFAULT_GROUPS]
    out["groups"] = [dict(g, safety_layer=False) if g.get("population", "learned") == "learned"
                     else dict(g) for g in groups]
    return out


def _row(report: dict) -> dict:
    """``{metric: "mean [low, high]" or "mean +-half"}`` strings of a report's aggregate.

    Rates show their 95% interval's bounds (Wilson or clipped Student-t), the rest the Student-t
    half-width (``orca_env.evaluation.format_ci``); ``-`` when undefined.
    """
    out = {}
    for key, a in report["aggregate"].items():
        if a["mean"] is None:
            out[key] = "-"
        else:
            ci = format_ci(a, digits=2)
            out[key] = f"{a['mean']:.3g}" + ("" if ci == "-" else f" {ci}")
    return out


def format_comparison(reports: dict[str, dict]) -> str:
    """Policies as columns, the evaluation suite's metrics as rows (mean and 95% CI)."""
    names = list(reports)
    rows = {n: _row(r) for n, r in reports.items()}
    keys = list(next(iter(reports.values()))["aggregate"])
    units = next(iter(reports.values()))["metrics"]
    w0 = max(len(k) for k in keys) + 2
    ws = [max([len(n)] + [len(rows[n][k]) for k in keys]) for n in names]
    cols = list(zip(names, ws, strict=True))
    lines = ["  ".join(["metric".ljust(w0)] + [n.rjust(w) for n, w in cols] + ["unit"])]
    lines.append("-" * len(lines[0]))
    for k in keys:
        lines.append("  ".join([k.ljust(w0)] + [rows[n][k].rjust(w) for n, w in cols]
                               + [units[k]["unit"]]))
    return "\n".join(lines)


def compare(cfg: dict, run_dir: str, video: bool = True,
            load: Callable[[str], Any] | None = None) -> dict:
    """Evaluate the three policies on held-out seeds; print and save the table and a video.

    Uses :func:`orca_env.evaluation.evaluate` on its frozen evaluation seeds (``10_000 +``,
    never used by training) for: the trained policy with the ORCA safety layer, pure ORCA
    (``orca_env.baselines.OrcaPolicy``: goal-directed preferred velocity with seeded noise) and
    the trained policy without the safety layer (``safety_layer: false`` for the learned groups).
    The trained policy with its safety layer runs with the config's ``deploy`` settings (a
    safety margin), as ``orca-env eval`` runs the saved policy.

    Args:
        cfg: The resolved training config.
        run_dir: The run folder (the trained policy is loaded from it).
        video: Render a video of the first episode of the trained policy.
        load: ``load(run_dir) -> policy``, the backend's loader (default: the SB3 one,
            :func:`orca_env.training.sb3.loader.load`).

    Returns:
        ``{label: evaluation report}`` of the three policies.

    Raises:
        orca_env.files.WriteError: When the video could not be written completely (a full
            disk, ffmpeg failed), after the three evaluations and the table are written: the
            command exits with that one line, not as if the video were there. A missing video
            backend costs the video only (a printed line).
    """
    out_dir = os.path.join(run_dir, EVAL_DIR)
    seeds = evaluation.eval_seeds(int(cfg["eval"]["n_episodes"]))
    trained = (load_sb3 if load is None else load)(run_dir)
    # One label per policy (eval's, bench's): the run folder's name, in the reports, the logs
    # and the video's title, whichever backend's loader loaded it.
    name = model_label(run_dir)
    # The trained policy acts with its deploy settings (a safety margin), as eval gives them.
    deployed = {**cfg["env"], **(cfg.get("deploy") or {})}
    runs = [("trained+safety", "trained_safety", trained, deployed),
            ("pure ORCA", "orca", OrcaPolicy(), cfg["env"]),
            ("trained, no safety", "trained_no_safety", trained,
             without_safety_layer(cfg["env"]))]
    want_video = video and cfg["eval"].get("video", True)
    reports = {}
    video_error = None
    for label, sub, pol, env_cfg in runs:
        t0 = time.perf_counter()
        # The video is drawn from the episode's log afterwards, so a missing video backend
        # costs the video only, never a second evaluation.
        logs = 1 if want_video and sub == "trained_safety" else 0
        reports[label] = evaluation.evaluate(env_cfg, pol, seeds=seeds,
                                             out_dir=os.path.join(out_dir, sub), logs=logs,
                                             name=None if sub == "orca" else name)
        print(f"  evaluated {label!r} on {len(seeds)} seeds in {time.perf_counter() - t0:.1f} s")
        if logs:
            try:
                _video_from_log(os.path.join(out_dir, sub), seeds[0])
            except WriteError as exc:  # raised once the numbers are saved
                print(f"No video: {exc}")
                video_error = exc
    header = (f"Held-out evaluation seeds {seeds[0]}..{seeds[-1]} ({len(seeds)} episodes), "
              f"scenario {reports['pure ORCA']['config'].get('scenario', 'mixture')}; "
              f"mean and 95% CI "
              f"([low, high] for rates: Wilson for all_success, Student-t clipped to [0, 1] "
              f"for fractions; +- Student-t half-width otherwise):")
    table = format_comparison(reports)
    print(header)
    print(table)
    atomic_write_text(os.path.join(out_dir, COMPARISON_TXT), header + "\n" + table + "\n")
    atomic_write_text(os.path.join(out_dir, COMPARISON_JSON),
                      json.dumps({label: {"policy": r["policy"], "aggregate": r["aggregate"]}
                                  for label, r in reports.items()}, indent=1, sort_keys=True))
    vids = glob.glob(os.path.join(out_dir, "trained_safety", "videos", "*"))
    if vids:
        print(f"Video: {vids[0]}")
    if video_error is not None:
        raise video_error
    return reports


def _video_from_log(eval_dir: str, seed: int) -> str | None:
    """Render ``<eval_dir>/logs/episode_<seed>.npz`` to ``videos/episode_<seed>.mp4``.

    Only a missing or failing video backend (pygame, imageio, ffmpeg: import, OS and pygame
    errors) is caught: the numbers stand without the video. Returns the path, or ``None``.

    Raises:
        orca_env.files.WriteError: When the video file could not be written completely (not
            a backend problem: the disk is full, or ffmpeg failed); nothing is renamed into
            place.
    """
    try:
        return episode_log.replay(os.path.join(eval_dir, "logs", f"episode_{seed}.npz"),
                      video=os.path.join(eval_dir, "videos", f"episode_{seed}.mp4"))
    except WriteError:
        raise
    except (ImportError, OSError, RuntimeError) as exc:  # pygame.error is a RuntimeError
        print(f"No video ({type(exc).__name__}: {exc}); the evaluation stands without it")
        return None
