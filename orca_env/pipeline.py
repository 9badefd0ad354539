"""The step pipeline: one implementation of the env step, for one world or many.

:class:`WorldBatch` holds ``B`` worlds as concatenated per-slot arrays (world ``b`` owns slots
``offsets[b]:offsets[b + 1]``; worlds may differ in size, as a mixture's do) and ``B * L``
agent rows (row ``b * L + k`` is ``agent_k`` of world ``b``). ``OrcaEnv`` is a one-world batch,
``OrcaVectorEnv`` a B-world one: both step through :meth:`WorldBatch.step`, so every world is
bit-identical to a single env with its seed.

One step, in stages (:mod:`orca_env.stages` holds the per-world numba composition):

1. *behaviours in Python*: slots whose behaviour has a ``steer`` function get their preferred
   velocity from it (one call per behaviour over every world); crowd noise is drawn from each
   world's generator;
2. *phase A* (numba, all worlds): actions -> preferred velocities (kinematics) -> ORCA -> motion
   (kinematics) -> swept collisions -> goals and stalls;
3. *Python between the phases*, only where configured: roadmap guidance (a call per guided
   world) and the scenarios' reward-term and observation-feature hooks (one call per scenario
   over all its worlds' rows);
4. *phase B* (numba, all worlds): proximity (one neighbour query shared by observations and
   rewards) -> observations -> progress and rewards -> outcomes;
5. *Python*: new goals for crowd agents that reached theirs (the scenario's ``new_goals``).

Without guidance and hooks, phases A and B run in one numba call. Each world's ``Simulator``
is bound to its slice of the arrays (``Simulator.bind_storage``), so ``sim.positions`` and the
core's queries see the pipeline's state.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from .behaviours import REGISTRY as BEHAVIOURS
from .codes import GoalBehavior
from .kinematics import POLYGON
from .kinematics.base import KIN_PARAMS
from .rewards import TERMS
from .stages import (
    BOTH,
    OBSERVE,
    PHASE_A,
    PHASE_B,
    Rows,
    Settings,
    Slots,
    Spec,
    StepResult,
    Work,
    WorldEpisode,
    await_job,
    await_workers,
    concat_obstacles,
    hand_off,
    run_worlds,
    run_worlds_entry,
)

__all__ = ["WorldBatch", "WorldEpisode", "StepResult"]

#: Per-slot float64 arrays of the batch (besides positions and the core's own).
_SLOT_F8 = ("radius", "max_speed", "pref_speed", "goal_tol", "path_len", "d0", "d_prev",
            "noise")
_SLOT_2D = ("goals", "targets", "starts")
_SLOT_TABLE_I8 = ("population", "kinematics", "on_goal", "group")
_SLOT_TABLE_B = ("safe", "crowd", "external_steer")
#: Each ``Simulator.STORAGE_FIELDS`` name (but the clock): the slot array that holds it.
_SIM_STORAGE = {"pos": "pos", "vel": "vel", "pref": "pref", "radius": "orca_radius",
                "max_speed": "orca_max_speed", "neighbor_dist": "neighbor_dist",
                "max_neighbors": "max_neighbors", "time_horizon": "time_horizon",
                "time_horizon_obst": "time_horizon_obst", "responsibility": "responsibility",
                "layer": "layer", "avoid_mask": "avoid_mask", "active": "active",
                "n_lines": "n_lines", "lp3": "lp3", "intervention": "intervention",
                "corrected": "corrected", "kd_order": "kd"}
_STOP, _STAY = int(GoalBehavior.STOP), int(GoalBehavior.STAY)
#: A multi-threaded kernel call's chunk of worlds is 1/(CHUNK_SHARE * threads) of the worlds
#: not yet claimed (guided self-scheduling: chunks shrink to one world at the end, so the threads
#: finish together; fixed chunks of 1/16 left one thread idle for half a chunk on average).
CHUNK_SHARE = 2
# Spins are counted in atomic reads of a line no other core writes: about 5 ns each on a 2-core
# Xeon VM (measured), more where another core writes it.
#: Atomic reads the Python thread spins for the pool's threads at the end of a kernel call
#: (about 0.5-2 ms; then it sleeps until they are done).
_JOIN_SPINS = 100_000
#: Atomic reads the Python thread spins for the pool's spinning threads to enter the kernel
#: (about 0.3-0.5 ms; measured at 256 worlds of 16: a spinning worker enters in 16 us median,
#: 21 us p90, 90 us at most, so a budget of 10,000 reads, 35 us, called a third of them late).
_START_SPINS = 100_000
#: The same for threads that were not all spinning (one asleep, or on its way, takes 50-100 us
#: to wake up here: this thread then does its share without side work).
_WAKE_SPINS = 10_000
#: Atomic reads a pool thread spins for the next job before it sleeps (about 2-5 ms: the
#: Python between two kernel calls takes 0.1-0.5 ms in the env's step, more where a policy
#: runs between the steps).
_IDLE_SPINS = 400_000
#: Calls the pool's threads sleep right after their job once a spinning one came late (its
#: core was busy with other work: spinning would take the core from that work and from this
#: process's Python thread); then they try spinning again.
_BUSY_CALLS = 64
#: Settings fields, per world: (name, dtype).
_SETTINGS = (("time_step", np.float64), ("last_step", np.int64), ("timeout_first", np.bool_),
             ("crowdnav_collisions", np.bool_), ("tol", np.float64), ("tol_rel", np.float64),
             ("terminate", np.bool_), ("speed_fraction", np.float64), ("window", np.int64),
             ("end_episode", np.bool_), ("range_sq", np.float64), ("obs_range", np.float64),
             ("discomfort", np.float64), ("world_frame", np.bool_), ("residual", np.bool_),
             ("noisy", np.bool_), ("straight", np.bool_), ("nonholonomic", np.bool_),
             ("lidar_range", np.float64), ("lidar_noise", np.float64), ("lidar_fov", np.float64),
             ("nbr_cos", np.float64), ("occlusion", np.bool_))


class Workers:
    """The threads that step worlds beside the Python thread (``num_threads - 1`` of them).

    Each job is one :func:`~orca_env.stages.run_worlds` call that every worker makes with the
    Python thread (they share its worlds through its ``claim``). Between jobs a worker spins
    without the GIL for :data:`_IDLE_SPINS` reads of the control array, then sleeps on a
    condition: a job published while it spins starts in microseconds, where waking a sleeping
    thread costs 50-100 us a call on a VM (a pool of futures paid that twice per call: the
    submit's wake-up and the thread's). A worker that spins but comes late has no free core;
    the workers then do not spin for a while (:meth:`_adapt`). The Python thread publishes a
    job and waits, itself without the GIL, until the workers entered the call
    (:func:`~orca_env.stages.hand_off`), and at the end until they are back waiting
    (:func:`~orca_env.stages.await_workers`), so that neither side's Python waits for the GIL
    the other holds. A worker that raised hands its error to the Python thread, which raises
    it after the call.
    """

    def __init__(self, count: int) -> None:
        self.count = int(count)
        #: [last job published, the workers' spin budget (reads), last job done per worker,
        #: spin flag per worker] (:func:`~orca_env.stages.hand_off`)
        self.ctrl = np.zeros(2 + 2 * self.count, dtype=np.int64)
        self.ctrl[1] = _IDLE_SPINS
        self._busy = 0  # calls left with the spin budget at 0
        self._job: tuple = (0, None, ())
        self._cv = threading.Condition()
        self._sleeping = 0
        self._waiting = False
        self._errors: list[BaseException] = []
        self._start()

    def _start(self) -> None:
        self._pid = os.getpid()
        start = int(self.ctrl[0])
        self._threads = [threading.Thread(target=self._run, args=(k, start), daemon=True,
                                          name=f"orca-env-worker-{k}")
                         for k in range(self.count)]
        for t in self._threads:
            t.start()

    def _run(self, k: int, done: int) -> None:
        while True:
            if not await_job(self.ctrl, k, done, int(self.ctrl[1])):
                with self._cv:
                    self._sleeping += 1
                    while self.ctrl[0] <= done:
                        self._cv.wait()
                    self._sleeping -= 1
            job, fn, args = self._job  # stored before ctrl[0] was raised to its number
            if fn is None:
                self.ctrl[2 + k] = job
                return
            try:
                fn(*args)
            except BaseException as e:  # noqa: BLE001 (raised on the Python thread)
                self._errors.append(e)
            done = job
            if self._waiting:
                with self._cv:
                    self.ctrl[2 + k] = done
                    self._cv.notify_all()

    def run(self, fn: Any, args: tuple, claim: np.ndarray, main: Any) -> None:
        """``fn(*args)`` on every worker and ``main(entered)`` (this thread's share) beside them.

        ``claim`` is the call's claim array (its ``claim[2]`` counts the threads in the call);
        ``entered``: whether the workers were in the call before ``main`` started.
        Returns once every worker is done; raises what a worker raised.
        """
        if self._pid != os.getpid():  # a forked child: the parent's threads are not here
            self.ctrl[2:2 + self.count] = self.ctrl[0]
            self.ctrl[2 + self.count:] = 0
            self._cv, self._sleeping, self._waiting = threading.Condition(), 0, False
            self._start()
        job = self._job[0] + 1
        self._job = (job, fn, args)
        asleep = self._sleeping
        if asleep:
            with self._cv:
                self.ctrl[0] = job
                self._cv.notify_all()
        came = hand_off(self.ctrl, job, claim, self.count, _START_SPINS, _WAKE_SPINS)
        entered = came == 1
        if not entered:  # a worker asleep (or a lost wake-up): wake them
            with self._cv:
                self._cv.notify_all()
        # Late only if every worker was spinning (a worker that had given up, asleep or not
        # yet, needs a wake-up: it says nothing about the cores).
        self._adapt(came != 0)
        try:
            main(entered)
        finally:
            self._join(job)
            # Every worker is done with it: the call's arrays are not held past the call (no
            # worker reads the job again before the next one replaces it).
            self._job = (job, _no_job, ())
        if self._errors:
            raise self._errors.pop(0)

    def _adapt(self, on_time: bool) -> None:
        """The workers' spin budget after a hand-off (``on_time``: no spinning worker was late).

        A worker that spins but comes late had no core: other work holds one, and spinning
        costs more than it saves (measured at 64 and 256 worlds with one other job: two threads
        0.65x one thread with the spins, 0.9-1.2x without). The workers then sleep right after
        each job for :data:`_BUSY_CALLS` calls, and try spinning again.
        """
        if self.ctrl[1] == 0:
            self._busy -= 1
            if self._busy <= 0:
                self.ctrl[1] = _IDLE_SPINS
        elif not on_time:
            self.ctrl[1] = 0
            self._busy = _BUSY_CALLS

    def _join(self, job: int) -> None:
        if await_workers(self.ctrl, job, _JOIN_SPINS):
            return
        with self._cv:  # a worker no core runs soon (a loaded machine): sleep until it is done
            self._waiting = True
            try:
                while not await_workers(self.ctrl, job, 1):
                    self._cv.notify_all()
                    self._cv.wait(0.01)
            finally:
                self._waiting = False

    def close(self) -> None:
        """Stop the threads (each finishes its job first)."""
        job = self._job[0] + 1
        self._job = (job, None, ())
        with self._cv:
            self.ctrl[0] = job
            self._cv.notify_all()
        for t in self._threads:
            t.join(timeout=5.0)


def _no_job() -> None:
    """What :attr:`Workers._job` holds between calls."""


def _workers(batch: WorldBatch, count: int) -> Workers:
    """A pool for ``batch``, closed when the batch is collected (its threads hold the pool)."""
    pool = Workers(count)
    weakref.finalize(batch, pool.close)
    return pool


class WorldBatch:
    """``B`` worlds stepped by one pipeline; see the module docstring.

    Args:
        num_worlds: B >= 1.
        num_learned: L, learned agents per world (the same in every world).
        obs_size, low, high: the observation size and its bounds (the same in every world).
        spec: dict of the observation layout shared by every world: ``kk``, ``mm`` (agents
            and segments observed), ``universal``, ``time_obs``, ``extra_obs`` (count), and
            optionally ``heading_obs`` (heading features), ``beams`` (LiDAR beams) and
            ``stall_obs`` (the stall-time feature).
        num_terms: reward terms per row (built-in plus the scenario's).
        num_threads: threads stepping blocks of worlds (results do not depend on it).
    """

    def __init__(self, num_worlds: int, num_learned: int, obs_size: int, low: np.ndarray,
                 high: np.ndarray, spec: dict, num_terms: int, num_threads: int = 1) -> None:
        B, L = int(num_worlds), int(num_learned)
        self.num_worlds, self.num_learned, self.obs_size = B, L, int(obs_size)
        self.num_terms = int(num_terms)
        self._spec = Spec(kk=int(spec["kk"]), mm=int(spec["mm"]),
                          universal=bool(spec["universal"]), time_obs=bool(spec["time_obs"]),
                          n_extra=int(spec["extra_obs"]), low=low.astype(np.float32),
                          high=high.astype(np.float32), max_nbr=0,
                          heading_obs=bool(spec.get("heading_obs", False)),
                          beams=int(spec.get("beams", 0)),
                          stall_obs=bool(spec.get("stall_obs", False)))
        self.episodes: list[WorldEpisode | None] = [None] * B
        self.step_counts = np.zeros(B, dtype=np.int64)
        self.clock = np.zeros(B)
        self.alive = np.zeros(B * L, dtype=bool)
        self.learned = np.zeros(B * L, dtype=np.int64)  # world-local slot of each row
        self._settings = Settings(*(np.zeros(B, dtype=t) for _, t in _SETTINGS),
                                  weights=np.zeros((B, len(TERMS))),
                                  sensor_key=np.zeros(B, dtype=np.uint64))
        self.offsets = np.zeros(B + 1, dtype=np.int64)
        self._obst = None
        self._world_has_obstacles = np.zeros(B, dtype=bool)
        #: (any world noisy, any slot steered in Python, any world guided, any slot that may
        #: get new goals), set at load.
        self._flags = (False, False, False, False)
        self._sizes = np.zeros(B, dtype=np.int64)
        self._alloc(self._sizes)
        self.extra_obs = np.zeros((B * L, self._spec.n_extra))
        self.extra_terms = np.zeros((B * L, self.num_terms - len(TERMS)))
        self._threads = max(1, min(int(num_threads), B))
        self._pool = _workers(self, self._threads - 1) if self._threads > 1 else None
        #: ``side_work()``: one unit of Python work for this thread while the pool's threads
        #: step worlds (:meth:`_call`); returns False when it has none. It must not touch
        #: the batch's arrays, which the kernel is writing (the vector env draws episodes
        #: ahead in it).
        self.side_work = None
        self._all = np.arange(B, dtype=np.int64)
        self._stepped_one = np.ones(1, dtype=bool)
        self.debug_world: int | None = None  # record_step_start() on its sim each step
        #: Behaviours' per-slot data (:meth:`per_slot`): per config, and concatenated per load.
        self._config_data: dict = {}
        self._slot_data: dict = {}

    # -- storage -------------------------------------------------------------------------
    def _alloc(self, sizes: np.ndarray) -> None:
        """Allocate slot arrays for worlds of ``sizes`` slots, keeping the rows of worlds kept."""
        old = getattr(self, "_slots", None)
        old_off = self.offsets.copy()
        off = np.zeros(sizes.size + 1, dtype=np.int64)
        off[1:] = np.cumsum(sizes)
        N = int(off[-1])
        z = np.zeros
        self._slots = Slots(
            pos=z((N, 2)), vel=z((N, 2)), pref=z((N, 2)), active=z(N, dtype=bool),
            kd=z(N, dtype=np.int64), orca_radius=z(N), orca_max_speed=z(N), neighbor_dist=z(N),
            max_neighbors=z(N, dtype=np.int64), time_horizon=z(N), time_horizon_obst=z(N),
            responsibility=z(N), layer=z(N, dtype=np.int64), avoid_mask=z(N, dtype=np.int64),
            n_lines=z(N, dtype=np.int64), lp3=z(N, dtype=bool), intervention=z(N),
            corrected=z(N, dtype=bool),
            **{k: z(N) for k in _SLOT_F8}, **{k: z((N, 2)) for k in _SLOT_2D},
            **{k: z(N, dtype=np.int64) for k in _SLOT_TABLE_I8},
            **{k: z(N, dtype=bool) for k in _SLOT_TABLE_B},
            parked=z(N, dtype=bool), stall=z(N, dtype=np.int64),
            slot_status=z(N, dtype=np.int8), noise_ang=z(N), noise_mag=z(N), heading=z(N),
            lin_vel=z(N), ang_vel=z(N), kin_param=z((N, KIN_PARAMS)))
        nn = np.maximum(2 * sizes - 1, 1)
        self._node_off = np.zeros(sizes.size + 1, dtype=np.int64)
        self._node_off[1:] = np.cumsum(nn)
        T = int(self._node_off[-1])
        self._work = Work(nodes_begin=z(T, dtype=np.int64), nodes_end=z(T, dtype=np.int64),
                          nodes_left=z(T, dtype=np.int64), nodes_right=z(T, dtype=np.int64),
                          nodes_box=z((T, 4)), new_vel=z((N, 2)), at_goal=z(N, dtype=bool),
                          moving=z(N, dtype=bool), stalled=z(N, dtype=bool),
                          renew=z(N, dtype=bool), dist=z(N),
                          hit=z(self.alive.size, dtype=np.int8),
                          reached=z(self.alive.size, dtype=bool),
                          crash=z(self.alive.size, dtype=bool), cmd=z((N, 2)),
                          vlines=z((N, POLYGON, 4)), n_vlines=z(N, dtype=np.int64),
                          **self._scratch(N))
        if old is not None:
            for b in range(sizes.size):
                ep = self.episodes[b]
                if ep is None or self._sizes[b] != sizes[b]:
                    continue
                a, c = int(old_off[b]), int(off[b])
                for name, arr in zip(Slots._fields, self._slots, strict=True):
                    arr[c:c + sizes[b]] = getattr(old, name)[a:a + sizes[b]]
        self.offsets = off
        #: Each world's views of the slot arrays that its simulator binds (made at first use).
        self._sim_views: list[dict | None] = [None] * sizes.size
        self._sizes = sizes.copy()
        for b in range(sizes.size):  # every world's simulator onto its new slice
            ep = self.episodes[b]  # (one being loaded with its agents still to come: by load)
            if ep is not None and self._sizes[b] == ep.table.size and \
                    getattr(ep, "agent_state", None) is None:
                self._bind(b)

    def _scratch(self, N: int) -> dict:
        """The stages' scratch fields of :class:`Work`: per slot (N) and per agent row."""
        z, R, sp, B = np.zeros, self.alive.size, self._spec, self.num_worlds
        kq, mq = max(sp.kk, 1), max(sp.mm, 1)
        return dict(
            pos0=z((N, 2)), vel0=z((N, 2)), active0=z(N, dtype=bool), leave=z(N, dtype=bool),
            tmp=z(N, dtype=np.int64), live=z(R, dtype=np.int64), rr=z(R, dtype=np.int64),
            **{k: z(R, dtype=bool) for k in ("q_reached", "q_crash", "q_collided", "q_hit_a",
                                               "q_hit_w", "q_term", "q_trunc")},
            **{k: z(R) for k in ("q_sep_a", "q_sep", "q_prog", "q_reward", "q_path")},
            q_status=z(R, dtype=np.int64), q_targets=z((R, 2)), q_axes=z((R, 2)),
            q_pts=z((R, 2)), q_weighted=z((R, len(TERMS))), nbr=z((R, kq), dtype=np.int64),
            nbr_dsq=z((R, kq)), seg=z((R, mq), dtype=np.int64), seg_dsq=z((R, mq)),
            closest=z((R, mq, 2)), nbr0=z((R, 0), dtype=np.int64),
            seg0=z((R, 0), dtype=np.int64), closest0=z((R, 0, 2)),
            obs=z((R, self.obs_size), dtype=np.float32), scan=z((R, sp.beams)),
            # the swept collisions' grid: per world key, order (n), start (4n + 65), fill (4n + 64)
            c_key=z(N, dtype=np.int64), c_order=z(N, dtype=np.int64),
            c_start=z(4 * N + 65 * B, dtype=np.int64), c_fill=z(4 * N + 64 * B, dtype=np.int64),
            c_q1=z((N, 2)))

    def _world_slice(self, b: int) -> slice:
        return slice(int(self.offsets[b]), int(self.offsets[b + 1]))

    def _bind(self, b: int, copy: bool = True, num_agents: int | None = None) -> None:
        views = self._sim_views[b]
        if views is None:
            s, sl = self._world_slice(b), self._slots
            views = {name: getattr(sl, field)[s] for name, field in _SIM_STORAGE.items()}
            views["clock"] = self.clock[b:b + 1]
            self._sim_views[b] = views
        self.episodes[b].sim.bind_storage(copy, num_agents, **views)

    # -- loading worlds ------------------------------------------------------------------
    def load(self, worlds: Sequence[int], episodes: Sequence[WorldEpisode]) -> None:
        """Make ``episodes`` the current episodes of ``worlds`` (at reset)."""
        sizes = self._sizes.copy()
        for b, ep in zip(worlds, episodes, strict=True):
            sizes[b] = ep.table.size
        for b, ep in zip(worlds, episodes, strict=True):
            self.episodes[b] = ep
        if not np.array_equal(sizes, self._sizes):
            self._alloc(sizes)  # binds every world, the new ones included
        sl, L = self._slots, self.num_learned
        # Every loaded world's slots at once: idx lists them, world after world.
        w = np.asarray(worlds, dtype=np.int64)
        n_w = self._sizes[w]
        idx = np.arange(int(n_w.sum()), dtype=np.int64) + \
            np.repeat(self.offsets[w] - (np.cumsum(n_w) - n_w), n_w)

        def cat(arrays):
            first = arrays[0]
            if len(arrays) == 1:
                return first
            if all(a is first for a in arrays):  # one array for every world: a shared table's
                return np.tile(first, (len(arrays),) + (1,) * (first.ndim - 1))  # or constant
            return np.concatenate(arrays)

        # The simulators' state into their slices, then each bound to its slice (an
        # episode's agent_state: agents not yet in its simulator, handed over here).
        pending = [getattr(ep, "agent_state", None) for ep in episodes]
        states = [ep.sim.storage() if st is None else st
                  for ep, st in zip(episodes, pending, strict=True)]
        for name, field in _SIM_STORAGE.items():
            getattr(sl, field)[idx] = cat([st[name] for st in states])
        self.clock[w] = [st["clock"][0] for st in states]
        for b, ep, st in zip(worlds, episodes, pending, strict=True):
            self._bind(b, copy=False, num_agents=None if st is None else ep.table.size)
            ep.agent_state = None
        # Worlds resolved from one EnvConfig have equal tables and settings (WorldConfig builds
        # both from it alone): the first episode's stand for all.
        first = episodes[0]
        c0 = getattr(getattr(first, "config", None), "config", None)
        one_source = c0 is not None and len(episodes) > 1 and all(
            getattr(getattr(ep, "config", None), "config", None) is c0 for ep in episodes)
        tables = [ep.table for ep in episodes] if not one_source else [first.table] * len(episodes)
        for k in _SLOT_TABLE_I8 + _SLOT_TABLE_B + ("noise", "kin_param"):
            getattr(sl, k)[idx] = cat([getattr(t, k) for t in tables])
        for k in ("radius", "max_speed", "pref_speed", "goal_tol", "starts", "goals"):
            getattr(sl, k)[idx] = cat([getattr(ep, k) for ep in episodes])
        sl.parked[idx] = False
        sl.stall[idx] = 0
        d = sl.goals[idx] - sl.starts[idx]  # every agent starts facing its goal (CrowdNav's robot)
        sl.heading[idx] = np.arctan2(d[:, 1], d[:, 0])
        sl.lin_vel[idx] = 0.0
        sl.ang_vel[idx] = 0.0
        sl.slot_status[idx] = 0
        self.step_counts[w] = 0
        rows = (w[:, None] * L + np.arange(L)).ravel()
        self.alive[rows] = True
        self.learned[rows] = cat([t.learned_slots for t in tables])
        # An episode's settings are its config's, with or without guidance (WorldConfig.settings).
        same = one_source and all((ep.roadmap is None) == (first.roadmap is None)
                                  for ep in episodes)
        for name in [n for n, _ in _SETTINGS] + ["weights"]:
            getattr(self._settings, name)[w] = first.settings[name] if same else \
                [ep.settings[name] for ep in episodes]
        for b, ep in zip(worlds, episodes, strict=True):
            if ep.settings["lidar_noise"] > 0.0:
                self._settings.sensor_key[b] = _sensor_key(ep.rng)
        self.update_targets(worlds, idx)
        sl.d0[idx] = np.maximum(sl.path_len[idx], 1e-9)
        sl.d_prev[idx] = sl.path_len[idx]
        if self._obst is None or self._world_has_obstacles[list(worlds)].any() or \
                any(ep.sim.num_obstacle_vertices for ep in episodes):
            self._obst = concat_obstacles([ep.sim for ep in self.episodes])
            self._world_has_obstacles = np.diff(self._obst.off) > 0
        self._spec = self._spec._replace(max_nbr=int(sl.max_neighbors.max(initial=0)))
        new_goals = (sl.on_goal != _STOP) & (sl.on_goal != _STAY)  # step.outcomes' renew
        self._flags = (bool(self._settings.noisy.any()), bool(sl.external_steer.any()),
                       not bool(self._settings.straight.all()), bool(new_goals.any()))
        self._slot_data = {}
        in_worlds = np.zeros(sl.pos.shape[0], dtype=bool)
        for b in worlds:
            in_worlds[self._world_slice(b)] = True
        if self._pre_step(in_worlds):  # behaviours that place their agents (at t = 0)
            for b in worlds:
                s = self._world_slice(b)
                sl.starts[s][sl.parked[s]] = sl.pos[s][sl.parked[s]]
            self.update_targets(worlds)
            for b in worlds:
                s = self._world_slice(b)
                sl.d0[s] = np.maximum(sl.path_len[s], 1e-9)
                sl.d_prev[s] = sl.path_len[s]

    # -- guidance and goals (Python) -----------------------------------------------------
    def update_targets(self, worlds: Sequence[int], idx: np.ndarray | None = None) -> None:
        """Targets and remaining path lengths of the worlds' slots (roadmap with guidance).

        ``idx``: the worlds' slots, world after world (given at load: the worlds without a
        roadmap are then updated in one go).
        """
        sl = self._slots
        if idx is not None:
            eps = self.episodes
            if all(eps[b].roadmap is None for b in worlds):
                sl.targets[idx] = goals = sl.goals[idx]
                sl.path_len[idx] = np.linalg.norm(goals - sl.pos[idx], axis=1)
                return
        for b in worlds:
            ep, s = self.episodes[b], self._world_slice(b)
            pos, goals = sl.pos[s], sl.goals[s]
            if ep.roadmap is None:
                sl.targets[s] = goals
                sl.path_len[s] = np.linalg.norm(goals - pos, axis=1)
                continue
            act = np.flatnonzero(sl.active[s])
            t, d = ep.roadmap.waypoints(act, pos, goals, sl.radius[s], ep.goal_costs)
            sl.targets[s][act] = t
            sl.path_len[s][act] = d

    def set_goals(self, b: int, slots: np.ndarray, goals: np.ndarray) -> None:
        """New goals for world ``b``'s ``slots`` (validated by the caller)."""
        ep, s, sl = self.episodes[b], self._world_slice(b), self._slots
        sl.goals[s][slots] = goals
        if ep.roadmap is not None:
            ep.goal_costs[slots] = ep.roadmap.goal_costs(goals, sl.radius[s][slots])
        self.update_targets([b])
        sl.d_prev[s][slots] = sl.path_len[s][slots]
        sl.stall[s][slots] = 0

    def _renew_goals(self, stepped: np.ndarray) -> None:
        """New goals from the scenarios for crowd slots that reached theirs (``stepped`` worlds)."""
        sl = self._slots
        renew = self._work.renew
        worlds = np.flatnonzero((np.add.reduceat(renew, self.offsets[:-1]) > 0) & stepped)
        for b in worlds.tolist():
            ep, s = self.episodes[b], self._world_slice(b)
            ids = np.flatnonzero(renew[s])
            sl.goals[s][ids] = ep.scenario.new_goals(ep.rng, ep.sim, ids, sl.pos[s],
                                                     sl.starts[s], sl.radius[s])
            if ep.roadmap is not None:
                ep.goal_costs[ids] = ep.roadmap.goal_costs(sl.goals[s][ids], sl.radius[s][ids])
            sl.stall[s][ids] = 0
            self.update_targets([b])

    # -- the step ------------------------------------------------------------------------
    def _draw_noise(self, stepped: np.ndarray) -> None:
        """Crowd noise from each noisy world's own generator, as the single env always drew it."""
        sl = self._slots
        for b in np.flatnonzero(self._settings.noisy & stepped).tolist():
            s, n = self._world_slice(b), int(self._sizes[b])
            rng = self.episodes[b].rng
            sl.noise_ang[s] = rng.uniform(0.0, 2.0 * np.pi, n)
            sl.noise_mag[s] = rng.uniform(0.0, 1.0, n) * sl.noise[s]

    def _pre_step(self, among: np.ndarray | None = None) -> bool:
        """Behaviours' ``pre_step`` hooks over their slots (``among``: (N,) bool, at reset).

        Returns:
            Whether any hook ran.
        """
        sl, ran = self._slots, False
        for b in BEHAVIOURS.values():
            if b.pre_step is None:
                continue
            mine = sl.external_steer & (sl.population == b.code)
            slots = np.flatnonzero(mine if among is None else mine & among)
            if slots.size:
                b.pre_step(self, slots, among is not None)
                ran = True
        return ran

    def _steer_external(self) -> None:
        """Preferred velocities of slots whose behaviour steers in Python (all worlds at once)."""
        self._pre_step()
        sl = self._slots
        for b in BEHAVIOURS.values():  # the registry itself: behaviours registered later too
            if b.steer is None:
                continue
            slots = np.flatnonzero(sl.external_steer & (sl.population == b.code) & sl.active)
            if slots.size:
                v = _checked(b.steer(self, slots), (slots.size, 2), f"behaviour {b.name!r}: "
                             f"steer", slots)
                sl.pref[slots] = v

    def _call(self, mode: int, worlds: np.ndarray, *args) -> None:
        """``run_worlds(mode, worlds, *args)``, on the pool's threads and this one.

        With one thread, one call over every world. With more, the threads share the worlds in
        chunks (shrinking: :data:`CHUNK_SHARE`), each claiming the next chunk as it
        finishes the last (``run_worlds``' ``claim``), so a thread slowed by other work steps
        fewer worlds. Once the pool's threads are in the kernel (entering it takes the GIL;
        if they have not within :data:`_START_SPINS` reads, or :data:`_WAKE_SPINS` for threads
        that slept, there is no side work this call), this
        thread calls :attr:`side_work` while chunks are left unclaimed and it has work, then
        claims chunks itself. Which thread steps which world changes no result.
        """
        n = worlds.shape[0]
        claim = np.array([0, 1, 0], dtype=np.int64)
        kernel = run_worlds_entry(mode, worlds, *args, claim)
        if self._pool is None or n < 2:
            kernel(mode, worlds, *args, claim)
            return
        claim[1] = self._threads * CHUNK_SHARE
        call = (mode, worlds, *args, claim)
        side = self.side_work

        def share(entered: bool) -> None:
            # Side work holds the GIL, which a worker needs to enter the kernel: only once
            # they are in (a worker that no core runs soon, on a loaded machine: no side work).
            if side is not None and entered:
                while claim[0] < n and side():
                    pass
            kernel(*call)

        self._pool.run(kernel, call, claim, share)

    def step(self, act: np.ndarray, middle=None) -> StepResult:
        """One step of every world.

        Args:
            act: (B*L, A) float64 actions, already checked and clipped; rows of agents that
                are not alive are ignored.
            middle: ``None`` (no guidance, no hooks: phases A and B in one call), or a
                callable ``middle(rows)`` run between the phases, after the guidance
                update (it fills ``extra_obs`` and ``extra_terms`` for the live ``rows``).

        Worlds without a live learned agent (their episode is over, the caller has not reset
        them yet) are not stepped: they draw no noise and get no new goals.

        Returns:
            A :class:`StepResult`; worlds in ``world_done`` are left for the caller to reset.
        """
        rows_n = self.alive.size
        one = self.num_worlds == 1 and self.alive.any()  # the single env's case, cheaply
        stepped = self._stepped_one if one else \
            self.alive.reshape(self.num_worlds, self.num_learned).any(axis=1)
        worlds = self._all if one or stepped.all() else np.flatnonzero(stepped)
        res = StepResult(obs=np.zeros((rows_n, self.obs_size), dtype=np.float32),
                         reward=np.zeros(rows_n), term=np.zeros(rows_n, dtype=bool),
                         trunc=np.zeros(rows_n, dtype=bool),
                         status=np.zeros(rows_n, dtype=np.int64),
                         weighted=np.zeros((rows_n, self.num_terms)),
                         sep=np.full(rows_n, np.inf), hit=np.zeros(rows_n, dtype=np.int8),
                         acted=self.alive.copy(), world_done=np.zeros(self.num_worlds, dtype=bool))
        noisy, external, guided, new_goals = self._flags
        if noisy:
            self._draw_noise(stepped)
        if external:
            self._steer_external()
        if self.debug_world is not None:
            self.episodes[self.debug_world].sim.record_step_start()
        rows = Rows(alive=self.alive, learned=self.learned, act=act, obs=res.obs,
                    reward=res.reward, term=res.term, trunc=res.trunc, status=res.status,
                    weighted=res.weighted, sep=res.sep, hit=res.hit, extra_obs=self.extra_obs,
                    extra_terms=self.extra_terms)
        args = self._kernel_args(rows, res.world_done)
        if middle is None and not guided:
            self._call(BOTH, worlds, *args)
        else:
            self._call(PHASE_A, worlds, *args)
            if guided:
                self.update_targets(np.flatnonzero(~self._settings.straight & stepped).tolist())
            if middle is not None:
                middle(np.flatnonzero(res.acted))
            self._call(PHASE_B, worlds, *args)
        if new_goals and self._work.renew.any():
            self._renew_goals(stepped)
        return res

    def observe(self, worlds: Sequence[int], obs: np.ndarray, sep: np.ndarray) -> None:
        """Observations and clearances of the live rows of ``worlds`` (at reset), in place.

        ``extra_obs`` must hold the scenario's features of those rows already.
        """
        w = np.asarray(worlds, dtype=np.int64)
        args = self._kernel_args(self._observe_rows(obs, sep),
                                 np.zeros(self.num_worlds, dtype=bool))
        if self._pool is None:
            run_worlds(OBSERVE, w, *args, np.array([0, 1, 0], dtype=np.int64))
        else:  # shared by the threads, without side work
            side, self.side_work = self.side_work, None
            try:
                self._call(OBSERVE, w, *args)
            finally:
                self.side_work = side

    def _observe_rows(self, obs: np.ndarray, sep: np.ndarray) -> Rows:
        """The :class:`Rows` bundle of :meth:`observe` (outputs ``obs`` and ``sep`` only)."""
        return Rows(alive=self.alive, learned=self.learned, act=np.zeros((0, 2)), obs=obs,
                    reward=np.zeros(0), term=np.zeros(0, dtype=bool),
                    trunc=np.zeros(0, dtype=bool), status=np.zeros(0, dtype=np.int64),
                    weighted=np.zeros((0, self.num_terms)), sep=sep,
                    hit=np.zeros(0, dtype=np.int8), extra_obs=self.extra_obs,
                    extra_terms=self.extra_terms)

    def _kernel_args(self, rows: Rows, world_done: np.ndarray) -> tuple:
        """``run_worlds``'s arguments after ``mode`` and ``worlds`` (and before ``claim``).

        Every array has a fixed dtype, C order and is writable, and the scalars are Python
        ints: one compiled ``run_worlds`` for every config (:func:`kernel_types`).
        """
        obst = self._obst if self._obst is not None else concat_obstacles([None])
        return (self.offsets, self._node_off, self.num_learned, self._slots, self._settings,
                self._spec, obst, self._work, rows, self.step_counts, self.clock, world_done)

    @staticmethod
    def kernel_types() -> tuple:
        """The argument types of ``run_worlds`` (numba types), the same for every config.

        Taken from an empty one-world batch: the bundles' dtypes and layouts are fixed here,
        not by a config, so any env's step and reset call the one compiled specialisation.
        """
        from numba import typeof  # noqa: PLC0415  (numba is loaded by the stages already)

        b = WorldBatch(1, 1, 1, np.zeros(1, np.float32), np.ones(1, np.float32),
                       {"kk": 0, "mm": 0, "universal": False, "time_obs": False,
                        "extra_obs": 0}, len(TERMS))
        obs, sep = np.zeros((1, 1), dtype=np.float32), np.zeros(1)
        args = (OBSERVE, b._all) + b._kernel_args(b._observe_rows(obs, sep),
                                                  np.zeros(1, dtype=bool)) + \
            (np.zeros(3, dtype=np.int64),)
        b.close()
        return tuple(typeof(a) for a in args)

    # -- the scenarios' hooks ------------------------------------------------------------
    def run_hooks(self, rows: np.ndarray) -> None:
        """The scenarios' own observation features and reward terms of the agent ``rows``.

        One call per scenario (class and parameters) with the slots of every world running it:
        ``observation_features(batch, slots)`` and ``reward_terms(batch, slots)`` read this
        batch's public arrays (``positions``, ``targets``, ...) at ``slots``. Their results fill
        ``extra_obs`` and the weighted ``extra_terms`` of the rows.

        Raises:
            RuntimeError: If a hook returns a wrong shape or non-finite values.
        """
        L = self.num_learned
        worlds = rows // L
        groups: dict = {}
        for q, b in enumerate(worlds.tolist()):
            ep = self.episodes[b]
            key = (type(ep.scenario), repr(ep.config.config.scenario_kwargs))
            groups.setdefault(key, []).append(q)
        for qs in groups.values():
            qs = np.asarray(qs, dtype=np.int64)
            r = rows[qs]
            ep = self.episodes[int(worlds[qs[0]])]
            slots = self.offsets[worlds[qs]] + self.learned[r]
            if ep.config.extra_obs:
                self.extra_obs[r] = _hook(ep.scenario, "observation_features", self, slots,
                                          len(ep.config.extra_obs))
            if ep.config.extra_terms:
                raw = _hook(ep.scenario, "reward_terms", self, slots, len(ep.config.extra_terms))
                w = np.stack([self.episodes[b].config.extra_weights for b in worlds[qs]])
                self.extra_terms[r] = raw * w + 0.0  # + 0.0 turns -0.0 into 0.0

    # -- what behaviours may use (Behaviour.pre_step, Behaviour.steer) -------------------
    def per_slot(self, key: str, build: Any) -> np.ndarray:
        """A behaviour's per-slot data over every slot of every world, cached.

        ``build(world_config)`` (an :class:`orca_env.episode.WorldConfig`: ``groups``,
        ``table``, ``time_step``) returns a ``(n, ...)`` array for the config's ``n`` slots; it
        runs once per config and ``key`` (a name the behaviour owns, e.g.
        ``"social_force.params"``), and the worlds' arrays are concatenated once per
        :meth:`load`, so a step reads a cached array (no loop over worlds).

        Returns:
            (N, ...) array indexed by batch slot; do not write.
        """
        got = self._slot_data.get(key)
        if got is None:
            parts = []
            for ep in self.episodes:
                if ep is None:
                    continue
                ck = (key, id(ep.config))
                if ck not in self._config_data:  # holds the config, so its id stays unique
                    self._config_data[ck] = (ep.config, np.asarray(build(ep.config)))
                parts.append(self._config_data[ck][1])
            got = self._slot_data[key] = np.concatenate(parts)
        return got

    def place(self, slots: np.ndarray, positions: np.ndarray, active: np.ndarray,
              velocities: np.ndarray | None = None) -> None:
        """Put ``slots`` at ``positions`` and in or out of the simulation (``pre_step`` only).

        The slots are marked parked: their behaviour, not a goal, decides where they are and
        when they leave, so goal arrival and the stall counter do not apply to them.

        Args:
            slots: (k,) int64 batch slots of the calling behaviour.
            positions: (k, 2) float64, m, world frame (ignored where not ``active``).
            active: (k,) bool, in the simulation from now.
            velocities: (k, 2) float64 m/s, or None to keep them.
        """
        sl = self._slots
        sl.pos[slots] = positions
        sl.active[slots] = active
        if velocities is not None:
            sl.vel[slots] = velocities
        sl.parked[slots] = True

    # -- read-only views (hooks, behaviours, the env's accessors) ------------------------
    @property
    def slots(self):
        """The per-slot arrays (a named bundle, :class:`orca_env.stages.Slots`); do not write."""
        return self._slots

    @property
    def positions(self) -> np.ndarray:
        """(N, 2) float64 positions of every slot of every world, m, world frame."""
        return _readonly(self._slots.pos)

    @property
    def velocities(self) -> np.ndarray:
        """(N, 2) float64 velocities, m/s."""
        return _readonly(self._slots.vel)

    @property
    def goals(self) -> np.ndarray:
        """(N, 2) float64 goals, m."""
        return _readonly(self._slots.goals)

    @property
    def targets(self) -> np.ndarray:
        """(N, 2) float64 goals, or roadmap waypoints with guidance, m."""
        return _readonly(self._slots.targets)

    @property
    def radii(self) -> np.ndarray:
        """(N,) float64 radii, m."""
        return _readonly(self._slots.radius)

    @property
    def max_speeds(self) -> np.ndarray:
        """(N,) float64 max speeds, m/s."""
        return _readonly(self._slots.max_speed)

    @property
    def pref_speeds(self) -> np.ndarray:
        """(N,) float64 preferred speeds, m/s."""
        return _readonly(self._slots.pref_speed)

    @property
    def path_lengths(self) -> np.ndarray:
        """(N,) float64 remaining distance to the goal (roadmap path with guidance), m."""
        return _readonly(self._slots.path_len)

    @property
    def populations(self) -> np.ndarray:
        """(N,) int64 behaviour codes."""
        return _readonly(self._slots.population)

    @property
    def layers(self) -> np.ndarray:
        """(N,) int64 core visibility layer bits (``a`` avoids ``b``: avoid_mask[a] & layer[b])."""
        return _readonly(self._slots.layer)

    @property
    def time_steps(self) -> np.ndarray:
        """(B,) float64 time step of each world, s."""
        return _readonly(self._settings.time_step)

    @property
    def active(self) -> np.ndarray:
        """(N,) bool, in the simulation."""
        return _readonly(self._slots.active)

    @property
    def headings(self) -> np.ndarray:
        """(N,) float64 headings, rad, world frame (the motion model's; starts facing the goal)."""
        return _readonly(self._slots.heading)

    @property
    def angular_velocities(self) -> np.ndarray:
        """(N,) float64 turn rates of the non-holonomic models, rad/s (0 for holonomic)."""
        return _readonly(self._slots.ang_vel)

    @property
    def kinematics(self) -> np.ndarray:
        """(N,) int64 motion-model codes (:mod:`orca_env.kinematics`)."""
        return _readonly(self._slots.kinematics)

    @property
    def kin_params(self) -> np.ndarray:
        """(N, KIN_PARAMS) float64 motion-model parameters (``orca_env.kinematics.base.P_*``)."""
        return _readonly(self._slots.kin_param)

    def step_counts_of(self, slots: np.ndarray) -> np.ndarray:
        """(k,) int64 steps since reset of the world of each slot."""
        return self.step_counts[self.world_of(slots)]

    def max_steps_of(self, slots: np.ndarray) -> np.ndarray:
        """(k,) int64 step limit of the world of each slot."""
        return np.array([self.episodes[b].max_steps for b in self.world_of(slots).tolist()],
                        dtype=np.int64)

    def world_of(self, slots: np.ndarray) -> np.ndarray:
        """World index of each batch slot."""
        return np.searchsorted(self.offsets, slots, side="right") - 1

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["_pool"] = None
        state["_config_data"], state["_slot_data"] = {}, {}  # keyed by ids of this process
        # Views of the slot arrays would come back as arrays of their own: made again.
        state["_sim_views"] = [None] * len(self._sim_views)
        return state

    def __setstate__(self, state: dict) -> None:
        # Pickling copies the simulators' arrays apart from the batch's: bind them again.
        self.__dict__.update(state)
        if self._threads > 1:
            self._pool = _workers(self, self._threads - 1)
        for b, ep in enumerate(self.episodes):
            if ep is not None:
                self._bind(b)

    def close(self) -> None:
        """Stop the thread pool."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None


def _sensor_key(rng: np.random.Generator) -> np.uint64:
    """The key of a world's LiDAR noise stream, derived from its generator without drawing.

    The key comes from a jumped copy of the generator (``jumped()``: far ahead in its stream),
    so the generator itself is not advanced: turning the noise on leaves every other draw (the
    crowd's noise, new goals, the next episode) as it was.
    """
    bg = rng.bit_generator
    ahead = bg.jumped() if hasattr(bg, "jumped") else type(bg)(bg.random_raw())
    return np.random.Generator(ahead).integers(0, 2**64, dtype=np.uint64)


def _readonly(a: np.ndarray) -> np.ndarray:
    v = a.view()
    v.flags.writeable = False
    return v


def _hook(scenario: Any, hook: str, batch: WorldBatch, slots: np.ndarray, width: int
          ) -> np.ndarray:
    """Call the scenario hook ``hook(batch, slots)`` and check its ``(k, width)`` result."""
    return _checked(getattr(scenario, hook)(batch, slots), (len(slots), width),
                    f"{scenario.name}.{hook}", slots)


def _checked(value: Any, shape: tuple, what: str, slots: np.ndarray) -> np.ndarray:
    """``value`` as float64 of ``shape``, finite; else a RuntimeError saying which is wrong."""
    out = np.asarray(value, dtype=np.float64)
    if out.shape != shape:
        raise RuntimeError(f"{what} must return values of shape {shape}; got shape {out.shape}")
    bad = ~np.isfinite(out).all(axis=1)
    if bad.any():
        raise RuntimeError(f"{what} returned NaN or inf for slot(s) {slots[bad][:8].tolist()}: "
                           f"{out[bad][0].tolist()}")
    return out
