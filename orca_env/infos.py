"""The per-agent ``infos`` dicts of the PettingZoo env (the only per-agent Python of a step).

``full`` infos hold every entry of the Infos section of :class:`orca_env.OrcaEnv`; ``compact``
ones only ``status``. The vector env reports the same values as per-row arrays instead.
"""

from __future__ import annotations

import numpy as np

from .codes import STATUSES
from .rewards import TERMS, term_dicts

__all__ = ["INFO_LEVELS", "reset_infos", "step_infos", "compact_infos"]

#: What ``infos`` holds per agent after a step: ``full`` (everything, for evaluation and
#: logging) or ``compact`` (only ``status``, for training: building the per-agent dicts of
#: ``full`` costs about half a core step at 100 agents).
INFO_LEVELS = ("full", "compact")
#: Status names indexed by code, as an array: one fancy-indexing call names every agent's status.
_STATUS_NAMES = np.array(STATUSES, dtype=object)
_HIT_NAMES = (None, "agent", "obstacle")


def reset_infos(agents: list[str], table, live: np.ndarray, path_len: np.ndarray,
                sep: np.ndarray) -> dict:
    """Infos of the first observation: status active, zero terms, no telemetry yet."""
    zero_terms = dict.fromkeys(TERMS, 0.0)
    infos = {}
    for k, a in enumerate(agents):
        i = live[k]
        infos[a] = {"status": "active", "group": table.group_names[table.group[i]],
                    "reward_terms": dict(zero_terms), "intervention": 0.0,
                    "num_orca_lines": 0, "used_lp3": False, "position_corrected": False,
                    "distance_to_goal": float(path_len[i]),
                    "nearest_separation": float(sep[k]), "collided_with": None}
    return infos


def compact_infos(agents: list[str], status: np.ndarray) -> dict:
    """``{agent: {"status": name}}``."""
    return {a: {"status": s} for a, s in zip(agents, _STATUS_NAMES[status].tolist(), strict=True)}


def step_infos(agents: list[str], res, rows: np.ndarray, live: np.ndarray, slots, table,
               term_names: tuple[str, ...]) -> dict:
    """Full infos of a step for the agents of ``rows`` (slots ``live``) of a one-world batch."""
    stat = _STATUS_NAMES[res.status[rows]].tolist()
    w_dicts = term_dicts(res.weighted[rows], term_names)
    inter = slots.intervention[live].tolist()
    lines = slots.n_lines[live].tolist()
    lp3 = slots.lp3[live].tolist()
    corr = slots.corrected[live].tolist()
    dist = slots.path_len[live].tolist()
    seps = res.sep[rows].tolist()
    names = table.group_names
    gnames = [names[g] for g in table.group[live].tolist()]
    hits = [_HIT_NAMES[h] for h in res.hit[rows].tolist()]
    return {a: {"status": st_, "group": g_, "reward_terms": w_, "intervention": i_,
                "num_orca_lines": l_, "used_lp3": u_, "position_corrected": c_,
                "distance_to_goal": d_, "nearest_separation": s_, "collided_with": n_}
            for a, st_, g_, w_, i_, l_, u_, c_, d_, s_, n_ in zip(
                agents, stat, gnames, w_dicts, inter, lines, lp3, corr, dist, seps, hits,
                strict=True)}
