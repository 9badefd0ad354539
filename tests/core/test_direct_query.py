"""Small worlds' neighbour query without a tree: the tree's results, ties included."""

import numpy as np
import pytest

from orca_env.core.batch import query_world_neighbors
from orca_env.core.kdtree import (
    DIRECT_MAX,
    build_agent_tree,
    partition_active,
    query_many,
    query_many_direct,
)


def tree_query(pos, active, kd, range_sq, k, slots):
    """The kd-tree search alone (what every world ran before the direct query)."""
    n = pos.shape[0]
    tmp = np.zeros(n, dtype=np.int64)
    na = partition_active(kd, active, tmp)
    m = max(2 * na - 1, 1)
    tree = (tmp[:na], np.zeros(m, dtype=np.int64), np.zeros(m, dtype=np.int64),
            np.zeros(m, dtype=np.int64), np.zeros(m, dtype=np.int64), np.zeros((m, 4)))
    build_agent_tree(pos, tree)
    ids = np.full((slots.size, k), -1, dtype=np.int64)
    dsq = np.full((slots.size, k), np.inf)
    query_many(slots, pos, range_sq, k, tree, ids, dsq)
    return ids, dsq


def world_query(pos, active, kd, range_sq, k, slots):
    n = pos.shape[0]
    m = max(2 * n - 1, 1)
    nodes = (np.zeros(m, dtype=np.int64), np.zeros(m, dtype=np.int64),
             np.zeros(m, dtype=np.int64), np.zeros(m, dtype=np.int64), np.zeros((m, 4)))
    ids = np.full((slots.size, k), -1, dtype=np.int64)
    dsq = np.full((slots.size, k), np.inf)
    query_world_neighbors(slots, pos, active, kd, range_sq, k, nodes, ids, dsq,
                          np.zeros(n, dtype=np.int64))
    return ids, dsq


def layouts(rng):
    """Random worlds, some with inactive agents, and lattices full of exact distance ties."""
    for n in (1, 2, 4, 7, 16, DIRECT_MAX):
        for _ in range(30):
            pos = rng.uniform(-4.0, 4.0, (n, 2))
            active = rng.random(n) > 0.2
            yield pos, active, rng.permutation(n).astype(np.int64)
    for n in (4, 9, 16, DIRECT_MAX):  # integer lattices: many neighbours at equal distances
        side = int(np.ceil(np.sqrt(n)))
        grid = np.stack(np.meshgrid(np.arange(side), np.arange(side)), -1).reshape(-1, 2)
        pos = grid[:n].astype(np.float64)
        yield pos, np.ones(n, dtype=bool), rng.permutation(n).astype(np.int64)
    ang = np.arange(16) * (2.0 * np.pi / 16)  # a symmetric circle (mirror pairs tie exactly)
    yield (np.stack([4.0 * np.cos(ang), 4.0 * np.sin(ang)], 1), np.ones(16, dtype=bool),
           np.arange(16, dtype=np.int64))


@pytest.mark.parametrize("k", [1, 3, 6, 40])
def test_world_query_equals_the_tree_search_ties_included(k):
    rng = np.random.default_rng(4)
    ties = 0
    for pos, active, kd in layouts(rng):
        slots = np.flatnonzero(active).astype(np.int64)
        for range_sq in (1.0, 4.0, 16.0, 1e6):
            got = world_query(pos, active, kd, range_sq, k, slots)
            want = tree_query(pos, active, kd, range_sq, k, slots)
            np.testing.assert_array_equal(got[0], want[0])
            np.testing.assert_array_equal(got[1], want[1])
            ids = np.full((slots.size, k), -1, dtype=np.int64)
            ties += query_many_direct(slots, pos, active, range_sq, k, ids,
                                      np.full((slots.size, k), np.inf))
    assert ties > 0  # the lattices did exercise the tree's tie-break


def test_direct_query_reports_a_tie_the_tree_would_break_otherwise():
    # Agent 0 at the origin, agents 1 and 2 both at distance 1: with k = 1 only one is kept.
    pos = np.array([[0.0, 0.0], [1.0, 0.0], [-1.0, 0.0], [0.0, 3.0]])
    active = np.ones(4, dtype=bool)
    ids = np.full((1, 1), -1, dtype=np.int64)
    dsq = np.full((1, 1), np.inf)
    assert query_many_direct(np.array([0]), pos, active, 16.0, 1, ids, dsq)
    # Without the tie (agent 2 farther), it answers itself: the nearest, as the tree does.
    pos[2] = [-1.5, 0.0]
    ids[:] = -1
    dsq[:] = np.inf
    assert not query_many_direct(np.array([0]), pos, active, 16.0, 1, ids, dsq)
    assert ids[0, 0] == 1 and dsq[0, 0] == 1.0
    np.testing.assert_array_equal(ids, tree_query(pos, active, np.arange(4), 16.0, 1,
                                                  np.array([0]))[0])


def test_direct_query_skips_inactive_agents_and_itself():
    pos = np.array([[0.0, 0.0], [0.5, 0.0], [2.0, 0.0]])
    active = np.array([True, False, True])
    ids = np.full((1, 2), -1, dtype=np.int64)
    dsq = np.full((1, 2), np.inf)
    assert not query_many_direct(np.array([0]), pos, active, 100.0, 2, ids, dsq)
    assert ids.tolist() == [[2, -1]] and dsq[0, 0] == 4.0
