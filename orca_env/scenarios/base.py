"""The scenario interface and spawning helpers.

A scenario owns the world (obstacles, boundary), where agents start and where they go; the core
knows nothing of goals (as in RVO2, whose examples keep ``setupScenario``,
``setPreferredVelocities`` and ``reachedGoal`` outside the library). All randomness comes from the
``rng`` argument (the env's ``np_random``), never from a global generator.

Hooks, in call order at ``reset``:

0. ``start_episode(seed, episode)``: the seed the env's generator was seeded with and the number
   of episodes since (``env.np_random_seed``, ``env.seed_episode``), for scenarios whose layouts
   are indexed rather than drawn (CrowdNav's test cases). Default: nothing.
1. ``build_world(rng) -> World``: obstacles (list of ``(k, 2)`` float64 counter-clockwise
   polygons, metres, world frame), optional boundary, optional roadmap points.
2. The env builds the core ``Simulator`` with those obstacles (so ``sim.is_walkable`` works).
3. ``populate(rng, sim, radii, max_speeds, randomized) -> (starts, goals, radii, max_speeds)``:
   the default draws the attributes of the slots whose group has ``randomize_attributes``
   (``draw_attributes``), then calls
   ``place_agents(rng, sim, radii) -> (starts, goals)``: ``(n, 2)`` float64 each, in slot order
   (group after group, as listed in the config). Override ``populate`` only when the draws of
   attributes and positions interleave (CrowdNav's test cases); otherwise ``place_agents``.
4. During the episode, ``new_goals(rng, sim, ids, positions, starts, radii) -> (k, 2)`` for
   crowd agents with ``on_goal: new_goal``.

Optional hooks that extend what learned agents see and are paid, without editing the env (in
the spirit of PettingZoo MPE's and VMAS's ``observation()`` and ``reward()``); both receive
``view``, the step pipeline's batch (:class:`orca_env.pipeline.WorldBatch`: read its public
arrays ``view.positions``, ``view.velocities``, ``view.goals``, ``view.targets``,
``view.radii``, ``view.max_speeds``, ``view.path_lengths``, ``view.step_counts_of(slots)``,
``view.max_steps_of(slots)``, ...) and ``slots``, the ``(k,)`` int64 batch slots of the agents
concerned in every world running the scenario (one call per step, not one per world):

5. ``observation_features(view, slots) -> (k, F)``: the scenario's own observation features,
   declared in ``EXTRA_OBSERVATIONS`` as ``(name, low, high)`` and appended after the standard
   layout (clipped to ``[low, high]``). Called at ``reset`` and after every step.
6. ``reward_terms(view, slots) -> (k, T)``: raw values of the scenario's own reward terms,
   declared in ``EXTRA_REWARDS`` as ``{name: default weight}`` (the config's ``rewards.extra``
   overrides weights). Called after the core step, before agents that finished leave; each
   weighted term is added to the reward and reported in ``infos[agent]['reward_terms']``.

``docs/extending.md`` works through a scenario, a reward term, an observation feature, a
behaviour and a kinematics model.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ..core.discgrid import DiscGrid, pairs_overlap

__all__ = ["Scenario", "World", "SpawnError", "sample_pairs", "any_overlap", "DiscGrid",
           "rectangle",
           "RANDOM_RADIUS", "RANDOM_SPEED"]

#: CrowdNav's ``randomize_attributes`` (``Agent.sample_random_attributes``): radius ~ U(0.3,
#: 0.5) m and preferred speed v_pref ~ U(0.5, 1.5) m/s, drawn v_pref first.
RANDOM_RADIUS = (0.3, 0.5)
RANDOM_SPEED = (0.5, 1.5)


class SpawnError(RuntimeError):
    """Random placement failed within the allowed number of tries."""


@dataclass
class World:
    """Static geometry of one episode.

    Attributes:
        obstacles: Counter-clockwise polygons, each ``(k, 2)`` float64, metres, world frame.
        boundary: Optional counter-clockwise outline of the walkable region, ``(k, 2)``.
        roadmap_points: Optional ``(r, 2)`` roadmap vertices that replace the automatic
            obstacle-corner vertices of guidance (RVO2's Roadmap example lists its own).
        extent: Half-width (m) of a square centred on the origin that holds the scene; used by
            rendering and as a scale, not as a wall.
    """

    obstacles: list = field(default_factory=list)
    boundary: np.ndarray | None = None
    roadmap_points: np.ndarray | None = None
    extent: float = 10.0


def rectangle(x0: float, y0: float, x1: float, y1: float) -> np.ndarray:
    """Axis-aligned rectangle ``[x0, x1] x [y0, y1]`` as a counter-clockwise ``(4, 2)`` polygon."""
    return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], dtype=np.float64)


#: Largest numeric scenario parameter (sizes in metres, counts): float64 geometry stays exact to
#: about 1e-10 m up to it, and no crowd scenario comes near.
MAX_PARAM = 1e6


def _check_params(cls_name: str, defaults: dict, given: dict,
                  positive: tuple[str, ...] = ()) -> dict:
    """Validate scenario keyword arguments strictly against the defaults' types and bounds."""
    unknown = [k for k in given if k not in defaults]
    if unknown:
        raise ValueError(f"unknown scenario_kwargs key {unknown[0]!r} for {cls_name}; valid "
                         f"keys: {sorted(defaults)}")
    out = dict(defaults)
    for k, v in given.items():
        d = defaults[k]
        if isinstance(d, bool):
            ok = isinstance(v, (bool, np.bool_))
            v = bool(v) if ok else v
        elif isinstance(d, int):
            ok = isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_))
            v = int(v) if ok else v
        elif isinstance(d, float):
            ok = isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))
            v = float(v) if ok else v
        else:
            ok = isinstance(v, type(d))
        if not ok:
            raise ValueError(f"scenario_kwargs key {k!r} of {cls_name} must be a "
                             f"{type(d).__name__}, got {v!r}")
        if isinstance(v, float) and not math.isfinite(v):
            raise ValueError(f"scenario_kwargs key {k!r} of {cls_name} must be finite, got {v!r}")
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            if v < 0 or (k in positive and v == 0):
                bound = "positive" if k in positive else ">= 0"
                raise ValueError(f"scenario_kwargs key {k!r} of {cls_name} must be {bound}, "
                                 f"got {v!r}")
            if v > MAX_PARAM:
                raise ValueError(f"scenario_kwargs key {k!r} of {cls_name} must be <= "
                                 f"{MAX_PARAM:g}, got {v!r}")
        out[k] = v
    return out


class Scenario:
    """Base class of the scenarios; subclasses set the class attributes and the hooks.

    Class attributes:
        name: Registered, versioned name (``circle_v0``).
        PARAMS: Defaults of the scenario's keyword arguments (``scenario_kwargs``); their types
            are enforced and unknown keys fail loudly.
        AGENT_DEFAULTS: Default ORCA parameters for groups that leave them ``None``:
            ``radius, max_speed, pref_speed, neighbor_dist, max_neighbors, time_horizon,
            time_horizon_obst``.
        TIME_STEP: Default time step (s). MAX_STEPS: default step limit.
        OBS_DEFAULTS: Default ``num_agents``, ``num_obstacles`` and ``range`` of observations.
        DEFAULT_GROUPS: Groups used when the config gives none.
        HAS_OBSTACLES: Whether guidance makes sense.
        CROWD_NOISE: Default bound (m/s) of RVO2's symmetry-breaking noise on the preferred
            velocity of ``orca`` crowd groups (RVO2's Blocks and Roadmap examples use 1e-4).
    """

    name: ClassVar[str] = "base_v0"
    PARAMS: ClassVar[dict] = {}
    AGENT_DEFAULTS: ClassVar[dict] = dict(radius=0.3, max_speed=1.0, pref_speed=1.0,
                                          neighbor_dist=5.0, max_neighbors=10, time_horizon=5.0,
                                          time_horizon_obst=2.0)
    TIME_STEP: ClassVar[float] = 0.25
    MAX_STEPS: ClassVar[int] = 400
    OBS_DEFAULTS: ClassVar[dict] = dict(num_agents=6, num_obstacles=0, range=5.0)
    DEFAULT_GROUPS: ClassVar[list] = [dict(population="learned", count=1)]
    HAS_OBSTACLES: ClassVar[bool] = False
    CROWD_NOISE: ClassVar[float] = 1e-4
    #: Numeric parameters that must be strictly positive (all must be >= 0 and <= 1e6).
    POSITIVE: ClassVar[tuple[str, ...]] = ()
    #: Tries per agent for random placement before ``SpawnError``.
    MAX_TRIES: ClassVar[int] = 2000
    #: The scenario's own reward terms: name -> default weight (see :meth:`reward_terms`).
    EXTRA_REWARDS: ClassVar[dict[str, float]] = {}
    #: The scenario's own observation features: ``(name, low, high)`` each, appended to the
    #: observation in this order (see :meth:`observation_features`).
    EXTRA_OBSERVATIONS: ClassVar[tuple[tuple[str, float, float], ...]] = ()

    def __init__(self, **kwargs: Any) -> None:
        self.params = _check_params(self.name, self.PARAMS, kwargs, self.POSITIVE)
        self.check_params()

    def check_params(self) -> None:
        """Check relations between parameters (types and bounds are already checked).

        Raises:
            ValueError: Naming the ``scenario_kwargs`` key and its value.
        """

    def _require(self, ok: bool, key: str, rule: str) -> None:
        """Raise the ``ValueError`` of :meth:`check_params` unless ``ok``."""
        if not ok:
            raise ValueError(f"scenario_kwargs key {key!r} of {self.name} must be {rule}, got "
                             f"{self.params[key]!r}")

    def __getattr__(self, item: str) -> Any:
        # Scenario parameters read as attributes (self.radius); only called on a miss.
        params = self.__dict__.get("params")
        if params is not None and item in params:
            return params[item]
        raise AttributeError(item)

    # -- hooks -----------------------------------------------------------------------------
    def start_episode(self, seed: int, episode: int) -> None:
        """Called first in every ``reset``; default: nothing.

        Args:
            seed: The seed of the env's generator (``env.np_random_seed``): the ``seed`` given
                to ``reset``, or the one the env drew when it was first reset without one.
            episode: Episodes since that seed (``env.seed_episode``): 0 after ``reset(seed=s)``,
                then 1, 2, ... for every ``reset()`` without a seed.
        """

    def draw_attributes(self, rng: np.random.Generator, radii: np.ndarray,
                        max_speeds: np.ndarray,
                        randomized: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """This episode's radius and v_pref (max speed) of the ``randomized`` slots.

        CrowdNav's ``randomize_attributes``, in its order: per slot, v_pref ~ U(0.5, 1.5) m/s
        (:data:`RANDOM_SPEED`) then radius ~ U(0.3, 0.5) m (:data:`RANDOM_RADIUS`), slot after
        slot, from ``rng``. Nothing is drawn when no slot is randomized.

        Args:
            rng: The env's generator.
            radii: ``(n,)`` the config's radii (a copy: may be changed and returned).
            max_speeds: ``(n,)`` the config's max speeds (a copy).
            randomized: ``(n,)`` bool, slots whose group has ``randomize_attributes``.

        Returns:
            ``(radii, max_speeds)``, ``(n,)`` each: only the randomized slots differ.
        """
        k = int(np.count_nonzero(randomized))
        if k:
            u = rng.random((k, 2))
            max_speeds[randomized] = RANDOM_SPEED[0] + (RANDOM_SPEED[1] - RANDOM_SPEED[0]) * u[:, 0]
            radii[randomized] = RANDOM_RADIUS[0] + (RANDOM_RADIUS[1] - RANDOM_RADIUS[0]) * u[:, 1]
        return radii, max_speeds

    def populate(self, rng: np.random.Generator, sim: Any, radii: np.ndarray,
                 max_speeds: np.ndarray, randomized: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The episode's agents: attributes of randomized slots, then starts and goals.

        Default: :meth:`draw_attributes`, then :meth:`place_agents` with the radii drawn. The
        env checks that only randomized slots changed, within the ranges above.

        Args:
            rng: The env's generator.
            sim: The core simulator with the world's obstacles.
            radii: ``(n,)`` the config's radius of each slot (a copy).
            max_speeds: ``(n,)`` the config's max speed of each slot (a copy); CrowdNav's v_pref.
            randomized: ``(n,)`` bool, slots whose group has ``randomize_attributes``.

        Returns:
            ``(starts (n, 2), goals (n, 2), radii (n,), max_speeds (n,))``.
        """
        radii, max_speeds = self.draw_attributes(rng, radii, max_speeds, randomized)
        starts, goals = self.place_agents(rng, sim, radii)
        return starts, goals, radii, max_speeds

    def build_world(self, rng: np.random.Generator) -> World:
        """Obstacles of the episode. Default: none."""
        return World()

    def place_agents(self, rng: np.random.Generator, sim: Any,
                     radii: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Starts and goals, ``(n, 2)`` float64 each, metres, world frame.

        Args:
            rng: The env's generator.
            sim: The core simulator with the world's obstacles (for ``is_walkable``).
            radii: ``(n,)`` radius of each slot (slot order = config group order).
        """
        raise NotImplementedError

    def goal_tolerance(self, radii: np.ndarray) -> np.ndarray:
        """``(n,)`` distance (m) within which an agent has reached its goal. Default: radius."""
        return np.asarray(radii, dtype=np.float64).copy()

    def new_goals(self, rng: np.random.Generator, sim: Any, ids: np.ndarray,
                  positions: np.ndarray, starts: np.ndarray, radii: np.ndarray) -> np.ndarray:
        """``(len(ids), 2)`` new goals for crowd agents with ``on_goal: new_goal``.

        Args:
            rng: The env's generator.
            sim: The core simulator.
            ids: ``(k,)`` int64 slots that reached their goal.
            positions: ``(n, 2)`` positions of every slot, metres.
            starts: ``(n, 2)`` start of every slot, metres.
            radii: ``(n,)`` radius of every slot, metres.

        Default: go back to where they started (back-and-forth flows).
        """
        return starts[ids].copy()

    def observation_features(self, view: Any, slots: np.ndarray) -> np.ndarray:
        """``(len(slots), len(EXTRA_OBSERVATIONS))`` own observation features.

        Only called when ``EXTRA_OBSERVATIONS`` is not empty. Vectors should be given in the
        agents' observation frame (``orca_env.frames``) like the rest of the observation.
        """
        raise NotImplementedError(f"{self.name} declares EXTRA_OBSERVATIONS but does not "
                                  f"implement observation_features")

    def reward_terms(self, view: Any, slots: np.ndarray) -> np.ndarray:
        """``(len(slots), len(EXTRA_REWARDS))`` raw (unweighted) own reward terms.

        Only called when ``EXTRA_REWARDS`` is not empty.
        """
        raise NotImplementedError(f"{self.name} declares EXTRA_REWARDS but does not implement "
                                  f"reward_terms")


#: Up to this many discs :func:`any_overlap` measures every pair (an n x n matrix).
_ALL_PAIRS = 64


def any_overlap(points: np.ndarray, radii: np.ndarray) -> bool:
    """Whether two of the discs ``points`` (``(n, 2)``, m) with ``radii`` (``(n,)``) overlap.

    Sort and sweep along x: only pairs closer in x than the two largest radii are measured, so
    memory is O(n) and time O(n log n) for spread-out layouts (an n x n distance matrix needs
    6 GiB at 20,000 agents); up to 64 discs every pair is measured at once, which is faster.
    A pair overlaps when its centre distance, ``np.linalg.norm`` of the difference as in a
    distance matrix (the square root of ``dx * dx + dy * dy``), is below the sum of its radii.
    """
    n = len(points)
    if n < 2:
        return False
    if n <= _ALL_PAIRS:  # every pair, in one kernel call: the same distances, the same answer
        return bool(pairs_overlap(np.ascontiguousarray(points, dtype=np.float64),
                                   np.ascontiguousarray(radii, dtype=np.float64)))
    order = np.argsort(points[:, 0], kind="stable")
    p = points[order]
    r = radii[order]
    reach = 2.0 * float(radii.max())
    reach = reach * (1.0 + 1e-9) + 1e-12  # a margin for rounding: never miss a pair
    for k in range(1, n):
        near = (p[k:, 0] - p[:-k, 0]) < reach
        if not near.any():
            return False
        d = np.linalg.norm(p[k:][near] - p[:-k][near], axis=1)
        if np.any(d < r[k:][near] + r[:-k][near]):
            return True
    return False


def sample_pairs(rng: np.random.Generator, sim: Any, radii: np.ndarray,
                 sampler: Callable[[np.random.Generator, int, int], tuple[np.ndarray, np.ndarray]],
                 *, margin: float = 0.05, min_goal_dist: float = 0.0, max_tries: int = 2000,
                 scenario: str = "scenario") -> tuple[np.ndarray, np.ndarray]:
    """Draw a start and a goal per agent by rejection, never overlapping anything.

    A candidate pair is accepted when start and goal are walkable with clearance
    ``radius + margin`` (``sim.is_walkable``), neither disc overlaps (with ``margin``) any start or
    goal already accepted, and the goal is at least ``min_goal_dist`` from the start. Candidates
    are drawn in batches of 64 so each agent costs a few vectorised calls; the accepted discs
    are in a :class:`DiscGrid`, so a candidate is measured against its neighbours only (the
    same decisions as against all: O(n) time and memory for n agents, not O(n^2)).

    Args:
        rng: Generator.
        sim: Core simulator holding the obstacles.
        radii: ``(n,)`` radii.
        sampler: ``sampler(rng, i, b) -> (starts (b, 2), goals (b, 2))`` proposes ``b``
            candidates for agent ``i``.
        margin: Extra clearance (m).
        min_goal_dist: Minimum start-goal distance (m).
        max_tries: Candidates per agent before giving up.
        scenario: Name for the error message.

    Returns:
        ``(starts, goals)``, ``(n, 2)`` float64 each.

    Raises:
        SpawnError: If some agent has no valid pair after ``max_tries`` candidates.
    """
    n = len(radii)
    starts = np.zeros((n, 2))
    goals = np.zeros((n, 2))
    batch = 64
    # The starts and goals accepted so far, to check candidates against the nearby ones only.
    grid = DiscGrid(2 * n, float(np.max(radii)) if n else 0.0, margin)
    for i in range(n):
        r = float(radii[i])
        tried = 0
        placed = False
        while tried < max_tries:
            b = min(batch, max_tries - tried)
            s, g = sampler(rng, i, b)
            tried += b
            ok = np.asarray(sim.is_walkable(s, clearance=r + margin), dtype=bool)
            ok &= np.asarray(sim.is_walkable(g, clearance=r + margin), dtype=bool)
            ok &= np.linalg.norm(g - s, axis=1) >= max(min_goal_dist, 2 * r + margin)
            grid.clear(s, r, margin, ok)
            grid.clear(g, r, margin, ok)
            idx = np.flatnonzero(ok)
            if idx.size:
                starts[i] = s[idx[0]]
                goals[i] = g[idx[0]]
                grid.add(np.stack([starts[i], goals[i]]), np.array([r, r]))
                placed = True
                break
        if not placed:
            raise SpawnError(f"{scenario}: could not place agent {i} of {n} (radius {r}) without "
                             f"overlapping obstacles, agents or goals after {max_tries} tries; "
                             f"use fewer agents, smaller radii or a larger area")
    return starts, goals
