"""Social-navigation metrics of the learned agents: how they treat the humans around them.

*Humans* are the non-learned agents (every population but ``learned``: ORCA, linear,
non-reactive and any later behaviour); other learned agents do not count, so a policy is judged
on the people around it, not on its peers. The metrics (definitions, formulas and sources in
``docs/evaluation.md`` and :data:`~orca_env.evaluation.metrics.SOCIAL_METRICS`):

* clearance to the nearest human, surface to surface (distance minus both radii):
  ``min_distance_to_humans`` (its minimum over the episode), ``discomfort_frequency`` (CrowdNav:
  the fraction of the agents' steps with a clearance below 0.2 m at some moment of the step)
  and ``personal_space_intrusion`` (HuNavSim: the fraction of time, sampled at the end of each
  step, with a clearance below the personal-space radius);
* ``min_time_to_collision``: the constant-velocity time until the agent's disc touches a
  human's, at the end of each step, minimised over the episode;
* the path and motion (SocNavBench): ``path_length_ratio``, ``path_irregularity``,
  ``mean_acceleration``, ``peak_acceleration``, ``mean_jerk`` and ``peak_jerk``, from the
  positions at the end of each step (velocities are displacements over the time step, as
  SocNavBench's ``robot_velocity``, so every kinematics model is measured alike).

:class:`SocialRecorder` takes the positions and active flags of every slot after the reset and
after each step (a copy into a preallocated buffer: nothing is computed per step in Python);
the crowd terms run in one numba kernel over chunks of :data:`CHUNK` steps, so memory stays
bounded on long episodes of large crowds, and the learned agents' path terms are vectorised
over the episode's recorded arrays at its end. :func:`social_metrics` does the same from whole
recorded arrays. A human counts while it is active; one that appears during a step counts at
the end of that step only, standing (its velocity before it appeared is unknown).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..core import families

__all__ = ["DISCOMFORT_DISTANCE", "PERSONAL_SPACE", "CHUNK", "SocialRecorder", "social_metrics",
           "check_personal_space", "time_to_collision"]

#: CrowdNav's discomfort distance, m: clearance below it is a discomfort step.
DISCOMFORT_DISTANCE = 0.2
#: Default personal-space radius of ``personal_space_intrusion``, m of clearance.
PERSONAL_SPACE = 0.5
#: Steps of positions buffered before the crowd kernel runs over them.
CHUNK = 128
#: Displacements shorter than this (m) have no direction: path irregularity skips the step.
_MIN_STEP = 1e-9


def check_personal_space(value: object, arg: str = "personal_space") -> float:
    """The personal-space radius as a float, or a ``ValueError`` naming ``arg`` and the value.

    Args:
        value: The radius, m of clearance (surface to surface); finite and >= 0.
        arg: The argument's name in the message (``--personal-space`` on the command line).

    Raises:
        ValueError: If ``value`` is not a finite number >= 0.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not math.isfinite(float(value)) or float(value) < 0.0:
        raise ValueError(f"{arg} must be a finite number of metres >= 0 (clearance to a human, "
                         f"surface to surface), got {value!r}")
    return float(value)


def time_to_collision(rel_pos: np.ndarray, rel_vel: np.ndarray, radius: float) -> float:
    """Constant-velocity time to collision of two discs (plain Python, the reference).

    Args:
        rel_pos: ``(2,)`` position of the other disc relative to this one, m.
        rel_vel: ``(2,)`` velocity of the other disc relative to this one, m/s.
        radius: Sum of the two radii, m.

    Returns:
        The smallest ``tau >= 0`` with ``|rel_pos + tau * rel_vel| = radius``, s: ``0`` when
        the discs overlap already, ``inf`` when they never touch at these velocities.
    """
    return float(_ttc(float(rel_pos[0]), float(rel_pos[1]), float(rel_vel[0]),
                      float(rel_vel[1]), float(radius)))


@njit(cache=True, no_cfunc_wrapper=True)
def _ttc(x, y, wx, wy, r):
    c = x * x + y * y - r * r
    if c <= 0.0:
        return 0.0  # Overlapping: the collision is now.
    b = x * wx + y * wy
    if b >= 0.0:
        return np.inf  # Not approaching.
    a = wx * wx + wy * wy
    disc = b * b - a * c
    if disc < 0.0:
        return np.inf  # Approaching, but the closest approach misses.
    return c / (-b + math.sqrt(disc))  # (-b - sqrt(disc)) / a, stable for small a.


@njit(cache=True, no_cfunc_wrapper=True)
def _crowd_kernel(pos, act, n_steps, slots, live, humans, radii, inv_dt, discomfort,
                  personal_space, min_sw, min_ttc, is_present, is_discomfort, is_intrusion,
                  scratch):
    """Clearance and time to collision of each live learned agent to the humans, over a chunk.

    Row ``t`` of ``pos`` / ``act`` is the state after step ``t`` of the chunk (row 0: before
    its first step); row ``t - 1`` of ``live`` and of the flag outputs is step ``t``. Pairs
    that cannot change a result are skipped by bounds (a human further than the best so far
    plus both displacements of the step; for the time to collision, further than the
    episode's best time at the largest relative speed the two displacements allow), so the
    results are those of every pair, checked against a plain-Python reference in the tests.
    Kernels do not validate (see :class:`SocialRecorder`).

    Args:
        pos: (C + 1, n, 2) float64 positions, m, world frame.
        act: (C + 1, n) bool active flags.
        n_steps: Steps held (rows 1 .. n_steps).
        slots: (L,) int64 slot of each learned agent.
        live: (C, L) bool, the agent acted in the step.
        humans: (H,) int64 slots of the humans.
        radii: (n,) float64 radii, m.
        inv_dt: 1 / time step, 1/s.
        discomfort: Discomfort distance, m of clearance.
        personal_space: Personal-space radius, m of clearance.
        min_sw: (L,) float64 in/out: smallest clearance so far, swept along each step (the
            discs moving linearly from the step's start to its end), m; inf before any human.
        min_ttc: (L,) float64 in/out: smallest time to collision so far, at the end of each
            step, velocities as the step's displacement / time step, s.
        is_present: (C, L) bool output: some human was active at the end of the step.
        is_discomfort: (C, L) bool output: the swept clearance fell below ``discomfort``.
        is_intrusion: (C, L) bool output: the clearance at the end was below
            ``personal_space``.
        scratch: (n,) float64 work array (the humans' displacement lengths).
    """
    for t in range(1, n_steps + 1):
        for j in humans:
            # A human who entered during the step has no displacement (see below).
            scratch[j] = 0.0
            if act[t, j] and act[t - 1, j]:
                scratch[j] = math.hypot(pos[t, j, 0] - pos[t - 1, j, 0],
                                        pos[t, j, 1] - pos[t - 1, j, 1])
        for k in range(slots.size):
            is_present[t - 1, k] = False
            is_discomfort[t - 1, k] = False
            is_intrusion[t - 1, k] = False
            if not live[t - 1, k]:
                continue
            i = slots[k]
            ax0, ay0 = pos[t - 1, i, 0], pos[t - 1, i, 1]
            ax1, ay1 = pos[t, i, 0], pos[t, i, 1]
            e_i = math.hypot(ax1 - ax0, ay1 - ay0)
            # Only a clearance below both the discomfort distance and the best so far matters.
            best_sw = max(discomfort, min_sw[k])
            best_ttc = min_ttc[k]
            present, intrusion = False, False
            for j in humans:
                if not act[t, j]:
                    continue
                present = True
                r = radii[i] + radii[j]
                hx1, hy1 = pos[t, j, 0], pos[t, j, 1]
                x1, y1 = hx1 - ax1, hy1 - ay1
                q1 = x1 * x1 + y1 * y1
                lim = personal_space + r
                if q1 < lim * lim:
                    intrusion = True
                reach = best_sw + r + e_i + scratch[j]
                near = reach > 0.0 and q1 < reach * reach
                far_ttc = best_ttc < np.inf
                if far_ttc:
                    reach = r + (e_i + scratch[j]) * inv_dt * best_ttc
                    far_ttc = q1 >= reach * reach
                if not near and far_ttc:
                    continue
                entered = not act[t - 1, j]
                if entered:
                    # A human who appeared during the step was not there before its end, and
                    # stands (its velocity is unknown).
                    hx0, hy0 = hx1 + ax0 - ax1, hy1 + ay0 - ay1
                else:
                    hx0, hy0 = pos[t - 1, j, 0], pos[t - 1, j, 1]
                x0, y0 = hx0 - ax0, hy0 - ay0
                ex, ey = x1 - x0, y1 - y0
                dot1 = x1 * ex + y1 * ey
                if near:
                    # Closest point of the relative segment (start -> end) to the origin.
                    q0 = x0 * x0 + y0 * y0
                    dot0 = x0 * ex + y0 * ey
                    if entered:
                        qs = q1  # Only the end of the step.
                    elif dot0 >= 0.0:
                        qs = q0  # Moving apart from the start on: the start is closest.
                    elif dot1 <= 0.0:
                        qs = q1  # Still approaching at the end: the end is closest.
                    else:
                        qs = max(0.0, q0 - dot0 * dot0 / (ex * ex + ey * ey))
                    d = math.sqrt(qs) - r
                    if d < best_sw:
                        best_sw = d
                # Only an approaching or touching human has a finite time to collision.
                if not far_ttc and (dot1 < 0.0 or q1 <= r * r):
                    tau = _ttc(x1, y1, ex * inv_dt, ey * inv_dt, r)
                    if tau < best_ttc:
                        best_ttc = tau
            is_present[t - 1, k] = present
            is_intrusion[t - 1, k] = intrusion
            is_discomfort[t - 1, k] = best_sw < discomfort
            if best_sw < min_sw[k]:
                min_sw[k] = best_sw
            min_ttc[k] = best_ttc


class SocialRecorder:
    """Collects what the social metrics need during an episode; :meth:`metrics` at its end.

    Args:
        positions: ``(n, 2)`` float64 positions of every slot after the reset, m, world frame.
        active: ``(n,)`` bool active flags of every slot after the reset.
        populations: ``(n,)`` int population code of every slot; humans are the slots whose
            code is not ``learned_code``.
        radii: ``(n,)`` float64 radius of every slot this episode, m.
        learned_slots: ``(L,)`` int slot of each learned agent (``agent_k`` is slot
            ``learned_slots[k]``).
        time_step: Seconds per step (> 0).
        learned_code: The population code of learned agents.
        personal_space: Radius of ``personal_space_intrusion``, m of clearance (finite, >= 0).
        chunk: Steps buffered before the crowd kernel runs.

    Raises:
        ValueError: On a bad ``personal_space`` (naming it and the value).
    """

    def __init__(self, positions: np.ndarray, active: np.ndarray, populations: np.ndarray,
                 radii: np.ndarray, learned_slots: np.ndarray, time_step: float, *,
                 learned_code: int, personal_space: float = PERSONAL_SPACE,
                 chunk: int = CHUNK) -> None:
        self.personal_space = check_personal_space(personal_space)
        families.ensure("metrics")  # compiles the kernels below if not cached, saying so
        pos = np.asarray(positions, dtype=np.float64)
        n = pos.shape[0]
        self.dt = float(time_step)
        self.slots = np.asarray(learned_slots, dtype=np.int64)
        self.humans = np.flatnonzero(np.asarray(populations) != learned_code).astype(np.int64)
        self.radii = np.array(radii, dtype=np.float64)
        n_l = self.slots.size
        self._chunk = int(chunk)
        self._pos = np.empty((self._chunk + 1, n, 2))
        self._act = np.zeros((self._chunk + 1, n), dtype=bool)
        self._live = np.zeros((self._chunk, n_l), dtype=bool)
        self._pos[0] = pos
        self._act[0] = active
        self._held = 0
        # Running crowd terms per learned agent.
        self._min_sw = np.full(n_l, np.inf)
        self._min_ttc = np.full(n_l, np.inf)
        self._n_discomfort = np.zeros(n_l, dtype=np.int64)
        self._n_intrusion = np.zeros(n_l, dtype=np.int64)
        self._n_with_humans = 0
        # The learned agents' own trajectory, for the path terms (small: L per step).
        self._traj = [pos[self.slots].copy()]
        self._lives: list[np.ndarray] = []
        self._flags = np.zeros((3, self._chunk, n_l), dtype=bool)
        self._scratch = np.zeros(n)

    def add(self, positions: np.ndarray, active: np.ndarray, live: np.ndarray) -> None:
        """Record the state after a step.

        Args:
            positions: ``(n, 2)`` float64 positions of every slot, m, world frame.
            active: ``(n,)`` bool active flags.
            live: ``(L,)`` bool, learned agent ``k`` acted in this step.
        """
        t = self._held + 1
        self._pos[t] = positions
        self._act[t] = active
        self._live[t - 1] = live
        self._held = t
        self._traj.append(self._pos[t, self.slots])  # fancy indexing: a copy
        self._lives.append(self._live[t - 1].copy())
        if t == self._chunk:
            self._flush()

    def _flush(self) -> None:
        c = self._held
        if c == 0:
            return
        if self.humans.size and self.slots.size:
            present, discomfort, intrusion = self._flags
            _crowd_kernel(self._pos, self._act, c, self.slots, self._live, self.humans,
                          self.radii, 1.0 / self.dt, DISCOMFORT_DISTANCE, self.personal_space,
                          self._min_sw, self._min_ttc, present, discomfort, intrusion,
                          self._scratch)
            self._n_discomfort += discomfort[:c].sum(axis=0)
            self._n_intrusion += intrusion[:c].sum(axis=0)
            # Agent-steps with some human present (a clearance was measured).
            self._n_with_humans += int(present[:c].sum())
        self._pos[0] = self._pos[c]
        self._act[0] = self._act[c]
        self._held = 0

    def metrics(self, success: np.ndarray, goals: np.ndarray) -> dict:
        """The episode's social metrics (the keys of ``SOCIAL_METRICS``; ``None`` if undefined).

        Args:
            success: ``(L,)`` bool, learned agent ``k`` reached its goal.
            goals: ``(L, 2)`` float64 goal of each learned agent (at the episode's end), m.

        Returns:
            ``{metric: value}``; see :func:`social_metrics`.
        """
        self._flush()
        traj = np.asarray(self._traj)
        live = np.asarray(self._lives, dtype=bool).reshape(-1, self.slots.size)
        out = _path_terms(traj, live, np.asarray(success, dtype=bool),
                          np.asarray(goals, dtype=np.float64), self.dt)
        n_live = int(live.sum())
        if self._n_with_humans == 0 or n_live == 0:
            crowd = dict.fromkeys(("min_distance_to_humans", "discomfort_frequency",
                                   "personal_space_intrusion", "min_time_to_collision"))
        else:
            ttc = float(self._min_ttc.min())
            crowd = {
                "min_distance_to_humans": float(self._min_sw.min()),
                "discomfort_frequency": int(self._n_discomfort.sum()) / n_live,
                "personal_space_intrusion": int(self._n_intrusion.sum()) / n_live,
                # JSON has no infinity: never on a collision course is None (see the docs).
                "min_time_to_collision": ttc if math.isfinite(ttc) else None,
            }
        return {**crowd, **out}


def _path_terms(traj: np.ndarray, live: np.ndarray, success: np.ndarray, goals: np.ndarray,
                dt: float) -> dict:
    """Path length ratio, path irregularity, acceleration and jerk, vectorised over the episode.

    Args:
        traj: ``(T + 1, L, 2)`` float64 learned positions after the reset and each step, m.
        live: ``(T, L)`` bool, agent ``k`` acted in step ``t + 1``.
        success: ``(L,)`` bool.
        goals: ``(L, 2)`` float64 goals, m.
        dt: Time step, s.
    """
    disp = np.diff(traj, axis=0)  # (T, L, 2): step t + 1's displacement
    step_len = np.hypot(disp[..., 0], disp[..., 1])
    out: dict = {}
    # Path length over the straight start-goal distance, successful agents.
    ok = np.flatnonzero(success)
    if ok.size:
        travelled = np.where(live, step_len, 0.0).sum(axis=0)[ok]
        straight = np.hypot(*(goals[ok] - traj[0, ok]).T)
        out["path_length_ratio"] = math.fsum(travelled / np.maximum(straight, 1e-9)) / ok.size
    else:
        out["path_length_ratio"] = None
    # Angle between each step's displacement and the direction to the goal from its start.
    to_goal = goals[None, :, :] - traj[:-1]
    goal_len = np.hypot(to_goal[..., 0], to_goal[..., 1])
    moving = live & (step_len > _MIN_STEP) & (goal_len > _MIN_STEP)
    if moving.any():
        cos = (disp[..., 0] * to_goal[..., 0] + disp[..., 1] * to_goal[..., 1])[moving] \
            / (step_len[moving] * goal_len[moving])
        out["path_irregularity"] = float(np.arccos(np.clip(cos, -1.0, 1.0)).mean())
    else:
        out["path_irregularity"] = None
    # Finite differences of the velocity (displacement / dt); both steps must be the agent's.
    vel = disp / dt
    acc = np.diff(vel, axis=0) / dt  # (T - 1, L, 2), between steps t and t + 1
    acc_ok = live[1:] & live[:-1]
    jerk = np.diff(acc, axis=0) / dt
    jerk_ok = acc_ok[1:] & acc_ok[:-1]
    for name, arr, mask in (("acceleration", acc, acc_ok), ("jerk", jerk, jerk_ok)):
        mag = np.hypot(arr[..., 0], arr[..., 1])[mask]
        out[f"mean_{name}"] = float(mag.mean()) if mag.size else None
        out[f"peak_{name}"] = float(mag.max()) if mag.size else None
    return out


def social_metrics(positions: np.ndarray, active: np.ndarray, live: np.ndarray,
                   populations: np.ndarray, radii: np.ndarray, learned_slots: np.ndarray,
                   success: np.ndarray, goals: np.ndarray, time_step: float, *,
                   learned_code: int, personal_space: float = PERSONAL_SPACE) -> dict:
    """The social metrics of a recorded episode (what :class:`SocialRecorder` computes).

    Args:
        positions: ``(T + 1, n, 2)`` float64 positions of every slot after the reset and after
            each of the ``T`` steps, m, world frame.
        active: ``(T + 1, n)`` bool active flags, the same rows.
        live: ``(T, L)`` bool, learned agent ``k`` acted in step ``t + 1``.
        populations: ``(n,)`` int population codes.
        radii: ``(n,)`` float64 radii, m.
        learned_slots: ``(L,)`` int slot of each learned agent.
        success: ``(L,)`` bool, the agent reached its goal.
        goals: ``(L, 2)`` float64 goals, m, world frame.
        time_step: Seconds per step.
        learned_code: The population code of learned agents.
        personal_space: Radius of ``personal_space_intrusion``, m of clearance.

    Returns:
        ``{metric: value}`` with the keys of ``SOCIAL_METRICS``: ``None`` where undefined (the
        crowd terms without any human present during the agents' steps, ``path_length_ratio``
        without a success, the motion terms of too short episodes, ``min_time_to_collision``
        when no agent was ever on a collision course with a human, i.e. infinite).

    Raises:
        ValueError: On a bad ``personal_space``.
    """
    pos = np.asarray(positions, dtype=np.float64)
    act = np.asarray(active, dtype=bool)
    lv = np.asarray(live, dtype=bool)
    rec = SocialRecorder(pos[0], act[0], populations, radii, learned_slots, time_step,
                         learned_code=learned_code, personal_space=personal_space)
    for t in range(1, pos.shape[0]):
        rec.add(pos[t], act[t], lv[t - 1])
    return rec.metrics(success, goals)


def _metric_kernels() -> list:
    """The crowd metrics' kernels with the argument types :class:`SocialRecorder` passes."""
    from numba import types as nt  # noqa: PLC0415

    f8, i8 = nt.float64, nt.int64
    F1, F3 = nt.Array(f8, 1, "C"), nt.Array(f8, 3, "C")
    I1, B2 = nt.Array(i8, 1, "C"), nt.Array(nt.boolean, 2, "C")
    return [(_crowd_kernel, (F3, B2, i8, I1, B2, I1, F1, f8, f8, f8, F1, F1, B2, B2, B2, F1)),
            (_ttc, (f8, f8, f8, f8, f8))]


families.register_family("metrics", "the evaluation's crowd metrics (clearance, time to "
                         "collision)", 1.0, _metric_kernels)
