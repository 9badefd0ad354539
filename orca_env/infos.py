"""The per-agent ``infos`` of the envs (the only per-agent Python of a step).

Three levels (``OrcaEnv(infos=...)``):

* ``full``: every entry of the Infos section of :class:`orca_env.OrcaEnv` (names as strings,
  ``reward_terms`` as a dict, ``collided_with`` None or a name), for evaluation and logging;
* ``compact``: only ``status`` after a step, for training;
* ``numeric``: the same entries as numbers only, with the same keys at reset and on every
  step, so that tensor libraries can build a spec from the first dict (:data:`NUMERIC_KEYS`).

The numbers come from :func:`info_columns`, which the vector env reports as per-row arrays
(``OrcaVectorEnv(infos="numeric")``): one implementation for both.
"""

from __future__ import annotations

import numpy as np

from .codes import STATUSES
from .rewards import TERMS, _dict_builder, term_dicts

__all__ = ["INFO_LEVELS", "NUMERIC_KEYS", "reset_infos", "step_infos", "compact_infos",
           "numeric_keys", "info_columns", "reset_columns", "numeric_infos"]

#: What ``infos`` holds per agent after a step: ``full`` (everything, for evaluation and
#: logging), ``compact`` (only ``status``, for training: building the per-agent dicts of
#: ``full`` costs about half a core step at 100 agents) or ``numeric`` (numbers only, fixed
#: keys: :data:`NUMERIC_KEYS`).
INFO_LEVELS = ("full", "compact", "numeric")
#: Status names indexed by code, as an array: one fancy-indexing call names every agent's status.
_STATUS_NAMES = np.array(STATUSES, dtype=object)
_HIT_NAMES = (None, "agent", "obstacle")

#: The entries of numeric infos, in order, with their Python type and meaning. Between
#: ``group`` and ``intervention`` come the weighted reward terms, ``reward_<term>`` (float) for
#: each of ``env.reward_term_names`` (the built-in terms, then the scenario's); they sum to
#: the reward. Codes are those of :mod:`orca_env.codes`.
NUMERIC_KEYS: dict[str, tuple[type, str]] = {
    "status": (int, "Status code: 0 active, 1 at_goal, 2 collided, 3 deadlocked, 4 timed_out "
                    "(orca_env.codes.Status)"),
    "active": (bool, "the agent is in play: it acted on this step (every agent at reset); "
                     "False for an agent in the absorbing state (finished_agents='absorb')"),
    "group": (int, "index of the agent's group in env.group_names"),
    "intervention": (float, "m/s, |safe - preferred velocity| (0 for an agent without the "
                            "safety layer)"),
    "num_orca_lines": (int, "ORCA half-planes of the agent's linear program"),
    "used_lp3": (bool, "ORCA's LP was infeasible (RVO2's linearProgram3 ran)"),
    "position_corrected": (bool, "the boundary or an obstacle corrected the agent's move"),
    "distance_to_goal": (float, "m, remaining distance (path length with guidance)"),
    "nearest_separation": (float, "m, clearance to the nearest agent or obstacle within the "
                                  "observation range (inf if none)"),
    "collided_with": (int, "Hit code: 0 none, 1 agent, 2 obstacle (orca_env.codes.Hit)"),
}


def numeric_keys(term_names: tuple[str, ...]) -> tuple[str, ...]:
    """The keys of a numeric info dict, in order, for an env with these reward terms."""
    keys = list(NUMERIC_KEYS)
    i = keys.index("intervention")
    return tuple(keys[:i] + [f"reward_{t}" for t in term_names] + keys[i:])


def info_columns(res, rows: np.ndarray, slot_ids: np.ndarray, slots, term_names: tuple,
                 acted: np.ndarray) -> dict[str, np.ndarray]:
    """The numeric infos of the agent ``rows`` after a step, one array per key.

    Args:
        res: The step's :class:`~orca_env.stages.StepResult`.
        rows: (k,) int64 agent rows.
        slot_ids: (k,) int64 the rows' slots in the batch's slot arrays.
        slots: The batch's :class:`~orca_env.stages.Slots`.
        term_names: The reward term names (``res.weighted``'s columns).
        acted: (k,) bool, the rows that acted; the others (absorbing agents) report zero
            telemetry and reward terms, ``nearest_separation`` inf and their last status.

    Returns:
        ``{key: (k,) array}`` in :func:`numeric_keys` order.
    """
    cols: dict[str, np.ndarray] = {"status": res.status[rows], "active": acted,
                                   "group": slots.group[slot_ids]}
    w = res.weighted[rows]
    for j, t in enumerate(term_names):
        cols[f"reward_{t}"] = w[:, j]
    cols["intervention"] = np.where(acted, slots.intervention[slot_ids], 0.0)
    cols["num_orca_lines"] = np.where(acted, slots.n_lines[slot_ids], 0)
    cols["used_lp3"] = slots.lp3[slot_ids] & acted
    cols["position_corrected"] = slots.corrected[slot_ids] & acted
    cols["distance_to_goal"] = slots.path_len[slot_ids]
    cols["nearest_separation"] = res.sep[rows]
    cols["collided_with"] = res.hit[rows].astype(np.int64)
    return cols


def reset_columns(slot_ids: np.ndarray, slots, term_names: tuple,
                  sep: np.ndarray) -> dict[str, np.ndarray]:
    """The numeric infos of a first observation: active, zero terms, no telemetry yet."""
    k = slot_ids.size
    zi, zf, zb = np.zeros(k, dtype=np.int64), np.zeros(k), np.zeros(k, dtype=bool)
    cols: dict[str, np.ndarray] = {"status": zi, "active": np.ones(k, dtype=bool),
                                   "group": slots.group[slot_ids]}
    for t in term_names:
        cols[f"reward_{t}"] = zf
    cols.update(intervention=zf, num_orca_lines=zi, used_lp3=zb, position_corrected=zb,
                distance_to_goal=slots.path_len[slot_ids], nearest_separation=sep,
                collided_with=zi)
    return cols


def numeric_infos(agents: list[str], cols: dict[str, np.ndarray]) -> dict:
    """``{agent: {key: number}}`` from :func:`info_columns` (Python ints, floats, bools)."""
    values = list(zip(*(c.tolist() for c in cols.values()), strict=True))
    return dict(zip(agents, _dict_builder(tuple(cols))(values), strict=True))


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
               term_names: tuple[str, ...], acted: np.ndarray | None = None) -> dict:
    """Full infos of a step for the agents of ``rows`` (slots ``live``) of a one-world batch.

    ``acted`` (absorbing agents only): rows that did not act report zero telemetry, and each
    dict gets ``active``.
    """
    stat = _STATUS_NAMES[res.status[rows]].tolist()
    w_dicts = term_dicts(res.weighted[rows], term_names)
    if acted is None:
        inter = slots.intervention[live].tolist()
        lines = slots.n_lines[live].tolist()
        lp3 = slots.lp3[live].tolist()
        corr = slots.corrected[live].tolist()
    else:
        inter = np.where(acted, slots.intervention[live], 0.0).tolist()
        lines = np.where(acted, slots.n_lines[live], 0).tolist()
        lp3 = (slots.lp3[live] & acted).tolist()
        corr = (slots.corrected[live] & acted).tolist()
    dist = slots.path_len[live].tolist()
    seps = res.sep[rows].tolist()
    names = table.group_names
    gnames = [names[g] for g in table.group[live].tolist()]
    hits = [_HIT_NAMES[h] for h in res.hit[rows].tolist()]
    infos = {a: {"status": st_, "group": g_, "reward_terms": w_, "intervention": i_,
                 "num_orca_lines": l_, "used_lp3": u_, "position_corrected": c_,
                 "distance_to_goal": d_, "nearest_separation": s_, "collided_with": n_}
             for a, st_, g_, w_, i_, l_, u_, c_, d_, s_, n_ in zip(
                 agents, stat, gnames, w_dicts, inter, lines, lp3, corr, dist, seps, hits,
                 strict=True)}
    if acted is not None:
        for a, on in zip(agents, acted.tolist(), strict=True):
            infos[a]["active"] = on
    return infos
