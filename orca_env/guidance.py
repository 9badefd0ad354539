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

Per-step visibility runs in numba (:func:`visible`) with the core's rule (RVO2's per-segment
``queryVisibility`` rule, applied to segments whose bounding box comes within ``radius`` of the
query's); candidates are tried cheapest first and the first visible one wins, so an agent usually
costs one or two visibility tests.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

__all__ = ["Roadmap", "corner_points", "visible"]


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


@njit(cache=True)
def visible(q1x, q1y, q2x, q2y, radius, points, next_ids):
    """RVO2's per-segment visibility rule (the core's ``query_visibility``), brute force.

    A segment blocks q1 -> q2 when q1 is strictly right of it (its outside), q2 strictly left,
    and its endpoints are not both farther than ``radius`` on one side of the line q1 q2. Only
    segments whose bounding box comes within ``radius`` of the query's bounding box are tested.
    """
    m = points.shape[0]
    min_x = min(q1x, q2x) - radius
    max_x = max(q1x, q2x) + radius
    min_y = min(q1y, q2y) - radius
    max_y = max(q1y, q2y) + radius
    len_sq = (q2x - q1x) ** 2 + (q2y - q1y) ** 2
    inv_len_q = 1.0 / len_sq if len_sq > 0.0 else 0.0
    r_sq = radius * radius
    for s in range(m):
        t = next_ids[s]
        ax = points[s, 0]
        ay = points[s, 1]
        bx = points[t, 0]
        by = points[t, 1]
        if min(ax, bx) > max_x or max(ax, bx) < min_x or min(ay, by) > max_y \
                or max(ay, by) < min_y:
            continue
        q1_left = (ax - q1x) * (by - ay) - (ay - q1y) * (bx - ax)
        q2_left = (ax - q2x) * (by - ay) - (ay - q2y) * (bx - ax)
        # Only a crossing from the segment's outside to its inside can block.
        if not (q1_left < 0.0 and q2_left > 0.0):
            continue
        p1_left = (q1x - ax) * (q2y - q1y) - (q1y - ay) * (q2x - q1x)
        p2_left = (q1x - bx) * (q2y - q1y) - (q1y - by) * (q2x - q1x)
        if not (p1_left * p2_left >= 0.0 and p1_left * p1_left * inv_len_q > r_sq
                and p2_left * p2_left * inv_len_q > r_sq):
            return False
    return True


@njit(cache=True)
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


@njit(cache=True)
def _goal_costs(goals, radii, verts, dist, points, next_ids):
    """(n, v) path length from each vertex to each agent's goal (inf: unreachable)."""
    n = goals.shape[0]
    v = verts.shape[0]
    out = np.full((n, v), np.inf)
    link = np.empty(v)
    for i in range(n):
        gx = goals[i, 0]
        gy = goals[i, 1]
        for c in range(v):
            if visible(verts[c, 0], verts[c, 1], gx, gy, radii[i], points, next_ids):
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


@njit(cache=True)
def _select(slots, positions, goals, radii, verts, goal_costs, points, next_ids,
            out_targets, out_dist):
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
            if visible(px, py, tx, ty, radii[i], points, next_ids):
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
        self.vertices = np.ascontiguousarray(points, dtype=np.float64).reshape(-1, 2)
        self._points = np.ascontiguousarray(sim.obstacle_points, dtype=np.float64)
        self._next = np.ascontiguousarray(sim.obstacle_next, dtype=np.int64)
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
                           self.dist, self._points, self._next)

    def waypoints(self, slots: np.ndarray, positions: np.ndarray, goals: np.ndarray,
                  radii: np.ndarray, goal_costs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Next waypoint and remaining path length for the agents ``slots``.

        Returns:
            ``(targets (k, 2) float64 metres, path_lengths (k,) float64 metres)``.
        """
        k = len(slots)
        targets = np.empty((k, 2))
        dist = np.empty(k)
        _select(np.asarray(slots, dtype=np.int64), np.ascontiguousarray(positions), goals,
                radii, self.vertices, goal_costs, self._points, self._next, targets, dist)
        return targets, dist
