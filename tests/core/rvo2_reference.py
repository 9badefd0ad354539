"""Slow plain-Python float64 port of RVO2 2.0's per-agent ORCA math.

This module is a test oracle, not a simulator: it follows RVO2's C++ (``Agent.cc``:
``computeNewVelocity``, ``linearProgram1/2/3``, ``insertAgentNeighbor``,
``insertObstacleNeighbor``; ``RVOSimulator::addObstacle``) line by line, with Python floats
(IEEE float64) instead of C++ floats, brute-force neighbour search instead of the k-d tree and
the obstacle BSP tree, and one extension: per-agent responsibility shares.

Vectors are ``(x, y)`` tuples of Python floats; an ORCA line is a tuple
``(point_x, point_y, dir_x, dir_y)`` whose feasible half-plane lies to the left of the
direction (RVO2's ``Line``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

RVO_EPSILON = 1e-5


# --------------------------------------------------------------------------- vector helpers
def _det(ax, ay, bx, by):
    return ax * by - ay * bx


def _normalize(x, y):
    n = math.sqrt(x * x + y * y)
    return x / n, y / n


def left_of(p1, p2, p3):
    """RVO2's ``leftOf``: positive when ``p3`` is left of the directed line ``p1 -> p2``.

    Args:
        p1: Start of the line, ``(x, y)``.
        p2: End of the line, ``(x, y)``.
        p3: Query point, ``(x, y)``.

    Returns:
        ``det(p1 - p3, p2 - p1)`` as a float.
    """
    return _det(p1[0] - p3[0], p1[1] - p3[1], p2[0] - p1[0], p2[1] - p1[1])


def dist_sq_point_segment(a, b, c):
    """Squared distance from ``c`` to segment ``a -> b``, exactly as ``insertObstacleNeighbor``.

    Args:
        a: Segment start, ``(x, y)``.
        b: Segment end, ``(x, y)``.
        c: Query point, ``(x, y)``.

    Returns:
        The squared distance (float).
    """
    abx, aby = b[0] - a[0], b[1] - a[1]
    r = ((c[0] - a[0]) * abx + (c[1] - a[1]) * aby) / (abx * abx + aby * aby)
    if r < 0.0:
        dx, dy = c[0] - a[0], c[1] - a[1]
    elif r > 1.0:
        dx, dy = c[0] - b[0], c[1] - b[1]
    else:
        dx, dy = c[0] - (a[0] + r * abx), c[1] - (a[1] + r * aby)
    return dx * dx + dy * dy


# --------------------------------------------------------------------------- obstacles
@dataclass
class Obstacles:
    """Flat obstacle vertex records, as RVO2's ``addObstacle`` builds them (no BSP splits).

    Attributes:
        points: Vertex positions, list of ``(x, y)``.
        next: Index of the next vertex of the same polygon.
        prev: Index of the previous vertex of the same polygon.
        unit_dirs: Unit direction of the segment vertex -> next vertex.
        convex: RVO2's ``isConvex_`` flag (``leftOf(prev, this, next) >= 0``; always True
            for two-vertex obstacles).
    """

    points: list = field(default_factory=list)
    next: list = field(default_factory=list)
    prev: list = field(default_factory=list)
    unit_dirs: list = field(default_factory=list)
    convex: list = field(default_factory=list)

    def add_polygon(self, vertices):
        """Appends one obstacle polygon (RVO2 ``addObstacle``; counter-clockwise = solid).

        Args:
            vertices: Sequence of at least two ``(x, y)`` vertices.

        Returns:
            Index of the polygon's first vertex.
        """
        verts = [(float(x), float(y)) for x, y in vertices]
        k = len(verts)
        if k < 2:
            raise ValueError(f"an obstacle needs >= 2 vertices, got {k}")
        first = len(self.points)
        for i in range(k):
            nxt = verts[(i + 1) % k]
            prv = verts[(i - 1) % k]
            self.points.append(verts[i])
            self.next.append(first + (i + 1) % k)
            self.prev.append(first + (i - 1) % k)
            self.unit_dirs.append(_normalize(nxt[0] - verts[i][0], nxt[1] - verts[i][1]))
            self.convex.append(True if k == 2 else left_of(prv, verts[i], nxt) >= 0.0)
        return first

    def add_boundary(self, vertices):
        """Appends the outline of a walkable region, given counter-clockwise.

        The walkable side of an RVO2 obstacle is its right side, so the outline is stored
        reversed (clockwise), with vertex ``first`` being the outline's first vertex.

        Args:
            vertices: Sequence of at least three ``(x, y)`` vertices, counter-clockwise.

        Returns:
            Index of the boundary's first stored vertex.
        """
        verts = list(vertices)
        return self.add_polygon([verts[0]] + verts[:0:-1])

    @classmethod
    def from_polygons(cls, polygons=(), boundaries=()):
        """Builds the records from obstacle polygons, then boundary outlines.

        Args:
            polygons: Counter-clockwise obstacle polygons.
            boundaries: Counter-clockwise outlines of walkable regions.

        Returns:
            A new ``Obstacles``.
        """
        obs = cls()
        for poly in polygons:
            obs.add_polygon(poly)
        for poly in boundaries:
            obs.add_boundary(poly)
        return obs

    @classmethod
    def from_arrays(cls, points, next_ids, prev_ids, convex, unit_dirs=None):
        """Builds the records from flat arrays (e.g. another implementation's storage).

        Args:
            points: ``(m, 2)`` vertex positions.
            next_ids: ``(m,)`` next-vertex ids.
            prev_ids: ``(m,)`` previous-vertex ids.
            convex: ``(m,)`` convex flags.
            unit_dirs: ``(m, 2)`` unit directions; computed from the points when None.

        Returns:
            A new ``Obstacles``.
        """
        obs = cls()
        obs.points = [(float(x), float(y)) for x, y in np.asarray(points, dtype=np.float64)]
        obs.next = [int(v) for v in next_ids]
        obs.prev = [int(v) for v in prev_ids]
        obs.convex = [bool(c) for c in convex]
        if unit_dirs is None:
            obs.unit_dirs = [
                _normalize(obs.points[obs.next[v]][0] - p[0], obs.points[obs.next[v]][1] - p[1])
                for v, p in enumerate(obs.points)
            ]
        else:
            obs.unit_dirs = [(float(x), float(y)) for x, y in np.asarray(unit_dirs)]
        return obs

    def __len__(self):
        return len(self.points)


# --------------------------------------------------------------------------- neighbours
def agent_neighbors(i, positions, neighbor_dist, max_neighbors, active=None):
    """Brute-force ``computeAgentNeighbors`` for agent ``i``.

    RVO2 keeps the ``max_neighbors`` agents with ``distSq < neighbor_dist**2`` that are closest,
    by insertion sort with strict comparisons; ties keep visit order, here increasing id.

    Args:
        i: The agent.
        positions: ``(n, 2)`` float64 positions.
        neighbor_dist: Agent ``i``'s neighbour distance.
        max_neighbors: Agent ``i``'s neighbour cap (0: no agent neighbours).
        active: Optional ``(n,)`` bool mask; inactive agents are never neighbours.

    Returns:
        List of ``(dist_sq, j)`` pairs, nearest first.
    """
    if max_neighbors <= 0:
        return []
    px, py = float(positions[i, 0]), float(positions[i, 1])
    range_sq = float(neighbor_dist) * float(neighbor_dist)
    found = []
    for j in range(positions.shape[0]):
        if j == i or (active is not None and not active[j]):
            continue
        dx, dy = px - float(positions[j, 0]), py - float(positions[j, 1])
        dsq = dx * dx + dy * dy
        if dsq < range_sq:
            found.append((dsq, j))
    found.sort(key=lambda t: t[0])  # stable: ties stay in id order
    return found[: int(max_neighbors)]


def obstacle_neighbors(position, range_sq, obstacles):
    """Brute-force ``computeObstacleNeighbors`` on unsplit segments.

    A segment ``v -> next(v)`` is a neighbour when the agent is strictly on its right side
    (``leftOf < 0``: it sees the segment from outside) and the squared point-segment
    distance is below ``range_sq = (time_horizon_obst * max_speed + radius)**2``.

    Args:
        position: The agent's ``(x, y)``.
        range_sq: Squared query range.
        obstacles: ``Obstacles``.

    Returns:
        List of ``(dist_sq, vertex_id)``, nearest first (ties in vertex-id order).
    """
    found = []
    for v in range(len(obstacles)):
        p1 = obstacles.points[v]
        p2 = obstacles.points[obstacles.next[v]]
        if left_of(p1, p2, position) < 0.0:
            dsq = dist_sq_point_segment(p1, p2, position)
            if dsq < range_sq:
                found.append((dsq, v))
    found.sort(key=lambda t: t[0])
    return found


# --------------------------------------------------------------------------- ORCA lines
def obstacle_orca_lines(position, velocity, radius, time_horizon_obst, neighbor_ids, obstacles):
    """ORCA lines of one agent against obstacle segments (first half of ``computeNewVelocity``).

    Includes the already-covered test, the collision cases (left vertex, right vertex,
    segment), oblique views, non-convex vertices, foreign legs, and the projections on the
    cut-off circles, cut-off line and legs.

    Args:
        position: The agent's ``(x, y)``.
        velocity: The agent's current velocity ``(x, y)``.
        radius: The agent's radius.
        time_horizon_obst: The agent's obstacle time horizon.
        neighbor_ids: Obstacle vertex ids (segment = vertex -> next), nearest first.
        obstacles: ``Obstacles``.

    Returns:
        List of lines ``(px, py, dx, dy)``.
    """
    lines = []
    inv_th = 1.0 / time_horizon_obst
    px, py = position
    vx, vy = velocity
    radius_sq = radius * radius
    for o1 in neighbor_ids:
        o2 = obstacles.next[o1]
        p1 = obstacles.points[o1]
        p2 = obstacles.points[o2]
        r1x, r1y = p1[0] - px, p1[1] - py
        r2x, r2y = p2[0] - px, p2[1] - py

        # Skip when previously constructed obstacle lines already cover this segment's VO.
        covered = False
        for lpx, lpy, ldx, ldy in lines:
            if (
                _det(inv_th * r1x - lpx, inv_th * r1y - lpy, ldx, ldy) - inv_th * radius
                >= -RVO_EPSILON
                and _det(inv_th * r2x - lpx, inv_th * r2y - lpy, ldx, ldy) - inv_th * radius
                >= -RVO_EPSILON
            ):
                covered = True
                break
        if covered:
            continue

        dist_sq1 = r1x * r1x + r1y * r1y
        dist_sq2 = r2x * r2x + r2y * r2y
        ovx, ovy = p2[0] - p1[0], p2[1] - p1[1]
        s = (-r1x * ovx - r1y * ovy) / (ovx * ovx + ovy * ovy)
        ex, ey = -r1x - s * ovx, -r1y - s * ovy
        dist_sq_line = ex * ex + ey * ey

        if s < 0.0 and dist_sq1 <= radius_sq:
            # Collision with left vertex; ignored if non-convex.
            if obstacles.convex[o1]:
                dx, dy = _normalize(-r1y, r1x)
                lines.append((0.0, 0.0, dx, dy))
            continue
        if s > 1.0 and dist_sq2 <= radius_sq:
            # Collision with right vertex; ignored if non-convex or the next segment covers it.
            u2 = obstacles.unit_dirs[o2]
            if obstacles.convex[o2] and _det(r2x, r2y, u2[0], u2[1]) >= 0.0:
                dx, dy = _normalize(-r2y, r2x)
                lines.append((0.0, 0.0, dx, dy))
            continue
        if 0.0 <= s <= 1.0 and dist_sq_line <= radius_sq:
            # Collision with the segment itself.
            u1 = obstacles.unit_dirs[o1]
            lines.append((0.0, 0.0, -u1[0], -u1[1]))
            continue

        # No collision: compute the legs of the VO.
        if s < 0.0 and dist_sq_line <= radius_sq:
            # Segment seen obliquely: the left vertex alone defines the VO.
            if not obstacles.convex[o1]:
                continue
            o2 = o1
            leg1 = math.sqrt(dist_sq1 - radius_sq)
            llx = (r1x * leg1 - r1y * radius) / dist_sq1
            lly = (r1x * radius + r1y * leg1) / dist_sq1
            rlx = (r1x * leg1 + r1y * radius) / dist_sq1
            rly = (-r1x * radius + r1y * leg1) / dist_sq1
        elif s > 1.0 and dist_sq_line <= radius_sq:
            # Segment seen obliquely: the right vertex alone defines the VO.
            if not obstacles.convex[o2]:
                continue
            o1 = o2
            leg2 = math.sqrt(dist_sq2 - radius_sq)
            llx = (r2x * leg2 - r2y * radius) / dist_sq2
            lly = (r2x * radius + r2y * leg2) / dist_sq2
            rlx = (r2x * leg2 + r2y * radius) / dist_sq2
            rly = (-r2x * radius + r2y * leg2) / dist_sq2
        else:
            # Usual situation.
            u1 = obstacles.unit_dirs[o1]
            if obstacles.convex[o1]:
                leg1 = math.sqrt(dist_sq1 - radius_sq)
                llx = (r1x * leg1 - r1y * radius) / dist_sq1
                lly = (r1x * radius + r1y * leg1) / dist_sq1
            else:
                # Left vertex non-convex: the left leg extends the cut-off line.
                llx, lly = -u1[0], -u1[1]
            if obstacles.convex[o2]:
                leg2 = math.sqrt(dist_sq2 - radius_sq)
                rlx = (r2x * leg2 + r2y * radius) / dist_sq2
                rly = (-r2x * radius + r2y * leg2) / dist_sq2
            else:
                # Right vertex non-convex: the right leg extends the cut-off line.
                rlx, rly = u1[0], u1[1]

        # Legs may never point into the obstacle: then they follow the neighbouring segment.
        left_neighbor = obstacles.prev[o1]
        left_foreign = False
        right_foreign = False
        un = obstacles.unit_dirs[left_neighbor]
        if obstacles.convex[o1] and _det(llx, lly, -un[0], -un[1]) >= 0.0:
            # Left leg points into obstacle.
            llx, lly = -un[0], -un[1]
            left_foreign = True
        u2 = obstacles.unit_dirs[o2]
        if obstacles.convex[o2] and _det(rlx, rly, u2[0], u2[1]) <= 0.0:
            # Right leg points into obstacle.
            rlx, rly = u2[0], u2[1]
            right_foreign = True

        q1 = obstacles.points[o1]
        q2 = obstacles.points[o2]
        lcx, lcy = inv_th * (q1[0] - px), inv_th * (q1[1] - py)
        rcx, rcy = inv_th * (q2[0] - px), inv_th * (q2[1] - py)
        cvx, cvy = rcx - lcx, rcy - lcy
        same = o1 == o2

        # Project current velocity on the velocity obstacle.
        t = 0.5 if same else ((vx - lcx) * cvx + (vy - lcy) * cvy) / (cvx * cvx + cvy * cvy)
        t_left = (vx - lcx) * llx + (vy - lcy) * lly
        t_right = (vx - rcx) * rlx + (vy - rcy) * rly

        if (t < 0.0 and t_left < 0.0) or (same and t_left < 0.0 and t_right < 0.0):
            # Project on left cut-off circle.
            wx, wy = _normalize(vx - lcx, vy - lcy)
            lines.append((lcx + radius * inv_th * wx, lcy + radius * inv_th * wy, wy, -wx))
            continue
        if t > 1.0 and t_right < 0.0:
            # Project on right cut-off circle.
            wx, wy = _normalize(vx - rcx, vy - rcy)
            lines.append((rcx + radius * inv_th * wx, rcy + radius * inv_th * wy, wy, -wx))
            continue

        # Project on left leg, right leg, or cut-off line, whichever is closest to velocity.
        inf = math.inf
        if t < 0.0 or t > 1.0 or same:
            d_cut = inf
        else:
            ax, ay = vx - (lcx + t * cvx), vy - (lcy + t * cvy)
            d_cut = ax * ax + ay * ay
        if t_left < 0.0:
            d_left = inf
        else:
            ax, ay = vx - (lcx + t_left * llx), vy - (lcy + t_left * lly)
            d_left = ax * ax + ay * ay
        if t_right < 0.0:
            d_right = inf
        else:
            ax, ay = vx - (rcx + t_right * rlx), vy - (rcy + t_right * rly)
            d_right = ax * ax + ay * ay

        if d_cut <= d_left and d_cut <= d_right:
            # Project on cut-off line.
            u1 = obstacles.unit_dirs[o1]
            dx, dy = -u1[0], -u1[1]
            lines.append((lcx + radius * inv_th * -dy, lcy + radius * inv_th * dx, dx, dy))
        elif d_left <= d_right:
            # Project on left leg.
            if left_foreign:
                continue
            dx, dy = llx, lly
            lines.append((lcx + radius * inv_th * -dy, lcy + radius * inv_th * dx, dx, dy))
        else:
            # Project on right leg.
            if right_foreign:
                continue
            dx, dy = -rlx, -rly
            lines.append((rcx + radius * inv_th * -dy, rcy + radius * inv_th * dx, dx, dy))
    return lines


def responsibility_share(w_i, w_j):
    """Agent ``i``'s share of the avoidance against ``j``: ``w_i / (w_i + w_j)``, 0.5 if both 0.

    Args:
        w_i: Responsibility of agent ``i`` (>= 0).
        w_j: Responsibility of agent ``j`` (>= 0).

    Returns:
        The share in ``[0, 1]``; RVO2's fixed 0.5 when ``w_i == w_j``.
    """
    total = w_i + w_j
    if total == 0.0:
        return 0.5
    return w_i / total


def agent_orca_lines(
    position, velocity, radius, time_horizon, responsibility, others, time_step
):
    """ORCA lines of one agent against neighbour agents (second half of ``computeNewVelocity``).

    Args:
        position: The agent's ``(x, y)``.
        velocity: The agent's current velocity ``(x, y)``.
        radius: The agent's radius.
        time_horizon: The agent's time horizon.
        responsibility: The agent's responsibility weight ``w_i``.
        others: Neighbours nearest first, each ``(position, velocity, radius, responsibility)``.
        time_step: Simulation time step (used when the agents already overlap).

    Returns:
        List of lines ``(px, py, dx, dy)``; a neighbour for which the share is exactly 0
        contributes no line.
    """
    lines = []
    inv_th = 1.0 / time_horizon
    px, py = position
    vx, vy = velocity
    for (opx, opy), (ovx, ovy), o_radius, o_resp in others:
        share = responsibility_share(responsibility, o_resp)
        if share == 0.0:
            continue
        rpx, rpy = opx - px, opy - py
        rvx, rvy = vx - ovx, vy - ovy
        dist_sq = rpx * rpx + rpy * rpy
        combined_radius = radius + o_radius
        combined_radius_sq = combined_radius * combined_radius

        if dist_sq > combined_radius_sq:
            # No collision. w: vector from cut-off centre to relative velocity.
            wx, wy = rvx - inv_th * rpx, rvy - inv_th * rpy
            w_length_sq = wx * wx + wy * wy
            dot1 = wx * rpx + wy * rpy
            if dot1 < 0.0 and dot1 * dot1 > combined_radius_sq * w_length_sq:
                # Project on cut-off circle.
                w_length = math.sqrt(w_length_sq)
                ux, uy = wx / w_length, wy / w_length
                dx, dy = uy, -ux
                k = combined_radius * inv_th - w_length
                u = (k * ux, k * uy)
            else:
                # Project on legs.
                leg = math.sqrt(dist_sq - combined_radius_sq)
                if _det(rpx, rpy, wx, wy) > 0.0:
                    # Project on left leg.
                    dx = (rpx * leg - rpy * combined_radius) / dist_sq
                    dy = (rpx * combined_radius + rpy * leg) / dist_sq
                else:
                    # Project on right leg.
                    dx = -(rpx * leg + rpy * combined_radius) / dist_sq
                    dy = -(-rpx * combined_radius + rpy * leg) / dist_sq
                dot2 = rvx * dx + rvy * dy
                u = (dot2 * dx - rvx, dot2 * dy - rvy)
        else:
            # Collision: project on cut-off circle of time time_step.
            inv_ts = 1.0 / time_step
            wx, wy = rvx - inv_ts * rpx, rvy - inv_ts * rpy
            w_length = math.sqrt(wx * wx + wy * wy)
            ux, uy = wx / w_length, wy / w_length
            dx, dy = uy, -ux
            k = combined_radius * inv_ts - w_length
            u = (k * ux, k * uy)

        lines.append((vx + share * u[0], vy + share * u[1], dx, dy))
    return lines


# --------------------------------------------------------------------------- linear programs
def linear_program1(lines, line_no, radius, opt_velocity, direction_opt, result):
    """Solves the 1-D LP on line ``line_no`` under lines ``0..line_no-1`` and a speed disc.

    Args:
        lines: List of lines ``(px, py, dx, dy)``.
        line_no: The line to optimise on.
        radius: Radius of the circular constraint (the maximum speed).
        opt_velocity: Optimisation velocity ``(x, y)`` (a unit direction if ``direction_opt``).
        direction_opt: Optimise the direction instead of the closest point.
        result: Current result ``(x, y)``, returned unchanged on failure.

    Returns:
        ``(ok, result)``.
    """
    lpx, lpy, ldx, ldy = lines[line_no]
    dot = lpx * ldx + lpy * ldy
    discriminant = dot * dot + radius * radius - (lpx * lpx + lpy * lpy)
    if discriminant < 0.0:
        # Max speed circle fully invalidates line line_no.
        return False, result
    sqrt_disc = math.sqrt(discriminant)
    t_left = -dot - sqrt_disc
    t_right = -dot + sqrt_disc
    for i in range(line_no):
        ipx, ipy, idx, idy = lines[i]
        denominator = _det(ldx, ldy, idx, idy)
        numerator = _det(idx, idy, lpx - ipx, lpy - ipy)
        if abs(denominator) <= RVO_EPSILON:
            # Lines line_no and i are (almost) parallel.
            if numerator < 0.0:
                return False, result
            continue
        t = numerator / denominator
        if denominator >= 0.0:
            # Line i bounds line line_no on the right.
            t_right = min(t_right, t)
        else:
            # Line i bounds line line_no on the left.
            t_left = max(t_left, t)
        if t_left > t_right:
            return False, result

    if direction_opt:
        # Optimise direction: take the extreme along the preferred direction.
        if opt_velocity[0] * ldx + opt_velocity[1] * ldy > 0.0:
            t = t_right
        else:
            t = t_left
    else:
        # Optimise closest point.
        t = ldx * (opt_velocity[0] - lpx) + ldy * (opt_velocity[1] - lpy)
        if t < t_left:
            t = t_left
        elif t > t_right:
            t = t_right
    return True, (lpx + t * ldx, lpy + t * ldy)


def linear_program2(lines, radius, opt_velocity, direction_opt):
    """Solves the 2-D LP: closest point to ``opt_velocity`` in all half-planes and the disc.

    Args:
        lines: List of lines ``(px, py, dx, dy)``.
        radius: Radius of the circular constraint (the maximum speed).
        opt_velocity: Optimisation velocity ``(x, y)``.
        direction_opt: Optimise the direction (``opt_velocity`` must be a unit vector).

    Returns:
        ``(line_fail, result)``: ``line_fail == len(lines)`` when feasible, else the index of
        the line at which it failed, with ``result`` the last feasible point.
    """
    ox, oy = opt_velocity
    if direction_opt:
        # opt_velocity is a unit vector in this case.
        result = (ox * radius, oy * radius)
    elif ox * ox + oy * oy > radius * radius:
        # Optimise closest point and outside circle.
        nx, ny = _normalize(ox, oy)
        result = (nx * radius, ny * radius)
    else:
        # Optimise closest point and inside circle.
        result = (ox, oy)
    for i, (lpx, lpy, ldx, ldy) in enumerate(lines):
        if _det(ldx, ldy, lpx - result[0], lpy - result[1]) > 0.0:
            # Result does not satisfy constraint i; compute the new optimal result.
            ok, new_result = linear_program1(
                lines, i, radius, opt_velocity, direction_opt, result
            )
            if not ok:
                return i, result
            result = new_result
    return len(lines), result


def linear_program3(lines, num_obst_lines, begin_line, radius, result):
    """Least-violation fallback: minimises the largest agent-line violation.

    Obstacle lines (the first ``num_obst_lines``) stay hard constraints.

    Args:
        lines: List of lines ``(px, py, dx, dy)``.
        num_obst_lines: Number of obstacle lines at the front of ``lines``.
        begin_line: The line at which ``linear_program2`` failed.
        radius: Radius of the circular constraint (the maximum speed).
        result: ``linear_program2``'s partial result.

    Returns:
        The new result ``(x, y)``.
    """
    distance = 0.0
    for i in range(begin_line, len(lines)):
        ipx, ipy, idx, idy = lines[i]
        if _det(idx, idy, ipx - result[0], ipy - result[1]) > distance:
            # Result does not satisfy constraint of line i.
            proj = list(lines[:num_obst_lines])
            for j in range(num_obst_lines, i):
                jpx, jpy, jdx, jdy = lines[j]
                determinant = _det(idx, idy, jdx, jdy)
                if abs(determinant) <= RVO_EPSILON:
                    # Lines i and j are parallel.
                    if idx * jdx + idy * jdy > 0.0:
                        # Same direction: line j adds nothing.
                        continue
                    # Opposite direction: the bisector lies midway.
                    ptx, pty = 0.5 * (ipx + jpx), 0.5 * (ipy + jpy)
                else:
                    k = _det(jdx, jdy, ipx - jpx, ipy - jpy) / determinant
                    ptx, pty = ipx + k * idx, ipy + k * idy
                ndx, ndy = _normalize(jdx - idx, jdy - idy)
                proj.append((ptx, pty, ndx, ndy))
            temp = result
            fail, new_result = linear_program2(proj, radius, (-idy, idx), True)
            # A failure here is floating-point error only: keep the current result.
            result = temp if fail < len(proj) else new_result
            distance = _det(idx, idy, ipx - result[0], ipy - result[1])
    return result


# --------------------------------------------------------------------------- one step
@dataclass
class AgentStep:
    """Everything the reference computed for one agent in one step.

    Attributes:
        new_velocity: ``(x, y)``.
        lines: ORCA lines, obstacle lines first.
        num_obst_lines: How many of ``lines`` come from obstacles.
        used_lp3: Whether ``linear_program2`` failed and ``linear_program3`` ran.
        agent_neighbors: Neighbour ids, nearest first.
        obstacle_neighbors: Obstacle vertex ids, nearest first.
    """

    new_velocity: tuple
    lines: list
    num_obst_lines: int
    used_lp3: bool
    agent_neighbors: list
    obstacle_neighbors: list


def _per_agent(value, n, dtype=float):
    arr = np.asarray(value, dtype=dtype)
    if arr.ndim == 0:
        arr = np.full(n, arr, dtype=dtype)
    return arr


def reference_agent(
    i,
    positions,
    velocities,
    pref_velocities,
    *,
    time_step,
    radii,
    max_speeds,
    neighbor_dists,
    max_neighbors,
    time_horizons,
    time_horizons_obst,
    responsibilities,
    obstacles=None,
    active=None,
    agent_neighbor_ids=None,
    obstacle_neighbor_ids=None,
):
    """RVO2's ``computeNeighbors`` + ``computeNewVelocity`` for agent ``i`` (arrays per agent).

    Args:
        i: The agent.
        positions: ``(n, 2)`` float64.
        velocities: ``(n, 2)`` float64.
        pref_velocities: ``(n, 2)`` float64.
        time_step: Simulation time step.
        radii: ``(n,)``; likewise ``max_speeds``, ``neighbor_dists``, ``max_neighbors``,
            ``time_horizons``, ``time_horizons_obst``, ``responsibilities``.
        max_speeds: See ``radii``.
        neighbor_dists: See ``radii``.
        max_neighbors: See ``radii``.
        time_horizons: See ``radii``.
        time_horizons_obst: See ``radii``.
        responsibilities: See ``radii``.
        obstacles: Optional ``Obstacles``.
        active: Optional ``(n,)`` bool mask.
        agent_neighbor_ids: Use these neighbours (nearest first) instead of brute force.
        obstacle_neighbor_ids: Use these obstacle vertex ids instead of brute force.

    Returns:
        ``AgentStep``.
    """
    pos = (float(positions[i, 0]), float(positions[i, 1]))
    vel = (float(velocities[i, 0]), float(velocities[i, 1]))
    pref = (float(pref_velocities[i, 0]), float(pref_velocities[i, 1]))
    radius = float(radii[i])
    max_speed = float(max_speeds[i])
    th_obst = float(time_horizons_obst[i])

    obst_ids = []
    lines = []
    if obstacles is not None and len(obstacles) > 0:
        rng = th_obst * max_speed + radius
        if obstacle_neighbor_ids is None:
            obst_ids = [v for _, v in obstacle_neighbors(pos, rng * rng, obstacles)]
        else:
            obst_ids = [int(v) for v in obstacle_neighbor_ids]
        lines = obstacle_orca_lines(pos, vel, radius, th_obst, obst_ids, obstacles)
    num_obst = len(lines)

    if agent_neighbor_ids is None:
        nbrs = [j for _, j in agent_neighbors(
            i, positions, float(neighbor_dists[i]), int(max_neighbors[i]), active
        )]
    else:
        nbrs = [int(j) for j in agent_neighbor_ids]
    others = [
        (
            (float(positions[j, 0]), float(positions[j, 1])),
            (float(velocities[j, 0]), float(velocities[j, 1])),
            float(radii[j]),
            float(responsibilities[j]),
        )
        for j in nbrs
    ]
    lines = lines + agent_orca_lines(
        pos, vel, radius, float(time_horizons[i]), float(responsibilities[i]), others,
        float(time_step),
    )

    fail, result = linear_program2(lines, max_speed, pref, False)
    used_lp3 = fail < len(lines)
    if used_lp3:
        result = linear_program3(lines, num_obst, fail, max_speed, result)
    # Beyond RVO2 (as the core): linear_program1's discriminant loses digits when a line is
    # almost tangent to the speed circle, leaving |result| up to ~1e-8 above max_speed.
    speed = math.hypot(result[0], result[1])
    if speed > max_speed:
        result = (result[0] * max_speed / speed, result[1] * max_speed / speed)
    return AgentStep(result, lines, num_obst, used_lp3, nbrs, obst_ids)


def reference_step(
    positions,
    velocities,
    pref_velocities,
    *,
    time_step=0.25,
    radius=1.5,
    max_speed=2.0,
    neighbor_dist=15.0,
    max_neighbors=10,
    time_horizon=10.0,
    time_horizon_obst=10.0,
    responsibility=1.0,
    obstacles=None,
    active=None,
    return_details=False,
):
    """One RVO2 step's new velocities, computed agent by agent from the same state.

    Positions are not advanced (``Agent::update`` is ``v = new_v; p += v * dt``).

    Args:
        positions: ``(n, 2)`` float64, metres.
        velocities: ``(n, 2)`` float64 current velocities, m/s.
        pref_velocities: ``(n, 2)`` float64 preferred velocities, m/s.
        time_step: Simulation time step (s).
        radius: Scalar or ``(n,)`` radii.
        max_speed: Scalar or ``(n,)`` maximum speeds.
        neighbor_dist: Scalar or ``(n,)`` neighbour distances.
        max_neighbors: Scalar or ``(n,)`` neighbour caps.
        time_horizon: Scalar or ``(n,)`` agent time horizons.
        time_horizon_obst: Scalar or ``(n,)`` obstacle time horizons.
        responsibility: Scalar or ``(n,)`` responsibility weights.
        obstacles: Optional ``Obstacles``.
        active: Optional ``(n,)`` bool mask; inactive agents are skipped (velocity kept) and
            are never neighbours.
        return_details: Also return the list of ``AgentStep`` (None for inactive agents).

    Returns:
        ``(n, 2)`` float64 new velocities, or ``(new_velocities, details)``.
    """
    positions = np.asarray(positions, dtype=np.float64)
    velocities = np.asarray(velocities, dtype=np.float64)
    pref_velocities = np.asarray(pref_velocities, dtype=np.float64)
    n = positions.shape[0]
    params = dict(
        time_step=time_step,
        radii=_per_agent(radius, n),
        max_speeds=_per_agent(max_speed, n),
        neighbor_dists=_per_agent(neighbor_dist, n),
        max_neighbors=_per_agent(max_neighbors, n, np.int64),
        time_horizons=_per_agent(time_horizon, n),
        time_horizons_obst=_per_agent(time_horizon_obst, n),
        responsibilities=_per_agent(responsibility, n),
        obstacles=obstacles,
        active=active,
    )
    new_vel = velocities.copy()
    details = []
    for i in range(n):
        if active is not None and not active[i]:
            details.append(None)
            continue
        st = reference_agent(i, positions, velocities, pref_velocities, **params)
        new_vel[i] = st.new_velocity
        details.append(st)
    if return_details:
        return new_vel, details
    return new_vel


# --------------------------------------------------------------------------- test scenes
def point_in_polygon(point, vertices):
    """Even-odd point-in-polygon test.

    Args:
        point: ``(x, y)``.
        vertices: Polygon vertices.

    Returns:
        True when ``point`` is strictly inside (boundary points are unspecified).
    """
    x, y = point
    inside = False
    k = len(vertices)
    for a in range(k):
        (x1, y1), (x2, y2) = vertices[a], vertices[(a + 1) % k]
        if (y1 > y) != (y2 > y) and x < x1 + (y - y1) * (x2 - x1) / (y2 - y1):
            inside = not inside
    return inside


def min_dist_to_polygons(point, polygons):
    """Smallest distance from ``point`` to any edge of any polygon (closed outlines).

    Args:
        point: ``(x, y)``.
        polygons: Sequence of vertex lists.

    Returns:
        The distance (``inf`` without polygons).
    """
    best = math.inf
    for poly in polygons:
        k = len(poly)
        for a in range(k if k > 2 else 1):
            best = min(best, dist_sq_point_segment(poly[a], poly[(a + 1) % k], point))
    return math.sqrt(best)


def square(cx, cy, half):
    """Counter-clockwise axis-aligned square of half-width ``half`` centred at ``(cx, cy)``."""
    return [(cx - half, cy - half), (cx + half, cy - half), (cx + half, cy + half),
            (cx - half, cy + half)]


def square_grid(nx, ny, spacing, half, origin=(0.0, 0.0)):
    """``nx * ny`` counter-clockwise squares on a grid (``4 * nx * ny`` segments)."""
    ox, oy = origin
    return [square(ox + i * spacing, oy + j * spacing, half) for i in range(nx)
            for j in range(ny)]


@dataclass
class Scene:
    """A random single-step test state (float64 arrays, per-agent parameters).

    Attributes mirror ``Simulator`` inputs: ``positions``, ``velocities``,
    ``pref_velocities`` ``(n, 2)``; ``radius``, ``max_speed``, ``neighbor_dist``,
    ``max_neighbors``, ``time_horizon``, ``time_horizon_obst``, ``responsibility`` ``(n,)``;
    ``polygons`` (counter-clockwise obstacles), ``boundaries`` (counter-clockwise walkable
    outlines) and ``time_step``.
    """

    positions: np.ndarray
    velocities: np.ndarray
    pref_velocities: np.ndarray
    radius: np.ndarray
    max_speed: np.ndarray
    neighbor_dist: np.ndarray
    max_neighbors: np.ndarray
    time_horizon: np.ndarray
    time_horizon_obst: np.ndarray
    responsibility: np.ndarray
    polygons: list
    boundaries: list
    time_step: float = 0.25

    @property
    def n(self):
        return self.positions.shape[0]

    def obstacles(self):
        """The scene's ``Obstacles`` (None when it has none)."""
        if not self.polygons and not self.boundaries:
            return None
        return Obstacles.from_polygons(self.polygons, self.boundaries)

    def params(self):
        """Keyword arguments for ``reference_step``."""
        return dict(
            time_step=self.time_step, radius=self.radius, max_speed=self.max_speed,
            neighbor_dist=self.neighbor_dist, max_neighbors=self.max_neighbors,
            time_horizon=self.time_horizon, time_horizon_obst=self.time_horizon_obst,
            responsibility=self.responsibility, obstacles=self.obstacles(),
        )

    def to_float32(self):
        """Rounds every float to float32 (so float32 and float64 codes see one state)."""
        out = Scene(**{k: getattr(self, k) for k in self.__dataclass_fields__})
        for k in ("positions", "velocities", "pref_velocities", "radius", "max_speed",
                  "neighbor_dist", "time_horizon", "time_horizon_obst", "responsibility"):
            setattr(out, k, getattr(self, k).astype(np.float32).astype(np.float64))
        r32 = lambda poly: [(float(np.float32(x)), float(np.float32(y))) for x, y in poly]  # noqa: E731
        out.polygons = [r32(p) for p in self.polygons]
        out.boundaries = [r32(p) for p in self.boundaries]
        out.time_step = float(np.float32(self.time_step))
        return out


def random_scene(
    seed,
    n=30,
    *,
    obstacles=False,
    boundary=False,
    heterogeneous=True,
    zero_responsibility=True,
    half_width=10.0,
    near_obstacle_fraction=0.4,
):
    """A random state for single-step comparisons.

    Obstacles are a 3x3 grid of counter-clockwise squares of random size, one non-convex
    L-shaped polygon and one two-vertex wall; agent centres are outside every obstacle (some
    discs overlap obstacles or each other, to exercise the collision branches), and a fraction
    of agents sit close to an obstacle vertex.

    Args:
        seed: Seed of the ``np.random.Generator``.
        n: Number of agents.
        obstacles: Add the obstacles.
        boundary: Add a square boundary slightly larger than the placement box.
        heterogeneous: Random per-agent parameters (else RVO2's Circle defaults, radius 0.5).
        zero_responsibility: Give about a fifth of the agents responsibility 0 (else
            responsibilities are random positive, or all 1 when not ``heterogeneous``).
        half_width: Agents are placed in ``[-half_width, half_width]**2``.
        near_obstacle_fraction: Share of agents placed near obstacle vertices.

    Returns:
        ``Scene``.
    """
    rng = np.random.default_rng(seed)
    polygons = []
    boundaries = []
    if obstacles:
        s = half_width / 2.0
        for cx in (-s, 0.0, s):
            for cy in (-s, 0.0, s):
                if cx == 0.0 and cy == 0.0:
                    continue
                h = rng.uniform(0.4, max(0.5, 0.25 * s))
                polygons.append(square(cx + rng.uniform(-0.5, 0.5), cy + rng.uniform(-0.5, 0.5), h))
        # Non-convex L shape (counter-clockwise) in the middle; vertex 3 is reflex.
        a = rng.uniform(0.8, 1.5)
        polygons.append([(-a, -a), (a, -a), (a, 0.0), (0.0, 0.0), (0.0, a), (-a, a)])
        # A two-vertex wall.
        x0 = rng.uniform(-0.5, 0.5)
        polygons.append([(x0 - 1.0, half_width * 0.8), (x0 + 1.0, half_width * 0.8 + 0.3)])
    if boundary:
        b = half_width + 2.0
        boundaries.append([(-b, -b), (b, -b), (b, b), (0.5, b + 1.0), (-b, b)])

    if heterogeneous:
        radius = rng.uniform(0.2, 0.8, n)
        max_speed = rng.uniform(0.5, 2.5, n)
        neighbor_dist = rng.uniform(2.0, 12.0, n)
        max_neighbors = rng.integers(0, 12, n)
        time_horizon = rng.uniform(0.5, 8.0, n)
        time_horizon_obst = rng.uniform(0.5, 8.0, n)
        responsibility = rng.uniform(0.2, 2.0, n)
        if zero_responsibility:
            responsibility[rng.random(n) < 0.2] = 0.0
    else:
        radius = np.full(n, 0.5)
        max_speed = np.full(n, 2.0)
        neighbor_dist = np.full(n, 15.0)
        max_neighbors = np.full(n, 10, dtype=np.int64)
        time_horizon = np.full(n, 10.0)
        time_horizon_obst = np.full(n, 10.0)
        responsibility = np.zeros(n) if zero_responsibility else np.ones(n)

    solid = polygons
    vertices = [v for p in polygons for v in p]
    positions = np.empty((n, 2))
    k = 0
    while k < n:
        if vertices and rng.random() < near_obstacle_fraction:
            vx, vy = vertices[rng.integers(len(vertices))]
            ang = rng.uniform(0, 2 * math.pi)
            d = rng.uniform(0.0, 3.0 * radius[k])
            p = (vx + d * math.cos(ang), vy + d * math.sin(ang))
        else:
            p = tuple(rng.uniform(-half_width, half_width, 2))
        if any(len(poly) > 2 and point_in_polygon(p, poly) for poly in solid):
            continue
        # Keep centres off the obstacle outlines themselves (degenerate for every code).
        if min_dist_to_polygons(p, polygons) < 0.05 * radius[k]:
            continue
        if k and np.min(np.hypot(*(positions[:k] - p).T)) < 1e-3:
            continue
        positions[k] = p
        k += 1
    ang = rng.uniform(0, 2 * math.pi, n)
    speed = max_speed * np.sqrt(rng.random(n))
    velocities = np.stack([speed * np.cos(ang), speed * np.sin(ang)], axis=1)
    ang = rng.uniform(0, 2 * math.pi, n)
    pspeed = rng.uniform(0.0, 1.3, n) * max_speed
    pref = np.stack([pspeed * np.cos(ang), pspeed * np.sin(ang)], axis=1)
    return Scene(positions, velocities, pref, radius, max_speed, neighbor_dist,
                 max_neighbors.astype(np.int64), time_horizon, time_horizon_obst,
                 responsibility, polygons, boundaries)


def grid_scene(seed, n=60, *, nx=4, spacing=10.0, half=1.0, heterogeneous=True):
    """Agents scattered among a grid of counter-clockwise squares (RVO2-Blocks-like density).

    Args:
        seed: Seed of the ``np.random.Generator``.
        n: Number of agents.
        nx: The grid has ``nx * nx`` squares.
        spacing: Distance between square centres.
        half: Half-width of each square.
        heterogeneous: Random per-agent parameters (responsibilities stay 1).

    Returns:
        ``Scene``.
    """
    rng = np.random.default_rng(seed)
    polygons = square_grid(nx, nx, spacing, half, origin=(-(nx - 1) * spacing / 2,) * 2)
    extent = nx * spacing / 2
    if heterogeneous:
        radius = rng.uniform(0.3, 1.0, n)
        max_speed = rng.uniform(0.8, 2.5, n)
        neighbor_dist = rng.uniform(3.0, 15.0, n)
        max_neighbors = rng.integers(1, 12, n)
        time_horizon = rng.uniform(1.0, 10.0, n)
        time_horizon_obst = rng.uniform(0.5, 5.0, n)
    else:
        radius, max_speed = np.full(n, 1.0), np.full(n, 2.0)
        neighbor_dist, max_neighbors = np.full(n, 15.0), np.full(n, 10, dtype=np.int64)
        time_horizon, time_horizon_obst = np.full(n, 5.0), np.full(n, 5.0)
    positions = np.empty((n, 2))
    k = 0
    while k < n:
        p = tuple(rng.uniform(-extent, extent, 2))
        if min_dist_to_polygons(p, polygons) > radius[k] and not any(
            point_in_polygon(p, poly) for poly in polygons
        ):
            positions[k] = p
            k += 1
    ang = rng.uniform(0, 2 * math.pi, n)
    speed = max_speed * np.sqrt(rng.random(n))
    velocities = np.stack([speed * np.cos(ang), speed * np.sin(ang)], axis=1)
    ang = rng.uniform(0, 2 * math.pi, n)
    pref = np.stack([np.cos(ang), np.sin(ang)], axis=1) * max_speed[:, None]
    return Scene(positions, velocities, pref, radius, max_speed, neighbor_dist,
                 np.asarray(max_neighbors, dtype=np.int64), time_horizon, time_horizon_obst,
                 np.ones(n), polygons, [])


def build_simulator(scene, simulator_cls, **kwargs):
    """Loads a ``Scene`` into a fresh ``orca_env.core.Simulator`` (passed in as a class).

    Args:
        scene: The ``Scene``.
        simulator_cls: ``orca_env.core.Simulator``.
        **kwargs: Extra constructor keywords (e.g. ``num_threads``).

    Returns:
        The simulator, obstacles processed and preferred velocities set.
    """
    sim = simulator_cls(time_step=scene.time_step, **kwargs)
    sim.add_agents(
        scene.positions, velocities=scene.velocities, radius=scene.radius,
        max_speed=scene.max_speed, neighbor_dist=scene.neighbor_dist,
        max_neighbors=scene.max_neighbors, time_horizon=scene.time_horizon,
        time_horizon_obst=scene.time_horizon_obst, responsibility=scene.responsibility,
    )
    for poly in scene.polygons:
        sim.add_obstacle(poly)
    for poly in scene.boundaries:
        sim.add_boundary(poly)
    if scene.polygons or scene.boundaries:
        sim.process_obstacles()
    sim.set_pref_velocities(scene.pref_velocities)
    return sim


def build_pyrvo(scene, pyrvo_module):
    """Loads a ``Scene`` into RVO2 C++ (``pyrvo``); responsibilities are ignored (RVO2: 0.5).

    Args:
        scene: The ``Scene`` (round it with ``to_float32`` first for like-for-like inputs).
        pyrvo_module: The imported ``pyrvo`` module.

    Returns:
        The ``pyrvo.RVOSimulator``, obstacles processed and preferred velocities set.
    """
    sim = pyrvo_module.RVOSimulator(scene.time_step, 15.0, 10, 10.0, 10.0, 1.5, 2.0)
    for i in range(scene.n):
        sim.add_agent(
            (float(scene.positions[i, 0]), float(scene.positions[i, 1])),
            float(scene.neighbor_dist[i]), int(scene.max_neighbors[i]),
            float(scene.time_horizon[i]), float(scene.time_horizon_obst[i]),
            float(scene.radius[i]), float(scene.max_speed[i]),
            (float(scene.velocities[i, 0]), float(scene.velocities[i, 1])),
        )
        sim.set_agent_pref_velocity(
            i, (float(scene.pref_velocities[i, 0]), float(scene.pref_velocities[i, 1]))
        )
    for poly in scene.polygons:
        sim.add_obstacle([tuple(v) for v in poly])
    for poly in scene.boundaries:
        sim.add_obstacle([tuple(poly[0])] + [tuple(v) for v in poly[:0:-1]])
    if scene.polygons or scene.boundaries:
        sim.process_obstacles()
    return sim


def pyrvo_obstacles(rvo_sim, scene):
    """RVO2's obstacle storage after its BSP build (split vertices appended, convex, same dir).

    Args:
        rvo_sim: A processed ``pyrvo.RVOSimulator`` built by ``build_pyrvo(scene, ...)``.
        scene: The same ``Scene``.

    Returns:
        ``Obstacles`` whose vertex ids are RVO2's.
    """
    ours = scene.obstacles()
    m = len(ours)
    total = rvo_sim.get_num_obstacle_vertices()
    obs = Obstacles.from_arrays(
        [rvo_sim.get_obstacle_vertex(v).to_tuple() for v in range(total)],
        [rvo_sim.get_next_obstacle_vertex(v) for v in range(total)],
        [rvo_sim.get_prev_obstacle_vertex(v) for v in range(total)],
        [ours.convex[v] if v < m else True for v in range(total)],
    )
    obs.unit_dirs[:m] = ours.unit_dirs
    return obs
