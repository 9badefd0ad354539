"""Config overrides from dotted keys: ``observation.range: 6``, ``groups.0.count: 32``.

One implementation behind ``orca-env eval --set key=value`` and the ``set`` mapping of a
benchmark suite entry (:mod:`orca_env.evaluation.bench`). A dotted key overrides one key of a
section (``rewards.goal``); an integer part indexes a list (``groups.0.count``): the override
then holds the whole list, copied from the config file (or the scenario's default groups) with
that item changed, because the env replaces ``groups`` as a whole. Nested sections merge key by
key in the env, so ``observation.range: 6`` leaves the other observation keys as they are.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Sequence
from typing import Any

from ..config import load_config, load_yaml, parse_yaml_value
from ..configs import resolve
from ..mixture import set_dotted
from ..scenarios import SCENARIOS

__all__ = ["parse_set_items", "dotted_overrides", "config_overrides"]

#: One override: ``(label, dotted key, value)``; ``label`` starts every error message about it
#: (``--set 'groups.0.count=2'``).
Override = tuple[str, str, Any]


def parse_set_items(items: Sequence[str], source: str = "--set") -> list[Override]:
    """``key=value`` strings (``orca-env eval --set``) as overrides, values parsed as YAML.

    Args:
        items: The ``key=value`` strings.
        source: What they are called in messages and labels.

    Returns:
        ``(label, key, value)`` per item, the label ``--set 'key=value'``.

    Raises:
        ValueError: Naming the item, on an item without ``=`` or key, or a value that is not
            valid YAML (the strict rules of :func:`orca_env.config.parse_yaml_value`).
    """
    out = []
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise ValueError(f"{source} expects key=value, got {item!r}")
        try:
            value = parse_yaml_value(raw)
        except ValueError as exc:
            raise ValueError(f"{source} {item!r}: the value is not valid YAML ({exc})") from exc
        out.append((f"{source} {item!r}", key, value))
    return out


def dotted_overrides(items: Sequence[Override], base: dict | None = None,
                     defaults: Callable[[str], Any] | None = None,
                     source: str = "--set") -> dict:
    """The override dict (``OrcaEnv(config, **overrides)``) of dotted keys and their values.

    Args:
        items: ``(label, key, value)`` triples, applied in order.
        base: The config file's mapping, for keys through lists (``None``: no file).
        defaults: ``defaults(top_key)`` gives the value the env uses for a top-level key the
            file leaves out (the scenario's ``groups``), or ``None``.
        source: What the overrides are called in messages (``--set``, ``set``).

    Raises:
        ValueError: Starting with the item's label, on an empty key part, a list index that is
            not an integer or out of range, or a key below a plain value (set in the config or
            by an earlier override).
    """
    base = base or {}
    out: dict = {}
    set_by_us: set[tuple[str, ...]] = set()

    def plain(parts: tuple[str, ...], node: Any) -> str:
        origin = f"by an earlier {source}" if parts in set_by_us else "in the config"
        return f"was set to {node!r} {origin}"

    for label, key, value in items:
        parts = key.split(".")
        if not all(parts):
            raise ValueError(f"{label}: empty part in the key {key!r}")
        top = parts[0]
        if len(parts) > 1 and top not in out:
            # Start from the config's own value, so the other keys and list items stay.
            start = base.get(top)
            if start is None and defaults is not None:
                start = defaults(top)
            out[top] = copy.deepcopy(start) if isinstance(start, (dict, list)) else \
                {} if start is None else start
        set_dotted(out, key, value, label, plain)
        set_by_us.add(tuple(parts))
    return out


def config_overrides(config: str | os.PathLike, items: Sequence[Override],
                     source: str = "--set") -> dict:
    """:func:`dotted_overrides` against the config file (for list items) and scenario defaults.

    Args:
        config: A YAML path or a shipped config's name.
        items: ``(label, key, value)`` triples.
        source: What the overrides are called in messages.
    """
    if not items:
        return {}
    if not any(part.isdigit() for _, key, _ in items for part in key.split(".")):
        return dotted_overrides(items, source=source)  # no list items: the file is not needed
    base = load_yaml(resolve(config)) or {}
    if not isinstance(base, dict):
        return dotted_overrides(items, source=source)  # the env reports the file's error

    def defaults(key: str) -> Any:
        if key != "groups":
            return None
        cls = SCENARIOS.get(load_config(config).scenario)
        return [dict(g) for g in cls.DEFAULT_GROUPS] if cls is not None else None

    return dotted_overrides(items, base, defaults, source=source)
