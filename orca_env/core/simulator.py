"""The ORCA simulator: RVO2 2.0's ``RVOSimulator``, structure-of-arrays state around numba kernels.

One :meth:`Simulator.step` is RVO2's ``doStep``: build the agent kd-tree, compute every active
agent's neighbours and new velocity into a buffer, then move all agents (with the obstacle and
boundary correction described in :func:`orca_env.core.kernels.apply_velocities`).

Beyond RVO2: per-agent responsibility weights, visibility layers (who avoids whom: ``layer``
and ``avoid_mask``), agent lifecycle (add at any time, deactivate, reactivate, clear), a walkable
boundary, an O(m log m) obstacle index, step telemetry, input validation with clear errors, and
pickling.
"""

from __future__ import annotations

import functools
import math
import numbers
import reprlib
import warnings

import numba
import numpy as np

from . import families, kdtree, kernels, obstacles

# Per-agent parameters: name -> (dtype, check, message). ``check`` receives a numpy array. Each
# has a ``Simulator.__init__`` keyword (its default), storage ``self._<name>``, and a field of
# the same name in ``kernels.AgentParams``; see the checklist there to add one.
# Every numeric input has a bound: beyond it float64 geometry overflows (ORCA squares lengths
# and speeds) or buffers would need impossible memory. They are far outside any crowd.
#: Largest radius, neighbour distance or query range (m).
MAX_LENGTH = 1e6
#: Largest speed (m/s).
MAX_SPEED = 1e6
#: Largest time step or time horizon (s).
MAX_DURATION = 1e6
#: Largest max_neighbors, query ``k`` and ``max_count``.
MAX_COUNT = 10_000
#: Largest responsibility weight.
MAX_WEIGHT = 1e6
MAX_COORD = obstacles.MAX_COORD
#: Default ``layer``: every agent is in layer 1 (bit 0).
DEFAULT_LAYER = 1
#: Default ``avoid_mask``: all 64 bits set (-1 in two's complement), every layer is avoided.
ALL_LAYERS = -1

# Bit-field parameters (layer, avoid_mask): integers (integer dtype for arrays; no bools, no
# floats, which cannot hold every 64-bit pattern) within int64.
_BIT_FIELDS = ("layer", "avoid_mask")
_BIT_FIELD_MESSAGE = "must be an integer bit field in int64 range (-2**63 .. 2**63 - 1)"


def _is_bit_field(a):
    a = np.asarray(a)
    if not np.issubdtype(a.dtype, np.integer):
        return np.zeros(a.shape, dtype=bool)
    if a.dtype == np.uint64:
        return a <= np.uint64(2**63 - 1)
    return np.ones(a.shape, dtype=bool)


_AGENT_PARAMS = {
    "radius": (np.float64, lambda a: (a > 0) & (a <= MAX_LENGTH),
               f"must be > 0 and <= {MAX_LENGTH:g}"),
    "max_speed": (np.float64, lambda a: (a >= 0) & (a <= MAX_SPEED),
                  f"must be >= 0 and <= {MAX_SPEED:g}"),
    "neighbor_dist": (np.float64, lambda a: (a >= 0) & (a <= MAX_LENGTH),
                      f"must be >= 0 and <= {MAX_LENGTH:g}"),
    "max_neighbors": (np.int64, lambda a: (a >= 0) & (a <= MAX_COUNT),
                      f"must be an integer >= 0 and <= {MAX_COUNT}"),
    "time_horizon": (np.float64, lambda a: (a > 0) & (a <= MAX_DURATION),
                     f"must be > 0 and <= {MAX_DURATION:g}"),
    "time_horizon_obst": (np.float64, lambda a: (a > 0) & (a <= MAX_DURATION),
                          f"must be > 0 and <= {MAX_DURATION:g}"),
    "responsibility": (np.float64, lambda a: (a >= 0) & (a <= MAX_WEIGHT),
                       f"must be >= 0 and <= {MAX_WEIGHT:g}"),
    "layer": (np.int64, lambda a: _is_bit_field(a), _BIT_FIELD_MESSAGE),
    "avoid_mask": (np.int64, lambda a: _is_bit_field(a), _BIT_FIELD_MESSAGE),
}

#: Each parameter's dtype as a ``np.dtype`` (compared with an array's faster than the type).
_PARAM_DTYPES = {name: np.dtype(dtype) for name, (dtype, _, _) in _AGENT_PARAMS.items()}

if set(_AGENT_PARAMS) != set(kernels.AgentParams._fields):  # see the checklist in kernels.py
    raise ImportError("_AGENT_PARAMS and kernels.AgentParams must name the same parameters")

# Per-agent state arrays: attribute -> (dtype, trailing shape).
_AGENT_ARRAYS = {
    "_pos": (np.float64, (2,)),
    "_vel": (np.float64, (2,)),
    "_pref": (np.float64, (2,)),
    **{"_" + name: (dtype, ()) for name, (dtype, _, _) in _AGENT_PARAMS.items()},
    "_active": (np.bool_, ()),
    "_n_lines": (np.int64, ()),
    "_lp3": (np.bool_, ()),
    "_intervention": (np.float64, ()),
    "_corrected": (np.bool_, ()),
}

# Zero-length agent arrays, shared by every simulator without agents.
_EMPTY_AGENT_ARRAYS = {attr: np.zeros((0, *shape), dtype=dtype)
                       for attr, (dtype, shape) in _AGENT_ARRAYS.items()}

# Zero-length obstacle arrays, shared by every simulator without obstacles.
_EMPTY_OBSTACLES = {
    "points": np.zeros((0, 2)),
    "next_ids": np.zeros(0, dtype=np.int64),
    "prev_ids": np.zeros(0, dtype=np.int64),
    "unit_dirs": np.zeros((0, 2)),
    "convex": np.zeros(0, dtype=bool),
    "polygon": np.zeros(0, dtype=np.int64),
}

# Writable empty arrays for the step kernels' optional inputs (a numba global would be a
# read-only constant, another type, hence another compiled specialisation).
_NO_VLINES = np.zeros((0, 0, 4))
_NO_NV = np.zeros(0, dtype=np.int64)

_OBSTACLE_FIELDS = ("points", "next_ids", "prev_ids", "unit_dirs", "convex", "polygon")


@functools.lru_cache(maxsize=64)
def _constant_state(k):
    """The part of k new agents' state that does not depend on them (read-only, shared)."""
    out = {}
    for attr, (dtype, shape) in _AGENT_ARRAYS.items():
        out[attr[1:]] = np.zeros((k, *shape), dtype=dtype)
    out["active"] = np.ones(k, dtype=bool)
    out["kd_order"] = np.arange(k, dtype=np.int64)
    out["clock"] = np.zeros(1)
    for a in out.values():
        a.flags.writeable = False
    return out


def _readonly(a):
    v = a.view()
    v.flags.writeable = False
    return v


def _check_scalar(name, value, check, message, integer=False):
    """Validate one scalar parameter; returns it as float or int."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    try:
        as_float = float(value)
    except OverflowError:  # an int beyond float64 (10**400)
        raise ValueError(f"{name} must be a finite number, got {reprlib.repr(value)}") from None
    if not math.isfinite(as_float):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if integer:
        if not as_float.is_integer():
            raise ValueError(f"{name} must be an integer, got {value!r}")
        value = int(value)
    if not check(value):
        raise ValueError(f"{name} {message}, got {value!r}")
    return value


def _as_points(name, value, n=None):
    """Validate an (n, 2) array of real, finite, bounded numbers; returns a float64 copy."""
    return obstacles.as_points(name, value, n)


def _as_point(name, value):
    a = _as_points(name, [value] if np.ndim(value) == 1 else value)
    if a.shape[0] != 1:
        raise ValueError(f"{name} must be one (x, y) pair, got {value!r}")
    return a[0]


class Simulator:
    """ORCA crowd simulator with RVO2 2.0 semantics.

    Constructor keywords after ``time_step`` are the defaults for agents added later (RVO2's
    ``setAgentDefaults``); each can be overridden per agent.

    Every numeric input is bounded, and a value outside its bound is a ``ValueError`` naming
    the argument: lengths (radius, neighbour distance, query ranges) up to :data:`MAX_LENGTH`
    (1e6 m), speeds up to :data:`MAX_SPEED` (1e6 m/s), durations up to :data:`MAX_DURATION`
    (1e6 s), counts (max_neighbors, query ``k``, ``max_count``) up to :data:`MAX_COUNT` (10,000),
    coordinates within +-:data:`MAX_COORD` (1e9 m). Beyond them float64 geometry overflows or
    buffers need impossible memory.

    Args:
        time_step: simulation step in seconds; must be > 0. Smaller: more accurate, more steps.
        neighbor_dist: how far (metres) an agent looks for other agents; must be >= 0. Larger:
            safer, but slower.
        max_neighbors: how many other agents an agent takes into account; must be >= 0. Larger:
            safer, but slower.
        time_horizon: seconds ahead that agent-agent collisions are avoided; must be > 0. Larger:
            agents react sooner and more, but are less free to move.
        time_horizon_obst: the same against obstacles; must be > 0.
        radius: agent radius in metres; must be > 0.
        max_speed: agent maximum speed in m/s; must be >= 0 (0: the agent stands still).
        responsibility: the agent's weight in sharing avoidance; must be >= 0. Agent i takes the
            share w_i / (w_i + w_j) of avoiding j (1 for everyone = RVO2's 0.5). 0 makes a
            non-reactive agent (a dynamic obstacle): it yields to no agent that has a positive
            weight, and those avoid it fully. Two zero weights share 0.5 each.
        layer: int64 bit field, the layers the agent belongs to (default 1: bit 0). Any int64
            value; 0 puts the agent in no layer, so no agent avoids it.
        avoid_mask: int64 bit field, the layers of the agents this agent avoids (default -1:
            all 64 bits, every layer). Agent i builds an ORCA line for neighbour j, and counts j
            among its ``max_neighbors``, only if ``avoid_mask[i] & layer[j] != 0``; agents it
            does not avoid take no neighbour slot. Its share of a pair it avoids does not change
            when the other does not avoid it back: it still takes ``w_i / (w_i + w_j)`` (0.5 for
            equal weights). That is CrowdNav's invisible robot (humans whose ``avoid_mask``
            excludes the robot's layer ignore it; the robot's ORCA still assumes they do half),
            and the trade-off of one-sided visibility: ORCA's collision-free guarantee needs
            both sides to avoid, so such pairs can collide. The defaults are RVO2 (everyone
            avoids everyone). Integers only (no bools, no floats), within int64.
            :meth:`query_agent_neighbors` ignores both (observations see every active agent).
        num_threads: numba threads for the velocity computation (None: numba's default). Results
            are bit-identical for any value.
    """

    def __init__(
        self,
        time_step=0.25,
        neighbor_dist=15.0,
        max_neighbors=10,
        time_horizon=10.0,
        time_horizon_obst=10.0,
        radius=1.5,
        max_speed=2.0,
        responsibility=1.0,
        layer=DEFAULT_LAYER,
        avoid_mask=ALL_LAYERS,
        num_threads=None,
    ):
        self._time_step = _check_scalar("time_step", time_step, lambda a: 0 < a <= MAX_DURATION,
                                        f"must be > 0 and <= {MAX_DURATION:g}")
        given = locals()  # the per-agent defaults, by the names in _AGENT_PARAMS
        self._defaults = {}
        for name, (dtype, check, message) in _AGENT_PARAMS.items():
            value = given[name]
            if name in _BIT_FIELDS:
                if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                    raise ValueError(f"{name} {message}, got {value!r}")
                if not -(2**63) <= int(value) < 2**63:
                    raise ValueError(f"{name} {message}, got {value!r}")
                self._defaults[name] = int(value)
                continue
            self._defaults[name] = _check_scalar(
                name, value, check, message, integer=dtype is np.int64
            )
        if num_threads is not None:
            num_threads = _check_scalar(
                "num_threads",
                num_threads,
                lambda a: (a >= 1) & (a <= numba.config.NUMBA_NUM_THREADS),
                f"must be between 1 and {numba.config.NUMBA_NUM_THREADS}",
                integer=True,
            )
        self._num_threads = num_threads
        self._init_state()

    def new_like(self):
        """A new simulator with this one's time step, per-agent defaults and ``num_threads``.

        It has no agents and no obstacles, as if constructed afresh with the same arguments,
        which are not validated again (the env builds one per world at every reset). A
        subclass's own constructor is not run.
        """
        sim = object.__new__(type(self))
        sim._time_step = self._time_step
        sim._defaults = dict(self._defaults)
        sim._num_threads = self._num_threads
        sim._init_state()
        return sim

    def _init_state(self):
        """The state of a simulator without agents or obstacles (the constructor's end)."""
        # The clock as a 1-element array, so that a batched stepper can share it (bind_storage).
        self._clock = np.zeros(1)
        self._n = 0
        self._alloc(0)
        self._kd_order = np.zeros(0, dtype=np.int64)
        # Zero-length arrays are shared (adding obstacles replaces them, never writes them).
        self._obst = dict(_EMPTY_OBSTACLES)
        self._is_boundary = _EMPTY_OBSTACLES["convex"]
        self._seg_order = _EMPTY_OBSTACLES["polygon"]
        self._seg_boxes = np.empty((2, 4))
        self._index_dirty = False
        self._obstacles = None  # kernels' Obstacles bundle, rebuilt when obstacles change
        self._last = None  # state the last step started from, for the debug accessors
        # kernels.AgentParams of copies of the per-agent parameters, shared by the steps (and
        # their debug snapshots) until parameters or agents change; None: to be rebuilt.
        self._agent_params = None

    # ------------------------------------------------------------------ storage
    def _alloc(self, capacity):
        self._agent_params = None
        n = self._n
        if capacity == 0:  # no agents: the shared empty arrays (nothing can be written to them)
            for attr, a in _EMPTY_AGENT_ARRAYS.items():
                setattr(self, attr, a)
            return
        for attr, (dtype, shape) in _AGENT_ARRAYS.items():
            new = np.zeros((capacity, *shape), dtype=dtype)
            if n:
                new[:n] = getattr(self, attr)[:n]
            setattr(self, attr, new)

    def _grow(self, extra):
        """Room for ``extra`` more agents; returns whether the arrays are new (all zeros past n)."""
        need = self._n + extra
        if need > self._pos.shape[0]:
            self._alloc(max(need, 2 * self._pos.shape[0], 16))
            return True
        return False

    # ------------------------------------------------------------------ properties
    @property
    def num_agents(self):
        """Number of agents added (active or not)."""
        return self._n

    @property
    def global_time(self):
        """Simulated time in seconds."""
        return float(self._clock[0])

    @property
    def time_step(self):
        """Step length in seconds (settable; must be > 0)."""
        return self._time_step

    @time_step.setter
    def time_step(self, value):
        self._time_step = _check_scalar("time_step", value, lambda a: 0 < a <= MAX_DURATION,
                                        f"must be > 0 and <= {MAX_DURATION:g}")

    @property
    def positions(self):
        """(n_agents, 2) float64, metres, world frame; read-only."""
        return _readonly(self._pos[: self._n])

    @property
    def velocities(self):
        """(n_agents, 2) float64, m/s, world frame; read-only."""
        return _readonly(self._vel[: self._n])

    @property
    def pref_velocities(self):
        """(n_agents, 2) float64, preferred velocities in m/s; read-only."""
        return _readonly(self._pref[: self._n])

    @property
    def radii(self):
        """(n_agents,) float64 radii in metres; read-only."""
        return _readonly(self._radius[: self._n])

    @property
    def max_speeds(self):
        """(n_agents,) float64 maximum speeds in m/s; read-only."""
        return _readonly(self._max_speed[: self._n])

    @property
    def neighbor_dists(self):
        """(n_agents,) float64 neighbour distances in metres; read-only."""
        return _readonly(self._neighbor_dist[: self._n])

    @property
    def max_neighbors_arr(self):
        """(n_agents,) int64 maximum neighbour counts; read-only."""
        return _readonly(self._max_neighbors[: self._n])

    @property
    def time_horizons(self):
        """(n_agents,) float64 agent time horizons in seconds; read-only."""
        return _readonly(self._time_horizon[: self._n])

    @property
    def time_horizons_obst(self):
        """(n_agents,) float64 obstacle time horizons in seconds; read-only."""
        return _readonly(self._time_horizon_obst[: self._n])

    @property
    def responsibilities(self):
        """(n_agents,) float64 responsibility weights; read-only."""
        return _readonly(self._responsibility[: self._n])

    @property
    def layers(self):
        """(n_agents,) int64 layer bit fields (the layers each agent belongs to); read-only."""
        return _readonly(self._layer[: self._n])

    @property
    def avoid_masks(self):
        """(n_agents,) int64 avoid-mask bit fields (the layers each agent avoids); read-only."""
        return _readonly(self._avoid_mask[: self._n])

    @property
    def active(self):
        """(n_agents,) bool, agent is simulated and seen by others; read-only."""
        return _readonly(self._active[: self._n])

    @property
    def num_orca_lines(self):
        """(n_agents,) int64, ORCA lines in each agent's LP in the last step; read-only."""
        return _readonly(self._n_lines[: self._n])

    @property
    def used_lp3(self):
        """(n_agents,) bool, the LP was infeasible and LP3 ran in the last step; read-only."""
        return _readonly(self._lp3[: self._n])

    @property
    def intervention(self):
        """(n_agents,) float64, |new velocity - preferred velocity| in the last step; read-only."""
        return _readonly(self._intervention[: self._n])

    @property
    def position_corrected(self):
        """(n_agents,) bool, the obstacle/boundary correction moved the agent; read-only."""
        return _readonly(self._corrected[: self._n])

    @property
    def obstacle_points(self):
        """(m, 2) float64 obstacle vertices (boundary vertices clockwise); read-only."""
        return _readonly(self._obst["points"])

    @property
    def obstacle_next(self):
        """(m,) int64, next vertex of each obstacle vertex; read-only."""
        return _readonly(self._obst["next_ids"])

    @property
    def obstacle_prev(self):
        """(m,) int64, previous vertex of each obstacle vertex; read-only."""
        return _readonly(self._obst["prev_ids"])

    @property
    def obstacle_unit_dirs(self):
        """(m, 2) float64, unit direction from each vertex to the next; read-only."""
        return _readonly(self._obst["unit_dirs"])

    @property
    def obstacle_convex(self):
        """(m,) bool, RVO2's convexity flag of each vertex; read-only."""
        return _readonly(self._obst["convex"])

    @property
    def obstacle_polygon(self):
        """(m,) int64, polygon id of each vertex; read-only."""
        return _readonly(self._obst["polygon"])

    @property
    def polygon_is_boundary(self):
        """(n_polygons,) bool, the polygon is a walkable boundary; read-only."""
        return _readonly(self._is_boundary)

    @property
    def obstacle_index(self):
        """(seg_order, boxes): the obstacle index, read-only, for numba kernels of other layers.

        See :func:`orca_env.core.obstacles.build_segment_index`; built first if obstacles
        changed. Pass it with ``obstacle_points`` and ``obstacle_next`` to the njit queries of
        :mod:`orca_env.core.obstacles` (``query_visibility``, ``query_segments``).
        """
        obst = self._index()
        return _readonly(obst.seg_order), _readonly(obst.seg_boxes)

    @property
    def num_obstacle_vertices(self):
        """Number of obstacle vertices (= segments)."""
        return self._obst["points"].shape[0]

    # ------------------------------------------------------------------ agents
    def _params(self, k, overrides, skip=()):
        """Validated per-agent parameter arrays of length k (defaults where None)."""
        out = {}
        for name, (dtype, check, message) in _AGENT_PARAMS.items():
            if name in skip:
                continue
            value = overrides.get(name)
            if value is None:
                value = self._defaults[name]
            arr = np.asarray(value)
            # Fast path (the env's resets): a valid real array passes the bounds check, whose
            # bounds are finite (NaN and inf fail it); anything else takes the checks below,
            # which raise the same errors as always.
            if arr.dtype.kind in "iuf" and arr.shape in ((k,), ()) and (
                    arr.dtype.kind != "f" or dtype is not np.int64) and check(arr).all():
                out[name] = np.full(k, arr, dtype=dtype) if arr.ndim == 0 else arr.astype(dtype)
                continue
            if arr.dtype == bool or not (
                np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)
            ):
                raise ValueError(f"{name} must be a real number or array, got {value!r}")
            if arr.ndim == 0:
                arr = np.full(k, arr)
            if arr.shape != (k,):
                raise ValueError(f"{name} must be a scalar or have shape ({k},), got {arr.shape}")
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"{name} must be finite, got {value!r}")
            if dtype is np.int64 and not np.all(np.asarray(arr, dtype=np.float64) % 1 == 0):
                raise ValueError(f"{name} must be an integer, got {value!r}")
            bad = ~check(arr)
            if np.any(bad):
                raise ValueError(f"{name} {message}, got {arr[bad][0].item()!r}")
            out[name] = arr.astype(dtype)
        return out

    def add_agent(
        self,
        position,
        velocity=(0.0, 0.0),
        radius=None,
        max_speed=None,
        neighbor_dist=None,
        max_neighbors=None,
        time_horizon=None,
        time_horizon_obst=None,
        responsibility=None,
        layer=None,
        avoid_mask=None,
    ):
        """Add one agent; parameters left as None take the simulator's defaults.

        Args:
            position: (x, y) in metres.
            velocity: initial (vx, vy) in m/s.
            radius: see :class:`Simulator`.
            max_speed: see :class:`Simulator`.
            neighbor_dist: see :class:`Simulator`.
            max_neighbors: see :class:`Simulator`.
            time_horizon: see :class:`Simulator`.
            time_horizon_obst: see :class:`Simulator`.
            responsibility: see :class:`Simulator`.
            layer: see :class:`Simulator`.
            avoid_mask: see :class:`Simulator`.

        Returns:
            The new agent's id (0, 1, 2, ... in order of addition).
        """
        p = _as_point("position", position)
        v = _as_point("velocity", velocity)
        params = dict(
            radius=radius,
            max_speed=max_speed,
            neighbor_dist=neighbor_dist,
            max_neighbors=max_neighbors,
            time_horizon=time_horizon,
            time_horizon_obst=time_horizon_obst,
            responsibility=responsibility,
            layer=layer,
            avoid_mask=avoid_mask,
        )
        for name, value in params.items():
            if value is not None and np.ndim(value) != 0:
                raise ValueError(f"{name} must be a scalar, got {value!r}")
        return int(self.add_agents(p[None], velocities=v[None], **params)[0])

    def check_agent_params(self, k, **params):
        """The per-agent parameter arrays :meth:`add_agents` would take for k agents.

        Validated as :meth:`add_agents` validates them (the same errors); missing ones take the
        defaults. Pass (some of) the result back as ``add_agents(..., validated=...)`` to add
        agents with these parameters again without validating them again.

        Returns:
            ``{name: (k,) array}`` for every per-agent parameter (``radius`` ...
            ``avoid_mask``), float64 or int64 arrays of the simulator's own.
        """
        unknown = set(params) - set(_AGENT_PARAMS)
        if unknown:
            raise ValueError(
                f"unknown agent parameter(s) {sorted(unknown)}; valid: {list(_AGENT_PARAMS)}"
            )
        return self._params(k, params)

    def add_agents(self, positions, velocities=None, *, validated=None, **params):
        """Add k agents at once (vectorised :meth:`add_agent`).

        Args:
            positions: (k, 2) metres.
            velocities: (k, 2) m/s, or None for zeros.
            validated: None, or a dict of parameter arrays that :meth:`check_agent_params`
                returned for k agents, taken as they are (not validated again: for a caller
                that adds agents with the same parameters at every episode).
            **params: per-agent parameters (see :class:`Simulator`), each a scalar or a (k,)
                array; missing ones take the defaults.

        Returns:
            (k,) int64 ids of the new agents.
        """
        p, v, vals = self._new_agents(positions, velocities, validated, params)
        k = p.shape[0]
        fresh = self._grow(k)  # fresh arrays are zeros: the zero state need not be written
        lo, hi = self._n, self._n + k
        self._pos[lo:hi] = p
        if v is not None:
            self._vel[lo:hi] = v
        elif not fresh:
            self._vel[lo:hi] = 0.0
        for name, arr in vals.items():
            getattr(self, "_" + name)[lo:hi] = arr
        self._active[lo:hi] = True
        self._agent_params = None
        if not fresh:
            for attr in ("_pref", "_n_lines", "_lp3", "_intervention", "_corrected"):
                getattr(self, attr)[lo:hi] = 0
        self._n = hi
        ids = np.arange(lo, hi, dtype=np.int64)
        self._kd_order = np.concatenate([self._kd_order, ids]) if lo else ids.copy()
        return ids

    def new_agents_state(self, positions, velocities=None, *, validated=None, **params):
        """The state :meth:`add_agents` would give this simulator, which must have no agents.

        Validated as :meth:`add_agents` validates (the same errors); the simulator is not
        changed. For a batched stepper that keeps the agents in its own arrays: it writes this
        state there and hands them over with ``bind_storage(copy=False, num_agents=k)``, which
        leaves the simulator as ``add_agents`` followed by ``bind_storage`` would (the env's
        resets: no per-agent arrays of the simulator's own to allocate, fill and copy).

        Returns:
            ``{name: array}`` for every :data:`STORAGE_FIELDS` name, k rows (``clock``: (1,)).
            Arrays that do not depend on the arguments (zeros, ``active`` all True,
            ``kd_order`` 0..k-1, ``clock``) are read-only and shared: copy them, never write.

        Raises:
            ValueError: On bad input (see :meth:`add_agents`), or if agents were added.
        """
        if self._n:
            raise ValueError(f"new_agents_state: this simulator has {self._n} agents already; "
                             f"add_agents adds more")
        p, v, vals = self._new_agents(positions, velocities, validated, params)
        state = dict(_constant_state(p.shape[0]))
        state["pos"] = p
        if v is not None:
            state["vel"] = v
        state.update(vals)
        return state

    def _new_agents(self, positions, velocities, validated, params):
        """:meth:`add_agents`' validated input: positions, velocities (or None), parameters."""
        unknown = set(params) - set(_AGENT_PARAMS)
        if unknown:
            raise ValueError(
                f"unknown agent parameter(s) {sorted(unknown)}; valid: {list(_AGENT_PARAMS)}"
            )
        p = _as_points("positions", positions)
        k = p.shape[0]
        v = None if velocities is None else _as_points("velocities", velocities, k)
        if validated:
            both = set(validated) & set(params)
            if both:
                raise ValueError(f"agent parameter(s) {sorted(both)} given both as keywords "
                                 f"and in validated")
            bad = [name for name, a in validated.items()
                   if name not in _AGENT_PARAMS or not isinstance(a, np.ndarray)
                   or a.shape != (k,) or a.dtype != _PARAM_DTYPES[name]]
            if bad:
                raise ValueError(f"validated must hold check_agent_params({k})'s arrays; "
                                 f"not these: {sorted(map(str, bad))}")
            vals = self._params(k, params, skip=validated)
            vals.update(validated)
        else:
            vals = self._params(k, params)
        return p, v, vals

    def _ids(self, ids, name="ids"):
        if isinstance(ids, np.ndarray) and ids.dtype == np.int64 and ids.ndim == 1:
            # Fast path for the env's per-step queries.
            if ids.size == 0 or (ids.min() >= 0 and ids.max() < self._n):
                return ids
        a = np.atleast_1d(np.asarray(ids))
        if a.ndim != 1 or (a.size and not np.issubdtype(a.dtype, np.integer)):
            raise ValueError(f"{name} must be agent ids (integers), got {ids!r}")
        a = a.astype(np.int64)
        bad = (a < 0) | (a >= self._n)
        if np.any(bad):
            raise ValueError(
                f"{name} contains {int(a[bad][0])}, not an agent id (0..{self._n - 1})"
            )
        return a

    def set_agent_params(self, ids, **params):
        """Change per-agent parameters of agents ``ids`` (scalars or arrays of len(ids)).

        Args:
            ids: agent id or ids.
            **params: any of radius, max_speed, neighbor_dist, max_neighbors, time_horizon,
                time_horizon_obst, responsibility, layer, avoid_mask.
        """
        a = self._ids(ids)
        unknown = set(params) - set(_AGENT_PARAMS)
        if unknown:
            raise ValueError(
                f"unknown agent parameter(s) {sorted(unknown)}; valid: {list(_AGENT_PARAMS)}"
            )
        current = {
            name: getattr(self, "_" + name)[a] for name in _AGENT_PARAMS if name not in params
        }
        vals = self._params(a.size, {**current, **params})
        self._agent_params = None
        for name in params:
            getattr(self, "_" + name)[a] = vals[name]

    def set_pref_velocities(self, pref_velocities):
        """Set all preferred velocities, (n_agents, 2) m/s."""
        self._pref[: self._n] = _as_points("pref_velocities", pref_velocities, self._n)

    def set_positions(self, positions):
        """Set all positions, (n_agents, 2) metres (no obstacle check: agents are teleported)."""
        self._pos[: self._n] = _as_points("positions", positions, self._n)

    def set_velocities(self, velocities):
        """Set all velocities, (n_agents, 2) m/s."""
        self._vel[: self._n] = _as_points("velocities", velocities, self._n)

    def deactivate_agents(self, ids):
        """Deactivate agents: they keep their state but are neither moved nor seen by others."""
        self._active[self._ids(ids)] = False

    def activate_agents(self, ids):
        """Reactivate agents deactivated before."""
        self._active[self._ids(ids)] = True

    def clear_agents(self):
        """Remove every agent; obstacles and the obstacle index are kept."""
        self._n = 0
        self._alloc(0)
        self._kd_order = np.zeros(0, dtype=np.int64)
        self._last = None

    # ------------------------------------------------------------------ obstacles
    def _add_polygon(self, v, is_boundary):
        first = self.num_obstacle_vertices
        rec = obstacles.polygon_records(v, first, self._is_boundary.size)
        for key in _OBSTACLE_FIELDS:
            self._obst[key] = np.concatenate([self._obst[key], rec[key]])
        self._is_boundary = np.append(self._is_boundary, is_boundary)
        self._index_dirty = True
        self._obstacles = None
        return first

    def _clean(self, vertices, name):
        v, removed, area = obstacles.clean_polygon(vertices, name)
        if removed:
            warnings.warn(
                f"{name}: dropped {removed} repeated consecutive vertex(es) (RVO2 would produce "
                "NaN there)",
                stacklevel=3,
            )
        return v, area

    def add_obstacle(self, vertices):
        """Add a polygon obstacle.

        Vertices are counter-clockwise (RVO2). Two vertices make a thin wall that blocks from
        both sides. A clockwise polygon is refused: RVO2 users list a bounding polygon clockwise
        to make a "negative" obstacle; here that is :meth:`add_boundary`, which also guarantees
        agents stay inside. Repeated consecutive vertices are dropped with a warning. Obstacles
        may be added at any time: the index is rebuilt before the next step or query.

        Args:
            vertices: (k, 2) metres, k >= 2.

        Returns:
            The id of the polygon's first vertex.
        """
        v, area = self._clean(vertices, "vertices")
        if area < 0:
            raise ValueError(
                f"vertices are clockwise: {v.tolist()!r}; add_obstacle expects counter-clockwise "
                "vertices. To keep agents inside a region, pass its outline to add_boundary()."
            )
        return self._add_polygon(v, False)

    def add_boundary(self, vertices):
        """Set the outline of the walkable region; agents' centres never leave it.

        Args:
            vertices: (k, 2) metres, k >= 3, counter-clockwise as a region. Stored clockwise
                (inward-facing), so that agents see its edges from inside as obstacle edges.

        Returns:
            The id of the boundary's first vertex.
        """
        v, area = self._clean(vertices, "vertices")
        if v.shape[0] < 3:
            raise ValueError(f"a boundary needs at least 3 distinct vertices, got {vertices!r}")
        if area < 0:
            raise ValueError(
                f"boundary vertices are clockwise: {v.tolist()!r}; add_boundary expects the "
                "region's outline counter-clockwise"
            )
        if np.any(self._is_boundary):
            raise ValueError("a boundary is already set; the walkable region has one outline")
        return self._add_polygon(v[::-1].copy(), True)

    def process_obstacles(self):
        """Build the obstacle index (RVO2's ``processObstacles``; O(m log m)).

        Called automatically before a step or query when obstacles changed, so calling it is
        only needed to control when the build time is spent.
        """
        self._seg_order, self._seg_boxes = obstacles.build_segment_index(
            self._obst["points"], self._obst["next_ids"]
        )
        self._index_dirty = False
        self._obstacles = None

    def _index(self):
        """The obstacle storage and index as the kernels' ``Obstacles`` bundle (built if needed)."""
        if self._index_dirty:
            self.process_obstacles()
        if self._obstacles is None:
            o = self._obst
            self._obstacles = obstacles.Obstacles(
                o["points"], o["next_ids"], o["prev_ids"], o["unit_dirs"], o["convex"],
                self._seg_order, self._seg_boxes,
            )  # fmt: skip
        return self._obstacles

    # ------------------------------------------------------------------ shared storage
    #: Agent arrays :meth:`bind_storage` takes, by keyword: ``_AGENT_ARRAYS`` without the
    #: underscore, plus ``kd_order`` and ``clock``.
    STORAGE_FIELDS = tuple(a[1:] for a in _AGENT_ARRAYS) + ("kd_order", "clock")

    def storage(self):
        """The agent state :meth:`bind_storage` would take over, by :data:`STORAGE_FIELDS` name.

        Views of this simulator's own arrays (``num_agents`` rows; ``clock`` of shape ``(1,)``):
        a batched stepper copies them into its arrays, then binds with ``copy=False``.
        """
        n = self._n
        out = {name: getattr(self, "_" + name)[:n] for name in self.STORAGE_FIELDS[:-2]}
        out["kd_order"] = self._kd_order
        out["clock"] = self._clock
        return out

    def bind_storage(self, copy=True, num_agents=None, **arrays):
        """Keep the agent state in the given arrays from now on (for a batched stepper).

        The env's step pipeline advances many worlds in one call on concatenated arrays; each
        world's ``Simulator`` is bound to its slice, so that its properties, queries and
        debug accessors see the state the pipeline writes. The current state is copied into
        the arrays first. Adding agents later reallocates, which ends the binding.

        Args:
            **arrays: One writable array per name of :data:`STORAGE_FIELDS`, of this
                simulator's ``num_agents`` rows (``clock``: shape ``(1,)``), with the dtype and
                trailing shape of the array it replaces. Not validated (an internal seam).
            copy: False when the arrays already hold this simulator's state (what
                :meth:`storage` gave): they are bound as they are.
            num_agents: With ``copy=False`` on a simulator without agents: the arrays hold
                ``num_agents`` agents (what :meth:`new_agents_state` gave), which it takes as
                its own, as if added with :meth:`add_agents`.
        """
        if num_agents is not None:
            self._n = int(num_agents)
        if not copy:
            self._clock = arrays["clock"]
            self._kd_order = arrays["kd_order"]
            for name in self.STORAGE_FIELDS[:-2]:
                setattr(self, "_" + name, arrays[name])
            self._agent_params = None
            return
        n = self._n
        for name in self.STORAGE_FIELDS:
            a = arrays[name]
            if name == "clock":
                a[0] = self._clock[0]
                self._clock = a
            elif name == "kd_order":
                a[:] = self._kd_order
                self._kd_order = a
            else:
                a[:] = getattr(self, "_" + name)[:n]
                setattr(self, "_" + name, a)
        self._agent_params = None

    def record_step_start(self):
        """Remember the state a step starts from, for :meth:`orca_lines` and friends.

        :meth:`step` does this itself; a batched stepper that advances this simulator's
        bound storage calls it first when it wants the debug accessors for that step.
        """
        n = self._n
        # The tree is built on demand by the debug accessors, from these copies.
        self._last = {
            "pos": self._pos[:n].copy(),
            "vel": self._vel[:n].copy(),
            "active": self._active[:n].copy(),
            "kd_order": self._kd_order.copy(),
            "params": self._params_bundle(),
            "time_step": self._time_step,
        }

    # ------------------------------------------------------------------ step
    def _build_tree(self, pos, active, persist, kd_order=None):
        """The agent kd-tree over the active agents (RVO2's ``buildAgentTree``).

        With ``persist`` the permutation the build produces is kept for the next build, as
        RVO2's KdTree keeps it (steps); fresh queries pass False and leave the state untouched.
        ``kd_order`` builds from another order than the current one (a recorded step start).
        """
        order = self._kd_order if kd_order is None else kd_order
        out = np.empty(order.size, dtype=np.int64)
        n = kdtree.partition_active(order, active, out)
        tree = kdtree.empty_tree(out[:n])
        kdtree.build_agent_tree(pos, tuple(tree))
        if persist:
            self._kd_order[:] = out  # the build permuted out[:n] in place (kept in place: bound)
        return tree

    def _threads(self):
        return numba.get_num_threads() if self._num_threads is None else self._num_threads

    def _params_bundle(self):
        """The per-agent parameters as ``kernels.AgentParams`` of copies (cached until changed)."""
        if self._agent_params is None:
            n = self._n
            self._agent_params = kernels.AgentParams(
                **{name: getattr(self, "_" + name)[:n].copy() for name in _AGENT_PARAMS}
            )
            self._max_nbr = int(self._max_neighbors[:n].max()) if n else 0
        return self._agent_params

    def step(self):
        """Advance the simulation by one time step (RVO2's ``doStep``).

        The first step of a process compiles the core's kernels when numba's cache lacks them,
        after a line on stderr saying so (:mod:`orca_env.core.families`).
        """
        if _CORE_PENDING:
            _ensure_core()
        n = self._n
        obst = tuple(self._index())
        pos = self._pos[:n]
        vel = self._vel[:n]
        pref = self._pref[:n]
        active = self._active[:n]
        tree = self._build_tree(pos, active, persist=True)
        ids = tree.order  # the active agents (in tree order: any order gives the same results)
        params = self._params_bundle()
        # kernels.StepOutput's fields, as a plain tuple (see kernels: cheaper to dispatch).
        out = (vel.copy(), self._n_lines[:n], self._lp3[:n], self._corrected[:n],
               self._intervention[:n])  # fmt: skip
        self._last = {
            "pos": pos.copy(),
            "vel": vel.copy(),
            "tree": tree,
            "params": params,
            "time_step": self._time_step,
        }
        # Writable empty velocity constraints (RVO2's LP): the types the env's step passes, so
        # the core and the env share one compiled _compute_block.
        args = (ids, pos, vel, pref, tuple(params), self._time_step, tuple(tree), obst,
                self._max_nbr, out, _NO_VLINES, _NO_NV)  # fmt: skip
        threads = self._threads() if ids.size >= 64 else 1  # small steps stay serial
        if threads > 1:
            previous = numba.get_num_threads()
            numba.set_num_threads(threads)
            try:
                kernels.compute_velocities_parallel(*args, 4 * threads)
            finally:
                numba.set_num_threads(previous)
        elif ids.size:
            kernels.compute_velocities_serial(*args)
        kernels.apply_velocities(ids, active, pos, vel, pref, self._time_step, obst, out)
        self._clock[0] += self._time_step

    # ------------------------------------------------------------------ queries
    def _agent_id(self, i):
        if isinstance(i, bool) or not isinstance(i, numbers.Integral) or not 0 <= i < self._n:
            raise ValueError(f"agent id must be an integer in 0..{self._n - 1}, got {i!r}")
        return int(i)

    def _debug(self, i):
        """Neighbours and ORCA lines of agent i in the last step (recomputed from its state)."""
        i = self._agent_id(i)
        last = self._last
        empty = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros((0, 4)))
        if last is not None and "tree" not in last:  # recorded by record_step_start
            last["tree"] = self._build_tree(last["pos"], last["active"], persist=False,
                                            kd_order=last["kd_order"])
        if last is None or i >= last["pos"].shape[0] or not np.any(last["tree"].order == i):
            return empty
        pos = last["pos"]
        params = last["params"]
        obst = self._index()
        k = int(params.max_neighbors[i])
        nbr_ids = np.zeros(max(k, 1), dtype=np.int64)
        nbr_dsq = np.zeros(max(k, 1))
        stack = np.empty(last["tree"].order.size + 2, dtype=np.int64)
        n_nbr = kdtree.query_agent_neighbors(
            i, pos[i, 0], pos[i, 1], params.neighbor_dist[i] ** 2, k, pos, *last["tree"], stack,
            nbr_ids, nbr_dsq, True, params.avoid_mask[i], params.layer,
        )  # fmt: skip
        reach = params.time_horizon_obst[i] * params.max_speed[i] + params.radius[i]
        cap = 16
        while True:
            obst_ids = np.empty(cap, dtype=np.int64)
            n_obst = obstacles.query_segments(
                pos[i, 0], pos[i, 1], reach * reach, True, False, obst.points, obst.next_ids,
                obst.seg_order, obst.seg_boxes, obst_ids, np.empty(cap),
            )  # fmt: skip
            if n_obst <= cap:
                break
            cap = n_obst
        obst_ids = obst_ids[:n_obst]
        lines = np.zeros((obst_ids.size + max(k, 1), 4))
        n_lines, _ = kernels.agent_lines(
            i, pos, last["vel"], params.radius, params.max_speed, params.time_horizon,
            params.time_horizon_obst, params.responsibility, last["time_step"], nbr_ids, n_nbr,
            obst_ids, obst_ids.size, obst.points, obst.next_ids, obst.prev_ids, obst.unit_dirs,
            obst.convex, lines,
        )  # fmt: skip
        if params.max_speed[i] == 0.0:
            n_lines = 0
        return nbr_ids[:n_nbr].copy(), obst_ids, lines[:n_lines].copy()

    def agent_neighbors(self, i):
        """(k,) int64 ids of the agents that agent ``i`` took into account in the last step.

        Nearest first; empty before the first step or if ``i`` was inactive.
        """
        return self._debug(i)[0]

    def obstacle_neighbors(self, i):
        """(m,) int64 obstacle segments (start vertex ids) agent ``i`` considered in the last step.

        Nearest first; empty before the first step or if ``i`` was inactive.
        """
        return self._debug(i)[1]

    def orca_lines(self, i):
        """(L, 4) float64 ORCA lines (point_x, point_y, dir_x, dir_y) of agent ``i``, last step.

        Obstacle lines come first. The permitted half-plane is left of each directed line.
        """
        return self._debug(i)[2]

    def query_visibility(self, p, q, radius=0.0):
        """Whether q is visible from p for a disc of ``radius`` (RVO2's ``queryVisibility``).

        See :func:`orca_env.core.obstacles.query_visibility` for the exact rule.

        Args:
            p: (x, y) metres.
            q: (x, y) metres.
            radius: clearance in metres; must be >= 0.
        """
        p = _as_point("p", p)
        q = _as_point("q", q)
        radius = _check_scalar("radius", radius, lambda a: 0 <= a <= MAX_LENGTH,
                               f"must be >= 0 and <= {MAX_LENGTH:g}")
        obst = self._index()
        return bool(
            obstacles.query_visibility(
                p[0], p[1], q[0], q[1], float(radius), obst.points, obst.next_ids, obst.seg_order,
                obst.seg_boxes,
            )  # fmt: skip
        )

    def query_agent_neighbors(self, k, max_range, ids=None):
        """The ``k`` nearest active agents within ``max_range`` of each agent, on current positions.

        Args:
            k: neighbours per agent; must be >= 0.
            max_range: metres; must be >= 0.
            ids: agents to query (None: all agents).

        Returns:
            (neighbor_ids (len(ids), k) int64, -1 padded; dist_sq (len(ids), k) float64, inf
            padded), nearest first; the agent itself and inactive agents are excluded. Layers and
            avoid masks do not filter this query (observations see every active agent); only
            the step's neighbour search honours them.
        """
        k = _check_scalar("k", k, lambda a: 0 <= a <= MAX_COUNT,
                          f"must be >= 0 and <= {MAX_COUNT}", integer=True)
        max_range = _check_scalar("max_range", max_range, lambda a: a >= 0, "must be >= 0")
        q = np.arange(self._n, dtype=np.int64) if ids is None else self._ids(ids)
        return self.query_agent_neighbors_unchecked(q, k, float(max_range) ** 2)

    def query_agent_neighbors_unchecked(self, ids, k, range_sq):
        """:meth:`query_agent_neighbors` without validation, for trusted per-step callers.

        No validation: invalid input is undefined behaviour (wrong results, or a crash, not an
        error). Use :meth:`query_agent_neighbors` unless the inputs are known to be valid.

        Args:
            ids: (p,) int64 numpy array of valid agent ids (0 <= id < num_agents).
            k: Python int >= 0, neighbours per agent.
            range_sq: Python float >= 0, the squared range in m^2 (``max_range ** 2``).

        Returns:
            The same as :meth:`query_agent_neighbors`.
        """
        pos = self._pos[: self._n]
        tree = self._build_tree(pos, self._active[: self._n], persist=False)
        out_ids = np.full((ids.size, k), -1, dtype=np.int64)
        out_dsq = np.full((ids.size, k), np.inf)
        kdtree.query_many(ids, pos, range_sq, k, tuple(tree), out_ids, out_dsq)
        return out_ids, out_dsq

    def query_obstacle_neighbors(self, points, max_range, max_count):
        """Nearest obstacle segments within ``max_range`` that each point sees from outside.

        Args:
            points: (p, 2) metres.
            max_range: metres; must be >= 0.
            max_count: segments kept per point; must be >= 0.

        Returns:
            (segment ids (p, max_count) int64 (start vertex), -1 padded; closest points on the
            segments (p, max_count, 2), nan padded; squared distances (p, max_count), inf padded),
            nearest first.
        """
        pts = _as_points("points", points)
        max_range = _check_scalar("max_range", max_range, lambda a: a >= 0, "must be >= 0")
        max_count = _check_scalar(
            "max_count", max_count, lambda a: 0 <= a <= MAX_COUNT,
            f"must be >= 0 and <= {MAX_COUNT}", integer=True
        )
        obst = self._index()
        seg = np.full((pts.shape[0], max_count), -1, dtype=np.int64)
        dsq = np.full((pts.shape[0], max_count), np.inf)
        closest = np.full((pts.shape[0], max_count, 2), np.nan)
        if max_count:
            obstacles.query_many(
                pts, float(max_range) ** 2, obst.points, obst.next_ids, obst.seg_order,
                obst.seg_boxes, seg, dsq, closest,
            )  # fmt: skip
        return seg, closest, dsq

    def is_walkable(self, points, clearance=0.0):
        """(p,) bool: outside every obstacle, inside the boundary, ``clearance`` from all edges.

        Args:
            points: (p, 2) metres.
            clearance: metres; must be >= 0.
        """
        pts = _as_points("points", points)
        clearance = _check_scalar("clearance", clearance, lambda a: 0 <= a <= MAX_LENGTH,
                                  f"must be >= 0 and <= {MAX_LENGTH:g}")
        obst = self._index()
        return obstacles.walkable(
            pts[:, 0].copy(), pts[:, 1].copy(), float(clearance), obst.points, obst.next_ids,
            self._obst["polygon"], self._is_boundary, obst.seg_order, obst.seg_boxes,
        )  # fmt: skip

    def __repr__(self):
        return (
            f"Simulator(num_agents={self._n}, active={int(self._active[: self._n].sum())}, "
            f"obstacle_vertices={self.num_obstacle_vertices}, time_step={self._time_step}, "
            f"global_time={self.global_time:g})"
        )


def core_kernels(step=True):
    """The kernels :class:`Simulator` calls, with the argument types its call sites pass.

    Args:
        step: Include :meth:`Simulator.step`'s kernels (serial and multi-threaded), which the
            env does not run (its pipeline steps every world in its own kernel).
    """
    from numba import types as nt

    def arr(dtype, ndim):
        return nt.Array(dtype, ndim, "C")

    f8, i8, b1 = nt.float64, nt.int64, nt.boolean
    F1, F2, F3, I1, I2, B1 = arr(f8, 1), arr(f8, 2), arr(f8, 3), arr(i8, 1), arr(i8, 2), arr(b1, 1)

    def tup(*items):
        return nt.BaseTuple.from_types(items)

    obst = tup(F2, I1, I1, F2, B1, I1, F2)  # Obstacles' fields
    params = tup(F1, F1, F1, I1, F1, F1, F1, I1, I1)  # AgentParams' fields
    tree = tup(I1, I1, I1, I1, I1, F2)  # AgentTree's fields
    out = tup(F2, I1, B1, B1, F1)  # StepOutput's fields
    steps = [(kernels.compute_velocities_serial,
              (I1, F2, F2, F2, params, f8, tree, obst, i8, out, F3, I1)),
             (kernels.compute_velocities_parallel,
              (I1, F2, F2, F2, params, f8, tree, obst, i8, out, F3, I1, i8)),
             (kernels.apply_velocities, (I1, B1, F2, F2, F2, f8, obst, out))] if step else []
    return steps + [
        # kd-tree and queries
        (kdtree.partition_active, (I1, B1, I1)),
        (kdtree.build_agent_tree, (F2, tree)),
        (kdtree.query_many, (I1, F2, f8, i8, tree, I2, F2)),
        (obstacles.query_visibility, (f8, f8, f8, f8, f8, F2, I1, I1, F2)),
        (obstacles.query_many, (F2, f8, F2, I1, I1, F2, I2, F2, F3)),
        (obstacles.walkable, (F1, F1, f8, F2, I1, I1, B1, I1, F2)),
        (obstacles._sweep_intersects, (F2, I1)),
        # the debug accessors (orca_lines, agent_neighbors, obstacle_neighbors)
        (kdtree.query_agent_neighbors,
         (i8, f8, f8, f8, i8, F2, I1, I1, I1, I1, I1, F2, I1, I1, F1, b1, i8, I1)),
        (obstacles.query_segments, (f8, f8, f8, b1, b1, F2, I1, I1, F2, I1, F1)),
        (kernels.agent_lines,
         (i8, F2, F2, F1, F1, F1, F1, F1, f8, I1, i8, I1, i8, F2, I1, I1, F2, B1, F2)),
    ]


families.register_family(
    "core", "the ORCA core (step, multi-threaded step, kd-tree, obstacles, queries)", 18.0,
    core_kernels)

#: Whether this process has yet to ensure the core family (checked by every step, once true).
_CORE_PENDING = True


def _ensure_core():
    global _CORE_PENDING
    _CORE_PENDING = False
    families.ensure("core")
