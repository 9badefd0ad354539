"""The single env's public read-only state: what hooks, policies, renderers and tests read.

A mixin of :class:`orca_env.environment.OrcaEnv`: every array is a read-only view of the step
pipeline's one-world batch (or of the agent table before the first reset).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .codes import STATE_FEATURES, Population, StateField
from .config import EnvConfig, GroupConfig
from .core.simulator import MAX_COORD
from .episode import WorldConfig
from .frames import frame_axes, world_to_frame
from .kinematics import HOLONOMIC
from .kinematics.base import P_MAX_ANGULAR_SPEED, P_MAX_ROTATION
from .mixture import Mixture
from .pipeline import WorldBatch
from .sensors import sensor_view
from .step import goal_velocities

__all__ = ["EnvState", "heuristic_actions", "velocity_actions"]


def heuristic_actions(batch: WorldBatch, live: np.ndarray, world_frame: bool,
                      kinematics: str = "holonomic", time_step: float = 0.25) -> np.ndarray:
    """Goal-directed actions (pure ORCA's preferred velocity) of the slots ``live``, float32.

    Non-holonomic models: the action that turns towards the goal-directed velocity as far as
    the model allows in one step, at its speed (``unicycle``: speed ``|v|``, rotation towards
    it; ``differential_drive``: speed ``|v|``, the turn rate that points the heading at it
    after one step).
    """
    v = np.empty((live.size, 2))
    # A writable int64 copy: the one type the kernel is compiled for (orca_env.core.families).
    goal_velocities(np.array(live, dtype=np.int64), batch.positions, batch.targets,
                    batch.pref_speeds, v)
    return velocity_actions(batch, live, v, world_frame, kinematics, time_step)


def velocity_actions(batch: WorldBatch, live: np.ndarray, v: np.ndarray, world_frame: bool,
                     kinematics: str = "holonomic", time_step: float = 0.25) -> np.ndarray:
    """The actions (``action: velocity``) of the slots ``live`` that command velocities ``v``.

    ``v`` is ``(len(live), 2)`` m/s, world frame. Holonomic: ``v`` in units of the max speed,
    in the observation frame. Non-holonomic models as :func:`heuristic_actions` describes.
    Clipped to the action box, float32.
    """
    vmax = batch.max_speeds[live]
    if kinematics == "holonomic":
        axes = frame_axes(batch.targets[live] - batch.positions[live], world_frame)
        return world_to_frame(v / vmax[:, None], axes).astype(np.float32)
    speed = np.linalg.norm(v, axis=1) / vmax
    turn = np.angle(np.exp(1j * (np.arctan2(v[:, 1], v[:, 0]) - batch.headings[live])))
    kp = batch.kin_params[live]
    if kinematics == "unicycle":
        a = np.stack([2.0 * speed - 1.0, turn / kp[:, P_MAX_ROTATION]], axis=1)
    else:
        a = np.stack([speed, turn / (time_step * kp[:, P_MAX_ANGULAR_SPEED])], axis=1)
    return np.clip(a, -1.0, 1.0).astype(np.float32)


class EnvState:
    """Read-only accessors of :class:`~orca_env.environment.OrcaEnv` (see there)."""

    # -- settings of the current episode (the mixture entry drawn at reset) -----------------
    @property
    def episode_config(self) -> EnvConfig:
        """The config of the current episode: ``config``, or the mixture entry drawn at reset.

        Before the first reset of a mixture it is entry 0 at the low end of its ranges.
        """
        return self._wc.config

    @property
    def world_config(self) -> WorldConfig:
        """This episode's resolved config (:class:`~orca_env.episode.WorldConfig`)."""
        return self._wc

    @property
    def mixture(self) -> Mixture | None:
        """The config's :class:`~orca_env.mixture.Mixture` (``None`` without one)."""
        return self._mixture

    @property
    def scenario(self):
        """This episode's scenario object."""
        return self._wc.scenario

    @property
    def groups(self) -> list[GroupConfig]:
        """This episode's groups."""
        return self._wc.groups

    @property
    def group_names(self) -> list[str]:
        """Names of this episode's groups, in order."""
        return self._wc.table.group_names

    @property
    def time_step(self) -> float:
        """Seconds per step."""
        return self._wc.time_step

    @property
    def max_steps(self) -> int:
        """The step limit."""
        return self._wc.max_steps

    @property
    def universal_layout(self) -> bool:
        """Whether observations use the universal layout (``observation.layout``)."""
        return self._wc.universal

    @property
    def num_obs_agents(self) -> int:
        """K, agents in an observation."""
        return self._wc.num_obs_agents

    @property
    def num_obs_obstacles(self) -> int:
        """M, obstacle segments in an observation."""
        return self._wc.num_obs_obstacles

    @property
    def obs_range(self) -> float:
        """The observation range, m."""
        return self._wc.obs_range

    @property
    def reward_term_names(self) -> tuple[str, ...]:
        """Names of the reward terms, built-in then the scenario's, as in ``reward_terms``."""
        return self._wc.reward_term_names

    @property
    def mixture_weights(self) -> list[float] | None:
        """The mixture's entry weights (``None`` without a mixture); see ``set_mixture_weights``."""
        return None if self._mixture is None else self._mixture.weights

    def set_mixture_weights(self, weights: Any) -> None:
        """Draw the mixture's entries with new weights from the next ``reset`` on.

        For schedules and curricula (the training config's ``stages``): the episode under way
        is not touched, and the entries, their ranges, the agents and the spaces stay as they
        are. ``config`` keeps the weights the env was built with.

        Args:
            weights: One finite number > 0 per mixture entry, in entry order.

        Raises:
            ValueError: If the env has no mixture, or on a bad list (nothing changes then).
        """
        if self._mixture is None:
            raise ValueError("set_mixture_weights: this env's config has no mixture")
        self._mixture.set_weights(weights)

    # -- public read-only state (scenario hooks, policies, tests) ---------------------------
    def _slot_array(self, name: str) -> np.ndarray:
        if self._ep is None:
            raise RuntimeError(f"{name} is defined after reset()")
        return getattr(self._batch, name)

    @property
    def sim(self):
        """This episode's core ``Simulator`` (None before ``reset``); its state is the env's."""
        return None if self._ep is None else self._ep.sim

    @property
    def world(self):
        """This episode's scenario ``World`` (obstacles, boundary, extent)."""
        return None if self._ep is None else self._ep.world

    @property
    def radii(self) -> np.ndarray:
        """``(n_slots,)`` float64 radius of every slot, metres (read-only)."""
        return self._batch.radii if self._ep is not None else _readonly(self._wc.table.base_radius)

    @property
    def max_speeds(self) -> np.ndarray:
        """``(n_slots,)`` float64 max speed of every slot, m/s; actions are in its units."""
        return self._batch.max_speeds if self._ep is not None else \
            _readonly(self._wc.table.base_max_speed)

    @property
    def populations(self) -> np.ndarray:
        """``(n_slots,)`` int64 :class:`~orca_env.codes.Population` code of every slot."""
        return _readonly(self._wc.table.population)

    @property
    def learned_slots(self) -> np.ndarray:
        """``(L,)`` int64 slot of ``possible_agents[k]`` (``agent_k``)."""
        return _readonly(self._wc.table.learned_slots)

    @property
    def live_agents(self) -> list[str]:
        """The agents that still act, in ``agents`` order (a new list).

        All of ``agents``, but with ``finished_agents="absorb"``: then the agents that have not
        finished (the others absorb, their actions are ignored).
        """
        return list(self._acting)

    @property
    def live_slots(self) -> np.ndarray:
        """``(k,)`` int64 slot of each live agent (one that still acts), in ``agents`` order.

        These are all of ``agents``, but with ``finished_agents="absorb"``, where ``agents``
        also holds the agents that finished before their world ended.
        """
        if self._ep is None:
            raise RuntimeError("live_slots is defined after reset()")
        return _readonly(self._batch.learned[self._batch.alive])

    @property
    def starts(self) -> np.ndarray:
        """``(n_slots, 2)`` float64 start of every slot this episode, metres, world frame."""
        return _readonly(self._slot_array("slots").starts)

    @property
    def goals(self) -> np.ndarray:
        """``(n_slots, 2)`` float64 current goal of every slot, metres, world frame."""
        return self._slot_array("goals")

    @property
    def targets(self) -> np.ndarray:
        """``(n_slots, 2)`` float64 goal, or roadmap waypoint with guidance, of every slot.

        The x axis of an agent's goal-aligned frame points there.
        """
        return self._slot_array("targets")

    @property
    def path_lengths(self) -> np.ndarray:
        """``(n_slots,)`` float64 remaining distance to the goal (roadmap path with guidance)."""
        return self._slot_array("path_lengths")

    @property
    def goal_tolerances(self) -> np.ndarray:
        """``(n_slots,)`` float64 distance within which a slot has reached its goal, metres."""
        return _readonly(self._slot_array("slots").goal_tol)

    @property
    def stall_counts(self) -> np.ndarray:
        """``(n_slots,)`` int64 consecutive slow steps of every slot (the stall detector)."""
        return _readonly(self._slot_array("slots").stall)

    @property
    def slot_statuses(self) -> np.ndarray:
        """``(n_slots,)`` int8 :class:`~orca_env.codes.Status` code of every slot."""
        return _readonly(self._slot_array("slots").slot_status)

    @property
    def pref_speeds(self) -> np.ndarray:
        """``(n_slots,)`` float64 preferred speed of every slot this episode, m/s."""
        return self._batch.pref_speeds if self._ep is not None else \
            _readonly(self._wc.table.base_pref_speed)

    @property
    def headings(self) -> np.ndarray:
        """``(n_slots,)`` float64 heading of every slot, rad, world frame (read-only).

        The motion model's heading (the way the body faces) for non-holonomic slots; NaN for
        holonomic ones, which have none (their velocity's direction is the nearest thing).
        """
        b = self._batch
        if self._ep is None:
            raise RuntimeError("headings is defined after reset()")
        return _readonly(np.where(b.kinematics != HOLONOMIC, b.headings, np.nan))

    @property
    def noise_magnitudes(self) -> np.ndarray:
        """``(n_slots,)`` float64 bound of RVO2's preferred-velocity noise per slot, m/s."""
        return _readonly(self._wc.table.noise)

    @property
    def num_slots(self) -> int:
        """Agents of the world (learned and crowd), this episode."""
        return self._wc.n

    @property
    def last_step(self) -> int:
        """The step on which the episode times out (``max_steps``, or CrowdNav's rule)."""
        return self._wc.last_step

    @property
    def step_count(self) -> int:
        """Steps since ``reset``."""
        return int(self._batch.step_counts[0]) if self._ep is not None else 0

    def set_goals(self, goals: Any, slots: Any = None) -> None:
        """Give agents new goals mid-episode (also after moving them with ``sim.set_positions``).

        Waypoints and remaining path lengths of every slot are recomputed from the current
        positions; for the changed slots the progress term restarts from the new remaining
        distance and the stall counter from zero.

        Args:
            goals: ``(k, 2)`` finite goals, metres, world frame.
            slots: ``(k,)`` distinct slot ids in ``0 .. n_slots - 1`` (default: every slot).

        Raises:
            RuntimeError: Before ``reset``.
            ValueError: On bad ``goals`` or ``slots`` (nothing is changed).
        """
        if self._ep is None:
            raise RuntimeError("set_goals() called before reset()")
        n = self._wc.n
        ids = np.arange(n) if slots is None else np.asarray(slots)
        if ids.ndim != 1 or ids.dtype.kind not in "iu" or np.unique(ids).size != ids.size \
                or not np.all((ids >= 0) & (ids < n)):
            raise ValueError(f"slots must be distinct integers in 0 .. {n - 1}, got {slots!r}")
        try:
            g = np.asarray(goals, dtype=np.float64)
        except (TypeError, ValueError):
            g = None
        if g is None or g.shape != (ids.size, 2) or not np.isfinite(g).all() \
                or not (np.abs(g) <= MAX_COORD).all():
            raise ValueError(f"goals must be {ids.size} finite (x, y) pairs within "
                             f"+-{MAX_COORD:g} m (the core's coordinate bound), got {goals!r}")
        self._batch.set_goals(0, ids, g)

    def state(self) -> np.ndarray:
        """Global state of every slot, world frame, SI units.

        Returns:
            ``(n_slots * 10,)`` float32: per slot px, py, vx, vy, gx, gy, radius, max_speed,
            active, learned.

        Raises:
            RuntimeError: Before ``reset``.
        """
        if self._ep is None:
            raise RuntimeError("state() called before reset()")
        b = self._batch
        s = np.empty((self._wc.n, STATE_FEATURES), dtype=np.float32)
        f = StateField
        s[:, f.PX:f.PY + 1] = b.positions
        s[:, f.VX:f.VY + 1] = b.velocities
        s[:, f.GX:f.GY + 1] = b.goals
        s[:, f.RADIUS] = b.radii
        s[:, f.MAX_SPEED] = b.max_speeds
        s[:, f.ACTIVE] = b.active
        s[:, f.LEARNED] = b.populations == Population.LEARNED
        return s.reshape(-1)

    def heuristic_actions(self) -> dict:
        """Pure-ORCA actions for the live agents.

        Each action is the goal-directed preferred velocity (towards the waypoint with guidance)
        at ``pref_speed``, in action units and frame; with ``action: residual`` it is zero (the
        residual on that velocity). With the safety layer, stepping with these actions is
        exactly an ORCA crowd agent without the noise.

        Returns:
            ``{agent: (2,) float32 action}`` for ``agents`` (with ``finished_agents="absorb"``,
            zero for the agents that finished: their actions are ignored).

        Raises:
            RuntimeError: Before ``reset``.
        """
        if self._ep is None:
            raise RuntimeError("heuristic_actions() called before reset()")
        if self._wc.config.action == "residual":
            return {a: np.zeros(2, dtype=np.float32) for a in self.agents}
        a = heuristic_actions(self._batch, self.live_slots,
                              self._wc.config.observation.frame == "world",
                              self._wc.learned_kinematics, self._wc.time_step)
        acts = dict(zip(self._acting, a, strict=True))
        if len(acts) == len(self.agents):
            return acts
        zero = np.zeros(a.shape[1], dtype=np.float32)
        return {x: acts.get(x, zero) for x in self.agents}

    def velocity_actions(self, velocities: Any) -> dict:
        """The actions that command the live agents to move at ``velocities``.

        What a policy that picks velocities (``orca_env.policies.cadrl``, a planner) hands to
        :meth:`step`: each velocity, world frame, m/s, becomes the action that asks for it in
        the agent's frame and units (with the safety layer ORCA then filters it; a
        non-holonomic model turns towards it as far as it can in one step, as in
        :meth:`heuristic_actions`), clipped to the action box.

        Args:
            velocities: ``(len(agents), 2)`` finite velocities, in the order of ``agents``.

        Returns:
            ``{agent: (2,) float32 action}`` for the live agents.

        Raises:
            RuntimeError: Before ``reset``.
            ValueError: On bad ``velocities``, or with ``action: residual`` (these actions are
                velocities).
        """
        if self._ep is None:
            raise RuntimeError("velocity_actions() called before reset()")
        if self._wc.config.action != "velocity":
            raise ValueError(f"velocity_actions needs action: velocity, the env has action: "
                             f"{self._wc.config.action}")
        try:
            v = np.asarray(velocities, dtype=np.float64)
        except (TypeError, ValueError):
            v = None
        n = len(self.agents)
        if v is None or v.shape != (n, 2) or not np.isfinite(v).all():
            raise ValueError(f"velocities must be {n} finite (vx, vy) pairs, one per live "
                             f"agent, got {velocities!r}")
        a = velocity_actions(self._batch, self.live_slots, v,
                             self._wc.config.observation.frame == "world",
                             self._wc.learned_kinematics, self._wc.time_step)
        return dict(zip(self.agents, a, strict=True))

    def render_data(self) -> dict:
        """Arrays a renderer needs (the hook for ``orca_env/render.py``).

        Returns:
            A dict of positions, velocities, preferred velocities, radii, max speeds, goals,
            targets, populations, statuses (index into ``STATUSES`` per slot), active flags,
            obstacle polygons, boundary, extent, time and step; with non-holonomic agents their
            ``headings`` (rad, NaN for holonomic slots); with ``debug_agent`` set, also
            ``selected`` and its ``orca_lines`` (last step); with sensors, what the debug agent
            (else the first live learned agent) senses (:func:`orca_env.sensors.sensor_view`).

        Raises:
            RuntimeError: Before ``reset``.
        """
        if self._ep is None:
            raise RuntimeError("render_data() called before reset()")
        b, sim = self._batch, self.sim
        data = {"positions": b.positions.copy(), "velocities": b.velocities.copy(),
                "pref_velocities": sim.pref_velocities.copy(),
                "radii": b.radii.copy(), "max_speeds": b.max_speeds.copy(),
                "goals": b.goals.copy(), "targets": b.targets.copy(),
                "populations": b.populations.copy(), "statuses": self.slot_statuses.copy(),
                "active": b.active.copy(), "obstacles": list(self.world.obstacles),
                "boundary": self.world.boundary, "extent": self.world.extent,
                "time": sim.global_time, "step": self.step_count}
        nonholonomic = b.kinematics != HOLONOMIC
        if nonholonomic.any():  # headings of the non-holonomic agents (NaN: holonomic)
            data["headings"] = np.where(nonholonomic, b.headings, np.nan)
        if self.debug_agent is not None:
            data["selected"] = int(self.debug_agent)
            data["orca_lines"] = sim.orca_lines(int(self.debug_agent))
        # The scan and cone of the debug agent, else of the first live learned agent.
        seer = self.debug_agent if self.debug_agent is not None else \
            (int(self.live_slots[0]) if len(self.agents) else None)
        if seer is not None and b.active[seer]:
            data.update(sensor_view(self, int(seer)))
        return data



def _readonly(a: np.ndarray) -> np.ndarray:
    v = a.view()
    v.flags.writeable = False
    return v
