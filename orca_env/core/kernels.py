"""ORCA kernels: agent and obstacle ORCA lines, RVO2's three linear programs, the step drivers.

A line is a row ``(point_x, point_y, dir_x, dir_y)`` of a float64 array; ``dir`` is a unit vector
and the permitted half-plane lies to its left (RVO2's ``Line``). Kernels assume valid input: the
``Simulator`` validates everything at the Python layer.

The per-agent work is :func:`agent_new_velocity`, a line-by-line port of RVO2 2.0's
``Agent::computeNeighbors`` and ``Agent::computeNewVelocity`` in float64, with four additions:
per-agent responsibility shares, guards where RVO2 divides by zero (identical positions, a
velocity exactly on a cut-off centre), non-reactive agents, and visibility (agent ``i`` takes
neighbour ``j`` into account, neighbour slot and ORCA line, only if
``avoid_mask[i] & layer[j] != 0``; its share of the pair's avoidance unchanged). Every step
computes all new velocities into a buffer first and applies them afterwards (RVO2's
``doStep``), so results do not depend on agent order or on the number of threads.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit, prange

from .kdtree import AgentTree, query_agent_neighbors
from .obstacles import Obstacles, query_segments

RVO_EPSILON = 1e-5

# Distance (metres) the position correction keeps between an agent's centre and the obstacle
# edge it would otherwise have crossed. Far below any physical scale, far above float64 noise.
CONTACT_MARGIN = 1e-6


# Kernel arguments travel as bundles: named tuples of arrays (AgentParams, StepOutput below;
# ``kdtree.AgentTree`` and ``obstacles.Obstacles`` next to their builders), which numba types by
# their field types and caches like any argument. Two rules keep them free at run time:
# * Python passes them to the kernels it calls as plain tuples in field order (``tuple(bundle)``)
#   and the kernel names them again (``AgentParams(*params)``, no run-time cost): numba's
#   dispatcher types a plain tuple of 7 arrays in ~0.2 us but a named tuple in ~0.7 us, which
#   adds up to ~5 us (a third) of a 20-agent step.
# * A kernel reads the fields it needs into locals once, before its loops, and hands arrays (not
#   bundles) to the helpers it calls per agent or per neighbour: each read of a bundle field
#   costs numba an atomic reference-count increment and decrement, which cost ~15% of the step
#   when done per neighbour.
# One rule keeps the compile small: a kernel hands flags and numbers to another as values
# (``np.bool_(True)``, ``np.int64(0)``, a variable), not as constants: numba types a constant
# argument as a literal and compiles the callee once per value (``orca_env.core.families``).
# The exceptions are deliberate, in the step's hot path: ``_compute_block``'s neighbour search
# (filtered or not), its LP (``direction_opt``) and its loop (``has_obst``), measured faster
# specialised. For the same reason ``agent_lines`` and ``agent_orca_line`` are inlined into
# the loop by numba (``inline="always"``): as calls, LLVM left them out of line, and passing
# their dozen arrays per agent and per neighbour cost a third of the step.
#
# Adding a per-agent parameter touches exactly these places:
#   1. simulator.py: its entry in ``_AGENT_PARAMS`` (dtype, check, message), its default as a
#      ``Simulator.__init__`` keyword (with its docstring line), its ``add_agent`` keyword and a
#      read-only property. Storage, validation, add_agents,
#      set_agent_params and the step's AgentParams bundle all follow from ``_AGENT_PARAMS``.
#   2. AgentParams below: a field of the same name (any position).
#   3. Its use in ``_compute_block`` (or ``apply_velocities``): ``x = params.<name>`` next to the
#      other field reads at the top, then ``x[i]`` in the loop (or ``x`` / ``x[i]`` passed to the
#      helper that needs it).
#   4. The env's step pipeline keeps every field in its per-slot bundle and hands it to
#      ``batch.step_world`` by position (a plain tuple in field order): its field in
#      ``orca_env/stages.py``'s ``Slots`` and its slice in ``run_worlds``'s ``params`` tuple,
#      its array in ``orca_env/pipeline.py``'s ``WorldBatch._alloc`` and its ``bind_storage``
#      argument in ``WorldBatch._bind`` (``Simulator.STORAGE_FIELDS`` follows from
#      ``_AGENT_PARAMS``).
class AgentParams(NamedTuple):
    """Per-agent parameters, (n_agents,) arrays indexed by agent id (see ``Simulator``)."""

    radius: np.ndarray  # float64, metres
    max_speed: np.ndarray  # float64, m/s
    neighbor_dist: np.ndarray  # float64, metres
    max_neighbors: np.ndarray  # int64
    time_horizon: np.ndarray  # float64, seconds
    time_horizon_obst: np.ndarray  # float64, seconds
    responsibility: np.ndarray  # float64, avoidance weight
    layer: np.ndarray  # int64 bit field, the layers the agent belongs to
    avoid_mask: np.ndarray  # int64 bit field, the layers whose agents it avoids


class StepOutput(NamedTuple):
    """Per-step output buffers, (n_agents, ...) arrays indexed by agent id.

    Only the entries of the agents a kernel is given are written (and, by
    :func:`apply_velocities`, the telemetry of inactive agents is zeroed).
    """

    velocity: np.ndarray  # (n, 2) float64, new velocities computed by the step
    n_lines: np.ndarray  # (n,) int64, ORCA lines in each agent's LP
    used_lp3: np.ndarray  # (n,) bool, LP2 was infeasible and LP3 ran
    corrected: np.ndarray  # (n,) bool, the obstacle/boundary correction moved the agent
    intervention: np.ndarray  # (n,) float64, |new velocity - preferred velocity|


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
def det(ax, ay, bx, by):
    """2-D cross product (determinant of the 2x2 matrix with rows a, b)."""
    return ax * by - ay * bx


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
def linear_program1(lines, line_no, radius, opt_x, opt_y, direction_opt, res_x, res_y):
    """RVO2's ``linearProgram1``: optimise on line ``line_no`` subject to lines ``0..line_no-1``.

    Returns:
        (success, result_x, result_y); on failure the result is the one passed in.
    """
    px = lines[line_no, 0]
    py = lines[line_no, 1]
    dx = lines[line_no, 2]
    dy = lines[line_no, 3]
    dot = px * dx + py * dy
    discriminant = dot * dot + radius * radius - (px * px + py * py)
    if discriminant < 0.0:
        # Max speed circle fully invalidates line line_no.
        return False, res_x, res_y
    sqrt_disc = math.sqrt(discriminant)
    t_left = -dot - sqrt_disc
    t_right = -dot + sqrt_disc
    for i in range(line_no):
        denominator = det(dx, dy, lines[i, 2], lines[i, 3])
        numerator = det(lines[i, 2], lines[i, 3], px - lines[i, 0], py - lines[i, 1])
        if abs(denominator) <= RVO_EPSILON:
            # Lines line_no and i are (almost) parallel.
            if numerator < 0.0:
                return False, res_x, res_y
            continue
        t = numerator / denominator
        if denominator >= 0.0:
            # Line i bounds line line_no on the right.
            t_right = min(t_right, t)
        else:
            # Line i bounds line line_no on the left.
            t_left = max(t_left, t)
        if t_left > t_right:
            return False, res_x, res_y
    if direction_opt:
        # Optimise direction: take the extreme along the line closest to the direction.
        if opt_x * dx + opt_y * dy > 0.0:
            return True, px + t_right * dx, py + t_right * dy
        return True, px + t_left * dx, py + t_left * dy
    # Optimise closest point.
    t = dx * (opt_x - px) + dy * (opt_y - py)
    if t < t_left:
        t = t_left
    elif t > t_right:
        t = t_right
    return True, px + t * dx, py + t * dy


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
def linear_program2(lines, n_lines, radius, opt_x, opt_y, direction_opt):
    """RVO2's ``linearProgram2``: closest point to ``opt`` in the speed disc and all half-planes.

    Returns:
        (index of the first line that failed, or ``n_lines`` on success, result_x, result_y).
    """
    if direction_opt:
        # Optimise direction; opt is a unit vector here.
        res_x = opt_x * radius
        res_y = opt_y * radius
    elif opt_x * opt_x + opt_y * opt_y > radius * radius:
        # Optimise closest point, outside the circle.
        norm = math.sqrt(opt_x * opt_x + opt_y * opt_y)
        res_x = opt_x / norm * radius
        res_y = opt_y / norm * radius
    else:
        # Optimise closest point, inside the circle.
        res_x = opt_x
        res_y = opt_y
    for i in range(n_lines):
        if det(lines[i, 2], lines[i, 3], lines[i, 0] - res_x, lines[i, 1] - res_y) > 0.0:
            # Result does not satisfy constraint i: compute a new optimal result on line i.
            ok, new_x, new_y = linear_program1(
                lines, i, radius, opt_x, opt_y, direction_opt, res_x, res_y
            )
            if not ok:
                return i, res_x, res_y
            res_x = new_x
            res_y = new_y
    return n_lines, res_x, res_y


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
def linear_program3(lines, n_lines, num_obst_lines, begin_line, radius, res_x, res_y, proj):
    """RVO2's ``linearProgram3``: minimise the largest violation of the agent lines.

    Obstacle lines (the first ``num_obst_lines``) are never relaxed.

    Args:
        lines: (>= n_lines, 4) ORCA lines.
        n_lines: number of lines.
        num_obst_lines: number of obstacle lines at the front.
        begin_line: the line at which linear_program2 failed.
        radius: maximum speed.
        res_x: current result x.
        res_y: current result y.
        proj: (>= n_lines, 4) scratch.

    Returns:
        (result_x, result_y).
    """
    distance = 0.0
    for i in range(begin_line, n_lines):
        pix = lines[i, 0]
        piy = lines[i, 1]
        dix = lines[i, 2]
        diy = lines[i, 3]
        if det(dix, diy, pix - res_x, piy - res_y) > distance:
            # Result does not satisfy constraint of line i.
            for k in range(num_obst_lines):
                proj[k, 0] = lines[k, 0]
                proj[k, 1] = lines[k, 1]
                proj[k, 2] = lines[k, 2]
                proj[k, 3] = lines[k, 3]
            n_proj = num_obst_lines
            for j in range(num_obst_lines, i):
                pjx = lines[j, 0]
                pjy = lines[j, 1]
                djx = lines[j, 2]
                djy = lines[j, 3]
                determinant = det(dix, diy, djx, djy)
                if abs(determinant) <= RVO_EPSILON:
                    # Line i and line j are parallel.
                    if dix * djx + diy * djy > 0.0:
                        # Line i and line j point in the same direction.
                        continue
                    # Line i and line j point in opposite direction.
                    point_x = 0.5 * (pix + pjx)
                    point_y = 0.5 * (piy + pjy)
                else:
                    f = det(djx, djy, pix - pjx, piy - pjy) / determinant
                    point_x = pix + f * dix
                    point_y = piy + f * diy
                bx = djx - dix
                by = djy - diy
                norm = math.sqrt(bx * bx + by * by)
                proj[n_proj, 0] = point_x
                proj[n_proj, 1] = point_y
                proj[n_proj, 2] = bx / norm
                proj[n_proj, 3] = by / norm
                n_proj += 1
            temp_x = res_x
            temp_y = res_y
            fail, new_x, new_y = linear_program2(proj, n_proj, radius, -diy, dix, True)
            if fail < n_proj:
                # Should in principle not happen: the result is by definition already in the
                # feasible region of this linear program. If it fails, it is due to small
                # floating point error, and the current result is kept.
                res_x = temp_x
                res_y = temp_y
            else:
                res_x = new_x
                res_y = new_y
            distance = det(dix, diy, pix - res_x, piy - res_y)
    return res_x, res_y


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
def _push_line(lines, n, px, py, dx, dy):
    lines[n, 0] = px
    lines[n, 1] = py
    lines[n, 2] = dx
    lines[n, 3] = dy
    return n + 1


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
def obstacle_orca_lines(
    px, py, vx, vy, radius, time_horizon_obst, obst_ids, n_obst, o_points, o_next, o_prev, o_dirs,
    o_convex, lines,
):  # fmt: skip
    """RVO2's obstacle ORCA lines for one agent, appended to ``lines`` from row 0.

    Args:
        px: agent position x.
        py: agent position y.
        vx: agent velocity x.
        vy: agent velocity y.
        radius: agent radius.
        time_horizon_obst: agent obstacle time horizon.
        obst_ids: obstacle neighbours (segment start vertex ids), nearest first.
        n_obst: how many of ``obst_ids`` to use.
        o_points: obstacle storage.
        o_next: obstacle storage.
        o_prev: obstacle storage.
        o_dirs: obstacle storage.
        o_convex: obstacle storage.
        lines: (>= n_obst, 4) output.

    Returns:
        Number of lines written.
    """
    n_lines = np.int64(0)  # not a constant: _push_line compiles once
    inv_tho = 1.0 / time_horizon_obst
    radius_sq = radius * radius
    for k in range(n_obst):
        ob1 = obst_ids[k]
        ob2 = o_next[ob1]
        rp1x = o_points[ob1, 0] - px
        rp1y = o_points[ob1, 1] - py
        rp2x = o_points[ob2, 0] - px
        rp2y = o_points[ob2, 1] - py
        # Check if velocity obstacle of obstacle is already taken care of by previously
        # constructed obstacle ORCA lines.
        already_covered = False
        for j in range(n_lines):
            lpx = lines[j, 0]
            lpy = lines[j, 1]
            ldx = lines[j, 2]
            ldy = lines[j, 3]
            if (
                det(inv_tho * rp1x - lpx, inv_tho * rp1y - lpy, ldx, ldy) - inv_tho * radius
                >= -RVO_EPSILON
                and det(inv_tho * rp2x - lpx, inv_tho * rp2y - lpy, ldx, ldy) - inv_tho * radius
                >= -RVO_EPSILON
            ):
                already_covered = True
                break
        if already_covered:
            continue
        # Not yet covered. Check for collisions.
        dist_sq1 = rp1x * rp1x + rp1y * rp1y
        dist_sq2 = rp2x * rp2x + rp2y * rp2y
        ovx = o_points[ob2, 0] - o_points[ob1, 0]
        ovy = o_points[ob2, 1] - o_points[ob1, 1]
        s = (-rp1x * ovx - rp1y * ovy) / (ovx * ovx + ovy * ovy)
        dist_sq_line = (-rp1x - s * ovx) ** 2 + (-rp1y - s * ovy) ** 2
        if s < 0.0 and dist_sq1 <= radius_sq:
            # Collision with left vertex. Ignore if non-convex.
            if o_convex[ob1]:
                norm = math.sqrt(dist_sq1)
                if norm > 0.0:
                    n_lines = _push_line(lines, n_lines, 0.0, 0.0, -rp1y / norm, rp1x / norm)
            continue
        elif s > 1.0 and dist_sq2 <= radius_sq:
            # Collision with right vertex. Ignore if non-convex or if it will be taken care of
            # by the neighbouring obstacle.
            if o_convex[ob2] and det(rp2x, rp2y, o_dirs[ob2, 0], o_dirs[ob2, 1]) >= 0.0:
                norm = math.sqrt(dist_sq2)
                if norm > 0.0:
                    n_lines = _push_line(lines, n_lines, 0.0, 0.0, -rp2y / norm, rp2x / norm)
            continue
        elif s >= 0.0 and s <= 1.0 and dist_sq_line <= radius_sq:
            # Collision with obstacle segment.
            n_lines = _push_line(lines, n_lines, 0.0, 0.0, -o_dirs[ob1, 0], -o_dirs[ob1, 1])
            continue
        # No collision. Compute legs. When obliquely viewed, both legs can come from a single
        # vertex. Legs extend cut-off line when non-convex vertex.
        if s < 0.0 and dist_sq_line <= radius_sq:
            # Obstacle viewed obliquely so that left vertex defines velocity obstacle.
            if not o_convex[ob1]:
                continue
            ob2 = ob1
            leg1 = math.sqrt(dist_sq1 - radius_sq)
            llx = (rp1x * leg1 - rp1y * radius) / dist_sq1
            lly = (rp1x * radius + rp1y * leg1) / dist_sq1
            rlx = (rp1x * leg1 + rp1y * radius) / dist_sq1
            rly = (-rp1x * radius + rp1y * leg1) / dist_sq1
        elif s > 1.0 and dist_sq_line <= radius_sq:
            # Obstacle viewed obliquely so that right vertex defines velocity obstacle.
            if not o_convex[ob2]:
                continue
            ob1 = ob2
            leg2 = math.sqrt(dist_sq2 - radius_sq)
            llx = (rp2x * leg2 - rp2y * radius) / dist_sq2
            lly = (rp2x * radius + rp2y * leg2) / dist_sq2
            rlx = (rp2x * leg2 + rp2y * radius) / dist_sq2
            rly = (-rp2x * radius + rp2y * leg2) / dist_sq2
        else:
            # Usual situation.
            if o_convex[ob1]:
                leg1 = math.sqrt(dist_sq1 - radius_sq)
                llx = (rp1x * leg1 - rp1y * radius) / dist_sq1
                lly = (rp1x * radius + rp1y * leg1) / dist_sq1
            else:
                # Left vertex non-convex; left leg extends cut-off line.
                llx = -o_dirs[ob1, 0]
                lly = -o_dirs[ob1, 1]
            if o_convex[ob2]:
                leg2 = math.sqrt(dist_sq2 - radius_sq)
                rlx = (rp2x * leg2 + rp2y * radius) / dist_sq2
                rly = (-rp2x * radius + rp2y * leg2) / dist_sq2
            else:
                # Right vertex non-convex; right leg extends cut-off line.
                rlx = o_dirs[ob1, 0]
                rly = o_dirs[ob1, 1]
        # Legs can never point into neighbouring edge when convex vertex, take cut-off line of
        # neighbouring edge instead. If velocity projected on "foreign" leg, no constraint added.
        left_neighbor = o_prev[ob1]
        is_left_foreign = False
        is_right_foreign = False
        if o_convex[ob1] and det(llx, lly, -o_dirs[left_neighbor, 0],
                                 -o_dirs[left_neighbor, 1]) >= 0.0:
            # Left leg points into obstacle.
            llx = -o_dirs[left_neighbor, 0]
            lly = -o_dirs[left_neighbor, 1]
            is_left_foreign = True
        if o_convex[ob2] and det(rlx, rly, o_dirs[ob2, 0], o_dirs[ob2, 1]) <= 0.0:
            # Right leg points into obstacle.
            rlx = o_dirs[ob2, 0]
            rly = o_dirs[ob2, 1]
            is_right_foreign = True
        # Compute cut-off centres.
        lcx = inv_tho * (o_points[ob1, 0] - px)
        lcy = inv_tho * (o_points[ob1, 1] - py)
        rcx = inv_tho * (o_points[ob2, 0] - px)
        rcy = inv_tho * (o_points[ob2, 1] - py)
        cvx = rcx - lcx
        cvy = rcy - lcy
        same = ob1 == ob2
        # Project current velocity on velocity obstacle.
        if same:
            t = 0.5
        else:
            t = ((vx - lcx) * cvx + (vy - lcy) * cvy) / (cvx * cvx + cvy * cvy)
        t_left = (vx - lcx) * llx + (vy - lcy) * lly
        t_right = (vx - rcx) * rlx + (vy - rcy) * rly
        if (t < 0.0 and t_left < 0.0) or (same and t_left < 0.0 and t_right < 0.0):
            # Project on left cut-off circle.
            wx = vx - lcx
            wy = vy - lcy
            norm = math.sqrt(wx * wx + wy * wy)
            if norm == 0.0:
                # Velocity exactly on the cut-off centre (RVO2: NaN); push straight away.
                wx = -rp1x
                wy = -rp1y
                norm = math.sqrt(wx * wx + wy * wy)
            uwx = wx / norm
            uwy = wy / norm
            n_lines = _push_line(
                lines, n_lines, lcx + radius * inv_tho * uwx, lcy + radius * inv_tho * uwy,
                uwy, -uwx
            )
            continue
        elif t > 1.0 and t_right < 0.0:
            # Project on right cut-off circle.
            wx = vx - rcx
            wy = vy - rcy
            norm = math.sqrt(wx * wx + wy * wy)
            if norm == 0.0:
                wx = -rp2x
                wy = -rp2y
                norm = math.sqrt(wx * wx + wy * wy)
            uwx = wx / norm
            uwy = wy / norm
            n_lines = _push_line(
                lines, n_lines, rcx + radius * inv_tho * uwx, rcy + radius * inv_tho * uwy,
                uwy, -uwx
            )
            continue
        # Project on left leg, right leg, or cut-off line, whichever is closest to velocity.
        if t < 0.0 or t > 1.0 or same:
            dist_sq_cutoff = np.inf
        else:
            dist_sq_cutoff = (vx - (lcx + t * cvx)) ** 2 + (vy - (lcy + t * cvy)) ** 2
        if t_left < 0.0:
            dist_sq_left = np.inf
        else:
            dist_sq_left = (vx - (lcx + t_left * llx)) ** 2 + (vy - (lcy + t_left * lly)) ** 2
        if t_right < 0.0:
            dist_sq_right = np.inf
        else:
            dist_sq_right = (vx - (rcx + t_right * rlx)) ** 2 + (vy - (rcy + t_right * rly)) ** 2
        if dist_sq_cutoff <= dist_sq_left and dist_sq_cutoff <= dist_sq_right:
            # Project on cut-off line.
            dx = -o_dirs[ob1, 0]
            dy = -o_dirs[ob1, 1]
            n_lines = _push_line(
                lines, n_lines, lcx + radius * inv_tho * -dy, lcy + radius * inv_tho * dx, dx, dy
            )
        elif dist_sq_left <= dist_sq_right:
            # Project on left leg.
            if is_left_foreign:
                continue
            n_lines = _push_line(
                lines, n_lines, lcx + radius * inv_tho * -lly, lcy + radius * inv_tho * llx,
                llx, lly
            )
        else:
            # Project on right leg.
            if is_right_foreign:
                continue
            dx = -rlx
            dy = -rly
            n_lines = _push_line(
                lines, n_lines, rcx + radius * inv_tho * -dy, rcy + radius * inv_tho * dx, dx, dy
            )
    return n_lines


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy", inline="always")
def agent_orca_line(
    i, j, positions, velocities, radii, responsibilities, time_horizon, time_step
):  # fmt: skip
    """RVO2's ORCA line that neighbour ``j`` imposes on agent ``i``.

    Agent ``i`` takes the share ``w_i / (w_i + w_j)`` of the avoidance (0.5 when both weights are
    0; RVO2 hard-codes 0.5).

    Returns:
        (share, point_x, point_y, dir_x, dir_y). A share of 0 means agent ``i`` yields nothing to
        ``j``, and the caller adds no line.
    """
    wi = responsibilities[i]
    wj = responsibilities[j]
    share = wi / (wi + wj) if wi + wj > 0.0 else 0.5
    rpx = positions[j, 0] - positions[i, 0]
    rpy = positions[j, 1] - positions[i, 1]
    rvx = velocities[i, 0] - velocities[j, 0]
    rvy = velocities[i, 1] - velocities[j, 1]
    dist_sq = rpx * rpx + rpy * rpy
    combined_radius = radii[i] + radii[j]
    combined_radius_sq = combined_radius * combined_radius
    if dist_sq > combined_radius_sq:
        # No collision.
        inv_th = 1.0 / time_horizon
        # Vector from cutoff centre to relative velocity.
        wx = rvx - inv_th * rpx
        wy = rvy - inv_th * rpy
        w_length_sq = wx * wx + wy * wy
        dot1 = wx * rpx + wy * rpy
        if dot1 < 0.0 and dot1 * dot1 > combined_radius_sq * w_length_sq:
            # Project on cut-off circle.
            w_length = math.sqrt(w_length_sq)
            uwx = wx / w_length
            uwy = wy / w_length
            dx = uwy
            dy = -uwx
            f = combined_radius * inv_th - w_length
            ux = f * uwx
            uy = f * uwy
        else:
            # Project on legs.
            leg = math.sqrt(dist_sq - combined_radius_sq)
            if det(rpx, rpy, wx, wy) > 0.0:
                # Project on left leg.
                dx = (rpx * leg - rpy * combined_radius) / dist_sq
                dy = (rpx * combined_radius + rpy * leg) / dist_sq
            else:
                # Project on right leg.
                dx = -(rpx * leg + rpy * combined_radius) / dist_sq
                dy = -(-rpx * combined_radius + rpy * leg) / dist_sq
            dot2 = rvx * dx + rvy * dy
            ux = dot2 * dx - rvx
            uy = dot2 * dy - rvy
    else:
        # Collision. Project on cut-off circle of time time_step.
        inv_dt = 1.0 / time_step
        wx = rvx - inv_dt * rpx
        wy = rvy - inv_dt * rpy
        w_length = math.sqrt(wx * wx + wy * wy)
        if w_length == 0.0:
            # RVO2 divides by zero here. Push i away from j; for identical positions use a
            # fixed axis whose sign depends on the id order, so the pair separates.
            if dist_sq > 0.0:
                d = math.sqrt(dist_sq)
                uwx = -rpx / d
                uwy = -rpy / d
            else:
                uwx = 1.0 if i < j else -1.0
                uwy = 0.0
        else:
            uwx = wx / w_length
            uwy = wy / w_length
        dx = uwy
        dy = -uwx
        f = combined_radius * inv_dt - w_length
        ux = f * uwx
        uy = f * uwy
    return share, velocities[i, 0] + share * ux, velocities[i, 1] + share * uy, dx, dy


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy", inline="always")
def agent_lines(
    i, positions, velocities, radii, max_speeds, time_horizons, time_horizons_obst,
    responsibilities, time_step, nbr_ids, n_nbr, obst_ids, n_obst, o_points, o_next, o_prev,
    o_dirs, o_convex, lines,
):  # fmt: skip
    """All ORCA lines of agent ``i`` (obstacle lines first), written to ``lines``.

    Returns:
        (number of lines, number of obstacle lines).
    """
    n_obst_lines = obstacle_orca_lines(
        positions[i, 0], positions[i, 1], velocities[i, 0], velocities[i, 1], radii[i],
        time_horizons_obst[i], obst_ids, n_obst, o_points, o_next, o_prev, o_dirs, o_convex, lines,
    )  # fmt: skip
    n_lines = n_obst_lines
    for k in range(n_nbr):
        share, px, py, dx, dy = agent_orca_line(
            i, nbr_ids[k], positions, velocities, radii, responsibilities, time_horizons[i],
            time_step,
        )  # fmt: skip
        if share > 0.0:
            n_lines = _push_line(lines, n_lines, px, py, dx, dy)
    return n_lines, n_obst_lines


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
def _compute_block(ids, pos, vel, pref, params, time_step, tree, obst, max_nbr_cap, out,
                   vlines, n_vlines):
    """New velocities of the agents ``ids`` (one thread's share of the work).

    Args:
        ids: (k,) int64 active agent ids to compute.
        pos: (n, 2) float64 positions.
        vel: (n, 2) float64 velocities.
        pref: (n, 2) float64 preferred velocities.
        params: :class:`AgentParams`.
        time_step: seconds.
        tree: :class:`~orca_env.core.kdtree.AgentTree` over the active agents.
        obst: :class:`~orca_env.core.obstacles.Obstacles`.
        max_nbr_cap: >= ``params.max_neighbors[i]`` for every ``i`` in ``ids``.
        out: :class:`StepOutput`; ``velocity``, ``n_lines`` and ``used_lp3`` of ``ids`` written.
        vlines: (n, V, 4) float64 velocity constraints per agent (point x, y, direction x, y;
            the allowed side is left of the direction, as ORCA lines), hard like obstacle
            lines: NH-ORCA's velocities a non-holonomic robot can track
            (:mod:`orca_env.kinematics.nh`). Of shape (0, 0, 4) (or with ``n_vlines`` empty): none,
            RVO2's LP.
        n_vlines: (n,) int64 constraints of each agent in ``vlines`` (empty: none).
    """
    # Scratch sized for the common case. An agent with more obstacle neighbours than
    # ``obst_cap`` makes _compute_range stop before it; the buffers grow and the range resumes
    # at that agent (its query is a pure function of the state, so the results are those of
    # one pass), and the loop over agents never reassigns an array.
    order = tree.order
    layers = params.layer
    nbr_ids = np.empty(max(max_nbr_cap, 1), dtype=np.int64)
    nbr_dsq = np.empty(max(max_nbr_cap, 1), dtype=np.float64)
    stack = np.empty(order.shape[0] + 2, dtype=np.int64)
    # Layer bits every agent in the tree has: an agent whose avoid mask meets them avoids every
    # agent, and its neighbour search skips the per-neighbour layer test (the default case).
    common_layers = np.int64(-1)
    for k in range(order.shape[0]):
        common_layers &= layers[order[k]]
    v_cap = vlines.shape[1]
    obst_cap = 16
    # int64, not the constant 0: numba would type the first call with Literal[int](0) and
    # compile _compute_range twice more (tests/test_compile_families.py).
    start = np.int64(0)
    while start < ids.shape[0]:
        obst_ids = np.empty(obst_cap, dtype=np.int64)
        obst_dsq = np.empty(obst_cap, dtype=np.float64)
        line_cap = obst_cap + max_nbr_cap + 1 + v_cap
        lines = np.empty((line_cap, 4), dtype=np.float64)
        proj = np.empty((line_cap, 4), dtype=np.float64)
        # A constant flag on purpose: without obstacles the loop compiles without the segment
        # query and the obstacle lines (measured 1.6x faster on obstacle-free worlds).
        if obst.seg_order.shape[0] > 0:
            start, n_obst = _compute_range(
                start, ids, pos, vel, pref, params, time_step, tree, obst, out, vlines,
                n_vlines, common_layers, nbr_ids, nbr_dsq, stack, obst_ids, obst_dsq, lines,
                proj, True,
            )  # fmt: skip
        else:
            start, n_obst = _compute_range(
                start, ids, pos, vel, pref, params, time_step, tree, obst, out, vlines,
                n_vlines, common_layers, nbr_ids, nbr_dsq, stack, obst_ids, obst_dsq, lines,
                proj, False,
            )  # fmt: skip
        obst_cap = 2 * n_obst


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
def _compute_range(start, ids, pos, vel, pref, params, time_step, tree, obst, out, vlines,
                   n_vlines, common_layers, nbr_ids, nbr_dsq, stack, obst_ids, obst_dsq, lines,
                   proj, has_obst):
    """:func:`_compute_block`'s loop over ``ids[start:]`` with the scratch it is given.

    ``has_obst`` (a constant at the call site): whether ``obst`` holds segments; if False the
    obstacle query is skipped.

    Returns:
        (``ids.shape[0]``, 0) when done, else (k, n) for the first agent ``ids[k]`` with more
        obstacle neighbours ``n`` than ``obst_ids`` holds (not computed).
    """
    # Bundle fields are read into locals here, once (see the note on bundles at the top).
    radii = params.radius
    max_speeds = params.max_speed
    neighbor_dists = params.neighbor_dist
    max_neighbors = params.max_neighbors
    time_horizons = params.time_horizon
    time_horizons_obst = params.time_horizon_obst
    responsibilities = params.responsibility
    layers = params.layer
    avoid_masks = params.avoid_mask
    order = tree.order
    node_begin = tree.begin
    node_end = tree.end
    node_left = tree.left
    node_right = tree.right
    node_box = tree.box
    o_points = obst.points
    o_next = obst.next_ids
    o_prev = obst.prev_ids
    o_dirs = obst.unit_dirs
    o_convex = obst.convex
    seg_order = obst.seg_order
    seg_boxes = obst.seg_boxes
    out_vel = out.velocity
    out_n_lines = out.n_lines
    out_lp3 = out.used_lp3
    obst_cap = obst_ids.shape[0]
    has_vlines = n_vlines.shape[0] > 0
    for k in range(start, ids.shape[0]):
        i = ids[k]
        x = pos[i, 0]
        y = pos[i, 1]
        n_obst = 0
        if has_obst:
            # Obstacle neighbours: range depends on how far the agent can get within the horizon.
            r = time_horizons_obst[i] * max_speeds[i] + radii[i]
            n_obst = query_segments(
                x, y, r * r, np.bool_(True), np.bool_(False), o_points, o_next, seg_order,
                seg_boxes, obst_ids, obst_dsq,
            )  # fmt: skip
            if n_obst > obst_cap:
                return k, n_obst
        mask = avoid_masks[i]
        # An agent whose mask meets every agent's layers takes the unfiltered search.
        # Constant flags on purpose: the neighbour search compiles apart for each (the
        # unfiltered one skips the layer test), measured faster than one taking a value.
        if (mask & common_layers) != 0:
            n_nbr = query_agent_neighbors(
                i, x, y, neighbor_dists[i] * neighbor_dists[i], max_neighbors[i], pos, order,
                node_begin, node_end, node_left, node_right, node_box, stack, nbr_ids, nbr_dsq,
                False, mask, layers,
            )  # fmt: skip
        else:
            n_nbr = query_agent_neighbors(
                i, x, y, neighbor_dists[i] * neighbor_dists[i], max_neighbors[i], pos, order,
                node_begin, node_end, node_left, node_right, node_box, stack, nbr_ids, nbr_dsq,
                True, mask, layers,
            )  # fmt: skip
        if max_speeds[i] == 0.0:
            # A standing agent: the LP's speed disc is a point.
            out_vel[i, 0] = 0.0
            out_vel[i, 1] = 0.0
            out_n_lines[i] = 0
            out_lp3[i] = False
            continue
        nv = n_vlines[i] if has_vlines else 0
        for c in range(nv):
            for f in range(4):
                lines[c, f] = vlines[i, c, f]
        # The velocity constraints first and hard (counted with the obstacle lines, which LP3
        # never relaxes); the obstacle lines' "already covered" test sees only obstacle lines.
        n_lines, n_obst_lines = agent_lines(
            i, pos, vel, radii, max_speeds, time_horizons, time_horizons_obst, responsibilities,
            time_step, nbr_ids, n_nbr, obst_ids, n_obst, o_points, o_next, o_prev, o_dirs,
            o_convex, lines[nv:],
        )  # fmt: skip
        n_lines += nv
        n_obst_lines += nv
        # A constant flag on purpose: the LPs compile once per direction_opt, the hot path's
        # own specialisation (measured faster than one kernel taking the flag as a value).
        fail, rx, ry = linear_program2(
            lines, n_lines, max_speeds[i], pref[i, 0], pref[i, 1], False
        )
        used_lp3 = fail < n_lines
        if used_lp3:
            rx, ry = linear_program3(
                lines, n_lines, n_obst_lines, fail, max_speeds[i], rx, ry, proj
            )
        # linear_program1's discriminant loses digits when a line is almost tangent to the speed
        # circle, which leaves |result| up to ~1e-8 above max_speed (in RVO2 too): clamp it.
        speed_sq = rx * rx + ry * ry
        if speed_sq > max_speeds[i] * max_speeds[i]:
            f = max_speeds[i] / math.sqrt(speed_sq)
            rx *= f
            ry *= f
        out_vel[i, 0] = rx
        out_vel[i, 1] = ry
        out_n_lines[i] = n_lines
        out_lp3[i] = used_lp3
    return ids.shape[0], 0


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
def compute_velocities_serial(ids, pos, vel, pref, params, time_step, tree, obst, max_nbr_cap, out,
                              vlines, n_vlines):
    """New velocities of all agents ``ids``, on one thread.

    Arguments as :func:`_compute_block`; the bundles may come as plain tuples in field order.
    """
    _compute_block(
        ids, pos, vel, pref, AgentParams(*params), time_step, AgentTree(*tree), Obstacles(*obst),
        max_nbr_cap, StepOutput(*out), vlines, n_vlines,
    )  # fmt: skip


@njit(cache=True, no_cfunc_wrapper=True, parallel=True, error_model="numpy")
def compute_velocities_parallel(
    ids, pos, vel, pref, params, time_step, tree, obst, max_nbr_cap, out, vlines, n_vlines,
    n_blocks,
):  # fmt: skip
    """New velocities of all agents ``ids``, in ``n_blocks`` blocks over numba's threads.

    Arguments as :func:`_compute_block`; the bundles may come as plain tuples in field order. Each
    agent's result depends only on the shared read-only state, so the output is bit-identical to
    :func:`compute_velocities_serial` for any number of threads.
    """
    params = AgentParams(*params)
    tree = AgentTree(*tree)
    obst = Obstacles(*obst)
    out = StepOutput(*out)
    n = ids.shape[0]
    for b in prange(n_blocks):
        lo = b * n // n_blocks
        hi = (b + 1) * n // n_blocks
        _compute_block(
            ids[lo:hi], pos, vel, pref, params, time_step, tree, obst, max_nbr_cap, out, vlines,
            n_vlines,
        )


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
def apply_velocities(ids, active, pos, vel, pref, time_step, obst, out):
    """Move agents ``ids`` by ``out.velocity * time_step``, never across an obstacle or boundary.

    ORCA's obstacle lines keep agents out of obstacles only while the LP is feasible; when LP3
    runs, or agents push each other, a centre could cross an edge. The correction here finds the
    first edge the straight move would cross from its outside (right side) to its inside, stops
    the agent ``CONTACT_MARGIN`` short of it on the outside, and sets its velocity to the
    displacement actually made divided by the time step. Agents that start outside every obstacle
    and inside the boundary therefore stay there.

    Also records the telemetry ``out.intervention`` (|new velocity - preferred velocity|) and
    ``out.corrected`` of the agents ``ids`` and zeroes all telemetry of inactive agents.

    Args:
        ids: (k,) int64 active agent ids.
        active: (n,) bool.
        pos: (n, 2) float64 positions, updated in place.
        vel: (n, 2) float64 velocities, updated in place.
        pref: (n, 2) float64 preferred velocities.
        time_step: seconds.
        obst: :class:`~orca_env.core.obstacles.Obstacles` (or a plain tuple in field order).
        out: :class:`StepOutput` (or a plain tuple in field order); ``velocity`` holds the new
            velocities of ``ids``.
    """
    obst = Obstacles(*obst)
    out = StepOutput(*out)
    new_vel = out.velocity
    out_corrected = out.corrected
    out_intervention = out.intervention
    out_n_lines = out.n_lines
    out_lp3 = out.used_lp3
    o_points = obst.points
    o_next = obst.next_ids
    seg_order = obst.seg_order
    seg_boxes = obst.seg_boxes
    for i in range(active.shape[0]):
        # Inactive agents report no step. The bool flags are stored unconditionally: with numba
        # 0.68 / llvmlite 0.50 the vectorised conditional store of bools also clears flags of
        # active agents (8 of every 32), a miscompilation.
        keep = active[i]
        out_corrected[i] = out_corrected[i] and keep
        out_lp3[i] = out_lp3[i] and keep
        if not keep:
            out_intervention[i] = 0.0
            out_n_lines[i] = 0
    # The moves, in a loop specialised for worlds with and without obstacles (as
    # _compute_block's); an agent with more segments in reach than the buffers hold makes the
    # range stop before it, and it resumes with larger buffers.
    cap = 16
    start = np.int64(0)  # not the constant 0 (see _compute_block)
    while start < ids.shape[0]:
        seg_ids = np.empty(cap, dtype=np.int64)
        seg_dsq = np.empty(cap, dtype=np.float64)
        if seg_order.shape[0] > 0:
            start, n = _apply_range(start, ids, pos, vel, pref, time_step, o_points, o_next,
                                    seg_order, seg_boxes, new_vel, out_corrected,
                                    out_intervention, seg_ids, seg_dsq, True)
        else:
            start, n = _apply_range(start, ids, pos, vel, pref, time_step, o_points, o_next,
                                    seg_order, seg_boxes, new_vel, out_corrected,
                                    out_intervention, seg_ids, seg_dsq, False)
        cap = 2 * n


@njit(cache=True, no_cfunc_wrapper=True, error_model="numpy")
def _apply_range(start, ids, pos, vel, pref, time_step, o_points, o_next, seg_order, seg_boxes,
                 new_vel, out_corrected, out_intervention, seg_ids, seg_dsq, has_obst):
    """:func:`apply_velocities`' moves of ``ids[start:]`` (``has_obst``: a constant flag).

    Returns:
        (``ids.shape[0]``, 0) when done, else (k, n) for the first agent ``ids[k]`` with more
        segments in reach ``n`` than ``seg_ids`` holds (not moved).
    """
    cap = seg_ids.shape[0]
    for k in range(start, ids.shape[0]):
        i = ids[k]
        sx = pos[i, 0]
        sy = pos[i, 1]
        out_intervention[i] = math.hypot(new_vel[i, 0] - pref[i, 0], new_vel[i, 1] - pref[i, 1])
        dx = new_vel[i, 0] * time_step
        dy = new_vel[i, 1] * time_step
        out_corrected[i] = False
        t_stop = 1.0
        if has_obst and (dx != 0.0 or dy != 0.0):
            reach_sq = dx * dx + dy * dy
            n = query_segments(
                sx, sy, reach_sq, np.bool_(False), np.bool_(True), o_points, o_next, seg_order,
                seg_boxes, seg_ids, seg_dsq,
            )  # fmt: skip
            if n > cap:
                return k, n
            for q in range(n):
                s = seg_ids[q]
                e = o_next[s]
                ax = o_points[s, 0]
                ay = o_points[s, 1]
                ex = o_points[e, 0] - ax
                ey = o_points[e, 1] - ay
                # Signed side (leftOf) of start and end: < 0 is the outside.
                s0 = (ax - sx) * ey - (ay - sy) * ex
                s1 = (ax - sx - dx) * ey - (ay - sy - dy) * ex
                if not ((s0 < 0.0 and s1 >= 0.0) or (s0 == 0.0 and s1 > 0.0)):
                    continue
                t = s0 / (s0 - s1)
                # Does the move cross the edge itself, not just its line?
                cx = sx + t * dx - ax
                cy = sy + t * dy - ay
                u = (cx * ex + cy * ey) / (ex * ex + ey * ey)
                if u < -1e-12 or u > 1.0 + 1e-12:
                    continue
                # Stop CONTACT_MARGIN short of the edge line (or stay, if already that close).
                h0 = -s0 / math.sqrt(ex * ex + ey * ey)
                t_safe = t * (1.0 - CONTACT_MARGIN / h0) if h0 > CONTACT_MARGIN else 0.0
                if t_safe < t_stop:
                    t_stop = t_safe
        if t_stop < 1.0:
            out_corrected[i] = True
            dx *= t_stop
            dy *= t_stop
            vel[i, 0] = dx / time_step
            vel[i, 1] = dy / time_step
        else:
            vel[i, 0] = new_vel[i, 0]
            vel[i, 1] = new_vel[i, 1]
        pos[i, 0] = sx + dx
        pos[i, 1] = sy + dy
    return ids.shape[0], 0
