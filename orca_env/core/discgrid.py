"""Discs placed one by one, in a hash grid: which of them a new disc would come near.

Scenario placement (:mod:`orca_env.scenarios`) accepts starts and goals one agent at a time
and must check each candidate against every disc accepted so far; against all of them that is
O(n^2) for n agents. :class:`DiscGrid` keeps the accepted discs in a hash grid whose cells are
at least the largest clearance wide, so only the 3 x 3 cells around a candidate can hold a
disc it conflicts with: the same decisions in O(1) per candidate for spread-out discs.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["DiscGrid", "pairs_overlap"]


class DiscGrid:
    """Discs accepted one by one, in a hash grid: which of them a new disc would come near.

    The cell side is at least the largest sum of two radii plus ``margin`` (with a rounding
    margin), so a disc two or more cells away from another cannot conflict with it: a check
    against the discs of the 3 x 3 cells around a point decides as a check against all would,
    in O(1) per point for spread-out discs instead of O(n) (placement was O(n^2) in time).

    Args:
        capacity: The most discs that will be added.
        max_radius: The largest radius of any disc added or checked.
        margin: The clearance the checks add (m).
    """

    def __init__(self, capacity: int, max_radius: float, margin: float) -> None:
        self.cell = max((2.0 * float(max_radius) + float(margin)) * (1.0 + 1e-9) + 1e-12, 1e-6)
        size = 1 << max(4, int(2 * max(capacity, 1) - 1).bit_length())  # >= 2 * capacity
        self.head = np.full(size, -1, dtype=np.int64)
        self.next = np.full(max(capacity, 1), -1, dtype=np.int64)
        self.xy = np.zeros((max(capacity, 1), 2))
        self.r = np.zeros(max(capacity, 1))
        self.ij = np.zeros((max(capacity, 1), 2), dtype=np.int64)
        self.count = 0

    def add(self, points: np.ndarray, radii: np.ndarray) -> None:
        """Add discs ``points`` (``(k, 2)``) with ``radii`` (``(k,)``), in order."""
        points = np.ascontiguousarray(points, dtype=np.float64).reshape(-1, 2)
        radii = np.ascontiguousarray(radii, dtype=np.float64).reshape(-1)
        self.count = _grid_add(points, radii, self.cell, self.head, self.next, self.xy,
                               self.r, self.ij, self.count)

    def clear(self, points: np.ndarray, radius: float, margin: float,
              ok: np.ndarray) -> np.ndarray:
        """``ok`` with the points that conflict with an added disc turned off (in place).

        A point at ``p`` with ``radius`` is clear of the disc ``(q, r_q)`` when
        ``norm(p - q) >= r_q + radius + margin`` (``norm`` as ``np.linalg.norm``: the square root
        of the sum of the squared differences); points already off are not looked at. With no
        disc added, ``ok`` is returned unchanged.
        """
        if self.count:
            _grid_clear(np.ascontiguousarray(points, dtype=np.float64).reshape(-1, 2),
                        float(radius), float(margin), self.cell, self.head, self.next,
                        self.xy, self.r, self.ij, ok)
        return ok


    def near(self, x: float, y: float) -> np.ndarray:
        """Indices (in the order added) of the discs in the 3 x 3 cells around ``(x, y)``.

        Every disc that could be within ``r + radius + margin`` of the point is among them
        (for radii up to the grid's ``max_radius``); a caller decides with its own distance.
        """
        if not self.count:
            return np.empty(0, dtype=np.int64)
        return _grid_near(float(x), float(y), self.cell, self.head, self.next, self.ij)


@njit(cache=True, no_cfunc_wrapper=True)
def _grid_near(x, y, cell, head, nxt, ij):  # pragma: no cover (numba)
    mask = head.shape[0] - 1
    out = np.empty(16, dtype=np.int64)
    m = 0
    if not (math.isfinite(x) and math.isfinite(y)):
        return out[:0]
    i0 = np.int64(math.floor(x / cell))
    j0 = np.int64(math.floor(y / cell))
    for di in range(-1, 2):
        for dj in range(-1, 2):
            i, j = i0 + di, j0 + dj
            q = head[_cell_hash(i, j, mask)]
            while q >= 0:
                if ij[q, 0] == i and ij[q, 1] == j:
                    if m == out.shape[0]:
                        bigger = np.empty(2 * m, dtype=np.int64)
                        for c in range(m):  # a loop: a slice copy compiles numba's error text
                            bigger[c] = out[c]
                        out = bigger
                    out[m] = q
                    m += 1
                q = nxt[q]
    for c in range(1, m):  # insertion sort (a few discs): np.sort compiles numba's quicksort
        v = out[c]
        d = c - 1
        while d >= 0 and out[d] > v:
            out[d + 1] = out[d]
            d -= 1
        out[d + 1] = v
    return out[:m]


@njit(cache=True, no_cfunc_wrapper=True, inline="always")
def _cell_hash(i, j, mask):
    return ((i * 73856093) ^ (j * 19349663)) & mask


@njit(cache=True, no_cfunc_wrapper=True)
def _grid_add(points, radii, cell, head, nxt, xy, r, ij, count):  # pragma: no cover (numba)
    mask = head.shape[0] - 1
    for k in range(points.shape[0]):
        i = np.int64(math.floor(points[k, 0] / cell))
        j = np.int64(math.floor(points[k, 1] / cell))
        h = _cell_hash(i, j, mask)
        xy[count, 0] = points[k, 0]
        xy[count, 1] = points[k, 1]
        r[count] = radii[k]
        ij[count, 0] = i
        ij[count, 1] = j
        nxt[count] = head[h]
        head[h] = count
        count += 1
    return count


@njit(cache=True, no_cfunc_wrapper=True)
def _grid_clear(points, radius, margin, cell, head, nxt, xy, r, ij, ok):  # pragma: no cover
    mask = head.shape[0] - 1
    for k in range(points.shape[0]):
        if not ok[k]:
            continue
        x, y = points[k, 0], points[k, 1]
        if not (math.isfinite(x) and math.isfinite(y)):
            ok[k] = False  # every distance to it is NaN or inf: never clear
            continue
        i0 = np.int64(math.floor(x / cell))
        j0 = np.int64(math.floor(y / cell))
        for di in range(-1, 2):
            for dj in range(-1, 2):
                i, j = i0 + di, j0 + dj
                q = head[_cell_hash(i, j, mask)]
                while q >= 0 and ok[k]:
                    if ij[q, 0] == i and ij[q, 1] == j:
                        dx = x - xy[q, 0]
                        dy = y - xy[q, 1]
                        if not (math.sqrt(dx * dx + dy * dy) >= (r[q] + radius) + margin):
                            ok[k] = False
                    q = nxt[q]


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
def pairs_overlap(points, radii):
    """Whether two discs overlap, every pair measured: ``sqrt(dx * dx + dy * dy) < r_i + r_j``.

    ``points`` (n, 2) and ``radii`` (n,) float64, C order (the small layouts of
    :func:`orca_env.scenarios.base.any_overlap`: one call, not a dozen numpy ones).
    """
    n = points.shape[0]
    for i in range(n):
        for j in range(n):
            if j == i:
                continue
            dx = points[i, 0] - points[j, 0]
            dy = points[i, 1] - points[j, 1]
            if np.sqrt(dx * dx + dy * dy) < radii[i] + radii[j]:
                return True
    return False
