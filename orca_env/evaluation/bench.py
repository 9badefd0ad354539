"""Benchmark suites: many scenario configs, several policies, frozen seeds, one table and figure.

A *suite* is a YAML file listing *entries*; each entry is a scenario config (a shipped config's
name or a path) with optional overrides, an episode count, a tag and a seed offset.
:func:`run_bench` evaluates every policy on every entry with :func:`~orca_env.evaluation.evaluate`
(the same episodes, metrics and intervals as ``orca-env eval``) and gathers the aggregates into
one report: entry -> policy -> metric -> mean and 95% interval, and each policy's difference to
a reference (pure ORCA if it runs), paired by seed, with its 95% interval. :func:`write_bench`
writes it as ``bench.json`` (canonical: the same suite, policies and code give the same
bytes; every metric of ``metrics.json``, the social-navigation ones included), ``bench.md``
(markdown tables of the rates, of the differences and of the social-navigation metrics of
:data:`SOCIAL_TABLE`) and ``bench.png``
(success, collision, deadlock and timeout rates per entry, policies side by side). The shipped
suite is ``configs/suites/standard.yaml`` (``orca-env bench`` runs it; ``load_suite("standard")``
finds it from any folder).

Suite file
----------
::

    name: standard                 # optional; default: the file's name
    description: ...               # optional
    seed: 11000                    # seed base; entry e, episode k uses seed + e.seed_offset + k
    episodes: 20                   # optional default episode count of the entries
    set: {}                        # optional overrides applied to every entry (before its own)
    followup_seeds: [18000, 18199] # optional: the seeds of the targets' follow-up episodes
    entries:
      - name: corridor_headon      # unique; letters, digits, _ . -
        config: corridor_headon    # shipped name, or a path (relative: to the suite's folder
                                   # first, then the current folder)
        tag: crush                 # a lower-case word: standard, deadlock, crush, ...
        seed_offset: 1200          # entries' seed ranges must not overlap
        episodes: 20               # optional if the suite sets a default
        set: {max_steps: 300, groups.0.count: 4}   # optional, keys as ``orca-env eval --set``
      - {name: circle_nojitter, config: circle_nojitter, tag: deadlock, seed_offset: 1000,
         seed_independent: true}   # every seed gives the same episode: it runs once

``set`` keys are config keys, dotted for sections (``observation.range``) and with integers for
list items (``groups.0.count``), exactly as ``orca-env eval --set``; values are YAML values.
:meth:`Suite.with_set` (``orca-env bench --set KEY=VALUE``) adds overrides to every entry, after
the suite's and the entry's own ``set``, recorded as ``bench.json``'s ``extra_set``.

Seed-independent entries
------------------------
Some entries give the same episode whatever the seed: nothing in them is drawn from the env's
generator and no scenario maps the seed to a layout (``circle_nojitter``, RVO2's Circle, a
replayed crowd with its robot on a fixed crossing). Twenty of their episodes are twenty copies
of one, and an interval over them (``[1, 1]``) says nothing. Such an entry says so with
``seed_independent: true``: every policy runs it once, on its first seed, and the report gives
that one episode's values with no interval (``seed_independent`` in its entry of
``bench.json``). A policy with randomness of its own (``random``, pure ORCA's 1e-4 m/s
symmetry-breaking noise) is seen in one draw of it. Before any episode,
:func:`seed_dependence` checks every entry's declaration: it resets the env with the entry's
first two seeds and steps each 20 steps (:data:`PROBE_STEPS`) with the goal-directed heuristic
actions, and the entry is seed-independent when neither reset nor step draws from the env's
generator and both seeds give the same observations, rewards, positions and velocities. An
entry declared ``seed_independent`` that the probe finds depending on the seed is an error, and
so is one the probe finds independent that does not declare it (declare it, or give the entry a
seeded source of variation, such as ``scenario_kwargs.jitter``).

Seeds
-----
Episode ``k`` of an entry uses seed ``seed + seed_offset + k``. Every seed must lie in the
evaluation range 10_000 .. 19_999, which training refuses, so benchmark episodes are never
training episodes. The standard suite uses base 11_000 and offsets 100 apart (at most 100
episodes per entry), so its seeds (11_000 .. 12_399) are also disjoint from those of a plain
``orca-env eval`` with fewer than 1_000 episodes (10_000 +). Changing an entry's episode count
(``--episodes``, ``--quick``) keeps its first episodes: a quick run's episodes are the first
episodes of the full run.

``followup_seeds: [first, last]`` are the seeds of the follow-up episodes that
:func:`decide_targets` adds to an entry whose targets these episodes cannot decide: every
entry's follow-ups take the block's seeds in order, from ``first`` (entries are different
configs, so they may share these seeds), skipping a seed whose episode the entry already ran (a
CrowdNav layout maps seeds to its cases modulo 500 or 100: :func:`episode_keys`,
:func:`followup_plan`). The block must lie in the evaluation seeds and outside every entry's
own seeds. The shipped suites' blocks are in 18000 .. 18799, one per suite; 18800 .. 18999 are
left for new suites and other follow-up runs (see ``docs/evaluation.md#seeds``).

Targets
-------
:func:`missed_targets` calls each entry's targets against the reference ``met``, ``missed`` or
``undecided at N episodes`` from the paired differences of a report; :func:`decide_targets`
runs a suite for a policy and the reference and gives the undecided entries follow-up episodes
(up to four times their own) before it calls them. The method is in
``docs/evaluation.md#targets`` and :data:`TARGET_METHOD`.

Policies
--------
A :class:`BenchPolicy` is a policy spec as ``orca-env eval --policy`` takes it (``orca``,
``random``, a model file or run folder, ``package.module:callable``), optionally run without the
safety layer: ``safety_layer=False`` sets ``safety_layer: false`` for every learned group of
every entry (the action is the velocity itself), as the training comparison's "trained, no
safety layer" column. Each policy is resolved against each entry's env before the first episode,
so a model that cannot act in some entry (another observation shape) fails before any work.

A trained policy brings its settings to every entry
(:func:`~orca_env.evaluation.suite.policy_settings`: its action mode, observation settings and
deploy keys, such as its safety margin ``learned_orca_padding``); the overrides (the suite's
``set``, the entry's, ``--set``) win. ``bench.json``'s ``policies[].deploy`` says, for each
deploy key (:data:`~orca_env.training.config.DEPLOY_KEYS`), what the policy brings and, per
entry, the value it ran with and its source (:data:`DEPLOY_SOURCES`); ``bench.md`` says it
under its first line.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import sys
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from gymnasium.utils import seeding

from .. import __version__
from ..config import apply_policy_settings, load_config, load_yaml
from ..configs import resolve
from ..environment import OrcaEnv
from ..files import atomic_path, atomic_write_text, remove_stale_temps
from ..scenarios import SpawnError
from ..training.config import DEPLOY_KEYS
from .metrics import (
    METRICS,
    SOCIAL_METRICS,
    aggregate,
    decidable_episodes,
    decision_interval,
    format_ci,
    paired_difference,
    paired_time_ratio,
    report_hash,
    report_json,
    social_metric_definitions,
    write_csv,
)
from .overrides import Override, config_overrides, parse_set_items
from .plots import require_matplotlib
from .social import DISCOMFORT_DISTANCE, PERSONAL_SPACE, check_personal_space
from .suite import (
    EVAL_SEEDS,
    check_no_links,
    evaluate,
    is_named_policy,
    model_label,
    policy_deploy,
    policy_settings,
    prepare_out_dir,
    resolve_policy,
)

__all__ = ["BENCH_FORMAT", "DEFAULT_SUITE", "HEADLINE", "SOCIAL_TABLE", "DEPLOY_SOURCES",
           "PROBE_STEPS", "LOOKS",
           "ALPHA", "MARGIN", "GAIN", "GAIN_TAGS", "SuiteEntry", "Suite", "BenchPolicy",
           "load_suite", "seed_dependence", "episode_keys", "followup_plan", "run_bench",
           "decide_targets",
           "missed_targets", "describe_call", "ratio_cell", "write_bench", "format_markdown",
           "bench_figure",
           "plot_bench"]

#: Format tag of ``bench.json``.
BENCH_FORMAT = "orca-env-bench/1"
#: The suite ``orca-env bench`` runs by default (``configs/suites/standard.yaml``).
DEFAULT_SUITE = "standard"
#: The metrics of the table and the figure (all of :data:`METRICS` are in ``bench.json``).
HEADLINE = ("success_rate", "collision_rate", "deadlock_rate", "timeout_rate")
#: The social-navigation metrics of ``bench.md``'s social table (every one of
#: :data:`~orca_env.evaluation.metrics.SOCIAL_METRICS` is in ``bench.json``).
SOCIAL_TABLE = ("min_distance_to_humans", "discomfort_frequency", "personal_space_intrusion",
                "min_time_to_collision", "path_length_ratio", "path_irregularity",
                "mean_acceleration", "mean_jerk")

#: Steps per seed of the seed-dependence probe (:func:`seed_dependence`).
PROBE_STEPS = 20
#: Looks of :func:`decide_targets`: an entry's own ``N`` episodes, then up to ``2 N``, ``4 N``.
LOOKS = 3
#: The error rate of a target's call, shared by the looks (Bonferroni): 95% intervals overall.
ALPHA = 0.05
#: A difference in a rate smaller than this does not count (the targets' non-inferiority margin).
MARGIN = 0.05
#: The success gain over the reference the ``GAIN_TAGS`` entries need.
GAIN = 0.15
#: Tags of the entries where pure ORCA deadlocks or crushes, which need :data:`GAIN`.
GAIN_TAGS = ("deadlock", "crush")

_SUITE_KEYS = ("name", "description", "seed", "episodes", "set", "followup_seeds", "entries")
_ENTRY_KEYS = ("name", "config", "tag", "seed_offset", "episodes", "set", "description",
               "seed_independent")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_TAG = re.compile(r"^[a-z][a-z0-9_]*$")


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


@dataclass(frozen=True)
class SuiteEntry:
    """One entry of a suite: a config with overrides, episodes, a tag and a seed offset.

    Attributes:
        name: Unique within the suite; names the entry's output folder.
        config: The config as the suite writes it (a shipped name or a path).
        path: The config file it resolves to.
        tag: A lower-case word grouping entries (``standard``, ``deadlock``, ``crush``).
        seed_offset: Episode ``k`` uses seed ``suite.seed + seed_offset + k``.
        episodes: Number of episodes.
        set: The overrides as the suite writes them (suite-level first, then the entry's).
        overrides: The same, and those of :meth:`Suite.with_set`, as ``OrcaEnv(path,
            **overrides)`` takes them.
        description: Free text.
        seed_independent: Every seed gives the same episode: it runs once (see the module
            docstring).
        set_items: Every override as ``(label, dotted key, value)``, in the order they apply:
            the suite's ``set``, the entry's, then :meth:`Suite.with_set`'s.
        origins: For each top-level config key the overrides set, where its last override came
            from: ``"suite set"``, ``"entry set"`` or ``"--set"`` (:meth:`Suite.with_set`).
    """

    name: str
    config: str
    path: str
    tag: str
    seed_offset: int
    episodes: int
    set: dict = field(default_factory=dict)
    overrides: dict = field(default_factory=dict)
    description: str = ""
    seed_independent: bool = False
    set_items: tuple[Override, ...] = ()
    origins: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Suite:
    """A benchmark suite (see the module docstring for the file format).

    Attributes:
        name: The suite's name (default: its file's name).
        seed: Seed base of the entries.
        entries: The entries, in the file's order.
        path: The file it was read from.
        description: Free text.
        followup_seeds: ``(first, last)``: the seeds of :func:`decide_targets`' follow-up
            episodes, or ``None`` (no follow-ups).
        extra_set: The overrides :meth:`with_set` gave every entry, after the suite's and the
            entry's own ``set`` (``orca-env bench --set``): ``{dotted key: value}``.
    """

    name: str
    seed: int
    entries: tuple[SuiteEntry, ...]
    path: str = ""
    description: str = ""
    followup_seeds: tuple[int, int] | None = None
    extra_set: dict = field(default_factory=dict)

    def seeds(self, entry: SuiteEntry) -> list[int]:
        """The evaluation seeds of ``entry``'s episodes."""
        first, last = self.seed_span(entry)
        return list(range(first, last + 1))

    def run_seeds(self, entry: SuiteEntry) -> list[int]:
        """The seeds ``entry`` runs: its first one alone if it is seed-independent."""
        return self.seeds(entry)[:1] if entry.seed_independent else self.seeds(entry)

    def seed_span(self, entry: SuiteEntry) -> tuple[int, int]:
        """The first and the last evaluation seed of ``entry`` (no list is built)."""
        first = self.seed + entry.seed_offset
        return first, first + entry.episodes - 1

    def select(self, names: Sequence[str] = (), tags: Sequence[str] = (),
               arg: str = "entries") -> Suite:
        """The suite with the entries named in ``names`` or tagged with one of ``tags``.

        Entries keep the suite's order; without names and tags, every entry.

        Raises:
            ValueError: Naming ``arg`` (or ``tags``) on an unknown name or tag; the message lists
                the valid ones.
        """
        if not names and not tags:
            return self
        known = [e.name for e in self.entries]
        known_tags = sorted({e.tag for e in self.entries})
        for n in names:
            if n not in known:
                raise ValueError(f"{arg} {n!r}: no such entry in suite {self.name!r}; entries: "
                                 f"{', '.join(known)}")
        for t in tags:
            if t not in known_tags:
                raise ValueError(f"tags {t!r}: no entry of suite {self.name!r} has this tag; "
                                 f"tags: {', '.join(known_tags)}")
        chosen = tuple(e for e in self.entries if e.name in names or e.tag in tags)
        return dataclasses.replace(self, entries=chosen)

    def with_episodes(self, episodes: int | None, arg: str = "episodes") -> Suite:
        """The suite with every entry's episode count set to ``episodes`` (``None``: as is).

        Raises:
            ValueError: If ``episodes`` is not an integer >= 1, or the entries' seed ranges
                would overlap or leave the evaluation seeds.
        """
        if episodes is None:
            return self
        if not _is_int(episodes) or episodes < 1:
            raise ValueError(f"{arg} must be an integer >= 1, got {episodes!r}")
        entries = tuple(dataclasses.replace(e, episodes=episodes) for e in self.entries)
        out = dataclasses.replace(self, entries=entries)
        _check_seeds(out, f"{arg} {episodes}")
        return out

    def with_set(self, items: Sequence[str] | Mapping[str, Any], arg: str = "--set") -> Suite:
        """The suite with ``items`` overriding config keys in every entry, after its own ``set``.

        Applied to each entry's config exactly as ``orca-env eval --set`` applies them to its
        config (:mod:`orca_env.evaluation.overrides`: dotted keys for sections, integers for
        list items, YAML values): ``with_set(["learned_orca_padding=null"])`` runs every policy
        without the safety margin its deploy section brings. Recorded in :attr:`extra_set`
        (``bench.json``'s ``extra_set``) and in each entry's :attr:`SuiteEntry.origins`.

        Args:
            items: ``key=value`` strings (``orca-env bench --set``), or a mapping of dotted keys
                to values.
            arg: What the items are called in messages (``--set``).

        Raises:
            ValueError: Starting with the item (``--set 'key=value'``), on an item without
                ``=``, a value that is not valid YAML, a key the env config does not have, a
                value it refuses, or a list index out of range (then naming the entry).
        """
        if isinstance(items, Mapping):
            triples = [(f"{arg} {k!r}", str(k), v) for k, v in items.items()]
        else:
            triples = parse_set_items(list(items), source=arg)
        if not triples:
            return self
        entries = []
        for e in self.entries:
            where = f"(suite {self.name!r}, entry {e.name!r}, config {e.config!r})"
            try:
                # "set to 1 by an earlier set key or --set": the suite's or the command line's.
                overrides = config_overrides(e.path, [*e.set_items, *triples],
                                             source=f"set key or {arg}")
            except ValueError as exc:  # its message starts with the item
                raise ValueError(f"{exc} {where}") from None
            _check_set_items(e, triples, arg)
            origins = {**e.origins, **{key.split(".")[0]: arg for _, key, _ in triples}}
            entries.append(dataclasses.replace(e, overrides=overrides, origins=origins,
                                               set_items=(*e.set_items, *triples)))
        extra = {**self.extra_set, **{key: value for _, key, value in triples}}
        return dataclasses.replace(self, entries=tuple(entries), extra_set=extra)


def _check_set_items(e: SuiteEntry, triples: list[Override], arg: str) -> None:
    """Load ``e``'s env config with each of ``triples`` added in turn; name the first refused.

    An unknown key or a bad value is reported as ``orca-env eval --set`` reports it, after the
    item (``--set 'learned_orca_padding=-1': config key ...``).
    """
    try:
        load_config(e.path, **e.overrides)
    except (ValueError, FileNotFoundError):
        return  # the entry's own config is at fault: the bench reports it, naming the entry
    for k in range(1, len(triples) + 1):
        try:
            load_config(e.path, **config_overrides(e.path, [*e.set_items, *triples[:k]],
                                                   source=f"set key or {arg}"))
        except ValueError as exc:
            raise ValueError(f"{triples[k - 1][0]}: {exc}") from None


def _check_seeds(suite: Suite, where: str) -> None:
    """Every entry's seeds are evaluation seeds, apart from each other's and the follow-ups'."""
    spans = []
    for e in suite.entries:
        first, last = suite.seed_span(e)  # a range check, not a list: episodes may be huge
        if first not in EVAL_SEEDS or last not in EVAL_SEEDS:
            raise ValueError(f"{where}: entry {e.name!r} would use seeds {first}..{last}"
                             f", outside the evaluation seeds {EVAL_SEEDS.start}.."
                             f"{EVAL_SEEDS.stop - 1} (seed {suite.seed} + seed_offset "
                             f"{e.seed_offset} + episode)")
        spans.append((first, last, e.name))
    spans.sort()
    offsets = sorted(e.seed_offset for e in suite.entries)
    room = min((b - a for a, b in zip(offsets, offsets[1:], strict=False)), default=None)
    for (_, hi, a), (lo, _, b) in zip(spans, spans[1:], strict=False):
        if lo <= hi:
            raise ValueError(f"{where}: entries {a!r} and {b!r} would share seeds (from {lo}): "
                             f"space their seed_offset further apart or run fewer episodes"
                             + (f" (at most {room} per entry between the suite's seed offsets)"
                                if room else ""))
    if suite.followup_seeds is not None:
        lo, hi = suite.followup_seeds
        for first, last, name in spans:
            if first <= hi and lo <= last:
                raise ValueError(f"{where}: entry {name!r} would use seeds {first}..{last}, "
                                 f"which overlap the follow-up seeds {lo}..{hi} (followup_seeds)")


def _suite_path(spec: str | os.PathLike) -> str:
    return resolve(spec, kind="suite")


def _entry_config_path(config: str, suite_dir: str) -> str:
    """A relative path next to the suite file, else a path or a shipped config's name."""
    if not os.path.isabs(config):
        beside = os.path.join(suite_dir, config)
        if os.path.isfile(beside):
            return beside
    return resolve(config)


def load_suite(spec: str | os.PathLike = DEFAULT_SUITE) -> Suite:
    """Read and check a suite file.

    Args:
        spec: A path, or a shipped suite's name (``"standard"``).

    Returns:
        The suite; every entry's config resolved to a file and its overrides built.

    Raises:
        FileNotFoundError: If ``spec`` is neither a file nor a shipped suite (the message lists
            the shipped suites).
        ValueError: Naming the file, the entry and the key, on invalid YAML, an unknown or
            missing key, a value of the wrong type, a duplicate entry name, a config that does
            not exist, a bad override, or seeds that overlap or leave the evaluation seeds.
    """
    path = _suite_path(spec)
    where = f"suite {os.fspath(spec)!r}"
    data = load_yaml(path)
    if not isinstance(data, dict):
        raise ValueError(f"{where}: expected a mapping with 'seed' and 'entries' at the top "
                         f"level, got {type(data).__name__}")
    unknown = [k for k in data if k not in _SUITE_KEYS]
    if unknown:
        raise ValueError(f"{where}: unknown key {unknown[0]!r}; valid keys: "
                         f"{', '.join(_SUITE_KEYS)}")
    name = data.get("name", os.path.splitext(os.path.basename(path))[0])
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"{where}: name must be letters, digits, '_', '.' or '-', got {name!r}")
    where = f"suite {name!r} ({os.fspath(spec)})" if name != os.fspath(spec) else where
    if "seed" not in data:
        raise ValueError(f"{where}: missing key 'seed' (the seed base, e.g. 11000)")
    seed = data["seed"]
    if not _is_int(seed):
        raise ValueError(f"{where}: seed must be an integer, got {seed!r}")
    default_episodes = data.get("episodes")
    if default_episodes is not None and (not _is_int(default_episodes) or default_episodes < 1):
        raise ValueError(f"{where}: episodes must be an integer >= 1, got {default_episodes!r}")
    description = data.get("description", "")
    if not isinstance(description, str):
        raise ValueError(f"{where}: description must be a string, got {description!r}")
    suite_set = data.get("set") or {}
    if not isinstance(suite_set, dict) or not all(isinstance(k, str) for k in suite_set):
        raise ValueError(f"{where}: set must be a mapping of config keys to values, got "
                         f"{suite_set!r}")
    followup = data.get("followup_seeds")
    if followup is not None:
        if not (isinstance(followup, list) and len(followup) == 2 and all(map(_is_int, followup))
                and followup[0] <= followup[1]):
            raise ValueError(f"{where}: followup_seeds must be [first, last], two integers with "
                             f"first <= last, got {followup!r}")
        if followup[0] not in EVAL_SEEDS or followup[1] not in EVAL_SEEDS:
            raise ValueError(f"{where}: followup_seeds {followup[0]}..{followup[1]} leave the "
                             f"evaluation seeds {EVAL_SEEDS.start}..{EVAL_SEEDS.stop - 1}")
        followup = (followup[0], followup[1])
    raw = data.get("entries")
    if not isinstance(raw, list) or not raw:
        raise ValueError(f"{where}: entries must be a non-empty list, got {raw!r}")
    entries, seen = [], set()
    for i, item in enumerate(raw):
        here = f"{where}, entries[{i}]"
        if not isinstance(item, dict):
            raise ValueError(f"{here}: expected a mapping, got {item!r}")
        if isinstance(item.get("name"), str):
            here = f"{where}, entry {item['name']!r}"
        unknown = [k for k in item if k not in _ENTRY_KEYS]
        if unknown:
            raise ValueError(f"{here}: unknown key {unknown[0]!r}; valid keys: "
                             f"{', '.join(_ENTRY_KEYS)}")
        missing = [k for k in ("name", "config", "tag", "seed_offset") if k not in item]
        if "episodes" not in item and default_episodes is None:
            missing.append("episodes")
        if missing:
            raise ValueError(f"{here}: missing key {missing[0]!r}")
        ename, config, tag = item["name"], item["config"], item["tag"]
        if not isinstance(ename, str) or not _NAME.match(ename):
            raise ValueError(f"{here}: name must be letters, digits, '_', '.' or '-' (it names "
                             f"a folder), got {ename!r}")
        if ename in seen:
            raise ValueError(f"{here}: the name {ename!r} is used twice")
        seen.add(ename)
        if not isinstance(config, str) or not config:
            raise ValueError(f"{here}: config must be a config name or path, got {config!r}")
        if not isinstance(tag, str) or not _TAG.match(tag):
            raise ValueError(f"{here}: tag must be a lower-case word (standard, deadlock, "
                             f"crush, ...), got {tag!r}")
        offset = item["seed_offset"]
        if not _is_int(offset) or offset < 0:
            raise ValueError(f"{here}: seed_offset must be an integer >= 0, got {offset!r}")
        episodes = item.get("episodes", default_episodes)
        if not _is_int(episodes) or episodes < 1:
            raise ValueError(f"{here}: episodes must be an integer >= 1, got {episodes!r}")
        entry_set = item.get("set") or {}
        if not isinstance(entry_set, dict) or not all(isinstance(k, str) for k in entry_set):
            raise ValueError(f"{here}: set must be a mapping of config keys to values, got "
                             f"{entry_set!r}")
        desc = item.get("description", "")
        if not isinstance(desc, str):
            raise ValueError(f"{here}: description must be a string, got {desc!r}")
        independent = item.get("seed_independent", False)
        if not isinstance(independent, bool):
            raise ValueError(f"{here}: seed_independent must be true or false, got "
                             f"{independent!r}")
        try:
            cfg_path = _entry_config_path(config, os.path.dirname(os.path.abspath(path)))
        except FileNotFoundError as exc:
            raise ValueError(f"{here}: config: {exc}") from None
        items = ([(f"{where}: set {k!r}", k, v) for k, v in suite_set.items()]
                 + [(f"{here}: set {k!r}", k, v) for k, v in entry_set.items()])
        overrides = config_overrides(cfg_path, items, source="set key")
        origins = {**{k.split(".")[0]: "suite set" for k in suite_set},
                   **{k.split(".")[0]: "entry set" for k in entry_set}}
        entries.append(SuiteEntry(ename, config, cfg_path, tag, offset, episodes,
                                  {**suite_set, **entry_set}, overrides, desc, independent,
                                  tuple(items), origins))
    suite = Suite(name, seed, tuple(entries), path, description, followup)
    _check_seeds(suite, where)
    return suite


# -- policies ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class BenchPolicy:
    """A policy of a benchmark: an ``orca-env eval --policy`` spec, with or without safety layer.

    Attributes:
        spec: ``orca``, ``random``, a model file or run folder, or ``package.module:callable``.
        safety_layer: ``False`` runs every entry with ``safety_layer: false`` for its learned
            groups; ``True`` keeps the entries' own setting (the safety layer, in every shipped
            config).
    """

    spec: str
    safety_layer: bool = True
    name: str | None = None

    def __post_init__(self) -> None:
        if self.name is not None and not _NAME.fullmatch(self.name):
            raise ValueError(f"policy name {self.name!r} (for {self.spec!r}): use letters, "
                             f"digits, '.', '_' and '-', starting with a letter or digit")

    @classmethod
    def parse(cls, text: str, safety_layer: bool = True) -> BenchPolicy:
        """A policy from the command line: ``SPEC`` or ``NAME=SPEC`` (``NAME`` labels it).

        ``NAME=SPEC`` tells apart two policies that would get the same label, such as two run
        folders of the same name. A ``text`` that is an existing path is always a ``SPEC``; any
        other ``text`` with ``=`` must be a valid ``NAME=SPEC``.
        """
        name, sep, spec = text.partition("=")
        if not sep or os.path.exists(text):
            return cls(text, safety_layer)
        if not spec:
            raise ValueError(f"policy {text!r}: NAME=SPEC with an empty SPEC")
        return cls(spec, safety_layer, name)  # checks the name

    @property
    def label(self) -> str:
        """The policy's name in tables and ``bench.json`` (no host paths).

        ``name`` if given; else ``orca``, ``random`` and dotted paths as given, and a model
        file or run folder by its name (a run's ``model.zip`` by its folder's). `` (no safety
        layer)`` is appended without it.
        """
        spec = self.spec if self.name is None else self.name
        if self.name is None and not is_named_policy(spec) \
                and (os.path.isfile(spec) or os.path.isdir(spec)):
            spec = model_label(spec)  # as eval labels it
        return spec if self.safety_layer else f"{spec} (no safety layer)"


def _slug(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", label).strip("_") or "policy"


def _without_safety_layer(env: Any) -> list[dict]:
    """The env's groups (or its scenario's defaults) with ``safety_layer: false`` if learned."""
    groups = env.config.groups
    groups = ([dataclasses.asdict(g) for g in groups] if groups is not None
              else [dict(g) for g in env.scenario.DEFAULT_GROUPS])
    return [dict(g, safety_layer=False) if g.get("population", "learned") == "learned"
            else dict(g) for g in groups]


def _say(progress: bool, msg: str) -> None:
    if progress:
        sys.stderr.write(msg + "\n")
        sys.stderr.flush()


def _short(agg: dict, key: str) -> str:
    a = agg[key]
    return "-" if a["mean"] is None else f"{a['mean']:.2f}"


# -- seeds: what makes an episode the episode it is ------------------------------------------------
def _digest(env: Any, *parts: Any) -> str:
    """A digest of the env's state (positions, velocities) and of ``parts`` (dicts of arrays)."""
    h = hashlib.sha256()
    for a in (env.sim.positions, env.sim.velocities):
        h.update(np.ascontiguousarray(a).tobytes())
    for part in parts:
        for k in sorted(part):
            h.update(str(k).encode())
            h.update(np.ascontiguousarray(np.asarray(part[k], dtype=np.float64)).tobytes())
    return h.hexdigest()


def seed_dependence(env: Any, seeds: Sequence[int], steps: int = PROBE_STEPS) -> str | None:
    """Why the episodes of ``env`` depend on the seed, or ``None`` when the probe sees no reason.

    For each of two ``seeds``: ``env.reset(seed=...)``, then up to ``steps`` steps with the
    env's goal-directed heuristic actions (no noise), checking after the reset and after every
    step that the env's generator is still as seeded (nothing drew from it: no random layout,
    attribute, mixture entry, crowd noise or new goal), and recording the observations, rewards,
    ends, positions and velocities. The episodes depend on the seed when a draw happened or the
    two seeds' records differ (a scenario that maps the seed to a layout, as CrowdNav's cases,
    or a sensor's noise). Leaves the env reset with the second seed.

    Args:
        env: An ``OrcaEnv``.
        seeds: Two different seeds.
        steps: Steps per seed.

    Returns:
        ``None``, or the reason, as a phrase (``"its reset draws from the env's generator"``).
    """
    records = []
    for s in seeds[:2]:
        fresh = seeding.np_random(int(s))[0].bit_generator.state
        obs, _ = env.reset(seed=int(s))
        if env.np_random.bit_generator.state != fresh:
            return (f"its reset with seed {s} draws from the env's generator (a random layout, "
                    f"random attributes or a mixture's entry)")
        rec = [_digest(env, obs)]
        t = 0
        while env.agents and t < steps:
            obs, rew, term, trunc, _ = env.step(env.heuristic_actions())
            t += 1
            if env.np_random.bit_generator.state != fresh:
                return (f"its step {t} with seed {s} draws from the env's generator (crowd "
                        f"noise or new goals)")
            rec.append(_digest(env, obs, rew, term, trunc))
        records.append(rec)
    a, b = records
    for t in range(max(len(a), len(b))):
        if t >= len(a) or t >= len(b) or a[t] != b[t]:
            return (f"seeds {seeds[0]} and {seeds[1]} give different episodes (from step {t}: "
                    f"a layout the scenario derives from the seed, such as a CrowdNav case, or "
                    f"a sensor's noise)")
    return None


def _entry_identity(env: Any) -> str:
    """The entry's config, resolved, without the scenario's case-choosing parameters."""
    cfg = env.config.to_dict()
    case_params = getattr(env.scenario, "CASE_PARAMS", ())
    if case_params and isinstance(cfg.get("scenario_kwargs"), dict):
        cfg = {**cfg, "scenario_kwargs": {k: v for k, v in cfg["scenario_kwargs"].items()
                                          if k not in case_params}}
    return report_hash(cfg)


def episode_keys(entry: SuiteEntry, seeds: Sequence[int]) -> list[tuple]:
    """What makes each of ``entry``'s episodes at ``seeds`` the episode it is.

    ``(config, episode)``: ``config`` identifies the entry's resolved config (its file and
    overrides; a scenario's ``CASE_PARAMS``, such as CrowdNav's ``split``, left out), and
    ``episode`` is ``("case", s)`` for a scenario that maps the seed to one of its fixed cases
    (CrowdNav's ``layout: crowdnav_test``: ``s`` is the numpy seed the case is drawn from,
    CrowdNav's name for it: test case ``i`` is ``1000 + i``, validation case ``i`` is ``i``;
    seeds 500 apart give the same test case), ``("seed", seed)`` otherwise, and ``("any",)``
    for a seed-independent entry (one episode whatever the seed). Two runs share an episode
    exactly when they share a key.
    """
    env = OrcaEnv(entry.path, **{**entry.overrides, "render_mode": None})
    try:
        ident = _entry_identity(env)
        if entry.seed_independent:
            return [(ident, ("any",)) for _ in seeds]
        sc, out = env.scenario, []
        for seed in seeds:
            sc.start_episode(int(seed), 0)
            case = getattr(sc, "case_seed", None)
            out.append((ident, ("seed", int(seed)) if case is None else ("case", int(case))))
        return out
    finally:
        env.close()


# -- the run -----------------------------------------------------------------------------------
def _parse_policies(policies: Sequence[BenchPolicy | str]) -> tuple[list[BenchPolicy], list[str]]:
    pols = [p if isinstance(p, BenchPolicy) else BenchPolicy(str(p)) for p in policies]
    if not pols:
        raise ValueError("policies: give at least one policy")
    labels = [p.label for p in pols]
    for i, lab in enumerate(labels):
        if lab in labels[:i]:
            other = pols[labels.index(lab)]
            if (other.spec, other.safety_layer) == (pols[i].spec, pols[i].safety_layer):
                raise ValueError(f"policy {pols[i].spec!r} is given twice")
            raise ValueError(f"policies {other.spec!r} and {pols[i].spec!r} are both labelled "
                             f"{lab!r}: name one (NAME=SPEC on the command line, "
                             f"BenchPolicy(spec, name=...) in Python)")
    slugs = [_slug(lab) for lab in labels]
    if len(set(slugs)) < len(slugs):
        raise ValueError(f"policies {labels}: their folder names {slugs} collide")
    return pols, labels


def _check_independence(suite: Suite, e: SuiteEntry, env: Any, here: str) -> str:
    """The entry's declaration checked by :func:`seed_dependence`; returns a progress note."""
    first = suite.seed_span(e)[0]
    seeds = (first, first + 1)
    reason = seed_dependence(env, seeds)
    if e.seed_independent and reason is not None:
        raise ValueError(f"{here}: declared seed_independent, but its episodes depend on the "
                         f"seed: {reason}; remove seed_independent from the entry")
    if not e.seed_independent and reason is None:
        raise ValueError(f"{here}: its episodes do not depend on the seed (seeds {seeds[0]} and "
                         f"{seeds[1]} give the same first {PROBE_STEPS} steps and nothing draws "
                         f"from the env's generator), so its {e.episodes} episodes would be "
                         f"copies of one: add 'seed_independent: true' to the entry (it then "
                         f"runs once, reported without an interval), or give it a seeded source "
                         f"of variation (such as scenario_kwargs.jitter)")
    if e.seed_independent:
        return (f"seed-independent (seeds {seeds[0]} and {seeds[1]} give the same first "
                f"{PROBE_STEPS} steps): one episode per policy, seed {first}")
    return ""


#: Where an entry's deploy key (:data:`~orca_env.training.config.DEPLOY_KEYS`) came from, as
#: ``bench.json`` records it, and as ``bench.md`` says it; ``--set`` is :meth:`Suite.with_set`.
DEPLOY_SOURCES = {"deploy": "the policy's deploy section",
                  "built-in": "the built-in policy's own margin",
                  "training": "the env config the policy was trained with",
                  "suite set": "the suite's set", "entry set": "the entry's set",
                  "--set": "--set", "config": "the entry's config file", "none": "nothing"}


def _deploy_of(e: SuiteEntry, over: dict, brought: dict | None, deploy: dict | None,
               cfg: Any, builtin: bool = False) -> dict:
    """``{key: {"value", "source"}}`` of each deploy key in one run (entry and policy).

    ``over``: the run's overrides; ``brought``: the policy's settings; ``deploy``: its deploy
    section; ``cfg``: the entry's env config without the policy's settings; ``builtin``: a
    named policy (``orca_margin``), whose deploy keys are its own, not a run's section.
    Overrides win over the policy, the policy over the config file
    (:func:`apply_policy_settings`).
    """
    out = {}
    for key in DEPLOY_KEYS:
        if key in e.overrides:
            source = e.origins.get(key, "entry set")
        elif brought and key in brought:
            source = ("training" if not deploy or key not in deploy
                      else "built-in" if builtin else "deploy")
        else:
            source = "config" if getattr(cfg, key) is not None else "none"
        value = over[key] if key in over else getattr(cfg, key)
        out[key] = {"value": None if value is None else float(value), "source": source}
    return out


def _prepare(suite: Suite, pols: list[BenchPolicy], labels: list[str]) -> tuple[list, dict]:
    """Before any episode: every entry's env, its seed-independence, every policy against it.

    Returns the prepared entries and each policy's deploy keys (``bench.json``'s
    ``policies[].deploy``).
    """
    prepared = []
    settings: dict[str, tuple] = {}  # spec -> (its settings, its deploy section)
    deploys = {lab: {key: {"policy": None, "entries": {}} for key in DEPLOY_KEYS}
               for lab in labels}
    for e in suite.entries:
        here = f"suite {suite.name!r}, entry {e.name!r} (config {e.config!r})"
        try:
            env = OrcaEnv(e.path, **{**e.overrides, "render_mode": None})
            env.reset(seed=suite.seed_span(e)[0])
        except (ValueError, SpawnError) as exc:
            raise ValueError(f"{here}: {exc}") from exc
        note = _check_independence(suite, e, env, here)
        resolved: dict[str, Any] = {}
        runs = []
        for p, lab in zip(pols, labels, strict=True):
            # A model brings its action mode and (universal layout) observation settings to
            # every entry (as evaluate does for a policy given by name).
            if p.spec not in settings:
                trained = policy_settings(p.spec)
                settings[p.spec] = (trained, policy_deploy(p.spec) if trained else None)
            trained, deploy = settings[p.spec]
            over = apply_policy_settings(e.overrides, trained)
            for key, run in _deploy_of(e, over, trained, deploy, env.config.entries()[0],
                                       builtin=is_named_policy(p.spec)).items():
                deploys[lab][key]["entries"][e.name] = run
                if trained and trained.get(key) is not None:
                    deploys[lab][key]["policy"] = float(trained[key])
            if p.spec not in resolved:
                try:
                    penv = env if not trained else \
                        OrcaEnv(e.path, **{**over, "render_mode": None})
                    resolved[p.spec] = resolve_policy(p.spec, None, penv)
                except ValueError as exc:  # its message names the policy
                    raise ValueError(f"{here}: {exc}") from exc
            if not p.safety_layer:
                over["groups"] = _without_safety_layer(env)
            runs.append((p, lab, resolved[p.spec], over))
        info = {"name": e.name, "tag": e.tag, "config": e.config, "set": e.set,
                "description": e.description, "scenario": env.config.scenario,
                "num_agents": int(env.sim.radii.shape[0]),
                "num_learned": len(env.possible_agents), "max_steps": int(env.max_steps),
                "episodes": len(suite.run_seeds(e)), "seeds": list(suite.seed_span(e)),
                "seed_independent": e.seed_independent}
        if e.seed_independent:
            info["seeds"] = [info["seeds"][0]] * 2
        env.close()
        prepared.append((e, info, runs, note))
    return prepared, deploys


def _merge_runs(rep: dict, more: dict) -> dict:
    """An evaluation report with ``more``'s episodes appended (aggregates recomputed)."""
    rows = rep["episodes"] + more["episodes"]
    metrics = {k: (v["unit"], v["definition"]) for k, v in rep["metrics"].items()}
    return {**rep, "seeds": rep["seeds"] + more["seeds"], "num_episodes": len(rows),
            "aggregate": aggregate(rows, metrics), "episodes": rows}


def _write_run(rep: dict, folder: str) -> None:
    """A run's ``metrics.json`` and ``episodes.csv``, as :func:`evaluate` writes them."""
    metrics = {k: (v["unit"], v["definition"]) for k, v in rep["metrics"].items()}
    atomic_write_text(os.path.join(folder, "metrics.json"), report_json(rep))
    write_csv(rep["episodes"], os.path.join(folder, "episodes.csv"), metrics)


class _Bench:
    """One bench: the prepared entries, their runs' evaluation reports, the report from them."""

    def __init__(self, suite: Suite, policies: Sequence[BenchPolicy | str], *,
                 out_dir: str | os.PathLike | None, progress: bool, personal_space: float,
                 reference: int | None = None):
        self.personal_space = check_personal_space(personal_space)
        self.suite = suite if isinstance(suite, Suite) else load_suite(suite)
        self.pols, self.labels = _parse_policies(policies)
        # The policy the others are compared with: by index, else pure ORCA or the first one.
        self.reference = _reference(self.pols, self.labels) if reference is None \
            else self.labels[reference]
        self.out_dir = None if out_dir is None else prepare_out_dir(out_dir, arg="out_dir")
        self.progress = progress
        self.t0 = time.perf_counter()
        _say(progress, f"[bench] suite {self.suite.name}: {len(self.suite.entries)} entries x "
                       f"{len(self.pols)} policies; checking configs and policies")
        self.prepared, self.deploys = _prepare(self.suite, self.pols, self.labels)
        self.reps: dict[str, dict[str, dict]] = {}
        self.followups: dict[str, list[int]] = {e.name: [] for e in self.suite.entries}
        self.policy_names: dict[str, str] = {}
        self.done = 0

    def _folder(self, entry: str, label: str) -> str | None:
        return None if self.out_dir is None else \
            os.path.join(self.out_dir, "entries", entry, _slug(label))

    def run(self) -> None:
        """Every entry's own episodes (its first seed alone if it is seed-independent)."""
        out_dir, prepared = self.out_dir, self.prepared
        if out_dir is not None:
            # No run is written through a link inside out_dir (entries/, an entry's or a run's
            # folder): refused before any episode.
            check_no_links(out_dir, [os.path.join("entries", e.name, _slug(lab))
                                     for e, _, runs, _ in prepared for _, lab, _, _ in runs])
            # The temporary files a killed earlier bench left here (its own runs' folders are
            # cleaned by evaluate).
            remove_stale_temps(out_dir)
            # An earlier bench's summary would contradict the runs this one overwrites, should
            # it stop before write_bench: it goes now (its runs this bench does not list go at
            # the end).
            for f in _SUMMARY_FILES:
                if os.path.isfile(os.path.join(out_dir, f)) or \
                        os.path.islink(os.path.join(out_dir, f)):
                    os.remove(os.path.join(out_dir, f))
        n_runs = len(prepared) * len(self.pols)
        for i, (e, info, runs, note) in enumerate(prepared):
            seeds = self.suite.run_seeds(e)
            _say(self.progress, f"[bench {i + 1}/{len(prepared)}] {e.name} ({e.tag}, "
                                f"{info['scenario']}, {info['num_agents']} agents of which "
                                f"{info['num_learned']} learned): "
                                + (note or f"{len(seeds)} episodes per policy, seeds "
                                           f"{seeds[0]}..{seeds[-1]}"))
            self.reps[e.name] = {}
            for _, lab, (pol, name), over in runs:
                t1 = time.perf_counter()
                rep = evaluate(e.path, pol, seeds=seeds, overrides=over,
                               out_dir=self._folder(e.name, lab),
                               progress=f"bench {i + 1}/{len(prepared)} {e.name} {lab}"
                               if self.progress else False, name=lab,
                               personal_space=self.personal_space)
                self.reps[e.name][lab] = rep
                self.policy_names.setdefault(lab, name)
                self.done += 1
                self._said(f"[bench {i + 1}/{len(prepared)}] {e.name} {lab}", rep, t1,
                           f"{self.done}/{n_runs} runs")
        if out_dir is not None:
            _drop_stale_runs(out_dir, {(e.name, _slug(lab)) for e, _, runs, _ in prepared
                                       for _, lab, _, _ in runs})

    def _said(self, head: str, rep: dict, t1: float, count: str) -> None:
        agg = rep["aggregate"]
        _say(self.progress, f"{head}: success {_short(agg, 'success_rate')} collision "
                            f"{_short(agg, 'collision_rate')} deadlock "
                            f"{_short(agg, 'deadlock_rate')} timeout "
                            f"{_short(agg, 'timeout_rate')}  ({time.perf_counter() - t1:.1f} s; "
                            f"{count}, {time.perf_counter() - self.t0:.0f} s in all)")

    def follow_up(self, seeds: dict[str, list[int]], look: str) -> None:
        """More episodes for some entries (``{entry: seeds}``), every policy, merged in."""
        todo = [(e, runs) for e, _, runs, _ in self.prepared if seeds.get(e.name)]
        for i, (e, runs) in enumerate(todo):
            s = seeds[e.name]
            _say(self.progress, f"[targets {look}, {i + 1}/{len(todo)}] {e.name}: {len(s)} "
                                f"follow-up episodes per policy, seeds {s[0]}..{s[-1]}")
            for _, lab, (pol, _name), over in runs:
                t1 = time.perf_counter()
                more = evaluate(e.path, pol, seeds=s, overrides=over, out_dir=None,
                                progress=f"targets {look} {e.name} {lab}"
                                if self.progress else False, name=lab,
                                personal_space=self.personal_space)
                rep = _merge_runs(self.reps[e.name][lab], more)
                self.reps[e.name][lab] = rep
                if self.out_dir is not None:
                    _write_run(rep, self._folder(e.name, lab))
                self._said(f"[targets {look}] {e.name} {lab} ({rep['num_episodes']} episodes)",
                           rep, t1, "follow-up")
            self.followups[e.name] += s

    def report(self) -> dict:
        """The bench report of the runs so far (see :func:`run_bench`)."""
        pols, labels = self.pols, self.labels
        entries = []
        for e, info, _, _ in self.prepared:
            info = dict(info, episodes=self.reps[e.name][labels[0]]["num_episodes"])
            if self.followups[e.name]:
                info["followup_seeds"] = list(self.followups[e.name])
            entries.append(info)
        reference = self.reference
        differences = {} if reference is None else {
            name: {lab: paired_difference(runs_[lab]["episodes"], runs_[reference]["episodes"],
                                          HEADLINE)
                   for lab in labels if lab != reference}
            for name, runs_ in self.reps.items()}
        time_ratios = {} if reference is None else {
            name: {lab: paired_time_ratio(runs_[lab]["episodes"], runs_[reference]["episodes"])
                   for lab in labels if lab != reference}
            for name, runs_ in self.reps.items()}
        suite = self.suite
        return {
            "format": BENCH_FORMAT,
            "orca_env_version": __version__,
            "suite": {"name": suite.name, "description": suite.description, "seed": suite.seed},
            "extra_set": dict(suite.extra_set),
            "policies": [{"label": lab, "policy": self.policy_names.get(lab, p.spec),
                          "without_safety_layer": not p.safety_layer,
                          "deploy": self.deploys[lab]}
                         for p, lab in zip(pols, labels, strict=True)],
            "entries": entries,
            "metrics": {k: {"unit": u, "definition": d} for k, (u, d) in
                        {**METRICS, **social_metric_definitions(self.personal_space)}.items()},
            "results": {e.name: {lab: _one_episode(rep["aggregate"]) if e.seed_independent
                                 else rep["aggregate"]
                                 for lab, rep in self.reps[e.name].items()}
                        for e, _, _, _ in self.prepared},
            "reference": reference,
            "differences": differences,
            "time_ratios": time_ratios,
            "ci95": "mean over episodes with a 95% interval [ci95_low, ci95_high]: Wilson score "
                    "for the 0/1 metric all_success, Student-t clipped to [0, 1] for fractions, "
                    "Student-t otherwise (ci95 = half its width); a seed-independent entry's "
                    "one episode has none",
            "social": {"personal_space": self.personal_space,
                       "discomfort_distance": DISCOMFORT_DISTANCE},
        }


def _one_episode(agg: dict) -> dict:
    """A seed-independent entry's aggregate: its one episode's values, without intervals."""
    return {k: dict(a, ci95_low=None, ci95_high=None, ci95=None) for k, a in agg.items()}


def run_bench(suite: Suite | str | os.PathLike, policies: Sequence[BenchPolicy | str] = ("orca",),
              *, out_dir: str | os.PathLike | None = None, progress: bool = False,
              personal_space: float = PERSONAL_SPACE) -> dict:
    """Evaluate every policy on every entry of a suite; return the bench report.

    Everything is checked before the first episode: the output folder, every entry's config,
    first reset and seed-independence (:func:`seed_dependence` against the entry's
    ``seed_independent``), and every policy against every entry's env (a trained model whose
    observation shape differs from an entry's fails here). A seed-independent entry runs once
    per policy, on its first seed.

    Args:
        suite: A :class:`Suite`, or a suite file's path or shipped name.
        policies: :class:`BenchPolicy` objects or plain specs (with the safety layer).
        out_dir: Folder for ``entries/<entry>/<policy>/metrics.json`` and ``episodes.csv``
            (the evaluation's files); ``None`` writes nothing. :func:`write_bench` writes the
            summary files. An earlier bench's summary files there (and the temporary files a
            killed bench left) are removed before the first episode, and its run folders that
            this one does not list once the episodes are done (see :func:`_drop_stale_runs`).
            An ``entries/`` folder (or an entry's or run's folder) that is a symbolic link is
            refused before any episode, never written through.
        progress: Report each entry and its episodes on stderr.
        personal_space: Radius of the personal space, m of clearance to a human (finite,
            >= 0), as for :func:`~orca_env.evaluation.evaluate`.

    Returns:
        The report: ``format``, ``orca_env_version``, ``suite`` (name, description, seed),
        ``extra_set`` (the overrides of :meth:`Suite.with_set`, ``{}`` without),
        ``policies`` (label, spec's name, safety layer, ``deploy``: ``{key: {"policy": what
        the policy brings or None, "entries": {entry: {"value", "source"}}}}`` for each deploy
        key, ``source`` a key of :data:`DEPLOY_SOURCES`), ``entries`` (name, tag, config, set,
        scenario, agents, step limit, episodes each policy ran, first and last seed,
        ``seed_independent``), ``metrics`` (unit and definition),
        ``results`` (``{entry: {policy label: {metric: aggregate}}}``, the aggregates of
        :func:`~orca_env.evaluation.metrics.aggregate`; a seed-independent entry's without
        intervals), ``reference`` (the label the other
        policies are compared with: pure ORCA with its safety layer if it runs, else the first
        policy; ``None`` for a single policy), ``differences`` (``{entry: {policy label:
        {metric: difference}}}`` for the :data:`HEADLINE` rates: policy minus reference, paired
        by seed, from :func:`~orca_env.evaluation.metrics.paired_difference`), ``time_ratios``
        (``{entry: {policy label: ratio}}``: time to goal over the reference's, paired by seed
        and agent over the agents that arrived in both, from
        :func:`~orca_env.evaluation.metrics.paired_time_ratio`), ``ci95`` (how
        intervals are computed) and ``social`` (the personal-space radius and the discomfort
        distance of the social metrics, m). Nothing in it depends on the host, the paths or
        the time.

    Raises:
        ValueError: Naming the entry or policy, on a bad policy, a duplicate policy label, an
            entry whose env cannot be built or reset, an entry whose ``seed_independent``
            disagrees with :func:`seed_dependence`, an unusable ``out_dir``, or a negative or
            non-finite ``personal_space``.
    """
    bench = _Bench(suite, policies, out_dir=out_dir, progress=progress,
                   personal_space=personal_space)
    bench.run()
    return bench.report()


# -- targets -----------------------------------------------------------------------------------
#: The targets' rates and which way is better: ``(metric, word, higher is better)``.
_TARGET_METRICS = (("success_rate", "success", True), ("collision_rate", "collision", False),
                   ("deadlock_rate", "deadlock", False))


def _target(metric: str, word: str, higher: bool, bound: float, diff: dict, exact: bool,
            level: float, resolution: float) -> dict:
    """One target of one entry: the paired difference, its decision interval and the call."""
    n, mean = diff["n"], diff["mean"]
    if mean is None:
        low = high = None
    elif exact:  # one episode, the same whatever the seed: the difference is known exactly
        low = high = mean
    else:
        iv = decision_interval(n, mean, diff.get("sd"), level=level, resolution=resolution)
        low, high = (None, None) if iv is None else iv
    tol = 1e-12
    if low is None:
        call = "undecided"
    elif higher:
        call = "met" if low >= bound - tol else "missed" if high < bound - tol else "undecided"
    else:
        call = "met" if high <= bound + tol else "missed" if low > bound + tol else "undecided"
    return {"metric": metric, "what": word, "target": f"{'>=' if higher else '<='} {bound:+g}",
            "bound": bound, "difference": mean, "low": low, "high": high, "n": n, "call": call}


def missed_targets(report: dict, policy: str, *, reference: str | None = None,
                   gain: float = GAIN, gain_tags: Sequence[str] = GAIN_TAGS,
                   margin: float = MARGIN, looks: int | None = None,
                   alpha: float = ALPHA) -> dict[str, dict]:
    """Each entry's targets, called ``met``, ``missed`` or ``undecided``, for a bench report.

    The targets (``docs/evaluation.md#targets``) are paired differences, policy minus
    reference on the same seeds (``report["differences"]``), of three rates:

    * success: at least ``+gain`` on the entries tagged with one of ``gain_tags`` (where pure
      ORCA deadlocks or crushes), at least ``-margin`` on the others;
    * collision and deadlock: at most ``+margin``.

    Each is decided on :func:`~orca_env.evaluation.metrics.decision_interval` at the
    two-sided level ``1 - alpha / looks`` (Bonferroni over the ``looks`` of
    :func:`decide_targets`: the intervals of all its looks hold the true difference together
    with probability at least ``1 - alpha``): ``met`` when the whole interval is on the target's
    side of its bound, ``missed`` when it is wholly on the other side, else ``undecided``. A
    seed-independent entry's one episode gives the difference exactly. An entry is ``missed``
    when a target is, else ``undecided`` when one is, else ``met``.

    Args:
        report: A bench report (:func:`run_bench` or :func:`decide_targets`, or ``bench.json``
            loaded).
        policy: The label of the policy to check.
        reference: The label to compare with (default: the report's ``reference``); the report
            must hold their paired differences (either way round).
        gain: Success margin on the ``gain_tags`` entries.
        gain_tags: Tags of the entries that need the gain.
        margin: The difference in a rate too small to count (non-inferiority margin).
        looks: Looks the intervals are adjusted for (default: the report's, from
            :func:`decide_targets`, else :data:`LOOKS`).
        alpha: The error rate the looks share.

    Returns:
        ``{entry: {"call": "met" | "missed" | "undecided", "label": "met" | "missed" |
        "undecided at N episodes", "episodes": N, "targets": [...]}}`` in the report's order;
        each target ``{"metric", "what", "target" (">= -0.05"), "bound", "difference" (the
        mean paired difference), "low", "high" (the decision interval), "n", "call"}``.
        :func:`describe_call` says it in words.

    Raises:
        ValueError: If ``policy`` or ``reference`` is not a policy of the report, they are the
            same, or the report holds no paired differences between them.
    """
    labels = [p["label"] for p in report["policies"]]
    reference = report.get("reference") if reference is None else reference
    for arg, lab in (("policy", policy), ("reference", reference)):
        if lab not in labels:
            raise ValueError(f"{arg} {lab!r}: not a policy of this bench; its policies: {labels}")
    if policy == reference:
        raise ValueError(f"policy {policy!r} is the reference; name another policy")
    sign = 1.0
    if reference != report.get("reference"):
        if policy != report.get("reference"):
            raise ValueError(f"reference {reference!r}: this bench holds paired differences to "
                             f"{report.get('reference')!r} only; run it with {reference!r} as "
                             f"its reference (pure ORCA, or the first policy)")
        sign = -1.0  # the reference's differences to the policy, turned round
    if looks is None:
        looks = report.get("targets", {}).get("looks", LOOKS)
    if not _is_int(looks) or looks < 1:
        raise ValueError(f"looks must be an integer >= 1, got {looks!r}")
    level = 1.0 - alpha / looks
    out: dict[str, dict] = {}
    for e in report["entries"]:
        diffs = report["differences"][e["name"]][policy if sign > 0 else reference]
        exact = bool(e.get("seed_independent"))
        resolution = 1.0 / max(1, int(e.get("num_learned", 1)))
        targets = []
        for metric, word, higher in _TARGET_METRICS:
            d = dict(diffs[metric])
            if d["mean"] is not None:
                d["mean"] = sign * d["mean"]
            bound = (gain if e["tag"] in gain_tags else -margin) if higher else margin
            targets.append(_target(metric, word, higher, bound, d, exact and d["n"] == 1,
                                   level, resolution))
        calls = [t["call"] for t in targets]
        call = "missed" if "missed" in calls else "undecided" if "undecided" in calls else "met"
        n = max(t["n"] for t in targets)
        out[e["name"]] = {"call": call, "episodes": n, "targets": targets,
                          "label": f"undecided at {n} episodes" if call == "undecided" else call}
    return out


def describe_call(call: dict) -> str:
    """An entry's call in words: ``met``, or what is missed or undecided, with the numbers.

    ``missed: success -0.070 [-0.151, +0.011] (needs >= -0.05)``: the mean paired difference,
    its decision interval and the target; the targets that decide the call are listed.
    """
    if call["call"] == "met":
        return "met"
    parts = []
    for t in call["targets"]:
        if t["call"] != call["call"]:
            continue
        if t["low"] is None:
            iv = "" if t["difference"] is None else " (no interval)"
        elif t["low"] == t["high"]:
            iv = " (exact: one episode)"
        else:
            iv = f" [{_signed(t['low'])}, {_signed(t['high'])}]"
        diff = "-" if t["difference"] is None else _signed(t["difference"])
        parts.append(f"{t['what']} {diff}{iv} (needs {t['target']})")
    return f"{call['label']}: " + ", ".join(parts)


def decide_targets(suite: Suite | str | os.PathLike, policy: BenchPolicy | str,
                   reference: BenchPolicy | str = "orca", *, looks: int = LOOKS,
                   out_dir: str | os.PathLike | None = None, progress: bool = False,
                   personal_space: float = PERSONAL_SPACE, gain: float = GAIN,
                   gain_tags: Sequence[str] = GAIN_TAGS, margin: float = MARGIN,
                   alpha: float = ALPHA) -> dict:
    """Run a suite for a policy and a reference until each entry's targets are called.

    Look 1 is :func:`run_bench` of the two policies (each entry's own episodes, ``N``). An entry
    whose call (:func:`missed_targets`) is ``undecided`` gets follow-up episodes, for both
    policies on the same seeds, up to ``2 N`` episodes at look 2, ``4 N`` at look 3, ... (``N
    2^(looks-1)`` at the last, the cap: 200 for an entry of 50), and at the last look at least
    :func:`~orca_env.evaluation.metrics.decidable_episodes` (fewer episodes, even all agreeing
    with the reference's, cannot meet a target within ``margin``: 109 for one robot, 23 for four
    learned agents, at three looks and 0.05). Follow-up episode ``j`` uses
    seed ``followup_seeds[0] + j``, skipping seeds whose episode the entry already ran
    (:func:`episode_keys`: a CrowdNav case repeats every 500 or 100 seeds), up to
    ``followup_seeds[1]``. An entry stays ``undecided at N episodes`` when the cap or the
    follow-up seeds are reached first; a seed-independent entry is called at look 1.

    Args:
        suite: A :class:`Suite`, or a suite file's path or shipped name.
        policy: The policy whose targets are decided.
        reference: What it is compared with (pure ORCA by default).
        looks: Looks, the first included (>= 1; 1: no follow-ups).
        out_dir: As for :func:`run_bench`; each run's files end up holding all its episodes.
        progress: Report entries, episodes and looks on stderr.
        personal_space: As for :func:`run_bench`.
        gain: As for :func:`missed_targets`.
        gain_tags: As for :func:`missed_targets`.
        margin: As for :func:`missed_targets`.
        alpha: As for :func:`missed_targets`.

    Returns:
        The bench report of every episode run (:func:`run_bench`'s keys; an entry with
        follow-ups lists their seeds as ``followup_seeds``), with ``targets``: ``{"policy",
        "reference", "looks", "looks_run", "alpha", "margin", "gain", "gain_tags", "method",
        "calls"}``, ``calls`` as :func:`missed_targets` returns them.

    Raises:
        ValueError: As :func:`run_bench`, and on ``looks`` below 1.
    """
    if not _is_int(looks) or looks < 1:
        raise ValueError(f"looks must be an integer >= 1, got {looks!r}")
    bench = _Bench(suite, [policy, reference], out_dir=out_dir, progress=progress,
                   personal_space=personal_space, reference=1)
    suite = bench.suite
    p_label, r_label = bench.labels
    kw = dict(reference=r_label, gain=gain, gain_tags=gain_tags, margin=margin, looks=looks,
              alpha=alpha)
    bench.run()
    report = bench.report()
    calls = missed_targets(report, p_label, **kw)
    entries = {e.name: e for e in suite.entries}
    level = 1.0 - alpha / looks
    floor = {r["name"]: decidable_episodes(
        margin, level=level, resolution=1.0 / max(1, int(r.get("num_learned", 1))))
        for r in report["entries"]}
    look = 1
    for look in range(2, looks + 1):
        want = {}
        for name, c in calls.items():
            e = entries[name]
            if c["call"] != "undecided" or e.seed_independent:
                continue
            done = bench.followups[name]
            count = e.episodes * (2 ** (look - 1) - 1)
            if look == looks:  # the cap: never below the count that can meet the margin
                count = max(count, floor[name] - e.episodes)
            seeds = followup_plan(suite, e, count)[len(done):]
            if seeds:
                want[name] = seeds
        if not want:
            look -= 1
            break
        _say(progress, f"[targets] look {look}/{looks}: {len(want)} undecided entries get "
                       f"follow-up episodes")
        bench.follow_up(want, f"look {look}/{looks}")
        report = bench.report()
        calls = missed_targets(report, p_label, **kw)
    report["targets"] = {
        "policy": p_label, "reference": r_label, "looks": looks, "looks_run": look,
        "alpha": alpha, "margin": margin, "gain": gain, "gain_tags": list(gain_tags),
        "method": TARGET_METHOD, "calls": calls}
    return report


def followup_plan(suite: Suite, entry: SuiteEntry, count: int) -> list[int]:
    """The seeds of ``entry``'s first ``count`` follow-up episodes (fewer if the block ends).

    From the suite's ``followup_seeds`` block, in order, each seed whose episode
    (:func:`episode_keys`) the entry has not run yet, its own episodes counted: the seeds
    :func:`decide_targets` runs. None for a seed-independent entry or a suite without a block.
    """
    if suite.followup_seeds is None or entry.seed_independent or count <= 0:
        return []
    first, last = suite.followup_seeds
    used = set(episode_keys(entry, suite.run_seeds(entry)))
    candidates = list(range(first, last + 1))
    out = []
    for s, key in zip(candidates, episode_keys(entry, candidates), strict=True):
        if key not in used:
            used.add(key)
            out.append(s)
            if len(out) == count:
                break
    return out


#: How :func:`missed_targets` decides, as ``bench.json`` records it.
TARGET_METHOD = ("paired differences (policy - reference, same seeds) of each rate per "
                 "episode; Student-t interval of their mean at two-sided level 1 - alpha/looks "
                 "(Bonferroni over the looks), its half-width at least Wilson's zero-event bound "
                 "z^2/(n + z^2) times 1/learned agents; met: the interval on the target's side "
                 "of its bound, missed: wholly on the other side, else undecided; a "
                 "seed-independent entry's one episode is exact")


#: The summary files of :func:`write_bench`.
_SUMMARY_FILES = ("bench.json", "bench.md", "bench.png")
#: What :func:`~orca_env.evaluation.suite.evaluate` writes in a bench run's folder.
_RUN_FILES = frozenset({"metrics.json", "episodes.csv"})


def _drop_stale_runs(out_dir: str, written: set[tuple[str, str]]) -> None:
    """Remove ``entries/<entry>/<policy>/`` folders of earlier runs into the same ``out_dir``.

    A reused ``--out`` folder would otherwise keep runs that this bench's ``bench.json`` does
    not list (other policies or entries). Only folders holding nothing but a run's own files
    go (and entry folders left empty); anything else is left, with a warning.
    """
    root = os.path.join(out_dir, "entries")
    real = os.path.isdir(root) and not os.path.islink(root)
    for entry in sorted(os.listdir(root)) if real else []:
        folder = os.path.join(root, entry)
        if os.path.islink(folder) or not os.path.isdir(folder):
            continue  # links are never followed: nothing outside out_dir is touched
        for pol in sorted(os.listdir(folder)):
            run = os.path.join(folder, pol)
            if (entry, pol) in written or os.path.islink(run) or not os.path.isdir(run):
                continue
            files = set(os.listdir(run))
            if files <= _RUN_FILES and all(os.path.isfile(os.path.join(run, f))
                                           and not os.path.islink(os.path.join(run, f))
                                           for f in files):
                for f in files:
                    os.remove(os.path.join(run, f))
                os.rmdir(run)
            else:
                warnings.warn(f"out_dir {out_dir!r}: {run!r} is not from this bench and holds "
                              f"other files than {sorted(_RUN_FILES)}: left as it is",
                              stacklevel=3)
        if not os.listdir(folder):
            os.rmdir(folder)


def _reference(pols: list[BenchPolicy], labels: list[str]) -> str | None:
    """The policy the others are compared with: pure ORCA if it runs, else the first one."""
    if len(pols) < 2:
        return None
    orca = [lab for p, lab in zip(pols, labels, strict=True)
            if p.spec == "orca" and p.safety_layer]
    return orca[0] if orca else labels[0]


# -- outputs -----------------------------------------------------------------------------------
def _cell(a: dict) -> str:
    if a["mean"] is None:
        return "-"
    ci = format_ci(a, digits=2)
    return f"{a['mean']:.2f}" + ("" if ci == "-" else f" {ci}")


def format_markdown(report: dict) -> str:
    """The report as markdown tables: one row per entry and policy.

    The :data:`HEADLINE` rates, then (two or more policies) their paired differences to the
    reference, then (a report of :func:`decide_targets`) the targets' calls, then the
    social-navigation metrics of :data:`SOCIAL_TABLE` (when the report holds them). Each cell
    is the mean and its 95% interval (``[low, high]`` for rates, ``+-half`` otherwise); a
    seed-independent entry's one episode has none.
    """
    s = report["suite"]
    heads = [m.replace("_rate", "") for m in HEADLINE]
    lines = [f"Suite `{s['name']}`: seed {s['seed']} + entry offset + episode; mean and 95% "
             f"interval over episodes of the rates over learned agents (Student-t, clipped to "
             f"[0, 1])."]
    if any(e.get("seed_independent") for e in report["entries"]):
        lines[0] += (" A seed-independent entry gives the same episode whatever the seed: it "
                     "ran once, and its values have no interval.")
    lines += _deploy_markdown(report)
    lines += ["",
              "| entry | tag | agents (learned) | episodes | policy | " + " | ".join(heads) + " |",
              "|---|---|---:|---:|---|" + "---:|" * len(heads)]
    for e in report["entries"]:
        count = f"{e['episodes']}" + (" (seed-independent)" if e.get("seed_independent") else "")
        for p in report["policies"]:
            agg = report["results"][e["name"]][p["label"]]
            lines.append(f"| {e['name']} | {e['tag']} | {e['num_agents']} ({e['num_learned']}) "
                         f"| {count} | {_md(p['label'])} | "
                         + " | ".join(_cell(agg[m]) for m in HEADLINE) + " |")
    ref = report.get("reference")
    if ref is not None:
        lines += ["",
                  f"Differences to `{ref}`, paired by seed: mean and 95% interval over episodes of "
                  f"(policy - {ref}); an interval that holds 0 does not tell the two apart, one "
                  f"of zero width means every episode gave the same difference. Time to goal: "
                  f"the policy's over `{ref}`'s, paired by seed and agent over the agents that "
                  f"arrived in both, with its 95% interval and the agents it pairs.",
                  "",
                  "| entry | policy | " + " | ".join(heads) + " | time to goal, paired ratio |",
                  "|---|---|" + "---:|" * (len(heads) + 1)]
        ratios = report.get("time_ratios", {})
        for e in report["entries"]:
            for p in report["policies"]:
                if p["label"] == ref:
                    continue
                diff = report["differences"][e["name"]][p["label"]]
                ratio = ratios.get(e["name"], {}).get(p["label"])
                lines.append(f"| {e['name']} | {_md(p['label'])} | "
                             + " | ".join(_diff_cell(diff[m]) for m in HEADLINE)
                             + f" | {ratio_cell(ratio)} |")
    lines += _targets_markdown(report)
    lines += _social_markdown(report)
    return "\n".join(lines) + "\n"


def _show_value(value: Any) -> str:
    """A ``--set`` value as YAML reads it back (``null``, ``true``, ``0.1``, ``"text"``)."""
    return json.dumps(value)


def _margin(value: float | None) -> str:
    return "none" if value is None else f"{value:g} m"


def _deploy_markdown(report: dict) -> list[str]:
    """``bench.md``'s lines on the ``--set`` overrides and on each policy's deploy keys.

    Nothing for a report from before they were recorded.
    """
    lines = []
    extra = report.get("extra_set") or {}
    if extra:
        lines += ["", "Every entry ran with --set " + ", ".join(
            f"`{k}={_show_value(v)}`" for k, v in extra.items())
            + " (after the suite's and the entry's own set)."]
    pols = [p for p in report["policies"] if "deploy" in p]
    keys = sorted({k for p in pols for k in p["deploy"]})
    for key in keys:
        lines += ["", f"`{key}` of each policy (the ORCA padding of its learned agents that act "
                      f"with the safety layer; none: each group's own `orca_padding`), and "
                      f"where it came from:", ""]
        for p in pols:
            d = p["deploy"].get(key)
            if d is None:
                continue
            # Entries grouped by (value, source), in the suite's order.
            groups: dict[tuple, list[str]] = {}
            for name, run in d["entries"].items():
                groups.setdefault((run["value"], run["source"]), []).append(name)
            parts = []
            for (value, source), names in groups.items():
                text = _margin(value) + ("" if source == "none" else
                                         f", from {DEPLOY_SOURCES.get(source, source)}")
                if len(groups) > 1:
                    text += f", on {', '.join(names)}"
                parts.append(text)
            line = f"- `{p['label']}`: " + "; ".join(parts)
            if d.get("policy") is not None and any(s != "deploy" and s != "training"
                                                   for _, s in groups):
                line += f" (the policy brings {_margin(d['policy'])})"
            if p.get("without_safety_layer") and any(v is not None for v, _ in groups):
                line += " (no effect: it runs without the safety layer)"
            lines.append(line)
    return lines


def _targets_markdown(report: dict) -> list[str]:
    """The targets' table of a :func:`decide_targets` report (none for other reports)."""
    t = report.get("targets")
    if not t:
        return []
    level = 100.0 * (1.0 - t["alpha"] / t["looks"])
    lines = ["",
             f"Targets of `{t['policy']}` against `{t['reference']}` (docs/evaluation.md#"
             f"targets): paired difference and its interval at {level:.2f}% per look, "
             f"{100 * (1 - t['alpha']):.0f}% over all {t['looks']} looks (Bonferroni); met when "
             f"the interval is on the target's side of its bound, missed when wholly on the "
             f"other side, else undecided.",
             "",
             "| entry | tag | episodes | success | collision | deadlock | call |",
             "|---|---|---:|---|---|---|---|"]
    tags = {e["name"]: e["tag"] for e in report["entries"]}
    for name, call in t["calls"].items():
        cells = []
        for x in call["targets"]:
            if x["difference"] is None:
                cells.append("-")
                continue
            iv = "" if x["low"] is None or x["low"] == x["high"] else \
                f" [{_signed(x['low'])}, {_signed(x['high'])}]"
            cells.append(f"{_signed(x['difference'])}{iv} ({x['target']}): {x['call']}")
        lines.append(f"| {name} | {tags[name]} | {call['episodes']} | " + " | ".join(cells)
                     + f" | {'**missed**' if call['call'] == 'missed' else call['label']} |")
    met = sum(c["call"] == "met" for c in t["calls"].values())
    missed = sum(c["call"] == "missed" for c in t["calls"].values())
    lines += ["", f"`{t['policy']}`: met on {met} of {len(t['calls'])} entries, missed on "
                  f"{missed}, undecided on {len(t['calls']) - met - missed}."]
    return lines


def _social_markdown(report: dict) -> list[str]:
    """The social table's lines (none for a report without the social metrics)."""
    rows = [(e, p, report["results"][e["name"]][p["label"]])
            for e in report["entries"] for p in report["policies"]]
    if not rows or not all(m in agg for m in SOCIAL_TABLE for _, _, agg in rows):
        return []  # a bench.json written before the social metrics existed
    ps = report.get("social", {}).get("personal_space", PERSONAL_SPACE)
    units = {m: SOCIAL_METRICS[m][0] for m in SOCIAL_TABLE}
    heads = [f"{m} ({units[m]})" for m in SOCIAL_TABLE]
    lines = ["",
             f"Social navigation: the learned agents and the humans (non-learned agents); "
             f"clearance surface to surface, discomfort below {DISCOMFORT_DISTANCE:g} m, "
             f"personal space {ps:g} m; mean and 95% interval over episodes (Student-t; "
             f"clipped to [0, 1] for fractions). min_time_to_collision averages the episodes "
             f"with a finite value only (n in bench.json; the others were never on a collision "
             f"course); path_length_ratio the successful agents only. Peak acceleration and "
             f"jerk are in bench.json.",
             "",
             "| entry | policy | " + " | ".join(heads) + " |",
             "|---|---|" + "---:|" * len(heads)]
    for e, p, agg in rows:
        lines.append(f"| {e['name']} | {_md(p['label'])} | "
                     + " | ".join(_social_cell(agg[m]) for m in SOCIAL_TABLE) + " |")
    return lines


def _social_cell(a: dict) -> str:
    """Three significant digits: clearances and times span orders of magnitude."""
    if a["mean"] is None:
        return "-"
    ci = format_ci(a, digits=2)
    return f"{a['mean']:.3g}" + ("" if ci == "-" else f" {ci}")


def _md(text: str) -> str:
    """A label as a markdown table cell (a folder may be called ``a|b``)."""
    return text.replace("|", "\\|")


def _signed(x: float) -> str:
    text = f"{x:+.3f}"  # three decimals: rare events (a deadlock in 400 agents) stay visible
    return "+0.000" if text == "-0.000" else text


def ratio_cell(r: dict | None) -> str:
    """A paired time ratio as a table cell, e.g. ``1.124 [1.051, 1.197] (96)``.

    ``r`` is :func:`~orca_env.evaluation.metrics.paired_time_ratio`'s result: the ratio, its
    95% interval, and in brackets the agents it pairs; ``-`` when no agent pairs. Three
    decimals, so that a bound near a cap (1.3) reads on the side it lies.
    """
    if r is None or r["ratio"] is None:
        return "-"
    iv = "" if r["ci95_low"] is None else f" [{r['ci95_low']:.3f}, {r['ci95_high']:.3f}]"
    return f"{r['ratio']:.3f}{iv} ({r['agents']})"


def _diff_cell(a: dict) -> str:
    if a["mean"] is None:
        return "-"
    if a["ci95_low"] is None:
        return _signed(a["mean"])
    return f"{_signed(a['mean'])} [{_signed(a['ci95_low'])}, {_signed(a['ci95_high'])}]"


def bench_figure(report: dict) -> Any:
    """A ``matplotlib.figure.Figure``: one panel per :data:`HEADLINE` rate, entries as rows.

    Each entry has one horizontal bar per policy (its mean) with the 95% interval as an error
    bar; entries keep the suite's order from the top, labelled with their tag. Drawn on a bare
    ``Figure`` (no pyplot, no display).

    Raises:
        ImportError: If matplotlib is not installed.
    """
    require_matplotlib()
    from matplotlib.figure import Figure  # noqa: PLC0415

    entries, pols = report["entries"], report["policies"]
    n_e, n_p = len(entries), len(pols)
    band = 0.8 / max(n_p, 1)
    height = max(3.0, 0.22 * n_e * max(n_p, 2) + 1.6)
    fig = Figure(figsize=(4.0 * len(HEADLINE) + 2.2, height), dpi=100, layout="constrained")
    axes = fig.subplots(1, len(HEADLINE), sharey=True)
    colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
              "#7f7f7f", "#bcbd22", "#17becf"]
    rows = list(range(n_e))
    for ax, metric in zip(axes, HEADLINE, strict=True):
        for j, p in enumerate(pols):
            ys, xs, lo, hi = [], [], [], []
            for r, e in zip(rows, entries, strict=True):
                a = report["results"][e["name"]][p["label"]][metric]
                if a["mean"] is None:
                    continue
                ys.append(r - 0.4 + band * (j + 0.5))
                xs.append(a["mean"])
                low = a["ci95_low"] if a["ci95_low"] is not None else a["mean"]
                high = a["ci95_high"] if a["ci95_high"] is not None else a["mean"]
                lo.append(a["mean"] - low)
                hi.append(high - a["mean"])
            color = colors[j % len(colors)]
            ax.barh(ys, xs, height=band * 0.9, color=color, alpha=0.85,
                    label=p["label"] if metric == HEADLINE[0] else None)
            # A dot at the mean, so that a rate of 0 (no bar) still shows.
            ax.errorbar(xs, ys, xerr=[lo, hi], fmt="o", color=color, markersize=3.5,
                        markeredgecolor="black", markeredgewidth=0.5, ecolor="black",
                        elinewidth=0.8, capsize=2)
        ax.set_xlim(-0.02, 1.02)
        ax.set_title(metric.replace("_", " ") + " (95% CI)")
        ax.grid(axis="x", alpha=0.3)
        ax.set_xlabel("fraction of learned agents")
        for r in rows[1::2]:
            ax.axhspan(r - 0.5, r + 0.5, color="0.93", zorder=0)
    axes[0].set_yticks(rows, [f"{e['name']} [{e['tag']}]" for e in entries])
    axes[0].set_ylim(n_e - 0.5, -0.5)
    s = report["suite"]
    counts = sorted({e["episodes"] for e in entries})
    per = f"{counts[0]}" if len(counts) == 1 else f"{counts[0]} to {counts[-1]}"
    fig.suptitle(f"orca-env bench: suite {s['name']}, {per} episodes per entry (seeds "
                 f"{s['seed']} + entry offset + episode); rates over learned agents")
    fig.legend(loc="outside lower center", ncols=min(n_p, 4), title="policy")
    return fig


def plot_bench(report: dict, path: str | os.PathLike) -> str:
    """Draw :func:`bench_figure` into a PNG, written atomically; returns the path."""
    fig = bench_figure(report)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png")
    return os.fspath(path)


def write_bench(report: dict, out_dir: str | os.PathLike, figure: bool = True) -> dict:
    """Write ``bench.json``, ``bench.md`` and (``figure``) ``bench.png`` into ``out_dir``.

    Every file is written atomically. Returns ``{"json": path, "markdown": path, "figure": path
    or None, "hash": SHA-256 of bench.json}``.
    """
    out = prepare_out_dir(out_dir, arg="out_dir")
    paths = {"json": os.path.join(out, "bench.json"), "markdown": os.path.join(out, "bench.md"),
             "figure": os.path.join(out, "bench.png") if figure else None}
    atomic_write_text(paths["json"], report_json(report))
    atomic_write_text(paths["markdown"], format_markdown(report))
    if figure:
        plot_bench(report, paths["figure"])
    paths["hash"] = report_hash(report)
    return paths
