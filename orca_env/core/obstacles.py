"""Polygon obstacles: validation, flat storage, and a bounding-volume index over segments.

Storage (RVO2's ``Obstacle`` linked vertex records, as flat arrays; ``m`` vertices):
    points: (m, 2) float64, vertex positions, metres, world frame.
    next_ids / prev_ids: (m,) int64, the next / previous vertex of the same polygon.
    unit_dirs: (m, 2) float64, unit vector from a vertex to its next vertex.
    convex: (m,) bool, RVO2's ``isConvex_`` (a 2-vertex obstacle has both vertices convex).
    polygon: (m,) int64, which polygon each vertex belongs to.

Segment ``v`` runs from vertex ``v`` to ``next_ids[v]``. Agents see a segment only from its right
side (RVO2's one-sided rule): the right side of every edge of a counter-clockwise polygon is its
outside. A 2-vertex obstacle becomes two records (A -> B and B -> A), i.e. a thin wall that blocks
from both sides, exactly as in RVO2. A boundary (the outline of the walkable region) is stored
clockwise, so that the walkable region is on the right of its edges.

The index replaces RVO2's BSP tree, whose build is quadratic. Segments are sorted along a Morton
(Z-order) curve of their midpoints, grouped into leaves of ``LEAF_SIZE`` and covered by a complete
binary tree of bounding boxes; building is one sort plus O(m) box unions, i.e. O(m log m). A query
for a disc returns exactly the segments RVO2's BSP would report to an agent (all segments within
range that the agent sees from the right, sorted by distance), without BSP's segment splitting.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

LEAF_SIZE = 8

# Squared lengths below this (m^2) count as a repeated vertex.
_DUPLICATE_EPS_SQ = 1e-24

#: Largest coordinate (m) of a position or vertex. Geometry squares coordinate differences, and
#: float64 keeps about 1e-7 m of resolution up to here (the Earth is 4e7 m round).
MAX_COORD = 1e9


def as_points(name, value, n=None):
    """Validate array-like (k, 2) real, bounded coordinates; returns a float64 copy.

    Real numbers only: numpy would read ``"1"`` and ``True`` as 1.0 and drop the imaginary part
    of complex numbers.

    Args:
        name: The argument's name, for messages.
        value: The array-like.
        n: The required number of rows (None: any).

    Raises:
        ValueError: Naming ``name``: not (k, 2) real numbers, not finite, or beyond
            :data:`MAX_COORD`.
    """
    if type(value) is np.ndarray and value.dtype == np.float64 and value.ndim == 2 and \
            value.shape[1] == 2 and (n is None or value.shape[0] == n) and value.size and \
            np.abs(value).max() <= MAX_COORD:  # fast path (the env's resets): valid float64
        return value.copy()  # (NaN and inf fail the bound: they take the checks below)
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be an array of (x, y) pairs, got {value!r}") from exc
    if raw.dtype.kind not in "iuf" and not (raw.dtype.kind == "O" and raw.size == 0):
        raise ValueError(f"{name} must be an array of (x, y) pairs of real numbers, got "
                         f"{value!r}")
    a = raw.astype(np.float64)
    if a.ndim != 2 or a.shape[1] != 2 or (n is not None and a.shape[0] != n):
        want = f"({n}, 2)" if n is not None else "(k, 2)"
        raise ValueError(f"{name} must have shape {want}, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        bad = np.argwhere(~np.isfinite(a))[0]
        raise ValueError(f"{name} must be finite, got {a[bad[0]].tolist()!r} at row {bad[0]}")
    if a.size and np.abs(a).max() > MAX_COORD:
        bad = np.argwhere(np.abs(a) > MAX_COORD)[0]
        raise ValueError(f"{name} must lie within +-{MAX_COORD:g} m, got {a[bad[0]].tolist()!r} "
                         f"at row {bad[0]}")
    return a


def _left_of(a, b, c):
    """RVO2's ``leftOf``: > 0 when c is left of the line a -> b (numpy, vectorised)."""
    return (a[..., 0] - c[..., 0]) * (b[..., 1] - a[..., 1]) - (a[..., 1] - c[..., 1]) * (
        b[..., 0] - a[..., 0]
    )


def clean_polygon(vertices, name="vertices"):
    """Validate and normalise a polygon given as (k, 2) vertices.

    Args:
        vertices: array-like (k, 2) of finite floats.
        name: argument name used in error messages.

    Returns:
        (vertices (k', 2) float64 with repeated consecutive vertices removed, number removed,
        signed area (positive = counter-clockwise; 0 for a 2-vertex segment)).

    Raises:
        ValueError: wrong shape, non-finite values, fewer than 2 distinct vertices, zero area,
            or self-intersection.
    """
    v = as_points(name, vertices)
    k = v.shape[0]
    # Drop vertices equal to their predecessor (cyclically): RVO2 produces NaN directions there.
    keep = np.ones(k, dtype=bool)
    if k > 1:
        d = v - np.roll(v, 1, axis=0)
        keep = np.einsum("ij,ij->i", d, d) > _DUPLICATE_EPS_SQ
        if not keep.any():
            keep[0] = True
    removed = int(k - keep.sum())
    v = v[keep]
    if v.shape[0] < 2:
        raise ValueError(f"{name} needs at least 2 distinct vertices, got {vertices!r}")
    if v.shape[0] == 2:
        return v, removed, 0.0
    # Orientation, area and crossings relative to the polygon's own centroid: in absolute
    # coordinates far from the origin (1e10, or UTM's 5e5, 5e6) the products cancel and a small
    # polygon's orientation or area is lost in round-off.
    c = v - v.mean(axis=0)
    area = 0.5 * float(np.sum(c[:, 0] * np.roll(c[:, 1], -1) - np.roll(c[:, 0], -1) * c[:, 1]))
    scale = float(np.max(np.abs(c))) or 1.0
    rel = v - v[0]
    far = rel[np.argmax(np.einsum("ij,ij->i", rel, rel))]
    collinear = np.all(np.abs(rel[:, 0] * far[1] - rel[:, 1] * far[0]) <= 1e-12 * scale * scale)
    if collinear:
        raise ValueError(f"{name} has zero area (collinear vertices): {v.tolist()!r}")
    if _self_intersects(c):
        raise ValueError(f"{name} is self-intersecting: {v.tolist()!r}")
    if abs(area) <= 1e-12 * scale * scale:
        raise ValueError(f"{name} has zero area: {v.tolist()!r}")
    return v, removed, area


@njit(cache=True, no_cfunc_wrapper=True)
def _segments_intersect(ax, ay, bx, by, cx, cy, dx, dy):
    """Closed segments ab and cd share a point."""
    d1 = (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)
    d2 = (bx - ax) * (dy - ay) - (by - ay) * (dx - ax)
    d3 = (dx - cx) * (ay - cy) - (dy - cy) * (ax - cx)
    d4 = (dx - cx) * (by - cy) - (dy - cy) * (bx - cx)
    if (((d1 > 0 and d2 < 0) or (d1 < 0 and d2 > 0))
            and ((d3 > 0 and d4 < 0) or (d3 < 0 and d4 > 0))):
        return True
    # Collinear touching cases.
    if d1 == 0 and min(ax, bx) <= cx <= max(ax, bx) and min(ay, by) <= cy <= max(ay, by):
        return True
    if d2 == 0 and min(ax, bx) <= dx <= max(ax, bx) and min(ay, by) <= dy <= max(ay, by):
        return True
    if d3 == 0 and min(cx, dx) <= ax <= max(cx, dx) and min(cy, dy) <= ay <= max(cy, dy):
        return True
    if d4 == 0 and min(cx, dx) <= bx <= max(cx, dx) and min(cy, dy) <= by <= max(cy, dy):
        return True
    return False


def _self_intersects(v: np.ndarray) -> bool:
    """Any two non-adjacent edges of the closed polygon v touch, or adjacent edges fold back.

    Sort and sweep: edges sorted by the low end of their x range (sorted here: np.argsort in
    the kernel would compile numba's quicksort), each tested only against the edges whose x
    range overlaps its own (the others cannot share a point), so a polygon of m vertices costs
    O(m log m) unless many edges span the same x range.
    """
    v = np.ascontiguousarray(v, dtype=np.float64)
    order = np.argsort(np.minimum(v[:, 0], np.roll(v[:, 0], -1)), kind="stable")
    return bool(_sweep_intersects(v, order.astype(np.int64)))


@njit(cache=True, no_cfunc_wrapper=True)
def _sweep_intersects(v, order):
    """:func:`_self_intersects`'s sweep, the edges in ``order`` (by the low end of their x)."""
    k = v.shape[0]
    x0 = np.empty(k)
    x1 = np.empty(k)
    y0 = np.empty(k)
    y1 = np.empty(k)
    for i in range(k):
        i2 = (i + 1) % k
        x0[i] = min(v[i, 0], v[i2, 0])
        x1[i] = max(v[i, 0], v[i2, 0])
        y0[i] = min(v[i, 1], v[i2, 1])
        y1[i] = max(v[i, 1], v[i2, 1])
    for p in range(k):
        e = order[p]
        for q in range(p + 1, k):
            f = order[q]
            if x0[f] > x1[e]:
                break  # this and every later edge starts right of edge e
            if y0[f] > y1[e] or y0[e] > y1[f]:
                continue
            i = min(e, f)
            j = max(e, f)
            i2 = (i + 1) % k
            j2 = (j + 1) % k
            if j == i2 or i == j2:
                # Adjacent edges share one vertex; they intersect only if they overlap (fold back).
                if j == i2:
                    a, b, c = i, i2, j2
                else:
                    a, b, c = j, j2, i2
                ux = v[b, 0] - v[a, 0]
                uy = v[b, 1] - v[a, 1]
                wx = v[c, 0] - v[b, 0]
                wy = v[c, 1] - v[b, 1]
                if ux * wy - uy * wx == 0.0 and ux * wx + uy * wy < 0.0:
                    return True
                continue
            if _segments_intersect(
                v[i, 0], v[i, 1], v[i2, 0], v[i2, 1], v[j, 0], v[j, 1], v[j2, 0], v[j2, 1]
            ):
                return True
    return False


def polygon_records(v, first_id, polygon_id):
    """RVO2's ``addObstacle`` for one cleaned polygon (already in stored orientation).

    Args:
        v: (k, 2) float64 vertices.
        first_id: global id of the first vertex.
        polygon_id: id stored for every vertex.

    Returns:
        dict of the storage arrays for these k vertices (global ids).
    """
    k = v.shape[0]
    idx = np.arange(k)
    nxt = (idx + 1) % k
    prv = (idx - 1) % k
    d = v[nxt] - v
    unit = d / np.sqrt(np.einsum("ij,ij->i", d, d))[:, None]
    if k == 2:
        convex = np.ones(2, dtype=bool)
    else:
        # leftOf(prev, this, next) >= 0 (RVO2).
        convex = _left_of(v[prv], v, v[nxt]) >= 0.0
    return {
        "points": v,
        "next_ids": nxt + first_id,
        "prev_ids": prv + first_id,
        "unit_dirs": unit,
        "convex": convex,
        "polygon": np.full(k, polygon_id, dtype=np.int64),
    }


class Obstacles(NamedTuple):
    """Obstacle storage and index as one bundle for the step kernels (see the module docstring).

    ``seg_order`` and ``seg_boxes`` are the index from :func:`build_segment_index`.
    """

    points: np.ndarray
    next_ids: np.ndarray
    prev_ids: np.ndarray
    unit_dirs: np.ndarray
    convex: np.ndarray
    seg_order: np.ndarray
    seg_boxes: np.ndarray


def _part1by1(x):
    """Spread the low 16 bits of x (uint64 array) to the even bit positions."""
    x = x & np.uint64(0x0000FFFF)
    x = (x | (x << np.uint64(8))) & np.uint64(0x00FF00FF)
    x = (x | (x << np.uint64(4))) & np.uint64(0x0F0F0F0F)
    x = (x | (x << np.uint64(2))) & np.uint64(0x33333333)
    x = (x | (x << np.uint64(1))) & np.uint64(0x55555555)
    return x


def build_segment_index(points, next_ids):
    """Build the segment index (O(m log m)).

    Args:
        points: (m, 2) float64 vertices.
        next_ids: (m,) int64 next vertex of each vertex.

    Returns:
        (seg_order (m,) int64 segment ids in leaf order, boxes (2 * n_slots, 4) float64 node boxes
        (min_x, max_x, min_y, max_y) of a heap-ordered complete binary tree with root 1 and leaf
        ``j`` at node ``n_slots + j``; empty leaves have inverted, infinitely far boxes).
    """
    m = points.shape[0]
    if m == 0:
        return np.zeros(0, dtype=np.int64), np.empty((2, 4))
    a = points
    b = points[next_ids]
    mid = 0.5 * (a + b)
    lo = mid.min(axis=0)
    span = np.maximum(mid.max(axis=0) - lo, 1e-300)
    q = np.minimum((mid - lo) / span * 65535.0, 65535.0).astype(np.uint64)
    code = _part1by1(q[:, 0]) | (_part1by1(q[:, 1]) << np.uint64(1))
    seg_order = np.argsort(code, kind="stable").astype(np.int64)
    n_leaves = -(-m // LEAF_SIZE)
    n_slots = 1
    while n_slots < n_leaves:
        n_slots *= 2
    boxes = np.empty((2 * n_slots, 4))
    boxes[:, 0] = np.inf
    boxes[:, 1] = -np.inf
    boxes[:, 2] = np.inf
    boxes[:, 3] = -np.inf
    sa = a[seg_order]
    sb = b[seg_order]
    starts = np.arange(0, m, LEAF_SIZE)
    leaf = slice(n_slots, n_slots + n_leaves)
    boxes[leaf, 0] = np.minimum.reduceat(np.minimum(sa[:, 0], sb[:, 0]), starts)
    boxes[leaf, 1] = np.maximum.reduceat(np.maximum(sa[:, 0], sb[:, 0]), starts)
    boxes[leaf, 2] = np.minimum.reduceat(np.minimum(sa[:, 1], sb[:, 1]), starts)
    boxes[leaf, 3] = np.maximum.reduceat(np.maximum(sa[:, 1], sb[:, 1]), starts)
    width = n_slots
    while width > 1:
        half = width // 2
        parents = np.arange(half, width)
        left = 2 * parents
        right = left + 1
        boxes[parents, 0] = np.minimum(boxes[left, 0], boxes[right, 0])
        boxes[parents, 1] = np.maximum(boxes[left, 1], boxes[right, 1])
        boxes[parents, 2] = np.minimum(boxes[left, 2], boxes[right, 2])
        boxes[parents, 3] = np.maximum(boxes[left, 3], boxes[right, 3])
        width = half
    return seg_order, boxes


@njit(cache=True, no_cfunc_wrapper=True)
def dist_sq_point_segment(ax, ay, bx, by, cx, cy):
    """RVO2's ``distSqPointLineSegment``: squared distance from c to the closed segment ab."""
    abx = bx - ax
    aby = by - ay
    r = ((cx - ax) * abx + (cy - ay) * aby) / (abx * abx + aby * aby)
    if r < 0.0:
        return (cx - ax) ** 2 + (cy - ay) ** 2
    if r > 1.0:
        return (cx - bx) ** 2 + (cy - by) ** 2
    return (cx - (ax + r * abx)) ** 2 + (cy - (ay + r * aby)) ** 2


@njit(cache=True, no_cfunc_wrapper=True)
def _box_dist_sq(boxes, node, x, y):
    """Squared distance from (x, y) to a node box (0 inside, inf for an empty node)."""
    if boxes[node, 0] > boxes[node, 1]:
        return np.inf
    dx = max(0.0, boxes[node, 0] - x, x - boxes[node, 1])
    dy = max(0.0, boxes[node, 2] - y, y - boxes[node, 3])
    return dx * dx + dy * dy


@njit(cache=True, no_cfunc_wrapper=True)
def query_segments(
    x, y, range_sq, one_sided, inclusive, points, next_ids, seg_order, boxes, out_ids, out_dist_sq
):
    """Segments near (x, y), sorted by distance (ties: the earlier-found first).

    Args:
        x: query point x.
        y: query point y.
        range_sq: squared radius.
        one_sided: keep only segments that (x, y) is strictly right of (RVO2's rule for agents).
        inclusive: keep distance ``<= range_sq`` (else ``< range_sq`` as RVO2).
        points: obstacle storage.
        next_ids: obstacle storage.
        seg_order: index from :func:`build_segment_index`.
        boxes: index from :func:`build_segment_index`.
        out_ids: (cap,) int64 output (segment = vertex id).
        out_dist_sq: (cap,) float64 output.

    Returns:
        The number of segments in range, which may exceed ``cap`` (>= 1): then the buffers hold
        the ``cap`` nearest, and a caller that needs all of them retries with larger buffers.
    """
    m = seg_order.shape[0]
    if m == 0:
        return 0
    cap = out_ids.shape[0]
    n_slots = boxes.shape[0] // 2
    count = 0
    stack = np.empty(64, dtype=np.int64)
    stack[0] = 1
    top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        d = _box_dist_sq(boxes, node, x, y)
        if d > range_sq or (d == range_sq and not inclusive):
            continue
        if node < n_slots:
            stack[top] = 2 * node + 1
            stack[top + 1] = 2 * node
            top += 2
            continue
        leaf = node - n_slots
        for pos in range(leaf * LEAF_SIZE, min(m, (leaf + 1) * LEAF_SIZE)):
            s = seg_order[pos]
            t = next_ids[s]
            ax = points[s, 0]
            ay = points[s, 1]
            bx = points[t, 0]
            by = points[t, 1]
            if one_sided:
                left_of = (ax - x) * (by - ay) - (ay - y) * (bx - ax)
                if left_of >= 0.0:
                    continue
            dist_sq = dist_sq_point_segment(ax, ay, bx, by, x, y)
            if dist_sq < range_sq or (inclusive and dist_sq == range_sq):
                # Insertion sort; once the buffer is full, only nearer segments get in.
                if count < cap:
                    i = count
                elif dist_sq < out_dist_sq[cap - 1]:
                    i = cap - 1
                else:
                    i = -1
                if i >= 0:
                    while i != 0 and dist_sq < out_dist_sq[i - 1]:
                        out_dist_sq[i] = out_dist_sq[i - 1]
                        out_ids[i] = out_ids[i - 1]
                        i -= 1
                    out_dist_sq[i] = dist_sq
                    out_ids[i] = s
                count += 1
    return count


@njit(cache=True, no_cfunc_wrapper=True)
def query_visibility(q1x, q1y, q2x, q2y, radius, points, next_ids, seg_order, boxes):
    """RVO2's ``queryVisibility`` per-segment rule, with the index choosing candidate segments.

    A segment blocks the line of sight q1 -> q2 when q1 is strictly right of it (its outside),
    q2 strictly left of it, and the segment's endpoints are not both at least ``radius`` away on
    the same side of the line q1 q2 (with ``radius = 0``: strictly away, as RVO2). RVO2 evaluates
    this rule on BSP-split pieces and over every segment of the map; here it runs on whole
    segments whose bounding box comes within ``radius`` of the bounding box of q1 q2, which drops
    RVO2's spurious blocking by segments far away along the infinite line q1 q2.
    """
    m = seg_order.shape[0]
    if m == 0:
        return True
    n_slots = boxes.shape[0] // 2
    min_x = min(q1x, q2x) - radius
    max_x = max(q1x, q2x) + radius
    min_y = min(q1y, q2y) - radius
    max_y = max(q1y, q2y) + radius
    inv_len_q = 1.0 / ((q2x - q1x) ** 2 + (q2y - q1y) ** 2) if (q1x != q2x or q1y != q2y) else 0.0
    r_sq = radius * radius
    stack = np.empty(64, dtype=np.int64)
    stack[0] = 1
    top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        if (
            boxes[node, 0] > max_x
            or boxes[node, 1] < min_x
            or boxes[node, 2] > max_y
            or boxes[node, 3] < min_y
        ):
            continue
        if node < n_slots:
            stack[top] = 2 * node + 1
            stack[top + 1] = 2 * node
            top += 2
            continue
        leaf = node - n_slots
        for pos in range(leaf * LEAF_SIZE, min(m, (leaf + 1) * LEAF_SIZE)):
            s = seg_order[pos]
            t = next_ids[s]
            ax = points[s, 0]
            ay = points[s, 1]
            bx = points[t, 0]
            by = points[t, 1]
            q1_left = (ax - q1x) * (by - ay) - (ay - q1y) * (bx - ax)
            q2_left = (ax - q2x) * (by - ay) - (ay - q2y) * (bx - ax)
            if not (q1_left < 0.0 and q2_left > 0.0):
                continue
            p1_left = (q1x - ax) * (q2y - q1y) - (q1y - ay) * (q2x - q1x)
            p2_left = (q1x - bx) * (q2y - q1y) - (q1y - by) * (q2x - q1x)
            d1 = p1_left * p1_left * inv_len_q
            d2 = p2_left * p2_left * inv_len_q
            # A disc that passes exactly `radius` from a corner touches it without colliding;
            # a zero-width ray through a corner is blocked (RVO2's strict test).
            if radius > 0.0:
                clear = d1 >= r_sq and d2 >= r_sq
            else:
                clear = d1 > 0.0 and d2 > 0.0
            if not (p1_left * p2_left >= 0.0 and clear):
                return False
    return True


@njit(cache=True, no_cfunc_wrapper=True)
def walkable(px, py, clearance, points, next_ids, polygon, is_boundary, seg_order, boxes):
    """For each point: outside every obstacle, inside every boundary, ``clearance`` from segments.

    Inside-ness is the even-odd rule per polygon (a 2-vertex wall encloses nothing).

    Args:
        px: (p,) float64 x coordinates.
        py: (p,) float64 y coordinates.
        clearance: minimum distance to any segment (0: none required).
        points: obstacle storage.
        next_ids: obstacle storage.
        polygon: obstacle storage.
        is_boundary: (n_polygons,) bool, polygon is a boundary (walkable inside).
        seg_order: index.
        boxes: index.

    Returns:
        (p,) bool.
    """
    p = px.shape[0]
    m = points.shape[0]
    n_poly = is_boundary.shape[0]
    out = np.ones(p, dtype=np.bool_)
    parity = np.zeros(n_poly, dtype=np.bool_)
    ids = np.empty(1, dtype=np.int64)
    dsq = np.empty(1, dtype=np.float64)
    for k in range(p):
        x = px[k]
        y = py[k]
        parity[:] = False
        for s in range(m):
            t = next_ids[s]
            ay = points[s, 1]
            by = points[t, 1]
            if (ay > y) != (by > y):
                ax = points[s, 0]
                bx = points[t, 0]
                x_cross = ax + (y - ay) * (bx - ax) / (by - ay)
                if x < x_cross:
                    parity[polygon[s]] = not parity[polygon[s]]
        ok = True
        for g in range(n_poly):
            if parity[g] != is_boundary[g]:
                ok = False
                break
        if ok and clearance > 0.0:
            n = query_segments(
                x, y, clearance * clearance, np.bool_(False), np.bool_(False), points, next_ids,
                seg_order, boxes, ids, dsq,
            )
            ok = n == 0
        out[k] = ok
    return out


@njit(cache=True, no_cfunc_wrapper=True)
def query_many(points, range_sq, o_points, o_next, seg_order, boxes, out_ids, out_dist_sq,
               out_closest):
    """:func:`query_segments` (one-sided) for many points, plus the closest point on each segment.

    Args:
        points: (p, 2) query points.
        range_sq: squared radius.
        o_points: obstacle storage.
        o_next: obstacle storage.
        seg_order: index.
        boxes: index.
        out_ids: (p, k) int64, prefilled with -1.
        out_dist_sq: (p, k) float64, prefilled with inf.
        out_closest: (p, k, 2) float64, prefilled with nan.
    """
    k = out_ids.shape[1]
    ids = np.empty(k, dtype=np.int64)
    dsq = np.empty(k, dtype=np.float64)
    for q in range(points.shape[0]):
        x = points[q, 0]
        y = points[q, 1]
        n = query_segments(
            x, y, range_sq, np.bool_(True), np.bool_(False), o_points, o_next, seg_order, boxes,
            ids, dsq,
        )
        for j in range(min(n, k)):
            s = ids[j]
            t = o_next[s]
            ax = o_points[s, 0]
            ay = o_points[s, 1]
            abx = o_points[t, 0] - ax
            aby = o_points[t, 1] - ay
            r = ((x - ax) * abx + (y - ay) * aby) / (abx * abx + aby * aby)
            r = min(max(r, 0.0), 1.0)
            out_ids[q, j] = s
            out_dist_sq[q, j] = dsq[j]
            out_closest[q, j, 0] = ax + r * abx
            out_closest[q, j, 1] = ay + r * aby
