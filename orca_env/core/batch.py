"""Batched worlds: RVO2's ``doStep`` on one world's views of many worlds' concatenated arrays.

A batch holds ``B`` worlds of ``n`` agents each (the same ``n`` for every world). Agent arrays
are the worlds' agent arrays concatenated: agent ``i`` of world ``b`` is row ``b * n + i``, and
inside a kernel a world sees its own rows as a world-local view (``pos[b * n:(b + 1) * n]``), so
agent ids, kd-tree permutations and tie-breaks are exactly those of a single
:class:`~orca_env.core.simulator.Simulator` holding that world. Obstacles differ per world and
are concatenated with offsets: world ``b`` owns vertices ``obst_off[b]:obst_off[b + 1]`` (vertex
ids inside a world's slice are world-local) and index boxes ``box_off[b]:box_off[b + 1]``.

Nothing of the ORCA math is written here: :func:`step_world` is ``Simulator.step`` (partition of
the persistent kd-tree order, :func:`~orca_env.core.kdtree.build_agent_tree`,
``kernels._compute_block``, :func:`~orca_env.core.kernels.apply_velocities`) on one world's views,
and :func:`query_world_neighbors` is ``Simulator.query_agent_neighbors_unchecked`` on them.
Results are bit-identical to one ``Simulator`` per world. Kernels never validate: the env layer
(:mod:`orca_env.pipeline` and :mod:`orca_env.stages`) builds the arrays, slices each world's
rows, parameters, outputs and kd-tree scratch, and loops over the worlds inside numba.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .kdtree import (
    DIRECT_MAX,
    AgentTree,
    build_agent_tree,
    partition_active,
    query_many,
    query_many_direct,
)
from .kernels import AgentParams, StepOutput, _compute_block, apply_velocities
from .obstacles import Obstacles

__all__ = ["world_obstacles", "step_world", "query_world_neighbors"]


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
def world_obstacles(obst, obst_off, box_off, b):
    """World ``b``'s obstacle bundle (a plain tuple in ``Obstacles`` field order) of views.

    Args:
        obst: concatenated ``Obstacles`` fields (plain tuple): points (M, 2) float64, next_ids,
            prev_ids (M,) int64 world-local, unit_dirs (M, 2) float64, convex (M,) bool,
            seg_order (M,) int64 world-local, seg_boxes (S, 4) float64.
        obst_off: (B + 1,) int64 vertex offsets per world.
        box_off: (B + 1,) int64 index-box offsets per world.
        b: the world.
    """
    o0 = obst_off[b]
    o1 = obst_off[b + 1]
    return (obst[0][o0:o1], obst[1][o0:o1], obst[2][o0:o1], obst[3][o0:o1], obst[4][o0:o1],
            obst[5][o0:o1], obst[6][box_off[b]:box_off[b + 1]])


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
def step_world(pos, vel, pref, active, kd_order, params, time_step, obst, max_nbr_cap, out,
               nodes, new_vel, vlines, n_vlines):
    """``Simulator.step`` on one world's arrays (RVO2's ``doStep``), without the clock.

    Args:
        pos: (n, 2) float64 positions, m, updated in place.
        vel: (n, 2) float64 velocities, m/s, updated in place.
        pref: (n, 2) float64 preferred velocities, m/s.
        active: (n,) bool.
        kd_order: (n,) int64 the kd-tree's persistent agent order, updated in place.
        params: ``AgentParams`` fields of the world (plain tuple, (n,) arrays).
        time_step: s.
        obst: the world's ``Obstacles`` fields (plain tuple, see :func:`world_obstacles`).
        max_nbr_cap: >= every ``max_neighbors`` of the world.
        out: ``StepOutput`` fields (plain tuple); its ``velocity`` is ignored, ``new_vel`` used.
        nodes: (begin, end, left, right, box) kd-tree node scratch, >= max(2n - 1, 1) rows.
        new_vel: (n, 2) float64 scratch for the new velocities.
        vlines: (n, V, 4) float64 hard velocity constraints per agent (NH-ORCA), as in
            ``kernels._compute_block``.
        n_vlines: (n,) int64 constraints per agent; of shape (0,): none (RVO2's LP).
    """
    n_all = kd_order.shape[0]
    tmp = np.empty(n_all, dtype=np.int64)
    na = partition_active(kd_order, active, tmp)
    for i in range(n_all):  # loops, not slice assignments (which compile numba's error text)
        kd_order[i] = tmp[i]
    order = kd_order[:na]
    m = max(2 * na - 1, 1)
    tree = (order, nodes[0][:m], nodes[1][:m], nodes[2][:m], nodes[3][:m], nodes[4][:m])
    build_agent_tree(pos, tree)
    for i in range(new_vel.shape[0]):
        new_vel[i, 0] = vel[i, 0]
        new_vel[i, 1] = vel[i, 1]
    step_out = (new_vel, out[1], out[2], out[3], out[4])
    if na:
        _compute_block(order, pos, vel, pref, AgentParams(*params), time_step, AgentTree(*tree),
                       Obstacles(*obst), max_nbr_cap, StepOutput(*step_out), vlines, n_vlines)
    apply_velocities(order, active, pos, vel, pref, time_step, obst, step_out)


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
def query_world_neighbors(slots, pos, active, kd_order, range_sq, k, nodes, out_ids, out_dsq,
                          tmp):
    """``Simulator.query_agent_neighbors_unchecked`` on one world's arrays.

    A fresh tree over the active agents, built from a copy of the persistent order (which stays
    untouched), then :func:`~orca_env.core.kdtree.query_many`; in worlds of at most
    :data:`~orca_env.core.kdtree.DIRECT_MAX` agents :func:`~orca_env.core.kdtree.query_many_direct`
    measures every agent instead, and the tree runs only when that meets an exact tie (the same
    results either way, ties included).

    The env's observations call it at the positions the next step's ORCA builds its tree
    and searches at. Sharing that work was tried (commit 677a2f1, reverted): one query per
    world-step of ``max(k, max_neighbors)`` neighbours within the larger range for every
    active agent, its tree and rows reused by the next :func:`step_world` when positions, the
    active set and the order had not changed (checked against a copy), each list a prefix of
    the shared row (bit-identical, ties included). On 256 ``circle_dense`` worlds of 16 it
    measured no faster, in the kernel's thread time, than two queries (within +-5%; sharing
    only the tree, likewise): the wider shared query, copying its rows and checking the
    state cost what the observations' own query (about 2-3 us per world) and the second
    build (under 1 us) cost.

    Args:
        slots: (q,) int64 world-local agent ids to query.
        pos: (n, 2) float64 positions, m.
        active: (n,) bool.
        kd_order: (n,) int64 the world's persistent kd-tree order (read only).
        range_sq: squared range, m^2.
        k: neighbours per agent.
        nodes: (begin, end, left, right, box) node scratch, >= max(2n - 1, 1) rows.
        out_ids: (q, k) int64 output, prefilled with -1.
        out_dsq: (q, k) float64 output, prefilled with inf.
        tmp: (n,) int64 scratch (the tree's order).
    """
    if kd_order.shape[0] <= DIRECT_MAX:  # small worlds: every agent measured, no tree
        if not query_many_direct(slots, pos, active, range_sq, k, out_ids, out_dsq):
            return
        for q in range(slots.shape[0]):  # a tie: the tree decides it, as it always has
            for c in range(k):
                out_ids[q, c] = -1
                out_dsq[q, c] = np.inf
    na = partition_active(kd_order, active, tmp)
    m = max(2 * na - 1, 1)
    tree = (tmp[:na], nodes[0][:m], nodes[1][:m], nodes[2][:m], nodes[3][:m], nodes[4][:m])
    build_agent_tree(pos, tree)
    query_many(slots, pos, range_sq, k, tree, out_ids, out_dsq)
