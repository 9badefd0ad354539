"""The behaviour interface and registry: who sets an agent's preferred velocity.

A behaviour (config ``groups[i].population``) is one :class:`Behaviour` record, registered by
name with :func:`register_behaviour`; its code is its index in registration order (the built-in
ones are ``orca_env.codes.Population``). The step pipeline reads three things of it:

* whether its agents are the PettingZoo agents (``learned``: the action sets the preferred
  velocity) or scripted;
* how a scripted agent steers: ``steer=None`` is the pipeline's built-in goal steering (the
  vector to the goal or waypoint, shortened to ``pref_speed``, plus the group's noise, in the
  numba kernel); a callable ``steer(view, slots) -> (k, 2)`` float64 preferred velocities (m/s,
  world frame) is called once per step with the slots of this behaviour in every world (numpy
  over all worlds, not a loop over worlds; ``view`` is the
  :class:`~orca_env.pipeline.WorldBatch`, whose public arrays are indexed by slot);
* how ORCA treats it: ``responsibility`` (its share of avoidance, 0: a dynamic obstacle that
  the others avoid fully) and ``avoids_agents`` (False: it avoids no agent, core avoid mask 0).

``check(group, where)`` refuses group keys that make no sense for the behaviour.

``pre_step(view, slots, reset)`` (optional) runs before ``steer`` at every step
(``reset=False``: it prepares the step from the worlds' step count ``k`` to ``k + 1``) and once
at reset (``reset=True``, after the worlds are loaded, before the first observation: it sets the
state observed at step 0), with every slot of the behaviour in those worlds, active or not: the
one place a behaviour may decide where its agents are and whether they are in the simulation
(``replay``: entering and leaving with their recorded tracks), through
:meth:`~orca_env.pipeline.WorldBatch.place`. Per-slot data a behaviour derives
from the config (its parameters, a visibility mask) come from
:meth:`~orca_env.pipeline.WorldBatch.per_slot`, built once per config and cached.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..registry import Registry

__all__ = ["Behaviour", "register_behaviour", "behaviour", "behaviour_names", "REGISTRY"]


@dataclass(frozen=True)
class Behaviour:
    """One population: its name, how it steers and how ORCA treats it."""

    #: Config name (``groups[i].population``).
    name: str
    #: One line for the config reference.
    doc: str
    #: Its agents are the PettingZoo agents (their action is the preferred velocity).
    learned: bool = False
    #: ``None``: the built-in goal steering; else ``steer(view, slots) -> (k, 2)`` m/s.
    steer: Callable[[Any, Any], Any] | None = None
    #: Share of avoidance ORCA gives it (1: RVO2's reciprocal half; 0: avoided fully).
    responsibility: float = 1.0
    #: Whether it avoids other agents at all (False: core avoid mask 0).
    avoids_agents: bool = True
    #: Whether it gets the scenario's ``CROWD_NOISE`` by default (else noise 0).
    crowd_noise: bool = False
    #: ``check(group, where)``: raise ``ValueError`` naming ``where`` on keys it refuses.
    check: Callable[[Any, str], None] | None = None
    #: ``pre_step(view, slots, reset)``: before ``steer`` (and at reset), every slot of the
    #: behaviour; may move them and set whether they are active (``WorldBatch.place``).
    pre_step: Callable[[Any, Any, bool], None] | None = None
    #: Set by :func:`register_behaviour`: the integer code in per-slot arrays.
    code: int = -1


#: Registered behaviours by name, in code order.
REGISTRY = Registry("behaviour")


def register_behaviour(b: Behaviour, replace: bool = False) -> Behaviour:
    """Register ``b`` under ``b.name`` with the next code; returns the registered record.

    Args:
        b: The behaviour.
        replace: Replace a registered behaviour of the same name (keeping its code).

    Raises:
        ValueError: If the name is taken (without ``replace``), not a lower-case identifier,
            or ``b`` is a second learned behaviour (the PettingZoo agents are ``learned``).
    """
    if b.learned and any(r.learned and r.name != b.name for r in REGISTRY.values()):
        raise ValueError(f"behaviour {b.name!r}: learned=True is the built-in 'learned' "
                         f"population's (the PettingZoo agents); a new behaviour is scripted, "
                         f"with a steer function")
    return REGISTRY.register(b, replace)


def behaviour(name: str) -> Behaviour:
    """The registered behaviour ``name``.

    Raises:
        ValueError: Naming the registered ones.
    """
    return REGISTRY.lookup(name, "population")


def behaviour_names() -> tuple[str, ...]:
    """Names of the registered behaviours, in code order."""
    return REGISTRY.names()
