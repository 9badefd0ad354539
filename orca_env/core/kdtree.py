"""Agent kd-tree: RVO2's ``KdTree`` agent half, as flat arrays and numba kernels.

The tree is rebuilt at the start of every step from the positions of the active agents. Its
layout follows RVO2 exactly (leaves of at most ``MAX_LEAF_SIZE`` agents, split at the middle of
the longer side of the bounding box, RVO2's in-place partition, left child at ``node + 1`` and
right child at ``node + 2 * (left - begin)``), and like RVO2 the permutation of agents it
produces is kept and refined from step to step. Keeping all of that identical makes neighbour
lists identical to RVO2's, ties included, which the differential tests rely on.

The tree travels to the kernels as one :class:`AgentTree` bundle of arrays (``n`` = agents in
the tree, ``2n - 1`` nodes):
    order: (n,) int64, agent ids in tree order.
    begin, end: (2n-1,) int64, the slice of ``order`` under each node.
    left, right: (2n-1,) int64, child node indices (unused in leaves).
    box: (2n-1, 4) float64, bounding box (min_x, max_x, min_y, max_y) of each node.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

MAX_LEAF_SIZE = 10


class AgentTree(NamedTuple):
    """The agent kd-tree's arrays (see the module docstring)."""

    order: np.ndarray
    begin: np.ndarray
    end: np.ndarray
    left: np.ndarray
    right: np.ndarray
    box: np.ndarray


def empty_tree(order):
    """An :class:`AgentTree` over ``order`` ((n,) int64) with uninitialised node arrays."""
    n_nodes = max(2 * order.shape[0] - 1, 1)
    return AgentTree(
        order,
        np.empty(n_nodes, dtype=np.int64),
        np.empty(n_nodes, dtype=np.int64),
        np.empty(n_nodes, dtype=np.int64),
        np.empty(n_nodes, dtype=np.int64),
        np.empty((n_nodes, 4)),
    )


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
def build_agent_tree(positions, tree):
    """Build the tree over ``tree.order`` in place (``order`` is permuted as RVO2 permutes it).

    Args:
        positions: (n_agents, 2) float64, metres, world frame.
        tree: :class:`AgentTree` (see :func:`empty_tree`; or a plain tuple in field order, cheaper
            to dispatch); ``order`` holds the (n,) agent ids to index and is permuted in place,
            the node arrays are written.
    """
    order, node_begin, node_end, node_left, node_right, node_box = AgentTree(*tree)
    n = order.shape[0]
    if n == 0:
        return
    # Explicit stack instead of recursion; node indices do not depend on visiting order.
    stack = np.empty((2 * n, 3), dtype=np.int64)
    stack[0, 0] = 0
    stack[0, 1] = n
    stack[0, 2] = 0
    top = 1
    while top > 0:
        top -= 1
        begin = stack[top, 0]
        end = stack[top, 1]
        node = stack[top, 2]
        node_begin[node] = begin
        node_end[node] = end
        a = order[begin]
        min_x = positions[a, 0]
        max_x = min_x
        min_y = positions[a, 1]
        max_y = min_y
        for k in range(begin + 1, end):
            a = order[k]
            x = positions[a, 0]
            y = positions[a, 1]
            if x > max_x:
                max_x = x
            if x < min_x:
                min_x = x
            if y > max_y:
                max_y = y
            if y < min_y:
                min_y = y
        node_box[node, 0] = min_x
        node_box[node, 1] = max_x
        node_box[node, 2] = min_y
        node_box[node, 3] = max_y
        if end - begin <= MAX_LEAF_SIZE:
            continue
        # Split the longer side at its middle (RVO2's buildAgentTreeRecursive).
        is_vertical = max_x - min_x > max_y - min_y
        axis = 0 if is_vertical else 1
        split = 0.5 * (max_x + min_x) if is_vertical else 0.5 * (max_y + min_y)
        left = begin
        right = end
        while left < right:
            while left < right and positions[order[left], axis] < split:
                left += 1
            while right > left and positions[order[right - 1], axis] >= split:
                right -= 1
            if left < right:
                tmp = order[left]
                order[left] = order[right - 1]
                order[right - 1] = tmp
                left += 1
                right -= 1
        if left == begin:
            left += 1
            right += 1
        node_left[node] = node + 1
        node_right[node] = node + 2 * (left - begin)
        stack[top, 0] = begin
        stack[top, 1] = left
        stack[top, 2] = node + 1
        top += 1
        stack[top, 0] = left
        stack[top, 1] = end
        stack[top, 2] = node + 2 * (left - begin)
        top += 1


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
def partition_active(kd_order, active, out):
    """Stable partition of ``kd_order`` into ``out``: active agents first, then inactive ones.

    Returns:
        The number of active agents; ``out[:count]`` is the order to build the tree over.
    """
    count = 0
    for k in range(kd_order.shape[0]):
        if active[kd_order[k]]:
            out[count] = kd_order[k]
            count += 1
    j = count
    for k in range(kd_order.shape[0]):
        if not active[kd_order[k]]:
            out[j] = kd_order[k]
            j += 1
    return count


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
def _box_dist_sq(node_box, node, x, y):
    """Squared distance from (x, y) to a node's bounding box (0 inside)."""
    dx = max(0.0, node_box[node, 0] - x) ** 2 + max(0.0, x - node_box[node, 1]) ** 2
    dy = max(0.0, node_box[node, 2] - y) ** 2 + max(0.0, y - node_box[node, 3]) ** 2
    return dx + dy


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
def query_agent_neighbors(
    self_id,
    x,
    y,
    range_sq,
    max_neighbors,
    positions,
    order,
    node_begin,
    node_end,
    node_left,
    node_right,
    node_box,
    stack,
    out_ids,
    out_dist_sq,
    use_mask,
    avoid_mask,
    layers,
):
    """The ``max_neighbors`` nearest agents within ``sqrt(range_sq)`` of (x, y), nearest first.

    RVO2's ``computeAgentNeighbors``: the search range shrinks to the farthest kept neighbour once
    ``max_neighbors`` are found, neighbours are kept by insertion sort with strict ``<`` (ties keep
    the earlier-found agent), and the near child of a node is visited first.

    Args:
        self_id: agent id to skip (-1 for none).
        x: query point x (metres).
        y: query point y (metres).
        range_sq: squared search radius; only agents with squared distance ``< range_sq`` count.
        max_neighbors: how many to keep; ``out_ids`` must hold at least this many.
        positions: (n_agents, 2) float64.
        order: :class:`AgentTree` arrays from :func:`build_agent_tree` (helpers called per query
            take the tree's arrays, not the bundle: see ``kernels``' note on bundles).
        node_begin: tree array.
        node_end: tree array.
        node_left: tree array.
        node_right: tree array.
        node_box: tree array.
        stack: (>= order.shape[0] + 2,) int64 scratch.
        out_ids: (>= max_neighbors,) int64 output.
        out_dist_sq: (>= max_neighbors,) float64 output.
        use_mask: if True, only agents ``j`` with ``avoid_mask & layers[j] != 0`` count (the
            others are skipped: they take no slot and do not shrink the range); if False,
            ``avoid_mask`` and ``layers`` are not read (pass e.g. ``-1`` and an empty array).
        avoid_mask: int64 bit field, the layers the querying agent avoids.
        layers: (n_agents,) int64 bit fields, the layers each agent belongs to.

    Returns:
        The number of neighbours written.
    """
    count = 0
    if order.shape[0] == 0 or max_neighbors <= 0:
        return 0
    stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        if node < 0:
            # A farther child: checked only now, after the nearer subtree shrank the range.
            node = -1 - node
            if _box_dist_sq(node_box, node, x, y) >= range_sq:
                continue
        if node_end[node] - node_begin[node] <= MAX_LEAF_SIZE:
            for k in range(node_begin[node], node_end[node]):
                other = order[k]
                if other == self_id:
                    continue
                dx = x - positions[other, 0]
                dy = y - positions[other, 1]
                dist_sq = dx * dx + dy * dy
                # The layer test only for agents in range: most candidates are not.
                if dist_sq < range_sq and (not use_mask or (avoid_mask & layers[other]) != 0):
                    if count < max_neighbors:
                        count += 1
                    i = count - 1
                    while i != 0 and dist_sq < out_dist_sq[i - 1]:
                        out_dist_sq[i] = out_dist_sq[i - 1]
                        out_ids[i] = out_ids[i - 1]
                        i -= 1
                    out_dist_sq[i] = dist_sq
                    out_ids[i] = other
                    if count == max_neighbors:
                        range_sq = out_dist_sq[count - 1]
            continue
        left = node_left[node]
        right = node_right[node]
        dist_left = _box_dist_sq(node_box, left, x, y)
        dist_right = _box_dist_sq(node_box, right, x, y)
        # Visit the nearer child first; the farther one is pushed below it, encoded negative.
        if dist_left < dist_right:
            if dist_left < range_sq:
                stack[top] = -1 - right
                top += 1
                stack[top] = left
                top += 1
        else:
            if dist_right < range_sq:
                stack[top] = -1 - left
                top += 1
                stack[top] = right
                top += 1
    return count


#: Worlds of at most this many agents answer neighbour queries by measuring every agent
#: (:func:`query_many_direct`), larger ones by building the tree and searching it. Measured per
#: query (6 neighbours within 4 m, a jittered circle): 30 against 74 ns at 16 agents, 80 against
#: 99 at 32, level at 48.
DIRECT_MAX = 32


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
def query_many_direct(query_ids, positions, active, range_sq, k, out_ids, out_dist_sq):
    """:func:`query_many` by measuring every active agent, for small worlds: no tree.

    The same distances (``dx * dx + dy * dy`` of the same differences), the same strict ``<``
    against the range, shrunk to the k-th kept distance once ``k`` are kept, and the same
    insertion sort. The kept set and its order are therefore :func:`query_many`'s, except where
    two candidates are at exactly the same distance: the tree keeps the one it visits first,
    this function the lower id. Such a tie (within the kept list, or at the k-th distance) is
    reported, and the caller searches the tree for that world instead, so that results never
    depend on which search ran.

    Args:
        query_ids: (q,) int64 agent ids (each is skipped in its own list).
        positions: (n, 2) float64.
        active: (n,) bool; inactive agents are not candidates (the tree holds the active ones).
        range_sq: squared search radius.
        k: neighbours per agent (>= 1).
        out_ids: (q, k) int64, prefilled with -1.
        out_dist_sq: (q, k) float64, prefilled with inf.

    Returns:
        Whether any query met a tie (then the outputs are not to be used).
    """
    n = positions.shape[0]
    for q in range(query_ids.shape[0]):
        i = query_ids[q]
        x = positions[i, 0]
        y = positions[i, 1]
        lim = range_sq
        count = 0
        for other in range(n):
            if other == i or not active[other]:
                continue
            dx = x - positions[other, 0]
            dy = y - positions[other, 1]
            dist_sq = dx * dx + dy * dy
            if dist_sq < lim:
                if count < k:
                    count += 1
                c = count - 1
                while c != 0 and dist_sq < out_dist_sq[q, c - 1]:
                    out_dist_sq[q, c] = out_dist_sq[q, c - 1]
                    out_ids[q, c] = out_ids[q, c - 1]
                    c -= 1
                if c != 0 and dist_sq == out_dist_sq[q, c - 1]:
                    return True
                out_dist_sq[q, c] = dist_sq
                out_ids[q, c] = other
                if count == k:
                    lim = out_dist_sq[q, k - 1]
            elif dist_sq == lim and count == k:
                return True
    return False


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
def query_many(query_ids, positions, range_sq, k, tree, out_ids, out_dist_sq):
    """:func:`query_agent_neighbors` for each agent in ``query_ids`` (excluding itself).

    Unfiltered: every agent in the tree counts, whatever the layers and avoid masks.

    Args:
        query_ids: (q,) int64 agent ids.
        positions: (n_agents, 2) float64.
        range_sq: squared search radius.
        k: neighbours per agent.
        tree: :class:`AgentTree` built by :func:`build_agent_tree` (or a plain tuple in field
            order).
        out_ids: (q, k) int64, prefilled with -1.
        out_dist_sq: (q, k) float64, prefilled with inf.
    """
    order, node_begin, node_end, node_left, node_right, node_box = AgentTree(*tree)
    stack = np.empty(order.shape[0] + 2, dtype=np.int64)
    ids = np.empty(max(k, 1), dtype=np.int64)
    dsq = np.empty(max(k, 1), dtype=np.float64)
    no_layers = np.empty(0, dtype=np.int64)
    for q in range(query_ids.shape[0]):
        i = query_ids[q]
        n = query_agent_neighbors(
            i, positions[i, 0], positions[i, 1], range_sq, k, positions, order, node_begin,
            node_end, node_left, node_right, node_box, stack, ids, dsq, np.bool_(False),
            np.int64(-1), no_layers,
        )  # fmt: skip
        for j in range(n):
            out_ids[q, j] = ids[j]
            out_dist_sq[q, j] = dsq[j]
