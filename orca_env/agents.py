"""The agent table: every per-slot constant of one world, built from the config's groups.

A *slot* is an agent of the world (the simulator's agent id); groups fill slots in order.
:func:`build_agent_table` is the one place these arrays are written; the step pipeline
(:mod:`orca_env.pipeline`) concatenates the tables of its worlds, and the env reads them.
Per-episode attributes (radius, speeds with ``randomize_attributes``) start from the
``base_*`` arrays and are drawn at reset (:mod:`orca_env.episode`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from .behaviours import behaviour
from .codes import GoalBehavior, Population, code_of
from .config import GroupConfig
from .kinematics import kinematics
from .kinematics.base import (
    KIN_PARAMS,
    P_MAX_ACCELERATION,
    P_MAX_ANGULAR_ACCELERATION,
    P_MAX_ANGULAR_SPEED,
    P_MAX_ROTATION,
    P_TRACKING_ERROR,
    P_TRACKING_TIME,
    P_WHEEL_ACTIONS,
    P_WHEEL_BASE,
)
from .scenarios.base import RANDOM_RADIUS, RANDOM_SPEED

__all__ = ["AgentTable", "build_agent_table", "check_learned_padding", "ORCA_PARAMS"]

#: ORCA parameters a group sets per agent (the core's names).
ORCA_PARAMS = ("neighbor_dist", "max_neighbors", "time_horizon", "time_horizon_obst")


@dataclass
class AgentTable:
    """Per-slot constants of one world, ``(n,)`` arrays unless noted.

    Attributes:
        population: int64 behaviour code (:class:`~orca_env.codes.Population`, or a
            registered behaviour's).
        kinematics: int64 motion-model code (:mod:`orca_env.kinematics`).
        kin_param: (n, KIN_PARAMS) float64 the motion model's parameters (columns
            ``orca_env.kinematics.base.P_*``).
        on_goal: int64 :class:`~orca_env.codes.GoalBehavior` code.
        group: int64 index of the slot's group; ``group_names`` (list) names them.
        base_radius, base_max_speed, base_pref_speed: float64 the config's values, m, m/s.
        randomized: bool, draws radius and v_pref each episode (``randomize_attributes``).
        pref_is_vpref: bool, randomized and its pref_speed is the drawn v_pref.
        padding: float64 ``orca_padding``, m.
        layers, avoid_masks: int64 core visibility bits (groups' ``avoids``/``visible_to``).
        sense_masks: int64 the avoid masks as if every behaviour avoided agents: whom an agent
            would avoid (a ``social_force`` agent feels exactly those, though ORCA makes it
            avoid no one).
        orca: dict of the core's per-agent ORCA parameters (``ORCA_PARAMS``).
        noise: float64 magnitude of RVO2's preferred-velocity noise, m/s.
        responsibility: float64 share of avoidance.
        safe: bool, ORCA's velocity is realised (False: a learned agent without the safety
            layer moves with its action).
        crowd: bool, scripted (not learned).
        external_steer: bool, its behaviour steers in Python (``Behaviour.steer``).
        learned_slots: (L,) int64 slot of ``agent_k``.
        radius_min, radius_max, speed_max: float bounds over every episode.
    """

    population: np.ndarray
    kinematics: np.ndarray
    kin_param: np.ndarray
    on_goal: np.ndarray
    group: np.ndarray
    group_names: list
    base_radius: np.ndarray
    base_max_speed: np.ndarray
    base_pref_speed: np.ndarray
    randomized: np.ndarray
    pref_is_vpref: np.ndarray
    padding: np.ndarray
    layers: np.ndarray
    avoid_masks: np.ndarray
    sense_masks: np.ndarray
    orca: dict
    noise: np.ndarray
    responsibility: np.ndarray
    safe: np.ndarray
    crowd: np.ndarray
    external_steer: np.ndarray
    learned_slots: np.ndarray
    radius_min: float
    radius_max: float
    speed_max: float

    @property
    def size(self) -> int:
        """Number of slots."""
        return int(self.population.size)


#: Keys of each motion model (a key set on a group whose model does not read it is refused),
#: with their ``kin_param`` column and default.
KINEMATICS_KEYS = {
    "unicycle": {"max_rotation": (P_MAX_ROTATION, np.pi / 4),
                 "tracking_error": (P_TRACKING_ERROR, 0.1)},
    "differential_drive": {"max_angular_speed": (P_MAX_ANGULAR_SPEED, np.pi),
                           "max_acceleration": (P_MAX_ACCELERATION, 1.0),
                           "max_angular_acceleration": (P_MAX_ANGULAR_ACCELERATION, 2.0),
                           "wheel_base": (P_WHEEL_BASE, 0.23),
                           "tracking_error": (P_TRACKING_ERROR, 0.1),
                           "tracking_time": (P_TRACKING_TIME, None)},
}
#: Every motion-model key, in first-use order.
_ALL_KIN_KEYS = tuple(dict.fromkeys(k for keys in KINEMATICS_KEYS.values() for k in keys))


def _kin_row(g: GroupConfig, where: str, time_step: float) -> tuple[np.ndarray, float]:
    """The group's ``kin_param`` row and its ORCA radius enlargement (NH-ORCA's error bound)."""
    row = np.zeros(KIN_PARAMS)
    keys = KINEMATICS_KEYS.get(g.kinematics, {})
    for key in _ALL_KIN_KEYS:
        if getattr(g, key) is not None and key not in keys:
            raise ValueError(f"config key '{where}.{key}' applies to kinematics "
                             f"{[k for k, v in KINEMATICS_KEYS.items() if key in v]}, not "
                             f"{g.kinematics!r}; got {key}={getattr(g, key)!r}")
    if g.wheel_actions and g.kinematics != "differential_drive":
        raise ValueError(f"config key '{where}.wheel_actions' applies to kinematics "
                         f"differential_drive, not {g.kinematics!r}")
    for key, (col, default) in keys.items():
        v = getattr(g, key)
        row[col] = (2.0 * time_step if default is None else default) if v is None else v
    if "tracking_time" in keys and row[P_TRACKING_TIME] < time_step * (1 - 1e-12):
        raise ValueError(f"config key '{where}.tracking_time' must be >= the time step "
                         f"({time_step} s), got {row[P_TRACKING_TIME]!r}")
    row[P_WHEEL_ACTIONS] = float(g.wheel_actions)
    if not keys or not g.safety_layer:
        return row, 0.0
    return row, float(row[P_TRACKING_ERROR])


def build_agent_table(groups: list[GroupConfig], defaults: dict, crowd_noise: float,
                      time_step: float = 0.25,
                      learned_padding: float | None = None) -> AgentTable:
    """The agent table of ``groups`` with the scenario's ``AGENT_DEFAULTS`` and ``CROWD_NOISE``.

    ``learned_padding`` (config key ``learned_orca_padding``): when not ``None``, the
    ``orca_padding`` of every learned group with the safety layer, in place of its own. A
    padding larger than the radius of the agents it pads is warned about
    (:func:`check_learned_padding`).

    Raises:
        ValueError: On a group key its behaviour or its motion model refuses, naming
            ``groups[i].key``, or a config without a learned agent.
    """
    if not groups:
        raise ValueError("config key 'groups' must list at least one group")
    pop, goal_b, gid, names, kin, kin_rows = [], [], [], [], [], []
    params = {k: [] for k in ("radius", "max_speed", "pref_speed", *ORCA_PARAMS)}
    noise, resp, padding, randomized, pref_given, safe, ext = [], [], [], [], [], [], []
    for g_idx, g in enumerate(groups):
        where = f"groups[{g_idx}]"
        b = behaviour(g.population)
        if not b.learned and not g.safety_layer:
            raise ValueError(f"config key '{where}.safety_layer' applies to learned groups "
                             f"only, got false for population {g.population!r}")
        for key in ("social_force", "replay"):  # the two behaviours' own parameter keys
            if getattr(g, key) is not None and g.population != key:
                raise ValueError(f"config key '{where}.{key}' applies to population {key} only, "
                                 f"got population {g.population!r}")
        if b.check is not None:
            b.check(g, where)
        if g.randomize_attributes:
            for key in ("radius", "max_speed"):
                if getattr(g, key) is not None:
                    raise ValueError(f"config key '{where}.{key}' cannot be set with "
                                     f"randomize_attributes: true, which draws it each "
                                     f"episode; got {key}={getattr(g, key)!r}")
        nz = g.noise if g.noise is not None else (crowd_noise if b.crowd_noise else 0.0)
        names.append(g.name or f"{g.population}_{g_idx}")
        k_code = kinematics(g.kinematics).code
        k_row, k_pad = _kin_row(g, where, time_step)
        direct = b.learned and not g.safety_layer
        # The policy's margin replaces the group's padding where its safety layer acts.
        pad = learned_padding if learned_padding is not None and b.learned and not direct \
            else g.orca_padding
        for _ in range(g.count):
            pop.append(b.code)
            kin.append(k_code)
            kin_rows.append(k_row)
            goal_b.append(code_of(GoalBehavior, g.on_goal))
            gid.append(g_idx)
            for k in params:
                v = getattr(g, k)
                params[k].append(defaults[k] if v is None else v)
            noise.append(nz)
            resp.append(0.0 if direct else b.responsibility)
            padding.append(pad + k_pad)
            randomized.append(g.randomize_attributes)
            pref_given.append(g.pref_speed is not None)
            safe.append(not direct)
            ext.append(b.steer is not None)
    population = np.array(pop, dtype=np.int64)
    if not np.any(population == Population.LEARNED):
        raise ValueError("config key 'groups' must contain at least one learned agent "
                         "(population: learned, count >= 1)")
    group = np.array(gid, dtype=np.int64)
    base_radius = np.array(params["radius"], dtype=np.float64)
    base_max_speed = np.array(params["max_speed"], dtype=np.float64)
    rand = np.array(randomized, dtype=bool)
    lo_r, hi_r = RANDOM_RADIUS
    if learned_padding is not None:
        padded = (population == Population.LEARNED) & np.array(safe, dtype=bool)
        check_learned_padding(learned_padding, np.where(rand, lo_r, base_radius)[padded],
                              [names[g] for g in group[padded]])
    orca = {k: np.array(params[k]) for k in ORCA_PARAMS}
    orca["max_neighbors"] = orca["max_neighbors"].astype(np.int64)
    layers, masks = _visibility(groups, names, group, population)
    sense = _visibility(groups, names, group, population, sensing=True)[1]
    return AgentTable(
        population=population, kinematics=np.array(kin, dtype=np.int64),
        kin_param=np.array(kin_rows, dtype=np.float64).reshape(len(kin_rows), KIN_PARAMS),
        on_goal=np.array(goal_b, dtype=np.int64), group=group, group_names=names,
        base_radius=base_radius, base_max_speed=base_max_speed,
        base_pref_speed=np.array(params["pref_speed"], dtype=np.float64), randomized=rand,
        pref_is_vpref=rand & ~np.array(pref_given, dtype=bool),
        padding=np.array(padding, dtype=np.float64), layers=layers, avoid_masks=masks,
        sense_masks=sense,
        orca=orca, noise=np.array(noise, dtype=np.float64),
        responsibility=np.array(resp, dtype=np.float64), safe=np.array(safe, dtype=bool),
        crowd=population != Population.LEARNED, external_steer=np.array(ext, dtype=bool),
        learned_slots=np.flatnonzero(population == Population.LEARNED),
        radius_min=float(np.where(rand, lo_r, base_radius).min()),
        radius_max=float(np.where(rand, hi_r, base_radius).max()),
        speed_max=float(np.where(rand, RANDOM_SPEED[1], base_max_speed).max()))


#: The margin warnings given so far (:func:`check_learned_padding` gives each once a process:
#: a bench builds each entry's env several times, and libraries that reset the warning filters
#: would repeat it).
_WARNED: set[str] = set()


def check_learned_padding(padding: float, radii: np.ndarray, groups: list[str]) -> bool:
    """Warn when ``learned_orca_padding`` is larger than the radius of an agent it pads.

    The rule: a ``UserWarning`` when ``padding`` exceeds the smallest radius of the learned
    agents with the safety layer (the agents it pads; a ``randomize_attributes`` group counts
    with the smallest radius it draws, 0.3 m). Their ORCA disc, radius + padding, is then more
    than twice their body; the ORCA agents that avoid them keep off that disc too, which
    usually deadlocks the crowd. A padding up to the radius is not warned about (the shipped
    policies' 0.1 m is a third of CrowdNav's 0.3 m robot). Each warning is given once a
    process.

    Args:
        padding: The padding, m.
        radii: The radius of each padded agent, m.
        groups: The name of each padded agent's group.

    Returns:
        Whether the padding is larger than a radius (warned now or earlier).
    """
    if len(radii) == 0:
        return False
    k = int(np.argmin(radii))
    if not padding > radii[k]:
        return False
    message = (f"config key 'learned_orca_padding' is {padding:g} m, more than the radius "
               f"{radii[k]:g} m of the learned agents of group {groups[k]!r}: their ORCA disc "
               f"(radius + padding) is more than twice their body, and the ORCA agents that "
               f"avoid them keep off it too, which usually deadlocks the crowd; a margin of at "
               f"most the radius is expected (the shipped policies use 0.1 m)")
    if message not in _WARNED:
        _WARNED.add(message)
        warnings.warn(message, UserWarning, stacklevel=4)
    return True


def _visibility(groups: list[GroupConfig], names: list[str], group: np.ndarray,
                pop: np.ndarray, sensing: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Per-slot core ``layer`` and ``avoid_mask`` from the groups' ``avoids`` / ``visible_to``.

    Without either key anywhere every slot has layer 1 and avoid mask -1 (RVO2, bit for bit),
    except slots whose behaviour avoids no agent (mask 0: ``linear``). Otherwise group ``g`` is
    layer bit ``g``, and a group's mask holds the bit of every group it avoids that can be seen
    by it. ``sensing``: the masks as if every behaviour avoided agents (whom a ``social_force``
    agent feels, though ORCA makes it avoid no one).

    Raises:
        ValueError: On a name that is no group's, or more than 63 groups with visibility.
    """
    blind = [not sensing and not behaviour(g.population).avoids_agents for g in groups]
    if all(g.avoids is None and g.visible_to is None for g in groups):
        masks = np.full(group.size, -1, dtype=np.int64)
        masks[np.array(blind, dtype=bool)[group]] = 0
        return np.ones(group.size, dtype=np.int64), masks
    if len(groups) > 63:
        raise ValueError(f"config key 'groups': avoids and visible_to give each group one of 63 "
                         f"layer bits; got {len(groups)} groups")
    for g_idx, g in enumerate(groups):
        for key in ("avoids", "visible_to"):
            for k, name in enumerate(getattr(g, key) or ()):
                if name not in names:
                    raise ValueError(f"config key 'groups[{g_idx}].{key}[{k}]' names no group: "
                                     f"{name!r}; group names: {names}")
    masks = []
    for a, ga in enumerate(groups):
        m = 0
        if not blind[a]:
            for b, gb in enumerate(groups):
                if (ga.avoids is None or names[b] in ga.avoids) and \
                        (gb.visible_to is None or names[a] in gb.visible_to):
                    m |= 1 << b
        masks.append(m)
    layers = np.array([1 << g for g in range(len(groups))], dtype=np.int64)
    return layers[group], np.array(masks, dtype=np.int64)[group]
