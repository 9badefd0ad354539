"""Strict configuration of the environment: dataclasses, defaults and YAML loading.

Every key of an environment config is a field of :class:`EnvConfig` (or of one of its nested
sections). Defaults live here, documented once, in the field's ``doc`` metadata. A config is
built from (in increasing priority) the code defaults, the scenario's defaults, a YAML file or a
dict, and keyword arguments of :func:`orca_env.parallel_env`. Nested sections (``observation``,
``rewards``, ``stall``, ``scenario_kwargs``) merge key by key; ``groups`` replaces the list.

Validation is strict, as in VMAS: an unknown key or a value of the wrong type raises
``ValueError`` naming the key (with its path, e.g. ``rewards.colision``) and listing the valid
keys. ``bool`` is never accepted where a number is expected; ``int`` is accepted for ``float``.
``max_cycles`` (PettingZoo's name) is accepted for ``max_steps`` wherever a top-level key is
(:data:`KEY_ALIASES`); one mapping giving both with different values is an error.

Example YAML (``configs/circle.yaml``)::

    scenario: circle_v0
    max_steps: 2000
    groups:
      - {population: learned, count: 25, on_goal: stay}
      - {population: orca, count: 225, on_goal: stay}
    observation: {frame: goal, num_agents: 6, num_obstacles: 0, range: 15.0}
    rewards: {collision: -0.25}

CrowdNav's default test setting (``configs/crowdnav_circle_invisible.yaml``) uses the keys that
reproduce CrowdNav: who avoids whom (``groups[].visible_to`` / ``avoids``), the ORCA-only
padding, CrowdNav's episode end, and the scenario's ``layout`` of CrowdNav's test cases::

    scenario: crowdnav_circle_v0
    scenario_kwargs: {layout: crowdnav_test}   # evaluation episode k = CrowdNav's test case k
    time_limit_rule: crowdnav                  # the step starting at 24 s of 25 times out
    collision_check: crowdnav                  # CrowdNav's check, with
    collision_tolerance: 0.0                   # zero tolerance
    stall: {end_episode: false}                # no deadlock rule in CrowdNav
    groups:
      - {name: robot, population: learned, count: 1, orca_padding: 0.01, visible_to: []}
      - {name: humans, population: orca, count: 5, on_goal: stay, orca_padding: 0.01,
         noise: 0.0}

CrowdNav's ``randomize_attributes: true`` is a group key here: on the humans, with
``pref_speed: 1.0`` (CrowdNav's ORCA humans ask for at most 1 m/s whatever their v_pref).

``python -c "from orca_env.config import describe; print(describe())"`` lists every key with its
default and meaning.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import numbers
import os
import re
import reprlib
from dataclasses import dataclass, field
from typing import Any

import yaml

from .behaviours import behaviour_names
from .codes import GoalBehavior
from .kinematics import kinematics_names

__all__ = [
    "EnvConfig",
    "GroupConfig",
    "ObservationConfig",
    "LidarConfig",
    "RewardConfig",
    "StallConfig",
    "load_config",
    "POPULATIONS",
    "GOAL_BEHAVIOURS",
    "load_yaml",
    "parse_yaml_value",
    "tolerance_parts",
    "universal_observation",
    "policy_settings",
    "apply_policy_settings",
    "UNIVERSAL_DEFAULTS",
]

#: Built-in population names (the behaviour registry, :mod:`orca_env.behaviours`, is the one
#: list; a registered behaviour is accepted too).
POPULATIONS = behaviour_names()
GOAL_BEHAVIOURS = tuple(g.name.lower() for g in GoalBehavior)
#: Observation layouts (``observation.layout``, see :mod:`orca_env.observations`): ``metric``
#: (SI units, the scenario's K, M and bounds) or ``universal`` (scaled, fixed K and M, the same
#: bounds everywhere).
LAYOUTS = ("metric", "universal")

# Sane bounds of numeric keys. Beyond them float64 geometry overflows (ORCA squares lengths and
# speeds) or the env would ask for impossible memory; they are far outside any crowd scenario.
#: Largest length (m): radii, distances, ranges.
MAX_LENGTH = 1e6
#: Largest speed (m/s).
MAX_SPEED = 1e4
#: Largest duration (s): time step, ORCA horizons.
MAX_DURATION = 1e6
#: Largest count: agents per group, steps per episode, stall window.
MAX_COUNT = 10**9
#: Largest number of observed agents or segments, and of ORCA neighbours.
MAX_OBSERVED = 1024
#: Largest reward weight magnitude.
MAX_WEIGHT = 1e6
_WEIGHT = dict(kind=float, minimum=-MAX_WEIGHT, maximum=MAX_WEIGHT)
#: YAML aliases allowed in one document: enough for shared anchors, too few for an alias bomb
#: (nested aliases expand exponentially; 16 of them expand to a few hundred nodes at most).
MAX_YAML_ALIASES = 16

_SHOW = reprlib.Repr()
_SHOW.maxstring = 80
_SHOW.maxother = 80


def _show(value: Any) -> str:
    """A short ``repr`` for error messages: nested or huge values are elided, never expanded."""
    return _SHOW.repr(value)


class _StrictLoader(yaml.SafeLoader):
    """PyYAML's safe loader, stricter.

    * A key repeated in one mapping is an error (PyYAML keeps the last one silently).
    * More than :data:`MAX_YAML_ALIASES` aliases is an error (an alias bomb would otherwise
      expand exponentially in whatever walks the result).
    * ``1e3`` is a number, as the docs and YAML 1.2 say (PyYAML's YAML 1.1 rules need ``1.0e3``
      and read ``1e3`` as a string).
    """

    # Copied list by list: add_implicit_resolver would otherwise append to SafeLoader's lists.
    yaml_implicit_resolvers = {k: list(v) for k, v in
                               yaml.SafeLoader.yaml_implicit_resolvers.items()}

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self._aliases = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_YAML_ALIASES:
                mark = self.peek_event().start_mark
                raise ValueError(f"YAML {mark.name}: more than {MAX_YAML_ALIASES} aliases "
                                 f"(line {mark.line + 1}); expand them in the file")
        return super().compose_node(parent, index)

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        seen = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # "<<" merges may be overridden by explicit keys
            key = self.construct_object(key_node, deep=deep)
            try:
                if key in seen:
                    raise ValueError(f"YAML {key_node.start_mark.name}: key {_show(key)} appears "
                                     f"twice in one mapping (lines {seen[key] + 1} and "
                                     f"{key_node.start_mark.line + 1})")
                seen[key] = key_node.start_mark.line
            except TypeError:
                pass  # an unhashable key: SafeLoader rejects it with its own message
        return super().construct_mapping(node, deep)


_StrictLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?[0-9][0-9_]*(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"))


def load_yaml(source: str | os.PathLike) -> Any:
    """Read a YAML file as data (no code runs), strictly: see :class:`_StrictLoader`.

    Args:
        source: Path of the file.

    Returns:
        The document (``None`` for an empty file).

    Raises:
        ValueError: On a repeated key, too many aliases, invalid YAML or bytes that are not
            UTF-8 (naming the file).
        FileNotFoundError: If the file does not exist.
    """
    with open(source, "rb") as fh:
        raw = fh.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:  # a binary file (a model.zip) or another encoding
        what = " (it is a zip archive: a model, not a config?)" if raw[:4] == b"PK\x03\x04" \
            else ""
        raise ValueError(f"{os.fspath(source)!r} is not UTF-8 text: byte "
                         f"{raw[exc.start]:#04x} at position {exc.start}{what}") from None
    try:
        return yaml.load(text, Loader=_StrictLoader)  # noqa: S506  (a SafeLoader subclass)
    except yaml.YAMLError as exc:
        raise ValueError(f"{os.fspath(source)!r} is not valid YAML: {exc}") from exc


def parse_yaml_value(text: str) -> Any:
    """One YAML value from a string (command-line overrides), with :func:`load_yaml`'s rules.

    Raises:
        ValueError: On invalid YAML, in one line: the problem and where in ``text`` it is.
    """
    try:
        return yaml.load(text, Loader=_StrictLoader)  # noqa: S506  (a SafeLoader subclass)
    except yaml.YAMLError as exc:
        # One line (PyYAML's message draws the text and a caret over several).
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        mark = getattr(exc, "problem_mark", None)
        where = f" at character {mark.column + 1}" if mark is not None and "\n" not in text \
            else ""
        raise ValueError(f"{_show(text)} is not a valid YAML value: {problem}{where}") from exc


def _max_threads() -> int:
    """Threads numba may use: ``NUMBA_NUM_THREADS`` or the CPU count (numba's own rule)."""
    env = os.environ.get("NUMBA_NUM_THREADS", "")
    return int(env) if env.isdigit() and int(env) > 0 else (os.cpu_count() or 1)


def _f(default: Any, doc: str, *, kind: Any, choices: tuple | None = None,
       minimum: float | None = None, maximum: float | None = None, positive: bool = False,
       optional: bool = False, items: Any = None) -> Any:
    """A dataclass field with its documentation and validation rules as metadata.

    ``items`` is the type every element of a ``list`` field must have (``str`` only, for now).
    """
    meta = {"doc": doc, "kind": kind, "choices": choices, "minimum": minimum,
            "maximum": maximum, "positive": positive, "optional": optional, "items": items}
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda d=default: copy.deepcopy(d), metadata=meta)
    return field(default=default, metadata=meta)


@dataclass
class GroupConfig:
    """One group of agents sharing a population, a goal behaviour and ORCA parameters.

    Parameters left ``None`` take the scenario's agent defaults (``Scenario.AGENT_DEFAULTS``).

    Who avoids whom (``avoids``, ``visible_to``): agents of group A build ORCA constraints for
    (avoid) agents of group B when B's name is in A's ``avoids`` and A's name is in B's
    ``visible_to``; both default to ``null``, every group (RVO2: everyone avoids everyone).
    Names are the groups' ``name`` (default ``<population>_<index>``); a name shared by
    several groups means all of them. An agent's share of a pair's avoidance does not depend
    on whether the other avoids it back (half, for equal responsibilities), so an agent that
    is not avoided assumes a reciprocity that does not happen: that is CrowdNav's invisible
    robot (``docs/core-api.md``, "Visibility")::

        groups:
          - {name: robot, population: learned, count: 1, visible_to: []}  # nobody avoids it
          - {name: humans, population: orca, count: 5}                    # they avoid humans

    is the same as ``avoids: [humans]`` on the humans. Observations are not filtered: every
    agent still sees every agent within range.
    """

    population: str = _f("learned", "learned (PettingZoo agents), orca (crowd following pure "
                         "ORCA to its goal), non_reactive (dynamic obstacles: head for their "
                         "goal on a straight line or roadmap path, responsibility 0, so that "
                         "everyone else avoids them fully) or linear (CrowdNav's 'linear' "
                         "humans: head straight for their goal at pref_speed and avoid no "
                         "agent at all, while the others avoid them assuming reciprocity; "
                         "walls still bind them), social_force (Helbing and Molnar's social "
                         "force model, pysocialforce's parameters), replay (recorded "
                         "pedestrians from an ETH/UCY file, key replay), or a behaviour "
                         "registered with "
                         "orca_env.behaviours.register_behaviour",
                         kind=str, choices=behaviour_names)
    count: int = _f(1, "number of agents in the group; must be >= 0", kind=int, minimum=0,
                    maximum=10**6)
    name: str | None = _f(None, "label reported in infos['group']; default '<population>_<index>'",
                          kind=str, optional=True)
    on_goal: str = _f("stop", "stop (terminate and leave the simulation), stay (park: keep "
                      "ORCA-steering to the goal, still an obstacle), new_goal (crowd only: "
                      "the scenario draws a new goal, for endless flows)",
                      kind=str, choices=GOAL_BEHAVIOURS)
    safety_layer: bool = _f(True, "learned only. True: the action is a preferred velocity that "
                            "ORCA filters. False: the action is the velocity itself (the agent "
                            "moves exactly as commanded, walls and agents included, and has "
                            "responsibility 0 so the others avoid it fully)", kind=bool)
    radius: float | None = _f(None, "metres; must be positive", kind=float, positive=True,
                              maximum=MAX_LENGTH, optional=True)
    max_speed: float | None = _f(None, "m/s; actions are scaled to it; must be positive",
                                 kind=float, positive=True, maximum=MAX_SPEED, optional=True)
    pref_speed: float | None = _f(None, "m/s, speed of the goal-directed preferred velocity of "
                                  "scripted agents (RVO2 examples use 1); must be positive",
                                  kind=float, positive=True, maximum=MAX_SPEED, optional=True)
    neighbor_dist: float | None = _f(None, "ORCA neighbour distance (m)", kind=float,
                                     positive=True, maximum=MAX_LENGTH, optional=True)
    max_neighbors: int | None = _f(None, "ORCA max neighbours", kind=int, minimum=0,
                                   maximum=MAX_OBSERVED, optional=True)
    time_horizon: float | None = _f(None, "ORCA time horizon for agents (s)", kind=float,
                                    positive=True, maximum=MAX_DURATION, optional=True)
    time_horizon_obst: float | None = _f(None, "ORCA time horizon for obstacles (s)",
                                         kind=float, positive=True, maximum=MAX_DURATION,
                                         optional=True)
    noise: float | None = _f(None, "magnitude bound (m/s) of RVO2's symmetry-breaking noise on "
                             "the preferred velocity of scripted agents, U(0, noise) in a "
                             "uniform direction each step; default 1e-4 for orca, 0 otherwise",
                             kind=float, minimum=0.0, maximum=MAX_SPEED, optional=True)
    avoids: list | None = _f(None, "names of the groups whose agents this group avoids "
                             "(builds ORCA constraints for); null: every group; [] avoids no "
                             "agent (walls still bind). Not for linear groups, which avoid no "
                             "one", kind=list, optional=True, items=str)
    visible_to: list | None = _f(None, "names of the groups whose agents avoid this group's "
                                 "agents; null: every group; []: nobody avoids them (CrowdNav's "
                                 "invisible robot)", kind=list, optional=True, items=str)
    orca_padding: float = _f(0.0, "metres added to the radius inside ORCA only (CrowdNav's ORCA "
                             "adds 0.01): the ORCA radius is radius + orca_padding, while "
                             "collisions, observations, goals and spawning use the radius",
                             kind=float, minimum=0.0, maximum=MAX_LENGTH)
    kinematics: str = _f("holonomic", "motion model of the group's agents (orca_env.kinematics): "
                         "holonomic (any velocity up to max_speed at once, RVO2's agent), "
                         "unicycle (CrowdNav's robot: turn by at most max_rotation per step, "
                         "then move along the heading) or differential_drive (heading, forward "
                         "speed and turn rate with acceleration limits). A non-holonomic agent "
                         "with the safety layer (and an orca agent) uses NH-ORCA",
                         kind=str, choices=kinematics_names)
    max_rotation: float | None = _f(None, "unicycle: largest turn per step, rad; default pi/4 "
                                    "(CrowdNav's rotation samples)", kind=float, positive=True,
                                    maximum=3.141592653589793, optional=True)
    max_angular_speed: float | None = _f(None, "differential_drive: largest turn rate, rad/s; "
                                         "default pi (TurtleBot 2)", kind=float, positive=True,
                                         maximum=100.0, optional=True)
    max_acceleration: float | None = _f(None, "differential_drive: largest change of forward "
                                        "speed, m/s^2; default 1.0 (TurtleBot 2)", kind=float,
                                        positive=True, maximum=1000.0, optional=True)
    max_angular_acceleration: float | None = _f(None, "differential_drive: largest change of "
                                                "turn rate, rad/s^2; default 2.0 (TurtleBot 2)",
                                                kind=float, positive=True, maximum=1000.0,
                                                optional=True)
    wheel_base: float | None = _f(None, "differential_drive: distance between the wheels, m "
                                  "(wheel_actions); default 0.23 (TurtleBot 2)", kind=float,
                                  positive=True, maximum=MAX_LENGTH, optional=True)
    wheel_actions: bool = _f(False, "differential_drive, learned: the action is the two wheel "
                             "speeds (left, right) in units of max_speed instead of (forward "
                             "speed, turn rate)", kind=bool)
    tracking_error: float | None = _f(None, "NH-ORCA (non-holonomic kinematics with the safety "
                                      "layer): the bound E on the distance between the robot "
                                      "and the holonomic reference it tracks, m; added to its "
                                      "ORCA radius; default 0.1. Larger: more agile, more "
                                      "conservative spacing", kind=float, minimum=0.0,
                                      maximum=MAX_LENGTH, optional=True)
    tracking_time: float | None = _f(None, "NH-ORCA, differential_drive: the time T in which "
                                     "the robot turns onto the reference, s; default 2 time "
                                     "steps; must be >= the time step", kind=float,
                                     positive=True, maximum=MAX_DURATION, optional=True)
    randomize_attributes: bool = _f(False, "CrowdNav's randomize_attributes: each episode, every "
                                    "agent of the group draws its preferred speed v_pref ~ "
                                    "U(0.5, 1.5) m/s, then its radius ~ U(0.3, 0.5) m. v_pref "
                                    "is the agent's max_speed, and its pref_speed unless the "
                                    "group sets pref_speed (CrowdNav's ORCA humans ask for at "
                                    "most 1 m/s whatever their v_pref: pref_speed 1). Excludes "
                                    "radius and max_speed", kind=bool)
    social_force: dict | None = _f(None, "social_force groups only: the model's parameters, "
                                   "any of tau, v0, sigma, ped_factor, fov_phi, fov_factor, u0, "
                                   "r, space_factor, max_speed_factor, cutoff (defaults: "
                                   "pysocialforce's), the contact model's A, wall_A, B, k, "
                                   "kappa, mass, substeps (Helbing, Farkas and Vicsek 2000; off "
                                   "by default), social_factor, lambda_importance, gamma, n, "
                                   "n_prime (pysocialforce's SocialForce; off by default), and "
                                   "model: pysocialforce or helbing_farkas_vicsek (their "
                                   "defaults first); see orca_env.behaviours.social_force",
                                   kind=dict, optional=True)
    replay: dict | None = _f(None, "replay groups only: {file: ETH/UCY text file (frame, "
                             "pedestrian id, x, y per line; a path, or a shipped sample's name "
                             "such as replay_sample.txt), fps: annotated frames per second "
                             "(default 2.5, ETH/UCY's 0.4 s), frame_step: frame-number "
                             "increment between annotated frames (default: the file's smallest)}",
                             kind=dict, optional=True)


@dataclass
class LidarConfig:
    """A 2D LiDAR scan appended to the observation (``observation.lidar``; null: none).

    ``beams`` rays spread evenly over ``fov`` degrees centred on the sensor's heading (beam
    ``k`` at ``heading - fov/2 + (k + 1/2) fov / beams``, the centres of equal sectors), each
    reporting the distance to the first obstacle segment or other agent's disc it meets, capped
    at ``range``, plus Gaussian noise (``noise``, std in metres, from the world's seeded
    stream) clipped back to ``[0, range]`` (:mod:`orca_env.sensors`).
    """

    beams: int = _f(32, "rays per scan; must be >= 1 (leave the section out for no LiDAR). "
                    "More: finer obstacles seen, a longer observation and slower steps",
                    kind=int, minimum=1, maximum=MAX_OBSERVED)
    range: float | None = _f(None, "metres, the farthest a ray sees (a ray that hits nothing "
                             "reads range); None: observation.range", kind=float, positive=True,
                             maximum=MAX_LENGTH, optional=True)
    noise: float = _f(0.0, "standard deviation (m) of Gaussian noise added to every beam, "
                      "from the world's seeded stream; must be >= 0", kind=float, minimum=0.0,
                      maximum=MAX_LENGTH)
    fov: float = _f(360.0, "degrees covered by the beams, centred on the heading; in (0, 360]",
                    kind=float, positive=True, maximum=360.0)


@dataclass
class ObservationConfig:
    """Observation layout parameters."""

    frame: str = _f("goal", "goal: vectors in the agent's goal-aligned frame (x towards the "
                    "goal or waypoint); world: world frame", kind=str, choices=("goal", "world"))
    num_agents: int | None = _f(None, "K nearest agents observed; None: scenario default (6 "
                                "with layout universal, whatever the scenario)",
                                kind=int, minimum=0, maximum=MAX_OBSERVED, optional=True)
    num_obstacles: int | None = _f(None, "M nearest obstacle segments observed; None: scenario "
                                   "default (0 without obstacles; 4 with layout universal, "
                                   "whatever the scenario)", kind=int, minimum=0,
                                   maximum=MAX_OBSERVED, optional=True)
    range: float | None = _f(None, "metres; agents and segments farther are not observed; "
                             "None: scenario default. With layout universal it is also the "
                             "unit of every observed length", kind=float, positive=True,
                             maximum=MAX_LENGTH, optional=True)
    layout: str = _f("metric", "metric: SI units, the scenario's K and M, bounds from the "
                     "env's largest speed and radius (orca_env.observations); universal: the "
                     "same indices with lengths in units of the observation range and speeds in "
                     "units of the agent's max speed, goal distances squashed, fixed K and M "
                     "defaults and finite bounds that depend on K and M only, so that one "
                     "policy runs in every scenario", kind=str,
                     choices=LAYOUTS)
    time: bool = _f(False, "append the elapsed fraction of the episode's time limit (0 at "
                    "reset, 1 on the last step) as the observation's last feature: with a "
                    "time limit the best action depends on the time left (Pardo et al. 2018, "
                    "'Time Limits in Reinforcement Learning')", kind=bool)
    stall: bool = _f(False, "append the agent's own stall time, how long it has been slow "
                     "(the stall detector's counter of consecutive slow steps, see stall) as a "
                     "fraction of stall.window, clipped to [0, 1], just before the time "
                     "feature (orca_env.observations)", kind=bool)
    lidar: LidarConfig | None = _f(None, "LiDAR scan section (LidarConfig keys: beams, range, "
                                   "noise, fov); null: no scan. The scan follows the segments "
                                   "(and the heading features), before the scenario's own "
                                   "features (orca_env.sensors)",
                                   kind=LidarConfig, optional=True)
    fov: float = _f(360.0, "degrees of the neighbour sensor's cone, centred on the agent's "
                    "heading: agents whose centre lies outside it are not observed (rewards "
                    "still see every agent); in (0, 360]", kind=float, positive=True,
                    maximum=360.0)
    occlusion: bool = _f(False, "true: agents whose centre is hidden behind an obstacle segment "
                         "(RVO2's visibility test on the line of sight) are not observed; "
                         "rewards still see them", kind=bool)


@dataclass
class RewardConfig:
    """Reward weights (signed) and the parameters of the terms.

    The reward of an agent is ``sum(weight * raw_term)``; ``infos[agent]['reward_terms']``
    reports each weighted term. Raw terms:

    * ``progress``: (d_prev - d_now) / d_0, the reduction of the distance to the goal (the
      roadmap path length when guidance is on) as a fraction of the initial one, so an episode
      that reaches the goal collects about ``progress`` in total whatever the scenario's scale.
      Potential-based (phi = -d / d_0), so it does not change the optimal policy (Ng et al. 1999).
    * ``goal``: 1 on the step the agent reaches its goal.
    * ``collision``: 1 on a step where the agent's swept disc (along the segment travelled)
      overlaps another agent or an obstacle.
    * ``deadlock``: 1 on each step the stall detector flags the agent (see ``stall``).
    * ``intervention``: |safe velocity - preferred velocity| / max speed (0..2), how much ORCA
      changed the action.
    * ``time``: the time step in seconds.
    * ``discomfort``: CrowdNav's term, (discomfort_dist - clearance) * time step when the
      clearance to the nearest agent is below discomfort_dist (0 otherwise); a penalty, so its
      weight is negative like the collision weight.

    Defaults: goal +1 and collision -0.25 follow CrowdNav (the de-facto reference); progress 1
    gives a dense signal of the same scale as the goal bonus; deadlock -0.05 per stalled step and
    intervention -0.05 are small shaping terms (an agent stalled for the last 40 steps of an
    episode is flagged on 21 of them, with the default 20-step window, and pays about 1, the
    goal's worth); time -0.01 per second breaks ties towards faster routes; discomfort is off
    (CrowdNav uses weight -0.5 with discomfort_dist 0.2, see ``configs/crowdnav_circle.yaml``).
    """

    progress: float = _f(1.0, "weight of the progress term", **_WEIGHT)
    goal: float = _f(1.0, "weight of the goal term (CrowdNav: +1)", **_WEIGHT)
    collision: float = _f(-0.25, "weight of the collision term (CrowdNav: -0.25)", **_WEIGHT)
    deadlock: float = _f(-0.05, "weight of the deadlock (stalled) term, per step", **_WEIGHT)
    intervention: float = _f(-0.05, "weight of the ORCA intervention term", **_WEIGHT)
    time: float = _f(-0.01, "weight of the time term, per second", **_WEIGHT)
    discomfort: float = _f(0.0, "weight of the discomfort term (CrowdNav: -0.5)", **_WEIGHT)
    discomfort_dist: float = _f(0.2, "clearance (m) below which discomfort accrues", kind=float,
                                minimum=0.0, maximum=MAX_LENGTH)
    extra: dict = _f({}, "weights of the scenario's own reward terms by name "
                     "(Scenario.EXTRA_REWARDS); a term left out keeps the scenario's default "
                     "weight", kind=dict)


@dataclass
class StallConfig:
    """The stall (deadlock) detector."""

    speed_fraction: float = _f(0.05, "an agent is slow when its speed is below this fraction "
                               "of its max speed", kind=float, minimum=0.0, maximum=1.0)
    window: int = _f(20, "steps an agent must stay slow (and away from its goal) to count as "
                     "stalled; 20 steps = 5 s at dt 0.25", kind=int, minimum=1,
                     maximum=MAX_COUNT)
    end_episode: bool = _f(True, "end the episode (truncated, status 'deadlocked') when every "
                           "remaining agent (learned and moving crowd) is stalled", kind=bool)


@dataclass
class EnvConfig:
    """The whole environment configuration (see the module docstring for the merge order)."""

    scenario: str = _f("circle_v0", "registered scenario name, e.g. circle_v0 "
                       "(see orca_env.scenarios.SCENARIOS)", kind=str)
    scenario_kwargs: dict = _f({}, "scenario parameters (validated by the scenario)", kind=dict)
    groups: list | None = _f(None, "list of group dicts (GroupConfig keys); None: the "
                             "scenario's default groups; at least one learned agent is needed",
                             kind=list, optional=True)
    time_step: float | None = _f(None, "seconds per step; None: scenario default (0.25)",
                                 kind=float, positive=True, maximum=MAX_DURATION, optional=True)
    max_steps: int | None = _f(None, "steps before truncation (status 'timed_out'); None: "
                               "scenario default", kind=int, minimum=1, maximum=MAX_COUNT,
                               optional=True)
    guidance: bool = _f(False, "steer by a visibility roadmap over obstacle corners: the "
                        "observed goal is the next waypoint and progress uses path length",
                        kind=bool)
    action: str = _f("velocity", "what a learned agent's action means. velocity: its preferred "
                     "velocity (with the safety layer; the velocity itself without), in units "
                     "of its max speed. residual: a correction to pure ORCA's goal-directed "
                     "preferred velocity: action x 2 x max speed is added to it and the sum "
                     "shortened to the max speed, so action 0 is pure ORCA (residual policy "
                     "learning: a policy starts from ORCA's behaviour instead of learning it)",
                     kind=str, choices=("velocity", "residual"))
    learned_orca_padding: float | None = _f(
        None, "metres: when set, the orca_padding of every learned group with the safety layer "
        "(its agents' ORCA radius is radius + this, for their own safety layer and for the "
        "ORCA agents that avoid them; collisions, observations and goals use the radius). "
        "None: each group's own orca_padding. A trained policy brings it with its deploy "
        "section (a safety margin chosen for its weights), as it brings its action mode. "
        "Negative or non-finite is an error; larger than the radius of an agent it pads (a "
        "randomize_attributes group: the smallest radius drawn, 0.3 m) is a UserWarning when "
        "the env is built: that agent's ORCA disc would be more than twice its body, which "
        "the ORCA agents avoiding it keep off too, and such a margin usually deadlocks the "
        "crowd",
        kind=float, minimum=0.0, maximum=MAX_LENGTH, optional=True)
    on_collision: str = _f("terminate", "terminate: a learned agent that collides terminates "
                           "and leaves the simulation (CrowdNav); continue: it keeps going and "
                           "is penalised on every colliding step", kind=str,
                           choices=("terminate", "continue"))
    collision_tolerance: float | dict = _f(
        0.01, "overlap tolerated before a contact counts as a collision: pure ORCA leaves "
        "overlaps of about a millimetre in dense crowds (RVO2's Circle), which are not "
        "collisions. A number is metres (the default 0.01 m, whatever the agents' size). A "
        "mapping {absolute: a, relative: r} (each default 0) tolerates a + r * the smaller "
        "radius of the two agents (of the agent's radius against walls), so that the tolerance "
        "scales with the agents: {relative: 0.01} is 1% of the smaller radius. relative must be "
        "below 1", kind="tolerance")
    time_limit_rule: str = _f("steps", "steps: the episode is truncated (status 'timed_out') "
                              "after max_steps steps, and a goal or collision on the last step "
                              "still counts. crowdnav: CrowdNav's rule, with its time_limit = "
                              "max_steps * time_step: the step that starts at or after "
                              "time_limit - 1 s is the last (step 97 of 100 at dt 0.25), and "
                              "on it the time-out takes precedence: a goal or collision on that "
                              "step is neither counted nor rewarded (CrowdNav tests the time "
                              "before the collision and the goal)",
                              kind=str, choices=("steps", "crowdnav"))
    collision_check: str = _f("swept", "swept: a learned agent collides when its disc, moving "
                              "from its old to its new position, overlaps another agent's disc "
                              "moving likewise at some time of the step. crowdnav: CrowdNav's "
                              "step() check: the learned agent moves at its new velocity, the "
                              "others at their velocity of the previous step (CrowdNav tests "
                              "before it updates the humans), from the positions at the start "
                              "of the step; obstacles as swept. CrowdNav's check has zero "
                              "tolerance: set collision_tolerance: 0 with it",
                              kind=str, choices=("swept", "crowdnav"))
    observation: ObservationConfig = _f(None, "observation section", kind=ObservationConfig)
    rewards: RewardConfig = _f(None, "reward section", kind=RewardConfig)
    stall: StallConfig = _f(None, "stall detector section", kind=StallConfig)
    num_threads: int | None = _f(None, "threads stepping blocks of worlds in OrcaVectorEnv "
                                 "(results do not depend on it; one world's step runs on one "
                                 "thread, so the single env ignores it). None (default): one "
                                 "thread, so that several env processes (RLlib env runners, "
                                 "sweeps) do not oversubscribe the cores. At most the threads "
                                 "numba may use (NUMBA_NUM_THREADS, default: the CPU count)",
                                 kind=int, minimum=1, maximum=_max_threads, optional=True)
    render_mode: str | None = _f(None, "None, 'human' or 'rgb_array'", kind=str,
                                 choices=("human", "rgb_array"), optional=True)
    mixture: list | None = _f(None, "scenario mixture (orca_env.mixture): a list of entries "
                              "{config: name, path or mapping; weight: > 0, default 1; set: "
                              "{dotted.key: value}; ranges: {dotted.key: [low, high]}}, one "
                              "drawn by weight at every reset from the env's generator, then a "
                              "value for each range (integers for integer keys, uniform "
                              "otherwise). The config's other keys apply to every entry. Every "
                              "entry needs observation.layout universal (with the same frame, "
                              "K and M) and the same number of learned agents. None: one "
                              "config", kind=list, optional=True)

    def __post_init__(self) -> None:
        for name, cls in (("observation", ObservationConfig), ("rewards", RewardConfig),
                          ("stall", StallConfig)):
            if getattr(self, name) is None:
                setattr(self, name, cls())

    def entries(self) -> list[EnvConfig]:
        """``[self]``, or the config of each entry of a mixture (its ranges not drawn)."""
        if self.mixture is None:
            return [self]
        return [parse_section(EnvConfig, e["config"]) for e in self.mixture]

    def to_dict(self) -> dict:
        """A plain dict (YAML-serialisable) of the config.

        A mixture is ``{"mixture": [...]}`` alone: each entry holds its whole config (the
        mixture's other keys are merged into the entries when it is loaded).

        Keys added after canonical reports (``metrics.json``) existed are left out while they
        hold their default (:data:`_LATER_KEYS`: ``rewards.extra`` while empty, the groups'
        visibility, padding and ``randomize_attributes``, ``time_limit_rule``,
        ``collision_check``, ``action``, ``observation.layout``, ``observation.time`` and
        ``observation.stall``), so
        configs that do not use them serialise as they did before the keys existed and their
        reports keep their bytes.
        Loading the dict back gives the same config.
        """
        if self.mixture is not None:
            return {"mixture": copy.deepcopy(self.mixture)}
        out = dataclasses.asdict(self)
        if not out["rewards"]["extra"]:
            del out["rewards"]["extra"]
        for key, default in _LATER_KEYS["env"].items():
            if out[key] == default:
                del out[key]
        for key, default in _LATER_KEYS["observation"].items():
            if out["observation"][key] == default:
                del out["observation"][key]
        for group in out["groups"] or ():
            for key, default in _LATER_KEYS["group"].items():
                if group[key] == default and type(group[key]) is type(default):
                    del group[key]
        return out


#: Keys that :meth:`EnvConfig.to_dict` leaves out at these (default) values.
_LATER_KEYS = {"env": {"time_limit_rule": "steps", "collision_check": "swept", "mixture": None,
                       "action": "velocity"},
               "observation": {"layout": "metric", "time": False, "lidar": None, "fov": 360.0,
                               "occlusion": False, "stall": False},
               "group": {"avoids": None, "visible_to": None, "orca_padding": 0.0,
                         "randomize_attributes": False, "kinematics": "holonomic"}}


_SECTIONS = {"observation": ObservationConfig, "rewards": RewardConfig, "stall": StallConfig}


def _type_name(kind: Any) -> str:
    return getattr(kind, "__name__", str(kind))


def _check_value(key: str, value: Any, meta: dict) -> Any:
    """Validate one scalar value against the field metadata; return the converted value."""
    kind = meta["kind"]
    if value is None:
        if meta["optional"]:
            return None
        raise ValueError(f"config key {key!r} must be a {_type_name(kind)}, got None")
    if kind is float:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise ValueError(f"config key {key!r} must be a number, got {_show(value)} "
                             f"({type(value).__name__})")
        value = float(value)
        if not math.isfinite(value):
            raise ValueError(f"config key {key!r} must be finite, got {_show(value)}")
    elif kind is int:
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            value = int(value)  # numpy integers from parameter sweeps are fine
        if isinstance(value, bool) or not isinstance(value, int):
            # Accept integral floats from YAML like 1e3 only when exactly integral.
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            else:
                raise ValueError(f"config key {key!r} must be an integer, got {_show(value)} "
                                 f"({type(value).__name__})")
    elif kind is bool:
        if not isinstance(value, bool):
            raise ValueError(f"config key {key!r} must be true or false, got {_show(value)}")
    elif kind is str:
        if not isinstance(value, str):
            raise ValueError(f"config key {key!r} must be a string, got {_show(value)}")
    elif kind is dict:
        if not isinstance(value, dict):
            raise ValueError(f"config key {key!r} must be a mapping, got {_show(value)}")
        return dict(value)
    elif kind == "tolerance":
        return _check_tolerance(key, value)
    elif kind is list:
        if not isinstance(value, (list, tuple)):
            raise ValueError(f"config key {key!r} must be a list, got {_show(value)}")
        if meta.get("items") is str:
            for k, item in enumerate(value):
                if not isinstance(item, str):
                    raise ValueError(f"config key '{key}[{k}]' must be a string, got "
                                     f"{_show(item)}")
        return list(value)
    choices = meta["choices"]() if callable(meta["choices"]) else meta["choices"]
    if choices is not None and value not in choices:
        raise ValueError(f"config key {key!r} must be one of {list(choices)}, "
                         f"got {_show(value)}")
    if kind in (int, float):
        if meta["positive"] and not value > 0:
            raise ValueError(f"config key {key!r} must be positive, got {_show(value)}")
        if meta["minimum"] is not None and not value >= meta["minimum"]:
            raise ValueError(f"config key {key!r} must be >= {meta['minimum']}, got {_show(value)}")
        maximum = meta["maximum"]() if callable(meta["maximum"]) else meta["maximum"]
        if maximum is not None and not value <= maximum:
            raise ValueError(f"config key {key!r} must be <= {maximum!r}, got {_show(value)}")
    return value


#: K (``num_agents``) and M (``num_obstacles``) of ``observation.layout: universal`` when the
#: config leaves them unset, whatever the scenario (:mod:`orca_env.observations`).
UNIVERSAL_DEFAULTS = {"num_agents": 6, "num_obstacles": 4}


def universal_observation(config: Any) -> dict | None:
    """The observation settings a policy trained on ``config`` needs, if its layout is universal.

    Args:
        config: An env config (YAML path, shipped name, dict or ``EnvConfig``).

    Returns:
        ``{"layout": "universal", "frame", "num_agents", "num_obstacles"}`` (K and M resolved:
        the universal defaults when unset; plus ``"time": True`` with ``observation.time`` and
        ``"stall": True`` with ``observation.stall``)
        when ``config`` observes with the universal layout, else ``None``. ``range`` is left
        out: in the universal layout it is the unit of lengths, each scenario's own. Applied to
        any other config, these settings give it the very observation space of ``config``:
        evaluation does so for a model trained with them (``orca-env eval CONFIG --policy RUN``).
    """
    cfg = config if isinstance(config, EnvConfig) else load_config(config)
    if cfg.mixture is not None:  # every entry has the same (OrcaEnv checks it)
        cfg = parse_section(EnvConfig, cfg.mixture[0]["config"])
    ob = cfg.observation
    if ob.layout != "universal":
        return None
    out = {"layout": "universal", "frame": ob.frame,
           "num_agents": UNIVERSAL_DEFAULTS["num_agents"] if ob.num_agents is None
           else ob.num_agents,
           "num_obstacles": UNIVERSAL_DEFAULTS["num_obstacles"] if ob.num_obstacles is None
           else ob.num_obstacles}
    if ob.time:
        out["time"] = True
    if ob.stall:
        out["stall"] = True
    out.update(sensor_settings(ob))
    return out


#: The sensor keys at their defaults (no scan, no cone, no occlusion).
_SENSORS_OFF = {"lidar": None, "fov": 360.0, "occlusion": False}


def sensor_settings(ob: ObservationConfig) -> dict:
    """The sensor keys of an observation section that differ from their defaults (off).

    A policy trained with a LiDAR scan or a field of view needs the same sensors wherever it
    acts: :func:`universal_observation` hands them on with the layout.
    """
    out: dict = {}
    if ob.lidar is not None:
        out["lidar"] = dataclasses.asdict(ob.lidar)
    if ob.fov != 360.0:
        out["fov"] = ob.fov
    if ob.occlusion:
        out["occlusion"] = True
    return out


def policy_settings(config: Any) -> dict:
    """The env config keys a policy trained on ``config`` needs from any env it acts in.

    Args:
        config: An env config (YAML path, shipped name, dict or ``EnvConfig``).

    Returns:
        ``{"action": "velocity" | "residual"}`` (what the policy's actions mean), plus
        ``"observation"``: :func:`universal_observation` when ``config`` observes with the
        universal layout, else ``{"time": True}`` / ``{"stall": True}`` (or both) when it
        observes the time or its stall time, plus ``"learned_orca_padding"`` when ``config``
        sets it (the safety margin the policy was trained with). Evaluation merges
        them into the env config before it builds the env (keys given explicitly still win; the
        model's loader then refuses a mismatch).
    """
    cfg = config if isinstance(config, EnvConfig) else load_config(config)
    if cfg.mixture is not None:  # every entry has the same (OrcaEnv checks it)
        cfg = parse_section(EnvConfig, cfg.mixture[0]["config"])
    out: dict = {"action": cfg.action}
    if cfg.learned_orca_padding is not None:
        out["learned_orca_padding"] = cfg.learned_orca_padding
    universal = universal_observation(cfg)
    if universal is not None:
        out["observation"] = universal
    elif cfg.observation.time or cfg.observation.stall:
        own = {"time": cfg.observation.time, "stall": cfg.observation.stall}
        out["observation"] = {k: True for k, v in own.items() if v}
    return out


def apply_policy_settings(overrides: dict, settings: dict | None) -> dict:
    """``overrides`` (env config keys) completed with a policy's :func:`policy_settings`.

    The policy's ``observation`` keys are merged under the ``observation`` section given in
    ``overrides`` (with a universal layout, the sensor keys the policy does not name are set
    off: its observation space is the one it was trained with), and its ``action`` and
    ``learned_orca_padding`` are used unless ``overrides`` sets them (``learned_orca_padding:
    null`` runs a policy without its margin); ``overrides`` is not modified.
    """
    out = dict(overrides)
    if not settings:
        return out
    if "observation" in settings:
        given = out.get("observation")
        # A universal policy's sensors are part of its observation: off unless it names them,
        # whatever the env config's own (a policy without a scan sees none in a LiDAR config).
        off = _SENSORS_OFF if settings["observation"].get("layout") == "universal" else {}
        out["observation"] = {**off, **settings["observation"],
                              **(given if isinstance(given, dict) else {})}
    for key in ("action", "learned_orca_padding"):
        if key in settings and key not in out:
            out[key] = settings[key]
    return out


#: Keys of the mapping form of ``collision_tolerance``.
TOLERANCE_KEYS = ("absolute", "relative")


def _check_tolerance(key: str, value: Any) -> float | dict:
    """``collision_tolerance``: metres (a number), or ``{absolute, relative}`` (both filled in)."""
    meta = {"kind": float, "optional": False, "choices": None, "positive": False,
            "minimum": 0.0, "maximum": MAX_LENGTH}
    if not isinstance(value, dict):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise ValueError(f"config key {key!r} must be a number of metres or a mapping "
                             f"{{absolute: metres, relative: fraction of the smaller radius}}, "
                             f"got {_show(value)}")
        return _check_value(key, value, meta)
    unknown = [k for k in value if k not in TOLERANCE_KEYS]
    if unknown:
        raise ValueError(f"unknown config key {key + '.' + str(unknown[0])!r}; valid keys in "
                         f"{key!r}: {list(TOLERANCE_KEYS)}")
    if not value:
        raise ValueError(f"config key {key!r}: the mapping needs absolute, relative or both, "
                         f"got {{}}")
    out = {"absolute": _check_value(key + ".absolute", value.get("absolute", 0.0), meta),
           "relative": _check_value(key + ".relative", value.get("relative", 0.0),
                                    {**meta, "maximum": 1.0})}
    if out["relative"] >= 1.0:
        raise ValueError(f"config key '{key}.relative' must be below 1 (a fraction of the "
                         f"smaller radius), got {_show(value['relative'])}")
    return out


def tolerance_parts(value: float | dict) -> tuple[float, float]:
    """``(absolute metres, relative fraction)`` of a validated ``collision_tolerance``."""
    if isinstance(value, dict):
        return float(value["absolute"]), float(value["relative"])
    return float(value), 0.0


#: The parser of a ``mixture`` list (:func:`orca_env.mixture.parse_mixture`). The mixture module
#: builds on this one, so it registers its parser here when imported (no import cycle).
_MIXTURE_PARSER = None


def set_mixture_parser(parser: Any) -> None:
    """Register the parser of ``mixture`` lists (``orca_env.mixture`` calls it on import)."""
    global _MIXTURE_PARSER
    _MIXTURE_PARSER = parser


#: Other names of top-level keys: ``alias -> key`` (PettingZoo's test utilities and many of its
#: envs call the step limit ``max_cycles``).
KEY_ALIASES = {"max_cycles": "max_steps"}


def _resolve_aliases(data: dict, path: str = "") -> dict:
    """``data`` with :data:`KEY_ALIASES` renamed to their keys (a copy when any is present).

    Raises:
        ValueError: If ``data`` gives an alias and its key with different values.
    """
    if not any(a in data for a in KEY_ALIASES):
        return data
    out = dict(data)
    for alias, key in KEY_ALIASES.items():
        if alias not in out:
            continue
        value = out.pop(alias)
        if key in out and out[key] != value:
            raise ValueError(f"config keys {path + key!r} and {path + alias!r} (its PettingZoo "
                             f"name) differ: {_show(out[key])} and {_show(value)}; give one")
        out[key] = value
    return out


def parse_section(cls: type, data: Any, path: str = "") -> Any:
    """Build dataclass ``cls`` from a mapping, strictly.

    Args:
        cls: A dataclass from this module.
        data: A mapping, an instance of ``cls`` (returned as a copy) or ``None`` (defaults).
        path: Dotted prefix naming the section in error messages.

    Returns:
        An instance of ``cls``.

    Raises:
        ValueError: On an unknown key (the message lists the valid ones) or a bad value.
    """
    if data is None:
        return cls()
    if isinstance(data, cls):
        data = data.to_dict() if cls is EnvConfig and data.mixture is not None \
            else dataclasses.asdict(data)
    if not isinstance(data, dict):
        raise ValueError(f"config section {path.rstrip('.') or '<root>'!r} must be a mapping, "
                         f"got {_show(data)}")
    if cls is EnvConfig:
        data = _resolve_aliases(data, path)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = [k for k in data if k not in fields]
    if unknown:
        raise ValueError(f"unknown config key {path + str(unknown[0])!r}; valid keys"
                         f"{' in ' + repr(path.rstrip('.')) if path else ''}: {sorted(fields)}")
    if cls is EnvConfig and data.get("mixture") is not None:
        if _MIXTURE_PARSER is None:
            raise RuntimeError("config key 'mixture' needs orca_env.mixture, which registers "
                               "its parser when imported (orca_env.environment and "
                               "orca_env.training.config import it)")
        common = {k: v for k, v in data.items() if k != "mixture"}
        parse_section(EnvConfig, common, path)  # the shared keys, named as top-level keys
        return cls(mixture=_MIXTURE_PARSER(data["mixture"], common, path + "mixture"))
    kwargs = {}
    for name, value in data.items():
        meta = fields[name].metadata
        key = path + name
        if name in _SECTIONS and cls is EnvConfig:
            kwargs[name] = parse_section(_SECTIONS[name], value, key + ".")
        elif meta["kind"] is LidarConfig:  # a nested section that may be null (off)
            kwargs[name] = None if value is None else parse_section(LidarConfig, value,
                                                                   key + ".")
        elif name == "groups" and cls is EnvConfig:
            value = _check_value(key, value, meta)
            if value is not None:
                for i, g in enumerate(value):
                    if not isinstance(g, (dict, GroupConfig)):  # null is no group of defaults
                        raise ValueError(f"config key '{key}[{i}]' must be a mapping of group "
                                         f"keys, got {_show(g)}")
                value = [parse_section(GroupConfig, g, f"{key}[{i}].")
                         for i, g in enumerate(value)]
            kwargs[name] = value
        else:
            kwargs[name] = _check_value(key, value, meta)
    return cls(**kwargs)


def _deep_merge(base: dict, over: dict) -> dict:
    out = dict(base)
    for k, v in over.items():
        if k in out and isinstance(out[k], dict) and isinstance(v, dict):
            out[k] = _deep_merge(out[k], v)
        else:
            out[k] = v
    return out


def load_config(config: str | os.PathLike | dict | EnvConfig | None = None,
                **overrides: Any) -> EnvConfig:
    """Resolve a config from a YAML path, a dict or an ``EnvConfig``, plus keyword overrides.

    Args:
        config: Path to a YAML file, the name of a shipped config (``"circle_dense"``, see
            :mod:`orca_env.configs`), a mapping, an ``EnvConfig`` or ``None`` (code defaults).
        **overrides: Any ``EnvConfig`` key; nested sections merge key by key.

    Returns:
        The validated ``EnvConfig``. Scenario defaults are applied later, by the env.

    Raises:
        ValueError: On an unknown key, a wrong type or an invalid value.
        FileNotFoundError: If the YAML path does not exist.
    """
    if config is None:
        data: dict = {}
    elif isinstance(config, EnvConfig):
        data = config.to_dict() if config.mixture is not None else dataclasses.asdict(config)
    elif isinstance(config, dict):
        data = copy.deepcopy(config)
    elif isinstance(config, (str, os.PathLike)):
        from .configs import resolve  # noqa: PLC0415  (shipped configs by name)

        config = resolve(config)
        data = load_yaml(config) or {}
        if not isinstance(data, dict):
            raise ValueError(f"config file {os.fspath(config)!r} must hold a mapping at its top "
                             f"level, got {type(data).__name__}")
    else:
        raise ValueError(f"config must be a path, a dict or an EnvConfig, got {_show(config)}")
    # Aliases per layer: a keyword max_cycles overrides a file's max_steps.
    data = _deep_merge(_resolve_aliases(data), _resolve_aliases(overrides))
    return parse_section(EnvConfig, data)


def describe() -> str:
    """A human-readable table of every config key, its default and its meaning."""
    lines = []
    for cls, prefix in ((EnvConfig, ""), (GroupConfig, "groups[]."),
                        (ObservationConfig, "observation."),
                        (LidarConfig, "observation.lidar."), (RewardConfig, "rewards."),
                        (StallConfig, "stall.")):
        for f in dataclasses.fields(cls):
            if cls is EnvConfig and f.name in _SECTIONS:
                continue
            default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
            lines.append(f"{prefix}{f.name} = {default!r}: {f.metadata['doc']}")
    return "\n".join(lines)
