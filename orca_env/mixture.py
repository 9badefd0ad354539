"""Scenario mixtures: one env config that draws a scenario variant at every reset.

A config with the key ``mixture`` lists entries; every ``reset`` draws one entry with
probability proportional to its ``weight``, then a value for each of its ``ranges``, from the
env's generator ``np_random`` (so episodes stay a function of the seed), and runs the episode
on that config::

    mixture:
      - config: circle_dense                 # a shipped config's name, a YAML path or a mapping
        weight: 2                            # > 0; default 1
        set: {groups.0.count: 4}             # fixed dotted overrides of this entry
        ranges:                              # dotted key: [low, high], drawn at every reset
          scenario_kwargs.circle_radius: [3.0, 6.0]     # uniform for float keys
          groups.1.count: [0, 12]                       # uniform integer, both ends included
      - config: crowdnav_circle
        set: {groups.0.count: 4}
    observation: {layout: universal}         # any other key applies to every entry
    collision_tolerance: {relative: 0.01}

Rules, checked when the env is built (``ValueError`` naming the entry):

* The keys next to ``mixture`` are merged into every entry's config (they win over the entry's
  own values; sections merge key by key, ``groups`` replaces the list). The resolved config is
  the mixture alone: ``EnvConfig.to_dict()`` gives ``{"mixture": [...]}`` with each entry's full
  config, and its other fields stay at their defaults (``OrcaEnv.episode_config`` is the config
  of the current episode).
* Every entry observes with ``observation.layout: universal`` and the same ``frame``, K and M:
  one observation space for all.
* Every entry has the same number of learned agents, at both ends of its ranges: the agents of
  a PettingZoo env (and the entries of a ``VecEnv``) are fixed, so vary the crowd, not the
  learned group's ``count``.
* ``ranges`` keys are dotted config keys whose values are numbers: a field of the config
  schema (``max_steps``, ``groups.1.radius``, ``rewards.goal``, ``collision_tolerance.relative``,
  ...) or a numeric scenario parameter (``scenario_kwargs.circle_radius``). Integer keys draw
  integers from ``[low, high]`` inclusive (both must be integers), others draw uniformly.
  ``low <= high``; both ends must give a valid config.

A draw whose agents the scenario cannot place (``SpawnError``: a corner of the ranges too
crowded for the scenario's start zones) is drawn again from the same generator at that reset,
up to ``orca_env.environment.MIXTURE_SPAWN_DRAWS`` (10) times in a row; then the reset raises
``SpawnError`` naming the last draw. Episodes placed at their first draw are unchanged. The
env's start-overlap check counts as placement. Redraws bias the mixture towards what can be
placed: each env warns at its first and counts them in ``OrcaEnv.mixture_redraws``.

``OrcaVectorEnv`` runs mixtures too: each world draws its own entry at every reset, so its
worlds may differ in size (the step pipeline keeps them in one batch).
"""

from __future__ import annotations

import copy
import dataclasses
import math
import numbers
import os
from collections.abc import Callable
from typing import Any

import numpy as np

from .config import (
    EnvConfig,
    GroupConfig,
    ObservationConfig,
    RewardConfig,
    StallConfig,
    _deep_merge,
    _show,
    load_yaml,
    parse_section,
    set_mixture_parser,
    universal_observation,
)

__all__ = ["MIXTURE_KEYS", "parse_mixture", "set_dotted", "Mixture"]

#: Keys of one mixture entry.
MIXTURE_KEYS = ("config", "weight", "set", "ranges")
_SECTION_CLASSES = {"observation": ObservationConfig, "rewards": RewardConfig,
                    "stall": StallConfig}


def _resolve_entry_config(base: Any, where: str) -> dict:
    """An entry's ``config``: a shipped name or YAML path (read now), or a mapping (copied)."""
    if isinstance(base, (str, os.PathLike)):
        from .configs import resolve  # noqa: PLC0415

        try:
            path = resolve(base)
        except FileNotFoundError as exc:
            raise ValueError(f"config key '{where}.config': {exc}") from None
        data = load_yaml(path) or {}
        if not isinstance(data, dict):
            raise ValueError(f"config key '{where}.config': {os.fspath(base)!r} must hold a "
                             f"mapping, got {type(data).__name__}")
        return data
    if isinstance(base, dict):
        return copy.deepcopy(base)
    raise ValueError(f"config key '{where}.config' must be a config name, a YAML path or a "
                     f"mapping, got {_show(base)}")


def _default_groups(data: dict) -> list:
    """The scenario's default groups, for dotted keys into ``groups`` that the config leaves out."""
    from .scenarios import SCENARIOS  # noqa: PLC0415

    cls = SCENARIOS.get(data.get("scenario", EnvConfig.scenario))
    return [dict(g) for g in cls.DEFAULT_GROUPS] if cls is not None else []


def set_dotted(data: dict, key: str, value: Any, where: str,
               plain: Callable[[tuple[str, ...], Any], str] | None = None) -> None:
    """Set the dotted ``key`` of the config mapping ``data`` to ``value``, in place.

    An integer part indexes a list (``groups.1.count``); ``groups`` left out of ``data`` is
    filled in with the scenario's default groups first. The one walker of dotted config keys:
    mixtures' ``set`` and ``ranges``, and ``orca-env eval --set`` and suite entries' ``set``
    (:mod:`orca_env.evaluation.overrides`).

    Args:
        data: The config mapping, changed in place.
        key: The dotted key.
        value: Its new value (copied).
        where: What starts every error message.
        plain: ``plain(parts, node)`` describes a plain value met on the way (``parts`` the key
            parts that lead to it) in the error message; default ``"is <value>"``.

    Raises:
        ValueError: Starting with ``where``, on an empty part, an index out of range or a key
            below a plain value.
    """
    parts = key.split(".")
    if not all(parts):
        raise ValueError(f"{where}: empty part in the key {key!r}")
    if parts[0] == "groups" and len(parts) > 1 and data.get("groups") is None:
        data["groups"] = _default_groups(data)
    node: Any = data
    for depth, p in enumerate(parts):
        last = depth == len(parts) - 1
        here = ".".join(parts[:depth]) or "<root>"
        if isinstance(node, list):
            if not (p.isdigit() and int(p) < len(node)):
                raise ValueError(f"{where}: {here!r} is a list of {len(node)} items: expected an "
                                 f"index 0 .. {len(node) - 1}, got {p!r}")
            p = int(p)
        elif not isinstance(node, dict):
            what = f"is {_show(node)}" if plain is None else plain(tuple(parts[:depth]), node)
            raise ValueError(f"{where}: {here!r} {what}, so it has no key {p!r}")
        if last:
            node[p] = copy.deepcopy(value)
        else:
            if isinstance(node, dict) and node.get(p) is None:
                node[p] = {}
            node = node[p]


def _field_kind(cls: type, name: str) -> Any:
    for f in dataclasses.fields(cls):
        if f.name == name:
            return f.metadata["kind"]
    return None


def _range_kind(data: dict, key: str, where: str) -> type:
    """``int`` or ``float``: the type of the numeric config key ``key`` (dotted)."""
    parts = key.split(".")
    kind = None
    top = parts[0]
    if len(parts) == 1:
        kind = _field_kind(EnvConfig, top)
        if kind == "tolerance":
            kind = float
    elif top in _SECTION_CLASSES and len(parts) == 2:
        kind = _field_kind(_SECTION_CLASSES[top], parts[1])
    elif top == "rewards" and len(parts) == 3 and parts[1] == "extra":
        kind = float
    elif top == "collision_tolerance" and len(parts) == 2 and parts[1] in ("absolute",
                                                                          "relative"):
        kind = float
    elif top == "groups" and len(parts) == 3 and parts[1].isdigit():
        kind = _field_kind(GroupConfig, parts[2])
    elif top == "scenario_kwargs" and len(parts) == 2:
        from .scenarios import SCENARIOS  # noqa: PLC0415

        cls = SCENARIOS.get(data.get("scenario", EnvConfig.scenario))
        default = None if cls is None else cls.PARAMS.get(parts[1])
        if isinstance(default, (int, float)) and not isinstance(default, bool):
            kind = type(default)
    if kind not in (int, float):
        raise ValueError(f"config key '{where}.ranges.{key}': not a numeric config key (a field "
                         f"of the config schema such as groups.1.count or rewards.goal, or a "
                         f"numeric scenario parameter such as scenario_kwargs.circle_radius)")
    return kind


def _check_weight(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) \
            or not math.isfinite(value) or not value > 0:
        raise ValueError(f"config key '{where}.weight' must be a finite number > 0, got "
                         f"{_show(value)}")
    return float(value)


def _check_range(key: str, value: Any, kind: type, where: str) -> list:
    label = f"config key '{where}.ranges.{key}'"
    if not isinstance(value, (list, tuple)) or len(value) != 2 or any(
            isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v)
            for v in value):
        raise ValueError(f"{label} must be [low, high], two finite numbers, got {_show(value)}")
    lo, hi = value
    if kind is int:
        if not all(float(v).is_integer() for v in value):
            raise ValueError(f"{label} is an integer key: low and high must be integers, got "
                             f"{_show(value)}")
        lo, hi = int(lo), int(hi)
    else:
        lo, hi = float(lo), float(hi)
    if lo > hi:
        raise ValueError(f"{label}: low must be <= high, got {_show(value)}")
    return [lo, hi]


def _parse_entry_config(data: dict, where: str, what: str = "") -> EnvConfig:
    try:
        return parse_section(EnvConfig, data)
    except ValueError as exc:
        raise ValueError(f"config key '{where}'{what}: {exc}") from None


def parse_mixture(value: Any, common: dict, key: str = "mixture") -> list[dict]:
    """Validate a ``mixture`` list and resolve its entries (see the module docstring).

    Args:
        value: The list of entries.
        common: The config's other keys, merged into every entry (they win).
        key: The key's name in messages.

    Returns:
        ``[{"config": dict, "weight": float, "ranges": {key: [low, high]}}]``: each entry's
        config read, merged with ``common`` and its ``set`` applied (a plain mapping that
        ``load_config`` accepts), its ranges checked at both ends.

    Raises:
        ValueError: Naming the entry and key.
    """
    if not isinstance(value, (list, tuple)) or not value:
        raise ValueError(f"config key {key!r} must be a non-empty list of entries "
                         f"{{config, weight, set, ranges}}, got {_show(value)}")
    if "mixture" in common:
        raise ValueError(f"config key {key!r}: mixtures do not nest")
    out = []
    for i, item in enumerate(value):
        where = f"{key}[{i}]"
        if not isinstance(item, dict):
            raise ValueError(f"config key {where!r} must be a mapping with keys "
                             f"{list(MIXTURE_KEYS)}, got {_show(item)}")
        unknown = [k for k in item if k not in MIXTURE_KEYS]
        if unknown:
            raise ValueError(f"unknown config key '{where}.{unknown[0]}'; valid keys in "
                             f"{where!r}: {list(MIXTURE_KEYS)}")
        if "config" not in item:
            raise ValueError(f"config key {where!r} needs 'config' (a config name, a YAML path "
                             f"or a mapping)")
        base = _resolve_entry_config(item["config"], where)
        if "mixture" in base:
            raise ValueError(f"config key '{where}.config': mixtures do not nest")
        weight = _check_weight(item.get("weight", 1.0), where)
        sets = item.get("set") or {}
        ranges = item.get("ranges") or {}
        for name, mapping in (("set", sets), ("ranges", ranges)):
            if not isinstance(mapping, dict) or not all(isinstance(k, str) for k in mapping):
                raise ValueError(f"config key '{where}.{name}' must be a mapping of dotted config "
                                 f"keys, got {_show(mapping)}")
        data = _deep_merge(base, common)
        for k, v in sets.items():
            set_dotted(data, k, v, f"config key '{where}.set.{k}'")
        _parse_entry_config(data, where)
        checked = {}
        for k, v in ranges.items():
            checked[k] = _check_range(k, v, _range_kind(data, k, where), where)
        for end in (0, 1):
            trial = copy.deepcopy(data)
            for k, v in checked.items():
                set_dotted(trial, k, v[end], f"config key '{where}.ranges.{k}'")
            if checked:
                _parse_entry_config(trial, where, f" at the {('low', 'high')[end]} end of its "
                                                  f"ranges")
        out.append({"config": data, "weight": weight, "ranges": checked})
    return out


class Mixture:
    """The draws of a mixture config (``EnvConfig.mixture``, resolved by :func:`parse_mixture`).

    Args:
        entries: The resolved entries.
    """

    def __init__(self, entries: list[dict]) -> None:
        self.entries = entries
        self._set_probabilities([e["weight"] for e in entries])
        # Entries without ranges are parsed once.
        self._fixed = [None if e["ranges"] else parse_section(EnvConfig, e["config"])
                       for e in entries]
        self._int = [{k: isinstance(v[0], int) for k, v in e["ranges"].items()}
                     for e in entries]

    def __len__(self) -> int:
        return len(self.entries)

    def _set_probabilities(self, weights) -> None:
        w = np.array(weights, dtype=np.float64)
        #: Probability of each entry.
        self.probabilities = w / w.sum()
        self._cum = np.cumsum(self.probabilities)

    @property
    def weights(self) -> list[float]:
        """The entries' weights, in entry order."""
        return [e["weight"] for e in self.entries]

    def set_weights(self, weights: Any) -> None:
        """Replace the entries' weights (one finite number > 0 per entry, in entry order).

        Validated before anything changes: a bad list leaves the weights as they were.

        Raises:
            ValueError: If ``weights`` is not a sequence of one valid weight per entry.
        """
        if isinstance(weights, (str, bytes, dict)) or not hasattr(weights, "__len__") \
                or len(weights) != len(self.entries):
            raise ValueError(f"mixture weights must list one weight per entry "
                             f"({len(self.entries)}), got {_show(weights)}")
        checked = [_check_weight(w, f"mixture[{k}]") for k, w in enumerate(weights)]
        self.entries = [{**e, "weight": w} for e, w in zip(self.entries, checked, strict=True)]
        self._set_probabilities(checked)

    def config_at(self, k: int, end: int | None = None) -> EnvConfig:
        """Entry ``k`` with its ranges at their low (``end=0``) or high (1) end, or unset."""
        e = self.entries[k]
        if end is None or not e["ranges"]:
            return self._fixed[k] or parse_section(EnvConfig, e["config"])
        data = copy.deepcopy(e["config"])
        for key, v in e["ranges"].items():
            set_dotted(data, key, v[end], f"mixture[{k}].ranges.{key}")
        return parse_section(EnvConfig, data)

    def draw(self, rng: np.random.Generator) -> tuple[int, EnvConfig, dict]:
        """Draw an entry (by weight), then its ranges in order, from ``rng``.

        Returns:
            ``(k, config, values)``: the entry's index, its config with the drawn values and
            ``{key: value}`` of the draws.

        Raises:
            ValueError: If the drawn values make an invalid config (the message names them).
        """
        u = rng.random()
        k = min(int(np.searchsorted(self._cum, u, side="right")), len(self.entries) - 1)
        e = self.entries[k]
        if not e["ranges"]:
            return k, self._fixed[k], {}
        data = copy.deepcopy(e["config"])
        values = {}
        for key, (lo, hi) in e["ranges"].items():
            v = int(rng.integers(lo, hi + 1)) if self._int[k][key] else float(rng.uniform(lo, hi))
            values[key] = v
            set_dotted(data, key, v, f"mixture[{k}].ranges.{key}")
        try:
            return k, parse_section(EnvConfig, data), values
        except ValueError as exc:
            raise ValueError(f"config key 'mixture[{k}]' with the drawn values {values}: "
                             f"{exc}") from None

    def check(self, env_cls: type, infos: str) -> tuple[Any, list]:
        """Build every entry at both ends of its ranges; check they share agents and spaces.

        Returns:
            ``(the first entry's env, the probe envs)``.

        Raises:
            ValueError: Naming the entry whose layout, observation space or number of learned
                agents differs from entry 0's.
        """
        probes = []
        first = None
        first_label = ""
        for k, e in enumerate(self.entries):
            for end in ((None,) if not e["ranges"] else (0, 1)):
                cfg = self.config_at(k, end)
                label = f"config key 'mixture[{k}]'" + (
                    "" if end is None else f" at the {('low', 'high')[end]} end of its ranges")
                if universal_observation(cfg) is None:
                    raise ValueError(f"{label}: every entry of a mixture must observe with "
                                     f"observation.layout: universal (one observation space for "
                                     f"all; put observation: {{layout: universal}} next to "
                                     f"mixture to apply it to every entry)")
                try:
                    env = env_cls(cfg, infos=infos)
                except ValueError as exc:
                    raise ValueError(f"{label}: {exc}") from None
                if first is None:
                    first = env
                    first_label = "mixture[0]" + ("" if end is None else " at its low end")
                else:
                    lf, le = len(first.possible_agents), len(env.possible_agents)
                    if le != lf:
                        raise ValueError(f"{label} has {le} learned agents, but {first_label} "
                                         f"has {lf}: every entry must have the same number (the "
                                         f"agents of the env are fixed); vary the crowd, or "
                                         f"set the learned group's count in each entry")
                    a = first.possible_agents[0]
                    uf, ue = universal_observation(first.config), universal_observation(cfg)
                    if uf != ue or env.observation_space(a) != first.observation_space(a):
                        raise ValueError(f"{label} observes with {ue} and a space of shape "
                                         f"{env.observation_space(a).shape}, but {first_label} "
                                         f"with {uf} and shape "
                                         f"{first.observation_space(a).shape}: every entry "
                                         f"needs the same layout, frame, K, M and scenario "
                                         f"features (set observation: {{layout: universal, "
                                         f"num_agents: K, num_obstacles: M}} next to mixture "
                                         f"to apply them to every entry)")
                    if env.config.action != first.config.action:
                        raise ValueError(f"{label} has action: {env.config.action}, but "
                                         f"{first_label} has action: {first.config.action}: "
                                         f"one policy acts in every entry, so they must agree "
                                         f"(set action next to mixture)")
                probes.append(env)
        return first, probes


set_mixture_parser(parse_mixture)
