"""Global guidance: a visibility roadmap over obstacle corners and shortest paths to goals.

This is RVO2's ``examples/Roadmap.cc`` generalised: roadmap vertices are either given by the
scenario (Blocks lists RVO2's 16 points) or derived from the obstacles (each convex corner pushed
out along both incident edge normals by ``clearance``, which reproduces RVO2's points for square
blocks); two vertices are joined when ``sim.query_visibility(u, v, clearance)`` holds; all-pairs
shortest paths run once per episode. Each agent's goal is linked to the vertices it sees, so
``goal_costs[i, v]`` is the path length from vertex ``v`` to agent ``i``'s goal. Every step an
agent heads for the visible candidate (its goal, or a vertex) minimising
``|p - v| + goal_costs[i, v]``, as RVO2's example does; when nothing is visible it heads straight
for its goal (decision: the straight line is the best guess; ORCA still keeps it off the walls).

Per-step visibility calls the core's numba kernel
(:func:`orca_env.core.obstacles.query_visibility`, RVO2's per-segment rule on the core's
obstacle index) from numba; candidates are tried cheapest first and the first visible one wins,
so an agent usually costs one or two visibility tests.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from .core.obstacles import query_visibility

__all__ = ["Roadmap", "corner_points"]


def corner_points(sim: Any, clearance: float) -> np.ndarray:
    """Convex obstacle corners pushed ``clearance`` out along both incident edge normals.

    Args:
        sim: Core simulator with processed obstacles.
        clearance: Metres (typically the largest agent radius plus a margin).

    Returns:
        ``(c, 2)`` float64 walkable candidate vertices (corners whose offset point is not
        walkable are dropped).
    """
    pts = np.asarray(sim.obstacle_points, dtype=np.float64)
    if pts.shape[0] == 0:
        return np.zeros((0, 2))
    dirs = np.asarray(sim.obstacle_unit_dirs)
    prev = np.asarray(sim.obstacle_prev)
    convex = np.asarray(sim.obstacle_convex, dtype=bool)
    # The walkable side of a stored segment is its right (obstacles counter-clockwise, the
    # boundary stored clockwise), so the outward normal of direction d is (d_y, -d_x).
    n_out = np.stack([dirs[:, 1], -dirs[:, 0]], axis=1)
    n_in = n_out[prev]
    cand = pts + clearance * (n_out + n_in)
    cand = cand[convex]
    if cand.shape[0] == 0:
        return cand
    ok = np.asarray(sim.is_walkable(cand, clearance=0.999 * clearance), dtype=bool)
    return cand[ok]


@njit(cache=True, no_cfunc_wrapper=True)
def _all_pairs(adj_len):
    """Floyd-Warshall on a (v, v) matrix of edge lengths (inf: no edge)."""
    d = adj_len.copy()
    v = d.shape[0]
    for k in range(v):
        for i in range(v):
            dik = d[i, k]
            if dik == np.inf:
                continue
            for j in range(v):
                alt = dik + d[k, j]
                if alt < d[i, j]:
                    d[i, j] = alt
    return d


@njit(cache=True, no_cfunc_wrapper=True)
def _goal_costs(goals, radii, verts, dist, points, next_ids, seg_order, boxes):
    """(n, v) path length from each vertex to each agent's goal (inf: unreachable)."""
    n = goals.shape[0]
    v = verts.shape[0]
    out = np.full((n, v), np.inf)
    link = np.empty(v)
    for i in range(n):
        gx = goals[i, 0]
        gy = goals[i, 1]
        for c in range(v):
            if query_visibility(verts[c, 0], verts[c, 1], gx, gy, radii[i], points, next_ids,
                                seg_order, boxes):
                link[c] = np.hypot(verts[c, 0] - gx, verts[c, 1] - gy)
            else:
                link[c] = np.inf
        for c in range(v):
            best = link[c]
            for c2 in range(v):
                alt = dist[c, c2] + link[c2]
                if alt < best:
                    best = alt
            out[i, c] = best
    return out


@njit(cache=True, no_cfunc_wrapper=True)
def _select(slots, positions, goals, radii, verts, goal_costs, points, next_ids, seg_order,
            boxes, out_targets, out_dist):
    """Waypoint of each slot: the visible candidate minimising |p - v| + cost(v)."""
    v = verts.shape[0]
    cost = np.empty(v + 1)
    for r in range(slots.shape[0]):
        i = slots[r]
        px = positions[i, 0]
        py = positions[i, 1]
        gx = goals[i, 0]
        gy = goals[i, 1]
        cost[v] = np.hypot(gx - px, gy - py)
        for c in range(v):
            cost[c] = np.hypot(verts[c, 0] - px, verts[c, 1] - py) + goal_costs[i, c]
        order = np.argsort(cost)
        out_targets[r, 0] = gx
        out_targets[r, 1] = gy
        out_dist[r] = cost[v]
        for k in range(v + 1):
            c = order[k]
            if cost[c] == np.inf:
                break
            if c == v:
                tx, ty = gx, gy
            else:
                tx, ty = verts[c, 0], verts[c, 1]
            if query_visibility(px, py, tx, ty, radii[i], points, next_ids, seg_order, boxes):
                out_targets[r, 0] = tx
                out_targets[r, 1] = ty
                out_dist[r] = cost[c]
                break


class Roadmap:
    """A visibility roadmap over one episode's obstacles.

    Args:
        sim: Core simulator holding the (processed) obstacles.
        clearance: Metres; the disc radius for vertex-to-vertex visibility and the corner
            offset. Use the largest agent radius (plus a small margin).
        points: Optional ``(r, 2)`` vertices replacing the automatic corner points.

    Attributes:
        vertices: ``(v, 2)`` float64 roadmap vertices, metres, world frame.
        dist: ``(v, v)`` float64 shortest path lengths between vertices (inf: disconnected).
    """

    def __init__(self, sim: Any, clearance: float, points: np.ndarray | None = None) -> None:
        self.clearance = float(clearance)
        if points is None:
            points = corner_points(sim, self.clearance * 1.05)
        # Writable C copies (the simulator hands out read-only views): the kernels get the
        # types the env's step passes, one compiled specialisation (orca_env.core.families).
        self.vertices = np.array(points, dtype=np.float64, order="C").reshape(-1, 2)
        self._points = np.array(sim.obstacle_points, dtype=np.float64, order="C")
        self._next = np.array(sim.obstacle_next, dtype=np.int64, order="C")
        self._seg_order, self._boxes = (np.array(a, order="C") for a in sim.obstacle_index)
        v = self.vertices.shape[0]
        adj = np.full((v, v), np.inf)
        np.fill_diagonal(adj, 0.0)
        for a in range(v):
            for b in range(a + 1, v):
                # Edges as RVO2's Roadmap example builds them, with the clearance shrunk by 0.1 %:
                # RVO2's own vertices sit exactly one radius off the blocks, and rounding must not
                # turn "touching at exactly the radius" (visible) into a blocked edge.
                if sim.query_visibility(self.vertices[a], self.vertices[b],
                                        self.clearance * 0.999):
                    adj[a, b] = adj[b, a] = float(np.hypot(*(self.vertices[a] - self.vertices[b])))
        self.dist = _all_pairs(adj)

    def goal_costs(self, goals: np.ndarray, radii: np.ndarray) -> np.ndarray:
        """``(n, v)`` path length from each vertex to each agent's goal (inf: unreachable)."""
        return _goal_costs(np.ascontiguousarray(goals, dtype=np.float64),
                           np.ascontiguousarray(radii, dtype=np.float64), self.vertices,
                           self.dist, self._points, self._next, self._seg_order, self._boxes)

    def waypoints(self, slots: np.ndarray, positions: np.ndarray, goals: np.ndarray,
                  radii: np.ndarray, goal_costs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Next waypoint and remaining path length for the agents ``slots``.

        Returns:
            ``(targets (k, 2) float64 metres, path_lengths (k,) float64 metres)``.
        """
        k = len(slots)
        targets = np.empty((k, 2))
        dist = np.empty(k)
        _select(np.ascontiguousarray(slots, dtype=np.int64),
                np.ascontiguousarray(positions, dtype=np.float64),
                np.ascontiguousarray(goals, dtype=np.float64),
                np.ascontiguousarray(radii, dtype=np.float64), self.vertices,
                np.ascontiguousarray(goal_costs, dtype=np.float64), self._points, self._next,
                self._seg_order, self._boxes, targets, dist)
        return targets, dist
