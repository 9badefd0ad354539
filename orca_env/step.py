"""The env's step logic (numba): actions, preferred velocities, goals and stalls, outcomes.

The envs check actions with :func:`clip_actions`; then one world's step in the pipeline
(:mod:`orca_env.stages`) calls :func:`preferred_velocities` (what every slot asks ORCA for), the
core's step, the swept collision checks (:mod:`orca_env.collisions`), :func:`goals_and_stalls`,
the reward terms (:mod:`orca_env.rewards`) and :func:`outcomes` (terminations, truncations,
statuses, goal behaviours). Kernels take flat arrays indexed by slot (the simulator's agent id)
and never validate: the envs and :mod:`orca_env.pipeline` do.

Codes are those of :mod:`orca_env.codes` (``Status``, ``GoalBehavior``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .codes import GoalBehavior, Status
from .frames import frame_axis
from .kinematics import command

__all__ = ["clip_actions", "masked_actions", "goal_velocity", "goal_velocities",
           "preferred_velocities", "goals_and_stalls", "outcomes"]

_ACTIVE = int(Status.ACTIVE)
_AT_GOAL = int(Status.AT_GOAL)
_COLLIDED = int(Status.COLLIDED)
_DEADLOCKED = int(Status.DEADLOCKED)
_TIMED_OUT = int(Status.TIMED_OUT)
_STOP = int(GoalBehavior.STOP)
_STAY = int(GoalBehavior.STAY)
_NEW_GOAL = int(GoalBehavior.NEW_GOAL)


@njit(cache=True, no_cfunc_wrapper=True, inline="always")
def _clip_row(x, y, norm):
    """One action brought into the action set: (x, y, whether a value was outside the box)."""
    cx = min(max(x, -1.0), 1.0)  # NaN-free input (checked first): the box
    cy = min(max(y, -1.0), 1.0)
    clipped = cx != x or cy != y
    if norm:
        length = np.sqrt(cx * cx + cy * cy)
        if length > 1.0:
            cx /= length
            cy /= length
    return cx, cy, clipped


@njit(cache=True, no_cfunc_wrapper=True)
def clip_actions(act, norm=True):
    """Check actions and bring them into the action set, in place.

    Each row is clipped to the box [-1, 1]^2, then (holonomic actions, ``norm``) scaled down to
    norm 1 when longer; the non-holonomic models' actions are two independent controls.

    Args:
        act: (L, 2) float64 actions, modified in place.
        norm: also clip the norm to 1.

    Returns:
        (index of the first row with NaN or inf, or -1 (then nothing was modified);
        whether any value was outside the box).
    """
    return masked_actions(act, np.ones(act.shape[0], dtype=np.bool_), norm, act)


@njit(cache=True, no_cfunc_wrapper=True)
def masked_actions(raw, alive, norm, out):
    """:func:`clip_actions` of ``raw`` into ``out``, with the rows of agents not alive zero.

    One pass for the vector env's actions (a copy, a mask and the clip cost three).

    Args:
        raw: (R, 2) float64 actions, not modified.
        alive: (R,) bool rows whose action is read (the others may hold anything).
        norm: also clip the norm to 1.
        out: (R, 2) float64, written.

    Returns:
        (index of the first alive row with NaN or inf, or -1 (then ``out`` is written);
        whether any value of an alive row was outside the box).
    """
    for k in range(raw.shape[0]):
        if alive[k] and not (np.isfinite(raw[k, 0]) and np.isfinite(raw[k, 1])):
            return k, False
    clipped = False
    for k in range(raw.shape[0]):
        if alive[k]:
            out[k, 0], out[k, 1], c = _clip_row(raw[k, 0], raw[k, 1], norm)
            clipped |= c
        else:
            out[k, 0] = 0.0
            out[k, 1] = 0.0
    return -1, clipped


@njit(cache=True, no_cfunc_wrapper=True, inline="always")
def goal_velocity(px, py, tx, ty, pref_speed):
    """The vector from ``(px, py)`` to the target ``(tx, ty)``, shortened to ``pref_speed``.

    RVO2's examples' preferred velocity: the goal-directed steering of scripted agents, the
    base of residual actions and :meth:`OrcaEnv.heuristic_actions`.
    """
    gx = tx - px
    gy = ty - py
    d = np.sqrt(gx * gx + gy * gy)
    s = min(1.0, pref_speed / max(d, 1e-12))
    return gx * s, gy * s


@njit(cache=True, no_cfunc_wrapper=True)
def goal_velocities(slots, pos, targets, pref_speed, out):
    """:func:`goal_velocity` of the agents ``slots`` into ``out`` ((k, 2) float64, m/s)."""
    for q in range(slots.shape[0]):
        i = slots[q]
        out[q, 0], out[q, 1] = goal_velocity(pos[i, 0], pos[i, 1], targets[i, 0],
                                             targets[i, 1], pref_speed[i])


@njit(cache=True, no_cfunc_wrapper=True)
def preferred_velocities(pos0, targets, pref_speed, max_speed, noise_ang, noise_mag, noisy,
                         external, kin, live, act, act_rows, world_frame, residual, heading, kp,
                         dt, cmd, out):
    """Preferred velocities of every slot for one env step.

    Scripted slots steer to their target (:func:`goal_velocity`) plus RVO2's noise; slots
    whose behaviour steers in Python (``external``) keep what it wrote; learned slots turn
    their action, in their observation frame (:mod:`orca_env.frames`), into a preferred
    velocity through their motion model (:func:`orca_env.kinematics.command`; for residual
    actions on top of the goal-directed velocity).

    Args:
        pos0: (n, 2) float64 positions, m.
        targets: (n, 2) float64 goals or waypoints, m.
        pref_speed: (n,) float64, m/s.
        max_speed: (n,) float64, m/s.
        noise_ang: (n,) float64 noise angles, rad (read when ``noisy``).
        noise_mag: (n,) float64 noise magnitudes, m/s (read when ``noisy``).
        noisy: whether to add the noise.
        external: (n,) bool, preferred velocity already set by its behaviour.
        kin: (n,) int64 kinematics codes.
        live: (L,) int64 slots of the live learned agents.
        act: (R, A) float64 actions, norm <= 1.
        act_rows: (L,) int64 the row of ``act`` of each live agent.
        world_frame: actions are in the world frame.
        residual: actions are residuals on the goal-directed preferred velocity.
        heading: (n,) float64 headings, rad (non-holonomic models' actions are relative to it).
        kp: (n, KIN_PARAMS) float64 motion-model parameters.
        dt: the time step, s.
        cmd: (n, 2) float64 output: commanded (v, omega) of non-holonomic learned slots.
        out: (n, 2) float64 output, m/s.
    """
    n = pos0.shape[0]
    for i in range(n):
        if external[i]:
            continue
        out[i, 0], out[i, 1] = goal_velocity(pos0[i, 0], pos0[i, 1], targets[i, 0],
                                             targets[i, 1], pref_speed[i])
        if noisy:
            out[i, 0] += noise_mag[i] * np.cos(noise_ang[i])
            out[i, 1] += noise_mag[i] * np.sin(noise_ang[i])
    for k in range(live.shape[0]):
        i = live[k]
        ex, ey = frame_axis(targets[i, 0] - pos0[i, 0], targets[i, 1] - pos0[i, 1], world_frame)
        r = act_rows[k]
        out[i, 0], out[i, 1] = command(kin[i], i, act[r, 0], act[r, 1], ex, ey, out[i, 0],
                                       out[i, 1], max_speed[i], residual, heading, kp, dt, cmd)


@njit(cache=True, no_cfunc_wrapper=True)
def goals_and_stalls(pos, vel, active, parked, goals, goal_tol, max_speed, speed_fraction,
                     window, stall, at_goal, moving, stalled, dist):
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
        dist: (n,) float64 output: straight-line distance to the goal, m.
    """
    for i in range(pos.shape[0]):
        mv = active[i] and not parked[i]
        gx = goals[i, 0] - pos[i, 0]
        gy = goals[i, 1] - pos[i, 1]
        dist[i] = np.sqrt(gx * gx + gy * gy)
        ag = mv and dist[i] <= goal_tol[i]
        speed = np.sqrt(vel[i, 0] * vel[i, 0] + vel[i, 1] * vel[i, 1])
        if mv and not ag and speed < speed_fraction * max_speed[i]:
            stall[i] += 1
        else:
            stall[i] = 0
        moving[i] = mv
        at_goal[i] = ag
        stalled[i] = stall[i] >= window


@njit(cache=True, no_cfunc_wrapper=True)
def outcomes(live, reached, crash, stalled, moving, at_goal, crowd, on_goal, timed_out,
             end_episode, term, trunc, status, leave, parked, slot_status, renew):
    """Terminations, truncations, statuses and goal behaviours after a step.

    Args:
        live: (L,) int64 slots of the live learned agents.
        reached: (L,) bool, succeeded this step.
        crash: (L,) bool, a collision ended the agent's episode this step.
        stalled: (n,) bool.
        moving: (n,) bool, active and not parked.
        at_goal: (n,) bool.
        crowd: (n,) bool, scripted slot.
        on_goal: (n,) int64 ``GoalBehavior`` code.
        timed_out: the step limit is reached.
        end_episode: stalls of every remaining agent end the episode.
        term: (L,) bool output.
        trunc: (L,) bool output.
        status: (L,) int64 output, ``Status`` code.
        leave: (n,) bool output: leaves the simulation now.
        parked: (n,) bool, updated in place.
        slot_status: (n,) int8 ``Status`` code per slot, updated in place.
        renew: (n,) bool output: crowd slots that need a new goal.
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
        s = _DEADLOCKED if stalled[i] else _ACTIVE
        trunc[k] = False
        if (timed_out or deadlock) and not term[k]:
            trunc[k] = True
            s = _TIMED_OUT if timed_out and not deadlock else _DEADLOCKED
        if reached[k]:
            s = _AT_GOAL
        if crash[k]:
            s = _COLLIDED
        status[k] = s
        slot_status[i] = s
        if (reached[k] and on_goal[i] == _STOP) or crash[k]:
            leave[i] = True
        if reached[k] and on_goal[i] == _STAY:
            parked[i] = True
    for i in range(n):
        if not crowd[i]:
            continue
        if moving[i]:
            slot_status[i] = _DEADLOCKED if stalled[i] else _ACTIVE
        if at_goal[i]:
            if on_goal[i] == _STOP:
                leave[i] = True
            elif on_goal[i] == _STAY:
                parked[i] = True
            else:
                renew[i] = True
            if on_goal[i] != _NEW_GOAL:
                slot_status[i] = _AT_GOAL
