"""Agent-steps/s of orca-env next to its peers (RVO2, VMAS, MPE2), interleaved in one run.

For each case (``W`` worlds of ``N`` agents) every system is built, warmed up, and then timed in
alternating repetitions (A, B, C, ..., A, B, C, ...) so that load drift hits all of them alike;
the table gives the median agent-steps/s over the repetitions and their min-max, the process
CPU time per wall second (below 1: the process waited for a core; on a shared machine), the
agent-steps per process CPU-second (less sensitive to other jobs), and the agent-steps each
repetition timed. An agent-step is one agent
advanced by one step; every system steps ``--steps`` steps per repetition (default 100, one
``circle_dense`` episode) with the same time step (0.25 s), after ``--warmup`` untimed steps.
Setup and the first step (numba compilation, or the numba cache's load when it is warm; torch's
first calls) are excluded and printed in a table of their own.

The systems (``what`` in the table says what each step computes):

* ``core-batch``: orca-env's core, :func:`orca_env.core.batch.step_world` over the worlds in one
  numba loop (what the vector env's pipeline runs for ORCA), goal-directed preferred velocities
  set between the steps (untimed);
* ``core-sims``: one :class:`orca_env.core.Simulator` per world, ``step()`` in a Python loop
  (same states: checked bit-identical to ``core-batch`` after the warm-up);
* ``rvo2``: RVO2 2.0.3 C++ (pyrvo), one ``RVOSimulator`` per world, ``do_step()`` in a Python
  loop; preferred velocities set and positions read between the steps (untimed);
* ``rvo2-io``: the same with that per-agent input and output (pyrvo has no array calls) timed,
  as an env on pyrvo would pay it;
* ``env``: ``orca_env.parallel_env`` (``infos="compact"``, the PettingZoo dict API), one per world
  looped (at most 256 worlds: a loop's cost per agent-step does not depend on the count);
* ``vec-1t``, ``vec-2t``: ``OrcaVectorEnv`` on 1 and 2 threads; ``vec-lidar``: 1 thread with a
  12-beam LiDAR scan in the observation (VMAS's navigation scans 12 rays);
* ``vmas``, ``vmas-collide``, ``vmas-lidar``: VMAS's ``navigation`` on the CPU, batched W x N:
  without agent collisions (``collisions=False``, which also drops its LiDAR), with collisions
  but the LiDAR removed (a subclass), and as shipped (collisions and 12 LiDAR rays);
* ``mpe2``: PettingZoo MPE2 ``simple_spread_v3`` (continuous actions, ``max_cycles`` 100), one env
  per world looped (at most 16 worlds, as above).

orca-env and RVO2 run ``circle_dense``'s worlds (16 agents of radius 0.3 m on a circle of radius
4 m, max speed 1 m/s, neighbour distance 5 m, 10 neighbours, time horizons 5 s; ``W x 4`` cases
set ``groups.0.count=4``): the envs from their seeds ``seed + b``, the core and RVO2 from those
worlds' starts and goals, restarted every 100 steps (untimed). The envs take random actions
(drawn once, cycled) and reset finished episodes inside the timed step. VMAS and MPE2 run their
own scenarios with the same W x N and their world's time step set to 0.25 s (their cost per step
does not depend on it); VMAS resets when its ``max_steps`` (100) ends the episodes. Everything
runs with numba threads 1 and torch threads 1 except ``vec-2t``.

``--core-scaling`` instead times the core's single-thread step against RVO2's at 1k to 100k
agents (bench_core.py's Circle layout and RVO2 parameters), thread CPU time, interleaved, and
prints ours / RVO2 per size and both log-log slopes.

Peers are optional (``pip install -e ".[peers]"``); each missing one is named with its install
command and its rows are skipped. The last line printed is JSON with every figure.

Usage:

    python benchmarks/bench_peers.py [--quick] [--cases 64x16,256x16,256x4,4096x4]
        [--reps 5] [--steps 100] [--warmup 5] [--seed 0]
    python benchmarks/bench_peers.py --core-scaling [--quick] [--reps 5]
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import json
import os
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

_T0 = time.perf_counter()
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")  # mpe2 imports pygame

import numba  # noqa: E402
from numba import njit  # noqa: E402

import orca_env  # noqa: E402
from orca_env.core import Simulator  # noqa: E402
from orca_env.core.batch import step_world  # noqa: E402
from orca_env.core.obstacles import Obstacles, build_segment_index  # noqa: E402
from orca_env.evaluation.overrides import config_overrides, parse_set_items  # noqa: E402
from orca_env.vector import OrcaVectorEnv  # noqa: E402

_T_IMPORT = time.perf_counter() - _T0

CONFIG = "circle_dense"
INSTALL = 'pip install -e ".[peers]"  (from the repository root)'
#: Optional peers: module -> (distribution, what is skipped without it).
PEERS = {"pyrvo": ("pyrvo", "RVO2 rows"), "vmas": ("vmas", "VMAS rows"),
         "mpe2": ("mpe2", "MPE2 rows")}
ENV_MAX_WORLDS = 256  # looped ParallelEnvs
MPE_MAX_WORLDS = 16  # looped MPE2 envs
POOL = 8  # random action sets, cycled
LIDAR_BEAMS = 12  # VMAS navigation's n_lidar_rays
DEFAULT_CASES = "64x16,256x16,256x4,4096x4"
QUICK_CASES = "16x16,64x4"


# ----------------------------------------------------------------------------- helpers
def load1():
    """The 1-minute load average."""
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def version(dist):
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def commit():
    try:
        out = subprocess.run(["git", "-C", str(REPO), "describe", "--always", "--dirty"],
                             capture_output=True, text=True, timeout=10)
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def import_peers():
    """The importable peers as {module name: module}; prints one line per missing one."""
    found = {}
    for mod, (dist, rows) in PEERS.items():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                found[mod] = importlib.import_module(mod)
        except ImportError:
            print(f"{dist} not installed: {rows} skipped; install: {INSTALL} or "
                  f"pip install {dist}")
    return found


def pref_towards(pos, goals, out):
    """RVO2's Circle preferred velocity (goal vector, normalised when longer than 1), in place."""
    np.subtract(goals, pos, out=out)
    n = np.sqrt(np.einsum("ij,ij->i", out, out))
    scale = np.where(n > 1.0, 1.0 / np.maximum(n, 1e-300), 1.0)
    out *= scale[:, None]


def world_setup(n, seed, worlds):
    """The config overrides for ``n`` agents, the group and time step, starts and goals.

    Returns:
        (overrides, group, time_step, starts (W * n, 2), goals (W * n, 2)).
    """
    over = config_overrides(CONFIG, parse_set_items([f"groups.0.count={n}"]))
    env = orca_env.parallel_env(CONFIG, **over)
    starts, goals = [], []
    for b in range(worlds):
        env.reset(seed=seed + b)
        starts.append(np.asarray(env.starts, dtype=np.float64).copy())
        goals.append(np.asarray(env.goals, dtype=np.float64).copy())
    return over, env.groups[0], env.time_step, np.concatenate(starts), np.concatenate(goals)


def numba_cache_warm():
    """Whether the pipeline's step kernel is in the numba cache (a numba internal; None: unknown).

    The same check as ``orca_env.episode.announce_compilation``.
    """
    try:
        from orca_env.stages import run_worlds

        return os.path.exists(run_worlds._cache._cache_file._index_path)
    except Exception:  # noqa: BLE001  (numba internals differ between versions)
        return None


def parse_cases(text, ap):
    cases = []
    for item in text.split(","):
        parts = item.strip().lower().split("x")
        if len(parts) != 2 or not all(p.isdigit() and int(p) > 0 for p in parts):
            ap.error(f"--cases: {item.strip()!r} is not WORLDSxAGENTS with positive integers "
                     f"(e.g. 64x16)")
        cases.append((int(parts[0]), int(parts[1])))
    return cases


# ----------------------------------------------------------------------------- steppers
class Stepper:
    """One system on one case. ``step()`` is timed; ``prepare()`` (before it) is not."""

    key = ""
    label = ""
    what = ""
    threads = 1

    def __init__(self, worlds, agents):
        self.worlds, self.agents = worlds, agents

    def prepare(self):
        """Untimed work before the next step."""

    def step(self):
        """One step of every world; returns the agent-steps done."""
        raise NotImplementedError

    def finish(self):
        """Untimed work after a step."""

    def run(self, steps):
        """(agent-steps, wall s, process CPU s) of ``steps`` steps."""
        done, wall, cpu = 0, 0.0, 0.0
        for _ in range(steps):
            self.prepare()
            c0, t0 = time.process_time(), time.perf_counter()
            done += self.step()
            wall += time.perf_counter() - t0
            cpu += time.process_time() - c0
            self.finish()
        return done, wall, cpu


@njit(cache=True, error_model="numpy")
def _core_batch_step(n, pos, vel, pref, active, kd, params, dt, obst, max_nbr, tele, nodes,
                     new_vel, vlines, n_vlines):
    """``step_world`` on each world of ``n`` agents of the concatenated arrays, in order."""
    worlds = pos.shape[0] // n
    m = max(2 * n - 1, 1)
    for b in range(worlds):
        a0, a1, t0, t1 = b * n, (b + 1) * n, b * m, (b + 1) * m
        p = (params[0][a0:a1], params[1][a0:a1], params[2][a0:a1], params[3][a0:a1],
             params[4][a0:a1], params[5][a0:a1], params[6][a0:a1], params[7][a0:a1],
             params[8][a0:a1])
        out = (tele[0], tele[1][a0:a1], tele[2][a0:a1], tele[3][a0:a1], tele[4][a0:a1])
        nd = (nodes[0][t0:t1], nodes[1][t0:t1], nodes[2][t0:t1], nodes[3][t0:t1],
              nodes[4][t0:t1])
        step_world(pos[a0:a1], vel[a0:a1], pref[a0:a1], active[a0:a1], kd[a0:a1], p, dt, obst,
                   max_nbr, out, nd, new_vel[a0:a1], vlines, n_vlines)


class _CoreWorlds(Stepper):
    """W Simulators of circle_dense's worlds bound to concatenated arrays (as the pipeline)."""

    what = "ORCA step only (goal-directed pref. velocities set untimed)"

    def __init__(self, worlds, agents, setup, max_steps):
        super().__init__(worlds, agents)
        _, g, dt, starts, goals = setup
        self.goals, self.starts, self.max_steps, self.t = goals, starts, max_steps, 0
        self.sims = []
        fields = Simulator.STORAGE_FIELDS
        self.store = None
        for b in range(worlds):
            s = Simulator(time_step=dt, neighbor_dist=g.neighbor_dist,
                          max_neighbors=g.max_neighbors, time_horizon=g.time_horizon,
                          time_horizon_obst=g.time_horizon_obst, radius=g.radius,
                          max_speed=g.max_speed, num_threads=1)
            s.add_agents(starts[b * agents:(b + 1) * agents])
            if self.store is None:  # the storage layout from the core itself
                self.store = {
                    f: (np.zeros(worlds) if f == "clock" else np.zeros(
                        (worlds * agents, *getattr(s, "_" + f).shape[1:]),
                        dtype=getattr(s, "_" + f).dtype)) for f in fields}
            sl = slice(b * agents, (b + 1) * agents)
            s.bind_storage(**{f: (self.store[f][b:b + 1] if f == "clock" else self.store[f][sl])
                              for f in fields})
            self.sims.append(s)
        self.kd0 = self.store["kd_order"].copy()
        self.dt = dt

    def prepare(self):
        st = self.store
        if self.t and self.t % self.max_steps == 0:  # a new episode: back to the starts
            st["pos"][:] = self.starts
            st["vel"][:] = 0.0
            st["kd_order"][:] = self.kd0
        pref_towards(st["pos"], self.goals, st["pref"])
        self.t += 1


class CoreBatch(_CoreWorlds):
    key, label = "core-batch", "orca-env core, batch step"

    def __init__(self, *args):
        super().__init__(*args)
        st, n, W = self.store, self.agents, self.worlds
        self.params = tuple(st[f] for f in ("radius", "max_speed", "neighbor_dist",
                                            "max_neighbors", "time_horizon",
                                            "time_horizon_obst", "responsibility", "layer",
                                            "avoid_mask"))
        pts, nxt = np.zeros((0, 2)), np.zeros(0, dtype=np.int64)
        order, boxes = build_segment_index(pts, nxt)
        self.obst = tuple(Obstacles(pts, nxt, nxt.copy(), np.zeros((0, 2)),
                                    np.zeros(0, dtype=bool), order, boxes))
        self.tele = (np.zeros((0, 2)), st["n_lines"], st["lp3"], st["corrected"],
                     st["intervention"])
        m = max(2 * n - 1, 1) * W
        self.nodes = (np.zeros(m, dtype=np.int64), np.zeros(m, dtype=np.int64),
                      np.zeros(m, dtype=np.int64), np.zeros(m, dtype=np.int64), np.zeros((m, 4)))
        self.new_vel = np.zeros((W * n, 2))
        self.max_nbr = int(st["max_neighbors"].max())
        self.vlines, self.n_vlines = np.zeros((0, 0, 4)), np.zeros(0, dtype=np.int64)

    def step(self):
        st = self.store
        _core_batch_step(self.agents, st["pos"], st["vel"], st["pref"], st["active"],
                         st["kd_order"], self.params, self.dt, self.obst, self.max_nbr,
                         self.tele, self.nodes, self.new_vel, self.vlines, self.n_vlines)
        st["clock"] += self.dt
        return self.worlds * self.agents


class CoreSims(_CoreWorlds):
    key, label = "core-sims", "orca-env core, Simulator per world"

    def step(self):
        for s in self.sims:
            s.step()
        return self.worlds * self.agents


class Rvo2(Stepper):
    key, label = "rvo2", "RVO2 C++ (pyrvo), sim per world"
    what = "ORCA step only (pref. velocities in, positions out untimed)"
    timed_io = False

    def __init__(self, worlds, agents, setup, max_steps, pyrvo):
        super().__init__(worlds, agents)
        _, g, dt, starts, goals = setup
        self.starts, self.goals, self.max_steps, self.t = starts, goals, max_steps, 0
        self.sims = []
        for b in range(worlds):
            s = pyrvo.RVOSimulator(dt, g.neighbor_dist, g.max_neighbors, g.time_horizon,
                                   g.time_horizon_obst, g.radius, g.max_speed)
            for p in starts[b * agents:(b + 1) * agents]:
                s.add_agent((float(p[0]), float(p[1])))
            self.sims.append(s)
        self.pos = starts.copy()
        self.pref = np.zeros_like(starts)

    def _io_in(self):
        if self.t and self.t % self.max_steps == 0:  # a new episode: back to the starts
            for b, s in enumerate(self.sims):
                for i in range(self.agents):
                    p = self.starts[b * self.agents + i]
                    s.set_agent_position(i, (float(p[0]), float(p[1])))
                    s.set_agent_velocity(i, (0.0, 0.0))
            self.pos[:] = self.starts
        self.t += 1
        pref_towards(self.pos, self.goals, self.pref)
        pref, n = self.pref.tolist(), self.agents
        for b, s in enumerate(self.sims):
            for i in range(n):
                s.set_agent_pref_velocity(i, pref[b * n + i])

    def _io_out(self):
        n = self.agents
        self.pos[:] = [self.sims[r // n].get_agent_position(r % n).to_tuple()
                       for r in range(self.worlds * n)]

    def prepare(self):
        if not self.timed_io:
            self._io_in()

    def step(self):
        if self.timed_io:
            self._io_in()
        for s in self.sims:
            s.do_step()
        if self.timed_io:
            self._io_out()
        return self.worlds * self.agents

    def finish(self):
        if not self.timed_io:
            self._io_out()


class Rvo2Io(Rvo2):
    key, label = "rvo2-io", "RVO2 C++ (pyrvo) + per-agent I/O"
    what = "ORCA step + pref. velocities in, positions out (per-agent calls)"
    timed_io = True


class ParallelEnvLoop(Stepper):
    key, label = "env", "orca-env ParallelEnv, looped"
    what = "ORCA + obs + rewards + collisions + infos (compact), dict API, resets"

    def __init__(self, worlds, agents, setup, seed):
        worlds = min(worlds, ENV_MAX_WORLDS)
        super().__init__(worlds, agents)
        over = setup[0]
        self.envs = [orca_env.parallel_env(CONFIG, infos="compact", **over)
                     for _ in range(worlds)]
        for b, e in enumerate(self.envs):
            e.reset(seed=seed + b)
        self.index = {a: k for k, a in enumerate(self.envs[0].possible_agents)}
        rng = np.random.default_rng(seed)
        self.pool = rng.uniform(-1, 1, (POOL, worlds * agents, 2)).astype(np.float32)
        self.t = 0

    def step(self):
        act, n, index, done = self.pool[self.t % POOL], self.agents, self.index, 0
        self.t += 1
        for b, e in enumerate(self.envs):
            done += len(e.agents)
            e.step({a: act[b * n + index[a]] for a in e.agents})
            if not e.agents:
                e.reset()
        return done


class VectorEnv(Stepper):
    key, label = "vec-1t", "orca-env OrcaVectorEnv"
    what = "ORCA + obs + rewards + collisions, batched, autoreset"

    def __init__(self, worlds, agents, setup, seed, threads=1, lidar=False):
        super().__init__(worlds, agents)
        over = dict(setup[0])
        if lidar:
            self.key, self.label = "vec-lidar", "orca-env OrcaVectorEnv + LiDAR"
            self.what = f"as vec-1t + {LIDAR_BEAMS}-beam LiDAR in the obs"
            over["observation"] = {**over.get("observation", {}),
                                   "lidar": {"beams": LIDAR_BEAMS}}
        elif threads > 1:
            self.key = f"vec-{threads}t"
        self.threads = threads
        self.env = OrcaVectorEnv(CONFIG, worlds, seed=seed, num_threads=threads, **over)
        self.env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        self.pool = rng.uniform(-1, 1, (POOL, worlds * agents, 2)).astype(np.float32)
        self.alive = np.ones(worlds * agents, dtype=bool)
        self.t = 0

    def step(self):
        done = int(self.alive.sum())
        _, _, _, _, info = self.env.step(self.pool[self.t % POOL])
        self.t += 1
        self.alive = info["alive"]
        return done


def _vmas_no_lidar(vmas):
    """VMAS navigation with agent collisions but no LiDAR (removed from agents and obs)."""
    import torch
    from vmas.scenarios.navigation import Scenario

    class NavigationNoLidar(Scenario):
        def make_world(self, batch_dim, device, **kwargs):
            world = super().make_world(batch_dim, device, **kwargs)
            for a in world.agents:
                a._sensors = []
            return world

        def observation(self, agent):
            return torch.cat([agent.state.pos, agent.state.vel,
                              agent.state.pos - agent.goal.state.pos], dim=-1)

    return NavigationNoLidar()


class Vmas(Stepper):
    key, label = "vmas", "VMAS navigation (CPU)"
    what = "physics, no collisions, no sensor + obs + rewards"

    def __init__(self, worlds, agents, setup, seed, max_steps, vmas, variant="plain"):
        super().__init__(worlds, agents)
        import torch
        scenario, kw = "navigation", {}
        if variant == "plain":
            kw["collisions"] = False
        elif variant == "collide":
            self.key, self.label = "vmas-collide", "VMAS navigation, collisions (CPU)"
            self.what = "physics + collisions + obs + rewards (LiDAR removed)"
            scenario = _vmas_no_lidar(vmas)
        else:
            self.key, self.label = "vmas-lidar", "VMAS navigation + LiDAR (CPU)"
            self.what = "physics + collisions + 12-ray LiDAR + obs + rewards"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.env = vmas.make_env(scenario, num_envs=worlds, device="cpu",
                                     continuous_actions=True, seed=seed, max_steps=max_steps,
                                     n_agents=agents, **kw)
        w = self.env.world
        w._dt = setup[2]  # the same time step (the cost per step does not depend on it)
        w._sub_dt = w._dt / w._substeps
        self.env.reset()
        g = torch.Generator().manual_seed(seed)
        self.pool = [[torch.rand((worlds, 2), generator=g) * 2 - 1 for _ in range(agents)]
                     for _ in range(POOL)]
        self.t = 0

    def step(self):
        _, _, dones, _ = self.env.step(self.pool[self.t % POOL])
        self.t += 1
        if dones.any():
            if dones.all():
                self.env.reset()
            else:
                for i in dones.nonzero().flatten().tolist():
                    self.env.reset_at(i)
        return self.worlds * self.agents


class Mpe2(Stepper):
    key, label = "mpe2", "PettingZoo MPE2 simple_spread, looped"
    what = "physics + collisions + obs + rewards, dict API, resets"

    def __init__(self, worlds, agents, setup, seed, max_steps, mpe2):
        worlds = min(worlds, MPE_MAX_WORLDS)
        super().__init__(worlds, agents)
        from mpe2 import simple_spread_v3

        self.envs = [simple_spread_v3.parallel_env(N=agents, max_cycles=max_steps,
                                                   continuous_actions=True)
                     for _ in range(worlds)]
        for b, e in enumerate(self.envs):
            e.reset(seed=seed + b)
            e.unwrapped.world.dt = setup[2]
        self.index = {a: k for k, a in enumerate(self.envs[0].possible_agents)}
        size = self.envs[0].action_space(self.envs[0].possible_agents[0]).shape[0]
        rng = np.random.default_rng(seed)
        self.pool = rng.uniform(0, 1, (POOL, worlds, agents, size)).astype(np.float32)
        self.t = 0

    def step(self):
        act, index, done = self.pool[self.t % POOL], self.index, 0
        self.t += 1
        for b, e in enumerate(self.envs):
            done += len(e.agents)
            e.step({a: act[b, index[a]] for a in e.agents})
            if not e.agents:
                e.reset()
        return done


def build_systems(worlds, agents, peers, seed, max_steps):
    """Every system on the case, in table order: (stepper or None, key, setup s)."""
    setup = world_setup(agents, seed, worlds)
    makers = [
        lambda: CoreBatch(worlds, agents, setup, max_steps),
        lambda: CoreSims(worlds, agents, setup, max_steps),
        lambda: ParallelEnvLoop(worlds, agents, setup, seed),
        lambda: VectorEnv(worlds, agents, setup, seed, 1),
        lambda: VectorEnv(worlds, agents, setup, seed, 2),
        lambda: VectorEnv(worlds, agents, setup, seed, 1, lidar=True),
    ]
    if "pyrvo" in peers:
        makers += [lambda: Rvo2(worlds, agents, setup, max_steps, peers["pyrvo"]),
                   lambda: Rvo2Io(worlds, agents, setup, max_steps, peers["pyrvo"])]
    if "vmas" in peers:
        makers += [lambda v=v: Vmas(worlds, agents, setup, seed, max_steps, peers["vmas"], v)
                   for v in ("plain", "collide", "lidar")]
    if "mpe2" in peers:
        makers.append(lambda: Mpe2(worlds, agents, setup, seed, max_steps, peers["mpe2"]))
    systems = []
    for make in makers:
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = make()
        systems.append((s, time.perf_counter() - t0))
    return systems


def warm_up(s, steps):
    """The first step's time (compile or cache load), then ``steps - 1`` more untimed."""
    s.prepare()
    t0 = time.perf_counter()
    s.step()
    first = time.perf_counter() - t0
    s.finish()
    for _ in range(steps - 1):
        s.prepare()
        s.step()
        s.finish()
    return first


def fmt_rate(x):
    return f"{x / 1e6:.2f}M" if x >= 1e6 else f"{x / 1e3:.0f}k" if x >= 1e4 else f"{x:,.0f}"


def peers_table(args, peers):
    cases = parse_cases(args.cases, args.parser)
    rows, setups, loads = [], [], []
    for worlds, agents in cases:
        l0, t_case = load1(), time.perf_counter()
        print(f"case {worlds} x {agents}: building ...", file=sys.stderr, flush=True)
        systems = build_systems(worlds, agents, peers, args.seed, args.max_steps)
        for s, t_setup in systems:
            first = warm_up(s, args.warmup)
            setups.append(dict(case=f"{worlds}x{agents}", key=s.key, setup_s=t_setup,
                               first_step_s=first))
        by_key = {s.key: s for s, _ in systems}
        same = bool(np.array_equal(by_key["core-batch"].store["pos"],
                                   by_key["core-sims"].store["pos"]))
        if not same:
            raise SystemExit("core-batch and core-sims differ after the warm-up: the batch "
                             "driver does not step the same worlds")
        results = {s.key: [] for s, _ in systems}
        for r in range(args.reps):  # alternating: A, B, C, ..., A, B, C, ...
            print(f"case {worlds} x {agents}: repetition {r + 1}/{args.reps}", file=sys.stderr,
                  flush=True)
            for s, _ in systems:
                results[s.key].append(s.run(args.steps))
        l1 = load1()
        loads.append(dict(case=f"{worlds}x{agents}", load_before=l0, load_after=l1,
                          wall_s=time.perf_counter() - t_case, core_identical=same))
        vec = statistics.median(d / w for d, w, _ in results["vec-1t"])
        for s, _ in systems:
            reps = results[s.key]
            rates = [d / w for d, w, _ in reps]
            med = statistics.median(rates)
            rows.append(dict(case=f"{worlds}x{agents}", key=s.key, system=s.label,
                             worlds=s.worlds, agents=s.agents, threads=s.threads, what=s.what,
                             agent_steps_per_s=med, min=min(rates), max=max(rates),
                             cpu_per_wall=statistics.median(c / w for _, w, c in reps),
                             per_cpu_s=statistics.median(d / max(c, 1e-9) for d, _, c in reps),
                             agent_steps_per_rep=int(statistics.median(d for d, _, _ in reps)),
                             vs_vec_1t=med / vec))
        del systems, by_key

    print(f"\n## Agent-steps/s, interleaved ({args.reps} repetitions of {args.steps} steps after "
          f"{args.warmup} warm-up steps; median and min-max)\n")
    print("| case | system | worlds x agents run | threads | what a step computes "
          "| agent-steps/s | min-max | CPU/wall | per CPU-s | agent-steps per rep | / vec-1t |")
    print("|---|---|---|---:|---|---:|---|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['case']} | {r['system']} (`{r['key']}`) | {r['worlds']} x {r['agents']} "
              f"| {r['threads']} | {r['what']} | {fmt_rate(r['agent_steps_per_s'])} "
              f"| {fmt_rate(r['min'])}-{fmt_rate(r['max'])} | {r['cpu_per_wall']:.2f} "
              f"| {fmt_rate(r['per_cpu_s'])} "
              f"| {r['agent_steps_per_rep']:,} | {r['vs_vec_1t']:.3g} |")
    print("\n## Load (1-minute average) per case\n")
    print("| case | load before | load after | wall (s) |")
    print("|---|---:|---:|---:|")
    for d in loads:
        print(f"| {d['case']} | {d['load_before']:.2f} | {d['load_after']:.2f} "
              f"| {d['wall_s']:.0f} |")
    print("\n## Excluded from the figures: setup and the first step (numba compilation if the "
          "cache is cold, else its load; torch's first calls), first case\n")
    print("| system | setup (s) | first step (s) |")
    print("|---|---:|---:|")
    first_case = setups[0]["case"] if setups else None
    for d in setups:
        if d["case"] == first_case:
            print(f"| `{d['key']}` | {d['setup_s']:.2f} | {d['first_step_s']:.3f} |")
    print("\ncore-batch and core-sims bit-identical after the warm-up: "
          + ("yes" if all(d["core_identical"] for d in loads) else "NO"))
    return dict(rows=rows, loads=loads, setup=setups)


# ----------------------------------------------------------------------------- core scaling
def ours_steps(sim, goals, k):
    """Mean thread CPU time of ``k`` steps of our Simulator (preferred velocities untimed)."""
    from bench_core import pref_towards as circle_pref

    t = 0.0
    for _ in range(k):
        sim.set_pref_velocities(circle_pref(sim.positions, goals))
        t0 = time.thread_time()
        sim.step()
        t += time.thread_time() - t0
    return t / k


def rvo_steps(sim, goals, k):
    """Mean thread CPU time of ``k`` RVO2 ``do_step`` calls (per-agent I/O untimed)."""
    from bench_core import rvo_steps as rvo_total

    return rvo_total(sim, goals, k) / k


def core_scaling(args, peers):
    from bench_core import DEFAULTS, circle_layout

    if "pyrvo" not in peers:
        print("--core-scaling needs pyrvo (RVO2): nothing to compare with")
        return dict(core_scaling=[])
    pyrvo = peers["pyrvo"]
    sizes = [1000, 2000] if args.quick else [1000, 2000, 5000, 10000, 20000, 50000, 100000]
    budget = 2e4 if args.quick else 2.5e5  # agent-steps per repetition and simulator
    d = DEFAULTS
    out = []
    for n in sizes:
        l0 = load1()
        pos0, goals = circle_layout(n)
        ours = Simulator(time_step=0.25, num_threads=1, **d)
        ours.add_agents(pos0)
        rvo = pyrvo.RVOSimulator(0.25, d["neighbor_dist"], d["max_neighbors"], d["time_horizon"],
                                 d["time_horizon_obst"], d["radius"], d["max_speed"])
        for p in pos0:
            rvo.add_agent((float(p[0]), float(p[1])))

        warm = 2 if args.quick else 5
        ours_steps(ours, goals, warm)
        rvo_steps(rvo, goals, warm)
        k = max(3, int(budget / n))
        t_ours, t_rvo = [], []
        for _ in range(args.reps):  # alternating
            t_ours.append(ours_steps(ours, goals, k))
            t_rvo.append(rvo_steps(rvo, goals, k))
        ratios = [a / b for a, b in zip(t_ours, t_rvo, strict=True)]
        out.append(dict(agents=n, ours_ms=1e3 * statistics.median(t_ours),
                        rvo2_ms=1e3 * statistics.median(t_rvo),
                        ratio=statistics.median(t_ours) / statistics.median(t_rvo),
                        ratio_min=min(ratios), ratio_max=max(ratios), steps_per_rep=k,
                        load_before=l0, load_after=load1()))
        print(f"{n} agents done", file=sys.stderr, flush=True)
    print(f"\n## Core against RVO2, one thread, thread CPU time per step ({args.reps} alternating "
          "repetitions, medians; Circle layout at Circle-250's density)\n")
    print("| agents | ours (ms/step) | RVO2 C++ (ms/step) | ours / RVO2 | per-rep min-max "
          "| steps per rep | load before / after |")
    print("|---:|---:|---:|---:|---|---:|---|")
    for r in out:
        print(f"| {r['agents']:,} | {r['ours_ms']:.2f} | {r['rvo2_ms']:.2f} | {r['ratio']:.2f} "
              f"| {r['ratio_min']:.2f}-{r['ratio_max']:.2f} | {r['steps_per_rep']} "
              f"| {r['load_before']:.2f} / {r['load_after']:.2f} |")
    if len(out) > 1:
        ln = np.log([r["agents"] for r in out])
        s_ours = np.polyfit(ln, np.log([r["ours_ms"] for r in out]), 1)[0]
        s_rvo = np.polyfit(ln, np.log([r["rvo2_ms"] for r in out]), 1)[0]
        print(f"\nlog-log slope of time per step against agents: ours {s_ours:.2f}, "
              f"RVO2 {s_rvo:.2f}")
    return dict(core_scaling=out)


# ----------------------------------------------------------------------------- main
def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help=f"small sizes, few repetitions (cases {QUICK_CASES}): seconds")
    ap.add_argument("--cases", default=None,
                    help=f"comma-separated WORLDSxAGENTS (default {DEFAULT_CASES})")
    ap.add_argument("--reps", type=int, default=None, help="repetitions (default 5; quick 2)")
    ap.add_argument("--steps", type=int, default=None,
                    help="steps per repetition (default 100; quick 10)")
    ap.add_argument("--warmup", type=int, default=None,
                    help="untimed steps first (default 5; quick 2)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--core-scaling", action="store_true",
                    help="the core against RVO2 at 1k-100k agents instead of the table")
    args = ap.parse_args()
    args.parser = ap
    q = args.quick
    args.cases = args.cases or (QUICK_CASES if q else DEFAULT_CASES)
    args.reps = args.reps if args.reps is not None else (2 if q else 5)
    args.steps = args.steps if args.steps is not None else (10 if q else 100)
    args.warmup = args.warmup if args.warmup is not None else (2 if q else 5)
    for name in ("reps", "steps", "warmup"):
        if getattr(args, name) < 1:
            ap.error(f"--{name} must be >= 1, got {getattr(args, name)}")
    if not args.core_scaling:
        parse_cases(args.cases, ap)  # fail on a bad --cases before any work

    peers = import_peers()
    numba.set_num_threads(1)
    if "vmas" in peers:
        import torch

        torch.set_num_threads(1)
    warm = numba_cache_warm()
    t0 = time.perf_counter()
    probe = orca_env.parallel_env(CONFIG)
    probe.reset(seed=args.seed)
    t_probe = time.perf_counter() - t0
    args.max_steps = probe.max_steps
    dists = ("numpy", "numba", "torch", "pyrvo", "vmas", "mpe2", "pettingzoo", "gymnasium")
    versions = {d: version(d) for d in dists}
    versions["orca-env"] = commit() or version("orca-env")
    machine = dict(cpus=os.cpu_count(), cpu_model=cpu_model(), python=sys.version.split()[0])
    load0 = load1()
    print(f"# orca-env and its peers: {machine['cpus']} CPUs ({machine['cpu_model']}), "
          f"Python {machine['python']}")
    print("versions: " + ", ".join(f"{k} {v}" for k, v in versions.items() if v))
    print(f"1-minute load average before: {load0:.2f}")
    cache = {True: "warm", False: "cold: compiled in this run", None: "unknown"}[warm]
    print(f"import orca_env and this script: {_T_IMPORT:.2f} s; first env built and reset: "
          f"{t_probe:.2f} s (numba cache {cache}; excluded from every figure)")
    result = core_scaling(args, peers) if args.core_scaling else peers_table(args, peers)
    load_end = load1()
    print(f"\n1-minute load average before / after: {load0:.2f} / {load_end:.2f}")
    print(json.dumps(dict(machine=machine, versions=versions, load_before=load0,
                          load_after=load_end, reps=args.reps, steps=args.steps,
                          warmup=args.warmup, missing=sorted(set(PEERS) - set(peers)),
                          numba_cache_warm=warm, import_s=_T_IMPORT, first_env_s=t_probe,
                          **result)))


if __name__ == "__main__":
    main()
