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
    AgentTree,
    build_agent_tree,
    partition_active,
    query_agent_neighbors,
    query_many,
)
from .kernels import AgentParams, StepOutput, _compute_block, apply_velocities
from .obstacles import Obstacles

__all__ = ["world_obstacles", "step_world", "step_world_shared", "query_world_shared",
           "shared_prefix", "query_world_neighbors"]


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
    no_ids, no_cnt = np.empty((0, 0), dtype=np.int64), np.empty(0, dtype=np.int64)
    step_world_shared(pos, vel, pref, active, kd_order, params, time_step, obst, max_nbr_cap,
                      out, nodes, new_vel, vlines, n_vlines, np.empty(n_all, dtype=np.int64),
                      (np.bool_(False), np.int64(0), np.int64(0), 0.0), no_cnt, no_ids,
                      np.empty((0, 0)), no_cnt, no_cnt.copy())


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
def shared_prefix(dsq, cnt, big_k, k, range_sq):
    """How much of a shared query's row is the ``(k, range_sq)`` query's result, or -1.

    The row (``dsq[:cnt]``, nearest first, ties in the order the search found them) is
    :func:`~orca_env.core.kdtree.query_agent_neighbors`' result for ``big_k >= k`` neighbours
    within a squared range ``>= range_sq``, at the same positions and tree. The ``(k,
    range_sq)`` search visits the same leaves in the same order, except those it prunes, which
    hold no agent it would keep: its result is the row's first ``c`` entries, ``c`` the
    entries within ``range_sq`` up to ``k``, whenever the row holds every agent that could
    come before its ``c``-th: when the row is not full (it holds every agent in its range),
    when fewer than ``k`` are in range (the row's next entry is out of it), when ``k`` is
    ``big_k``, or when the ``c``-th is strictly nearer than the row's last. Else (a tie with
    the last entry could hide a nearer-found agent) -1: the caller searches itself.
    """
    lim = min(k, cnt)
    c = 0
    while c < lim and dsq[c] < range_sq:
        c += 1
    if cnt < big_k or c < k or k == big_k or dsq[c - 1] < dsq[cnt - 1]:
        return c
    return -1


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
def query_world_shared(pos, active, kd_order, big_k, range_sq, nodes, order_out, nb_ids,
                       nb_dsq, nb_cnt):
    """The tree and every active agent's ``big_k`` nearest within ``range_sq``, kept for reuse.

    What the next :func:`step_world_shared` would build and search at these positions (when
    nothing changes in between): the tree over the active agents from ``kd_order``'s
    partition (into ``order_out`` (n,), permuted by the build, ``nodes`` written), and each
    active agent ``i``'s unfiltered neighbours (``query_agent_neighbors``, itself excluded)
    into ``nb_ids[i, :nb_cnt[i]]`` and ``nb_dsq[i, :nb_cnt[i]]`` ((n, >= big_k) arrays).
    ``kd_order`` is not changed. The observations take their lists from these rows
    (:func:`shared_prefix`) and the next step's ORCA its own.

    Returns:
        The number of active agents (``order_out[:na]`` is the tree's order).
    """
    na = partition_active(kd_order, active, order_out)
    m = max(2 * na - 1, 1)
    tree = (order_out[:na], nodes[0][:m], nodes[1][:m], nodes[2][:m], nodes[3][:m], nodes[4][:m])
    build_agent_tree(pos, tree)
    stack = np.empty(na + 2, dtype=np.int64)
    ids = np.empty(max(big_k, 1), dtype=np.int64)
    dsq = np.empty(max(big_k, 1), dtype=np.float64)
    no_layers = np.empty(0, dtype=np.int64)
    for q in range(na):
        i = order_out[q]
        c = query_agent_neighbors(
            i, pos[i, 0], pos[i, 1], range_sq, big_k, pos, tree[0], tree[1], tree[2], tree[3],
            tree[4], tree[5], stack, ids, dsq, False, np.int64(-1), no_layers)
        nb_cnt[i] = c
        for j in range(c):
            nb_ids[i, j] = ids[j]
            nb_dsq[i, j] = dsq[j]
    return na


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
def step_world_shared(pos, vel, pref, active, kd_order, params, time_step, obst, max_nbr_cap,
                      out, nodes, new_vel, vlines, n_vlines, tmp, shared, kd_next, nb_ids,
                      nb_dsq, nb_cnt, pre_cnt):
    """:func:`step_world`, reusing a :func:`query_world_shared` made at this very state.

    ``shared``: ``(valid, na, big_k, range_sq)``; when ``valid`` (the caller checked that
    positions, the active set and ``kd_order`` are what the shared query saw), the tree it
    built is taken as it is (``kd_next`` becomes the persistent order, ``nodes`` still hold
    it) and each agent's ORCA neighbours are the prefix of its row that
    :func:`shared_prefix` allows (an agent with a layer filter, a longer reach or more
    neighbours than the row searches itself, on that same tree). Else the step builds and
    searches as ``Simulator.step`` does. Results are the same bit for bit either way.
    ``tmp`` (n,) int64 and ``pre_cnt`` (n,) int64 are scratch.
    """
    n_all = kd_order.shape[0]
    if shared[0]:
        na = shared[1]
        for i in range(n_all):
            kd_order[i] = kd_next[i]
    else:
        na = partition_active(kd_order, active, tmp)
        for i in range(n_all):  # loops, not slice assignments (which compile numba's error text)
            kd_order[i] = tmp[i]
    order = kd_order[:na]
    m = max(2 * na - 1, 1)
    tree = (order, nodes[0][:m], nodes[1][:m], nodes[2][:m], nodes[3][:m], nodes[4][:m])
    pre = pre_cnt[:0]
    if shared[0]:
        big_k, range_sq = shared[2], shared[3]
        nd, kmax, layer, mask = params[2], params[3], params[7], params[8]
        common = np.int64(-1)  # as _compute_block: the layer bits every agent has
        for q in range(na):
            common &= layer[order[q]]
        for q in range(na):
            i = order[q]
            r2 = nd[i] * nd[i]
            if kmax[i] > big_k or r2 > range_sq or (mask[i] & common) == 0:
                pre_cnt[i] = -1
            else:
                pre_cnt[i] = shared_prefix(nb_dsq[i], nb_cnt[i], big_k, kmax[i], r2)
        pre = pre_cnt
    else:
        build_agent_tree(pos, tree)
    for i in range(new_vel.shape[0]):
        new_vel[i, 0] = vel[i, 0]
        new_vel[i, 1] = vel[i, 1]
    step_out = (new_vel, out[1], out[2], out[3], out[4])
    if na:
        _compute_block(order, pos, vel, pref, AgentParams(*params), time_step, AgentTree(*tree),
                       Obstacles(*obst), max_nbr_cap, StepOutput(*step_out), vlines, n_vlines,
                       nb_ids, pre)
    apply_velocities(order, active, pos, vel, pref, time_step, obst, step_out)


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
def query_world_neighbors(slots, pos, active, kd_order, range_sq, k, nodes, out_ids, out_dsq,
                          tmp):
    """``Simulator.query_agent_neighbors_unchecked`` on one world's arrays.

    A fresh tree over the active agents, built from a copy of the persistent order (which stays
    untouched), then :func:`~orca_env.core.kdtree.query_many`.

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
    na = partition_active(kd_order, active, tmp)
    m = max(2 * na - 1, 1)
    tree = (tmp[:na], nodes[0][:m], nodes[1][:m], nodes[2][:m], nodes[3][:m], nodes[4][:m])
    build_agent_tree(pos, tree)
    query_many(slots, pos, range_sq, k, tree, out_ids, out_dsq)
