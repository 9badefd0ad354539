"""Reward terms and the swept-disc collision checks (numba).

The terms and their default weights are documented on :class:`orca_env.config.RewardConfig`.
Collisions are checked along the segment each agent travelled during the step, not only at its
end: two agents collide when the distance between them, both moving linearly from their old to
their new positions, drops below the sum of their radii (minus ``collision_tolerance``) at some
time of the step; an agent collides with an obstacle when the segment it travelled comes within
its radius (minus the tolerance) of an obstacle or boundary segment.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["TERMS", "term_dicts", "agent_collisions", "obstacle_collisions", "step_kernel_pref",
           "step_kernel_goals", "step_kernel_rewards"]

#: Reward terms, in the order of the ``(k, len(TERMS))`` term matrix.
TERMS = ("progress", "goal", "collision", "deadlock", "intervention", "time", "discomfort")


def term_dicts(rows: list) -> list[dict]:
    """One ``{term: weighted value}`` dict per row of the ``(k, len(TERMS))`` term matrix.

    Written as a literal (keys in ``TERMS`` order, checked by the tests): building ``infos`` is
    the env's largest per-agent Python cost, and a literal is twice as fast as ``dict(zip())``.
    """
    return [{"progress": r[0], "goal": r[1], "collision": r[2], "deadlock": r[3],
             "intervention": r[4], "time": r[5], "discomfort": r[6]} for r in rows]


@njit(cache=True)
def _sweep_dist_sq(ax, ay, bx, by):
    """Squared distance from the origin to the segment a -> b."""
    ex = bx - ax
    ey = by - ay
    ee = ex * ex + ey * ey
    t = 0.0
    if ee > 0.0:
        t = -(ax * ex + ay * ey) / ee
        t = min(1.0, max(0.0, t))
    x = ax + t * ex
    y = ay + t * ey
    return x * x + y * y


@njit(cache=True)
def agent_collisions(check, p0, p1, radii, active, tol, hit):
    """Swept-disc agent-agent collisions of the agents ``check`` against all active agents.

    A uniform grid over the new positions (cell = twice the largest radius plus twice the largest
    displacement, so every pair that can touch during the step sits in neighbouring cells) keeps
    this O(n).

    Args:
        check: (k,) int64 ids to test.
        p0: (n, 2) float64 positions before the step, metres, world frame.
        p1: (n, 2) float64 positions after the step, metres, world frame.
        radii: (n,) float64 radii, metres.
        active: (n,) bool, agents present during the step.
        tol: Tolerated overlap (m).
        hit: (k,) bool output.
    """
    n = p1.shape[0]
    max_r = 0.0
    max_d = 0.0
    na = 0
    x0 = np.inf
    y0 = np.inf
    x1 = -np.inf
    y1 = -np.inf
    for i in range(n):
        if not active[i]:
            continue
        na += 1
        max_r = max(max_r, radii[i])
        max_d = max(max_d, np.hypot(p1[i, 0] - p0[i, 0], p1[i, 1] - p0[i, 1]))
        x0 = min(x0, p1[i, 0])
        y0 = min(y0, p1[i, 1])
        x1 = max(x1, p1[i, 0])
        y1 = max(y1, p1[i, 1])
    for r in range(check.shape[0]):
        hit[r] = False
    if na < 2:
        return
    cell = 2.0 * max_r + 2.0 * max_d + 1e-9
    nx = int((x1 - x0) / cell) + 1
    ny = int((y1 - y0) / cell) + 1
    while nx * ny > 4 * na + 64:
        cell *= 2.0
        nx = int((x1 - x0) / cell) + 1
        ny = int((y1 - y0) / cell) + 1
    # Counting sort of the active agents by cell.
    key = np.full(n, -1, dtype=np.int64)
    start = np.zeros(nx * ny + 1, dtype=np.int64)
    for i in range(n):
        if active[i]:
            cx = int((p1[i, 0] - x0) / cell)
            cy = int((p1[i, 1] - y0) / cell)
            key[i] = cx * ny + cy
            start[key[i] + 1] += 1
    for c in range(nx * ny):
        start[c + 1] += start[c]
    fill = start[:-1].copy()
    order = np.empty(na, dtype=np.int64)
    for i in range(n):
        if key[i] >= 0:
            order[fill[key[i]]] = i
            fill[key[i]] += 1
    for r in range(check.shape[0]):
        i = check[r]
        cx = int((p1[i, 0] - x0) / cell)
        cy = int((p1[i, 1] - y0) / cell)
        found = False
        for gx in range(max(cx - 1, 0), min(cx + 2, nx)):
            for gy in range(max(cy - 1, 0), min(cy + 2, ny)):
                c = gx * ny + gy
                for q in range(start[c], start[c + 1]):
                    j = order[q]
                    if j == i:
                        continue
                    lim = radii[i] + radii[j] - tol
                    if lim <= 0.0:
                        continue
                    # Relative motion is linear within the step.
                    d_sq = _sweep_dist_sq(p0[i, 0] - p0[j, 0], p0[i, 1] - p0[j, 1],
                                          p1[i, 0] - p1[j, 0], p1[i, 1] - p1[j, 1])
                    if d_sq < lim * lim:
                        found = True
                        break
                if found:
                    break
            if found:
                break
        hit[r] = found


@njit(cache=True)
def _point_seg_dist_sq(px, py, ax, ay, bx, by):
    return _sweep_dist_sq(ax - px, ay - py, bx - px, by - py)


@njit(cache=True)
def _seg_seg_dist_sq(ax, ay, bx, by, cx, cy, dx, dy):
    """Squared distance between segments a-b and c-d (0 when they cross)."""
    d1 = (dx - cx) * (ay - cy) - (dy - cy) * (ax - cx)
    d2 = (dx - cx) * (by - cy) - (dy - cy) * (bx - cx)
    d3 = (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)
    d4 = (bx - ax) * (dy - ay) - (by - ay) * (dx - ax)
    if ((d1 > 0.0 and d2 < 0.0) or (d1 < 0.0 and d2 > 0.0)) and \
            ((d3 > 0.0 and d4 < 0.0) or (d3 < 0.0 and d4 > 0.0)):
        return 0.0
    best = _point_seg_dist_sq(ax, ay, cx, cy, dx, dy)
    best = min(best, _point_seg_dist_sq(bx, by, cx, cy, dx, dy))
    best = min(best, _point_seg_dist_sq(cx, cy, ax, ay, bx, by))
    best = min(best, _point_seg_dist_sq(dx, dy, ax, ay, bx, by))
    return best


@njit(cache=True)
def obstacle_collisions(check, p0, p1, radii, points, next_ids, tol, hit):
    """Swept-disc collisions of the agents ``check`` with every obstacle/boundary segment.

    Brute force over segments (maps here have tens to hundreds of segments), with a bounding-box
    reject.
    """
    m = points.shape[0]
    for r in range(check.shape[0]):
        i = check[r]
        lim = radii[i] - tol
        hit[r] = False
        if lim <= 0.0 or m == 0:
            continue
        ax = p0[i, 0]
        ay = p0[i, 1]
        bx = p1[i, 0]
        by = p1[i, 1]
        lo_x = min(ax, bx) - lim
        hi_x = max(ax, bx) + lim
        lo_y = min(ay, by) - lim
        hi_y = max(ay, by) + lim
        for s in range(m):
            t = next_ids[s]
            cx = points[s, 0]
            cy = points[s, 1]
            dx = points[t, 0]
            dy = points[t, 1]
            if min(cx, dx) > hi_x or max(cx, dx) < lo_x or min(cy, dy) > hi_y \
                    or max(cy, dy) < lo_y:
                continue
            if _seg_seg_dist_sq(ax, ay, bx, by, cx, cy, dx, dy) < lim * lim:
                hit[r] = True
                break


@njit(cache=True)
def step_kernel_pref(pos0, targets, pref_speed, max_speed, noise_ang, noise_mag, live, act,
                     world_frame, out):
    """Preferred velocities of every slot for one env step.

    Scripted slots steer to their target at ``pref_speed`` (the goal vector, shortened when
    longer) plus RVO2's noise; learned slots take their action, rotated from the goal-aligned
    frame when ``world_frame`` is False, times their max speed.

    Args:
        pos0: (n, 2) float64 positions, m.
        targets: (n, 2) float64 goals or waypoints, m.
        pref_speed: (n,) float64, m/s.
        max_speed: (n,) float64, m/s.
        noise_ang: (n,) float64 noise angles, rad (empty: no noise).
        noise_mag: (n,) float64 noise magnitudes, m/s (empty: no noise).
        live: (L,) int64 slots of the live learned agents.
        act: (L, 2) float64 actions, norm <= 1.
        world_frame: actions are in the world frame.
        out: (n, 2) float64 output, m/s.
    """
    n = pos0.shape[0]
    noisy = noise_ang.shape[0] == n
    for i in range(n):
        tx = targets[i, 0] - pos0[i, 0]
        ty = targets[i, 1] - pos0[i, 1]
        d = np.sqrt(tx * tx + ty * ty)
        s = min(1.0, pref_speed[i] / max(d, 1e-12))
        out[i, 0] = tx * s
        out[i, 1] = ty * s
        if noisy:
            out[i, 0] += noise_mag[i] * np.cos(noise_ang[i])
            out[i, 1] += noise_mag[i] * np.sin(noise_ang[i])
    for k in range(live.shape[0]):
        i = live[k]
        ax = act[k, 0]
        ay = act[k, 1]
        if not world_frame:
            gx = targets[i, 0] - pos0[i, 0]
            gy = targets[i, 1] - pos0[i, 1]
            d = np.sqrt(gx * gx + gy * gy)
            ex = 1.0
            ey = 0.0
            if d > 1e-12:
                ex = gx / d
                ey = gy / d
            ax, ay = ax * ex - ay * ey, ax * ey + ay * ex
        out[i, 0] = ax * max_speed[i]
        out[i, 1] = ay * max_speed[i]


@njit(cache=True)
def step_kernel_goals(pos, vel, active, parked, goals, goal_tol, max_speed, speed_fraction,
                      window, stall, at_goal, moving, stalled):
    """Goal arrival and stall counters of every slot after a step.

    Args:
        pos: (n, 2) float64 positions, m.
        vel: (n, 2) float64 velocities, m/s.
        active: (n,) bool, in the simulation.
        parked: (n,) bool, parked at its goal.
        goals: (n, 2) float64, m.
        goal_tol: (n,) float64 goal tolerance, m.
        max_speed: (n,) float64, m/s.
        speed_fraction: an agent is slow below this fraction of its max speed.
        window: steps of slowness that make a stall.
        stall: (n,) int64 consecutive slow steps, updated in place.
        at_goal: (n,) bool output: moving and within ``goal_tol`` of the goal.
        moving: (n,) bool output: active and not parked.
        stalled: (n,) bool output: ``stall >= window``.
    """
    for i in range(pos.shape[0]):
        mv = active[i] and not parked[i]
        gx = goals[i, 0] - pos[i, 0]
        gy = goals[i, 1] - pos[i, 1]
        ag = mv and np.sqrt(gx * gx + gy * gy) <= goal_tol[i]
        speed = np.sqrt(vel[i, 0] * vel[i, 0] + vel[i, 1] * vel[i, 1])
        if mv and not ag and speed < speed_fraction * max_speed[i]:
            stall[i] += 1
        else:
            stall[i] = 0
        moving[i] = mv
        at_goal[i] = ag
        stalled[i] = stall[i] >= window


@njit(cache=True)
def step_kernel_rewards(live, d_prev, path_len, d0, reached, collided, stalled, intervention,
                        max_speed, time_step, sep_agents, discomfort_dist, weights, weighted,
                        reward):
    """Weighted reward terms (order of ``TERMS``) and rewards of the live agents.

    Args:
        live: (L,) int64 slots.
        d_prev: (n,) float64 remaining distance at the previous step, m; updated in place.
        path_len: (n,) float64 remaining distance now, m.
        d0: (n,) float64 initial distance, m.
        reached: (L,) bool, the agent succeeded this step (reached its goal, no collision that
            ends its episode).
        collided: (L,) bool.
        stalled: (n,) bool.
        intervention: (n,) float64 |safe - preferred velocity|, m/s.
        max_speed: (n,) float64, m/s.
        time_step: s.
        sep_agents: (L,) float64 clearance to the nearest agent, m.
        discomfort_dist: m.
        weights: (len(TERMS),) float64.
        weighted: (L, len(TERMS)) float64 output.
        reward: (L,) float64 output.
    """
    for k in range(live.shape[0]):
        i = live[k]
        raw0 = (d_prev[i] - path_len[i]) / d0[i]
        d_prev[i] = path_len[i]
        sep = sep_agents[k]
        raw6 = (discomfort_dist - sep) * time_step if sep < discomfort_dist else 0.0
        raws = (raw0, 1.0 if reached[k] else 0.0, 1.0 if collided[k] else 0.0,
                1.0 if stalled[i] else 0.0, intervention[i] / max_speed[i], time_step, raw6)
        total = 0.0
        for t in range(7):
            w = raws[t] * weights[t] + 0.0  # + 0.0 turns -0.0 into 0.0
            weighted[k, t] = w
            total += w
        reward[k] = total


@njit(cache=True)
def step_kernel_outcomes(live, reached, crash, stalled, moving, at_goal, crowd, on_goal,
                         timed_out, end_episode, term, trunc, status, leave, parked, slot_status,
                         renew):
    """Terminations, truncations, statuses and goal behaviours after a step.

    Status codes index ``orca_env.codes.STATUSES`` (0 active, 1 at_goal, 2 collided,
    3 deadlocked, 4 timed_out); goal behaviours are 0 stop, 1 stay, 2 new_goal.

    Args:
        live: (L,) int64 slots of the live learned agents.
        reached: (L,) bool, succeeded this step.
        crash: (L,) bool, a collision ended the agent's episode this step.
        stalled: (n,) bool.
        moving: (n,) bool, active and not parked.
        at_goal: (n,) bool.
        crowd: (n,) bool, scripted slot.
        on_goal: (n,) int64 goal behaviour.
        timed_out: the step limit is reached.
        end_episode: stalls of every remaining agent end the episode.
        term: (L,) bool output.
        trunc: (L,) bool output.
        status: (L,) int64 output.
        leave: (n,) bool output: leaves the simulation now.
        parked: (n,) bool, updated in place.
        slot_status: (n,) int8, updated in place.
        renew: (n,) bool output: crowd slots that need a new goal.

    Returns:
        Whether the whole episode is deadlocked (every remaining agent stalled).
    """
    n = stalled.shape[0]
    n_live = live.shape[0]
    for i in range(n):
        leave[i] = False
        renew[i] = False
    for k in range(n_live):
        term[k] = reached[k] or crash[k]
    deadlock = False
    if end_episode:
        # Remaining: still heading for a goal and not ending now; all of them stalled?
        ended = np.zeros(n, dtype=np.bool_)
        for k in range(n_live):
            if term[k]:
                ended[live[k]] = True
        any_remaining = False
        all_stalled = True
        for i in range(n):
            if moving[i] and not at_goal[i] and not ended[i]:
                any_remaining = True
                if not stalled[i]:
                    all_stalled = False
        deadlock = any_remaining and all_stalled
    for k in range(n_live):
        i = live[k]
        s = 3 if stalled[i] else 0
        trunc[k] = False
        if (timed_out or deadlock) and not term[k]:
            trunc[k] = True
            s = 4 if timed_out and not deadlock else 3
        if reached[k]:
            s = 1
        if crash[k]:
            s = 2
        status[k] = s
        slot_status[i] = s
        if (reached[k] and on_goal[i] == 0) or crash[k]:
            leave[i] = True
        if reached[k] and on_goal[i] == 1:
            parked[i] = True
    for i in range(n):
        if not crowd[i]:
            continue
        if moving[i]:
            slot_status[i] = 3 if stalled[i] else 0
        if at_goal[i]:
            if on_goal[i] == 0:
                leave[i] = True
            elif on_goal[i] == 1:
                parked[i] = True
            else:
                renew[i] = True
            if on_goal[i] != 2:
                slot_status[i] = 1
    return deadlock


@njit(cache=True)
def step_kernel_actions(act):
    """Check actions and bring them into the action set, in place.

    Each row is clipped to the box [-1, 1]^2, then scaled down to norm 1 when longer.

    Args:
        act: (L, 2) float64 actions, modified in place.

    Returns:
        (index of the first row with NaN or inf, or -1 (then nothing was modified);
        whether any value was outside the box).
    """
    for k in range(act.shape[0]):
        if not (np.isfinite(act[k, 0]) and np.isfinite(act[k, 1])):
            return k, False
    clipped = False
    for k in range(act.shape[0]):
        for c in range(2):
            if act[k, c] > 1.0:
                act[k, c] = 1.0
                clipped = True
            elif act[k, c] < -1.0:
                act[k, c] = -1.0
                clipped = True
        norm = np.sqrt(act[k, 0] * act[k, 0] + act[k, 1] * act[k, 1])
        if norm > 1.0:
            act[k, 0] /= norm
            act[k, 1] /= norm
    return -1, clipped
