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
    entries:
      - name: corridor_headon      # unique; letters, digits, _ . -
        config: corridor_headon    # shipped name, or a path (relative: to the suite's folder
                                   # first, then the current folder)
        tag: crush                 # a lower-case word: standard, deadlock, crush, ...
        seed_offset: 1200          # entries' seed ranges must not overlap
        episodes: 20               # optional if the suite sets a default
        set: {max_steps: 300, groups.0.count: 4}   # optional, keys as ``orca-env eval --set``

``set`` keys are config keys, dotted for sections (``observation.range``) and with integers for
list items (``groups.0.count``), exactly as ``orca-env eval --set``; values are YAML values.

Seeds
-----
Episode ``k`` of an entry uses seed ``seed + seed_offset + k``. Every seed must lie in the
evaluation range 10_000 .. 19_999, which training refuses, so benchmark episodes are never
training episodes. The standard suite uses base 11_000 and offsets 100 apart (at most 100
episodes per entry), so its seeds (11_000 .. 12_399) are also disjoint from those of a plain
``orca-env eval`` with fewer than 1_000 episodes (10_000 +). Changing an entry's episode count
(``--episodes``, ``--quick``) keeps its first episodes: a quick run's episodes are the first
episodes of the full run.

Policies
--------
A :class:`BenchPolicy` is a policy spec as ``orca-env eval --policy`` takes it (``orca``,
``random``, a model file or run folder, ``package.module:callable``), optionally run without the
safety layer: ``safety_layer=False`` sets ``safety_layer: false`` for every learned group of
every entry (the action is the velocity itself), as the training comparison's "trained, no
safety layer" column. Each policy is resolved against each entry's env before the first episode,
so a model that cannot act in some entry (another observation shape) fails before any work.
"""

from __future__ import annotations

import dataclasses
import os
import re
import sys
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import __version__
from ..config import apply_policy_settings, load_yaml
from ..configs import resolve
from ..environment import OrcaEnv
from ..files import atomic_path, atomic_write_text, remove_stale_temps
from ..scenarios import SpawnError
from .metrics import (
    METRICS,
    SOCIAL_METRICS,
    format_ci,
    paired_difference,
    report_hash,
    report_json,
    social_metric_definitions,
)
from .overrides import config_overrides
from .plots import require_matplotlib
from .social import DISCOMFORT_DISTANCE, PERSONAL_SPACE, check_personal_space
from .suite import (
    EVAL_SEEDS,
    check_no_links,
    evaluate,
    is_named_policy,
    model_label,
    policy_settings,
    prepare_out_dir,
    resolve_policy,
)

__all__ = ["BENCH_FORMAT", "DEFAULT_SUITE", "HEADLINE", "SOCIAL_TABLE", "SuiteEntry", "Suite",
           "BenchPolicy", "load_suite", "run_bench", "write_bench", "format_markdown",
           "bench_figure", "plot_bench", "missed_targets"]

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

_SUITE_KEYS = ("name", "description", "seed", "episodes", "set", "entries")
_ENTRY_KEYS = ("name", "config", "tag", "seed_offset", "episodes", "set", "description")
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
        overrides: The same, as ``OrcaEnv(path, **overrides)`` takes them.
        description: Free text.
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


@dataclass(frozen=True)
class Suite:
    """A benchmark suite (see the module docstring for the file format).

    Attributes:
        name: The suite's name (default: its file's name).
        seed: Seed base of the entries.
        entries: The entries, in the file's order.
        path: The file it was read from.
        description: Free text.
    """

    name: str
    seed: int
    entries: tuple[SuiteEntry, ...]
    path: str = ""
    description: str = ""

    def seeds(self, entry: SuiteEntry) -> list[int]:
        """The evaluation seeds of ``entry``'s episodes."""
        first, last = self.seed_span(entry)
        return list(range(first, last + 1))

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
        return Suite(self.name, self.seed, chosen, self.path, self.description)

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
        out = Suite(self.name, self.seed, entries, self.path, self.description)
        _check_seeds(out, f"{arg} {episodes}")
        return out


def _check_seeds(suite: Suite, where: str) -> None:
    """Every entry's seeds are evaluation seeds and no two entries share a seed."""
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
        try:
            cfg_path = _entry_config_path(config, os.path.dirname(os.path.abspath(path)))
        except FileNotFoundError as exc:
            raise ValueError(f"{here}: config: {exc}") from None
        items = ([(f"{where}: set {k!r}", k, v) for k, v in suite_set.items()]
                 + [(f"{here}: set {k!r}", k, v) for k, v in entry_set.items()])
        overrides = config_overrides(cfg_path, items, source="set key")
        entries.append(SuiteEntry(ename, config, cfg_path, tag, offset, episodes,
                                  {**suite_set, **entry_set}, overrides, desc))
    suite = Suite(name, seed, tuple(entries), path, description)
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


# -- the run -----------------------------------------------------------------------------------
def run_bench(suite: Suite | str | os.PathLike, policies: Sequence[BenchPolicy | str] = ("orca",),
              *, out_dir: str | os.PathLike | None = None, progress: bool = False,
              personal_space: float = PERSONAL_SPACE) -> dict:
    """Evaluate every policy on every entry of a suite; return the bench report.

    Everything is checked before the first episode: the output folder, every entry's config and
    first reset, and every policy against every entry's env (a trained model whose observation
    shape differs from an entry's fails here).

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
        ``policies`` (label, spec's name, safety layer), ``entries`` (name, tag, config, set,
        scenario, agents, step limit, episodes, seeds), ``metrics`` (unit and definition),
        ``results`` (``{entry: {policy label: {metric: aggregate}}}``, the aggregates of
        :func:`~orca_env.evaluation.metrics.aggregate`), ``reference`` (the label the other
        policies are compared with: pure ORCA with its safety layer if it runs, else the first
        policy; ``None`` for a single policy), ``differences`` (``{entry: {policy label:
        {metric: difference}}}`` for the :data:`HEADLINE` rates: policy minus reference, paired
        by seed, from :func:`~orca_env.evaluation.metrics.paired_difference`), ``ci95`` (how
        intervals are computed) and ``social`` (the personal-space radius and the discomfort
        distance of the social metrics, m). Nothing in it depends on the host, the paths or
        the time.

    Raises:
        ValueError: Naming the entry or policy, on a bad policy, a duplicate policy label, an
            entry whose env cannot be built or reset, an unusable ``out_dir``, or a negative or
            non-finite ``personal_space``.
    """
    personal_space = check_personal_space(personal_space)
    if not isinstance(suite, Suite):
        suite = load_suite(suite)
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
    if out_dir is not None:
        out_dir = prepare_out_dir(out_dir, arg="out_dir")

    # -- before any episode: every entry's env, every policy against it ----------------------
    t0 = time.perf_counter()
    _say(progress, f"[bench] suite {suite.name}: {len(suite.entries)} entries x {len(pols)} "
                   f"policies; checking configs and policies")
    prepared = []
    for e in suite.entries:
        here = f"suite {suite.name!r}, entry {e.name!r} (config {e.config!r})"
        try:
            env = OrcaEnv(e.path, **{**e.overrides, "render_mode": None})
            env.reset(seed=suite.seed_span(e)[0])
        except (ValueError, SpawnError) as exc:
            raise ValueError(f"{here}: {exc}") from exc
        resolved: dict[str, Any] = {}
        runs = []
        for p, lab in zip(pols, labels, strict=True):
            # A model brings its action mode and (universal layout) observation settings to
            # every entry (as evaluate does for a policy given by name).
            trained = policy_settings(p.spec)
            over = apply_policy_settings(e.overrides, trained)
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
                "episodes": e.episodes, "seeds": list(suite.seed_span(e))}
        env.close()
        prepared.append((e, info, runs))

    # -- the episodes -------------------------------------------------------------------------
    if out_dir is not None:
        # No run is written through a link inside out_dir (entries/, an entry's or a run's
        # folder): refused before any episode.
        check_no_links(out_dir, [os.path.join("entries", e.name, _slug(lab))
                                 for e, _, runs in prepared for _, lab, _, _ in runs])
        # The temporary files a killed earlier bench left here (its own runs' folders are
        # cleaned by evaluate).
        remove_stale_temps(out_dir)
        # An earlier bench's summary would contradict the runs this one overwrites, should it
        # stop before write_bench: it goes now (its runs this bench does not list go at the end).
        for f in _SUMMARY_FILES:
            if os.path.isfile(os.path.join(out_dir, f)) or os.path.islink(os.path.join(out_dir, f)):
                os.remove(os.path.join(out_dir, f))
    results: dict[str, dict[str, dict]] = {}
    episodes: dict[str, dict[str, list]] = {}
    policy_names: dict[str, str] = {}
    n_runs = len(prepared) * len(pols)
    done = 0
    for i, (e, info, runs) in enumerate(prepared):
        seeds = suite.seeds(e)
        _say(progress, f"[bench {i + 1}/{len(prepared)}] {e.name} ({e.tag}, {info['scenario']}, "
                       f"{info['num_agents']} agents of which {info['num_learned']} learned): "
                       f"{e.episodes} episodes per policy, seeds {seeds[0]}..{seeds[-1]}")
        results[e.name], episodes[e.name] = {}, {}
        for _, lab, (pol, name), over in runs:
            t1 = time.perf_counter()
            sub = (None if out_dir is None
                   else os.path.join(out_dir, "entries", e.name, _slug(lab)))
            rep = evaluate(e.path, pol, seeds=seeds, overrides=over, out_dir=sub,
                           progress=f"bench {i + 1}/{len(prepared)} {e.name} {lab}"
                           if progress else False, name=lab, personal_space=personal_space)
            results[e.name][lab] = rep["aggregate"]
            episodes[e.name][lab] = rep["episodes"]
            policy_names.setdefault(lab, name)
            done += 1
            agg = rep["aggregate"]
            _say(progress, f"[bench {i + 1}/{len(prepared)}] {e.name} {lab}: success "
                           f"{_short(agg, 'success_rate')} collision "
                           f"{_short(agg, 'collision_rate')} deadlock "
                           f"{_short(agg, 'deadlock_rate')} timeout "
                           f"{_short(agg, 'timeout_rate')}  ({time.perf_counter() - t1:.1f} s; "
                           f"{done}/{n_runs} runs, {time.perf_counter() - t0:.0f} s in all)")
    if out_dir is not None:
        _drop_stale_runs(out_dir, {(e.name, _slug(lab)) for e, _, runs in prepared
                                   for _, lab, _, _ in runs})
    reference = _reference(pols, labels)
    differences = {} if reference is None else {
        name: {lab: paired_difference(runs_[lab], runs_[reference], HEADLINE)
               for lab in labels if lab != reference}
        for name, runs_ in episodes.items()}
    return {
        "format": BENCH_FORMAT,
        "orca_env_version": __version__,
        "suite": {"name": suite.name, "description": suite.description, "seed": suite.seed},
        "policies": [{"label": lab, "policy": policy_names.get(lab, p.spec),
                      "without_safety_layer": not p.safety_layer}
                     for p, lab in zip(pols, labels, strict=True)],
        "entries": [info for _, info, _ in prepared],
        "metrics": {k: {"unit": u, "definition": d} for k, (u, d) in
                    {**METRICS, **social_metric_definitions(personal_space)}.items()},
        "results": results,
        "reference": reference,
        "differences": differences,
        "ci95": "mean over episodes with a 95% interval [ci95_low, ci95_high]: Wilson score for "
                "the 0/1 metric all_success, Student-t clipped to [0, 1] for fractions, "
                "Student-t otherwise (ci95 = half its width)",
        "social": {"personal_space": personal_space, "discomfort_distance": DISCOMFORT_DISTANCE},
    }


def missed_targets(report: dict, policy: str, *, reference: str | None = None,
                   gain: float = 0.15, gain_tags: Sequence[str] = ("deadlock", "crush")
                   ) -> dict[str, list[str]]:
    """The targets a policy misses against a reference, per entry of a bench report.

    The targets of the generalist tables in ``docs/results.md`` (defined in
    ``docs/evaluation.md#targets``): the success rate at least the reference's
    or inside its 95% interval, and at least the reference's + ``gain`` on entries tagged with
    one of ``gain_tags`` (where pure ORCA deadlocks or crushes); the collision and deadlock
    rates at most the reference's. They compare means, as the tables do; the paired
    differences (``report["differences"]``) say which gaps the episodes can resolve.

    Args:
        report: A bench report (:func:`run_bench`, or ``bench.json`` loaded).
        policy: The label of the policy to check.
        reference: The label to compare with (default: the report's ``reference``).
        gain: Success margin on the ``gain_tags`` entries.
        gain_tags: Tags of the entries that need the margin.

    Returns:
        ``{entry: [what is missed, e.g. "success -0.07", "collision +0.04"]}`` in the report's
        order; an empty list where every target is met.

    Raises:
        ValueError: If ``policy`` or ``reference`` is not a policy of the report, or they are
            the same.
    """
    labels = [p["label"] for p in report["policies"]]
    reference = report.get("reference") if reference is None else reference
    for arg, lab in (("policy", policy), ("reference", reference)):
        if lab not in labels:
            raise ValueError(f"{arg} {lab!r}: not a policy of this bench; its policies: {labels}")
    if policy == reference:
        raise ValueError(f"policy {policy!r} is the reference; name another policy")
    out: dict[str, list[str]] = {}
    for e in report["entries"]:
        res = report["results"][e["name"]]
        p, r = res[policy], res[reference]
        sp, sr = p["success_rate"]["mean"], r["success_rate"]["mean"]
        missed = []
        if sp is not None and sr is not None:
            if e["tag"] in gain_tags:
                if sp < sr + gain - 1e-9:
                    missed.append(f"success {_signed(sp - sr)} (needs +{gain:g})")
            elif sp < sr and sp < r["success_rate"]["ci95_low"]:
                missed.append(f"success {_signed(sp - sr)}")
        for key, what in (("collision_rate", "collision"), ("deadlock_rate", "deadlock")):
            a, b = p[key]["mean"], r[key]["mean"]
            if a is not None and b is not None and a > b + 1e-12:
                missed.append(f"{what} {_signed(a - b)}")
        out[e["name"]] = missed
    return out


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
    reference, then the social-navigation metrics of :data:`SOCIAL_TABLE` (when the report
    holds them). Each cell is the mean and its 95% interval (``[low, high]`` for rates,
    ``+-half`` otherwise).
    """
    s = report["suite"]
    heads = [m.replace("_rate", "") for m in HEADLINE]
    lines = [f"Suite `{s['name']}`: seed {s['seed']} + entry offset + episode; mean and 95% "
             f"interval over episodes of the rates over learned agents (Student-t, clipped to "
             f"[0, 1]).",
             "",
             "| entry | tag | agents (learned) | episodes | policy | " + " | ".join(heads) + " |",
             "|---|---|---:|---:|---|" + "---:|" * len(heads)]
    for e in report["entries"]:
        for p in report["policies"]:
            agg = report["results"][e["name"]][p["label"]]
            lines.append(f"| {e['name']} | {e['tag']} | {e['num_agents']} ({e['num_learned']}) "
                         f"| {e['episodes']} | {_md(p['label'])} | "
                         + " | ".join(_cell(agg[m]) for m in HEADLINE) + " |")
    ref = report.get("reference")
    if ref is not None:
        lines += ["",
                  f"Differences to `{ref}`, paired by seed: mean and 95% interval over episodes of "
                  f"(policy - {ref}); an interval that holds 0 does not tell the two apart, one "
                  f"of zero width means every episode gave the same difference.",
                  "",
                  "| entry | policy | " + " | ".join(heads) + " |",
                  "|---|---|" + "---:|" * len(heads)]
        for e in report["entries"]:
            for p in report["policies"]:
                if p["label"] == ref:
                    continue
                diff = report["differences"][e["name"]][p["label"]]
                lines.append(f"| {e['name']} | {_md(p['label'])} | "
                             + " | ".join(_diff_cell(diff[m]) for m in HEADLINE) + " |")
    lines += _social_markdown(report)
    return "\n".join(lines) + "\n"


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
