"""Kernel families: the numba kernels that Python calls, each with the one signature it gets.

numba compiles a kernel on its first call, once per argument types, and caches the result on
disk (``__pycache__`` beside the package, or ``NUMBA_CACHE_DIR``). A family lists the kernels one
part of the package calls from Python (the core's simulator, the env's step pipeline, the
evaluation's crowd metrics) with the argument types its call sites hand them: the call sites
normalise their arrays (dtype, C order, writable) so that every scenario, kinematics model and
sensor reaches the same compiled specialisation. Kernels called only from other kernels compile
as part of their caller.

:func:`ensure` compiles (or loads) a family's kernels. It first checks numba's cache index;
when something has to be compiled it says so on stderr, once per family and process: what it
compiles, about how long that takes, and where the cache is. Later processes load the cache
and say nothing. ``orca-env warmup`` ensures every family.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Family", "register_family", "families", "family", "cached", "missing", "ensure",
           "cache_location", "notice"]


@dataclass
class Family:
    """A kernel family (see the module docstring).

    Attributes:
        name: Its name (``core``, ``env``, ``metrics``).
        what: What it compiles, for the notice (a phrase: "the env's step pipeline ...").
        cpu_seconds: Its cold compile on an idle 2-core machine (load about 1), seconds, as
            measured for the notice (``docs/environment.md``, "Compilation").
        kernels: Returns the ``(dispatcher, argument types)`` pairs of the family (called
            lazily: the types may need the modules that build the arrays). Families may
            share kernels (the env's include the core's it calls).
    """

    name: str
    what: str
    cpu_seconds: float
    kernels: Callable[[], Sequence[tuple[Any, tuple]]]
    _resolved: list | None = field(default=None, repr=False)

    def resolved(self) -> list[tuple[Any, tuple]]:
        """The ``(dispatcher, argument types)`` pairs (computed once)."""
        if self._resolved is None:
            self._resolved = [(d, tuple(sig)) for d, sig in self.kernels()]
        return self._resolved


_FAMILIES: dict[str, Family] = {}
_ensured: set[str] = set()


def register_family(name: str, what: str, cpu_seconds: float,
                    kernels: Callable[[], Sequence[tuple[Any, tuple]]]) -> Family:
    """Register (or replace) the family ``name``; see :class:`Family`."""
    fam = Family(name, what, float(cpu_seconds), kernels)
    _FAMILIES[name] = fam
    _ensured.discard(name)
    return fam


def families() -> dict[str, Family]:
    """The registered families by name, in registration order."""
    return dict(_FAMILIES)


def family(name: str) -> Family:
    """The family ``name``.

    Raises:
        ValueError: Naming the registered ones.
    """
    try:
        return _FAMILIES[name]
    except KeyError:
        raise ValueError(f"unknown kernel family {name!r}; registered: "
                         f"{', '.join(_FAMILIES) or 'none'}") from None


def cached(dispatcher: Any, sig: tuple) -> bool | None:
    """Whether ``dispatcher`` has ``sig`` in memory or in numba's disk cache (None: unknown).

    Reads numba's cache index (``Dispatcher._cache``), a numba internal: when it cannot be
    read, the answer is None.
    """
    if sig in dispatcher.overloads:
        return True
    try:
        cache = dispatcher._cache
        key = cache._index_key(sig, dispatcher.targetctx.codegen())
        index = cache._cache_file._load_index()
    except Exception:  # noqa: BLE001  (numba internals differ between versions)
        return None
    name = index.get(key)
    return name is not None and os.path.exists(os.path.join(cache._cache_path, name))


def missing(name: str) -> list[tuple[Any, tuple]]:
    """The ``(dispatcher, types)`` pairs of family ``name`` that are neither loaded nor cached.

    Pairs whose cache state cannot be read count as present (nothing to announce).
    """
    return [(d, s) for d, s in family(name).resolved() if cached(d, s) is False]


def cache_location(name: str | None = None) -> str:
    """Where numba caches the kernels: ``NUMBA_CACHE_DIR``, or where family ``name``'s go.

    Without ``NUMBA_CACHE_DIR`` numba writes ``__pycache__`` folders beside the modules (or,
    where the package is not writable, a per-user folder); the answer is the folder of the
    family's first kernel, from numba's cache object (a numba internal).
    """
    env = os.environ.get("NUMBA_CACHE_DIR")
    if env:
        return os.path.abspath(env)
    try:
        fams = [family(name)] if name is not None else list(_FAMILIES.values())
        path = fams[0].resolved()[0][0]._cache.cache_path
    except Exception:  # noqa: BLE001  (numba internals differ between versions)
        return "numba's default cache (__pycache__ beside the package's modules)"
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if os.path.commonpath([package, os.path.abspath(path)]) == package:
        return f"the __pycache__ folders in {package}"
    return path  # numba's per-user folder, where the package is not writable


def notice(fam: Family) -> str:
    """The line :func:`ensure` prints before it compiles ``fam``."""
    return (f"orca-env: compiling numba kernels: {fam.what} (about {fam.cpu_seconds:.0f} s on "
            f"an idle 2-core machine, longer on a loaded one); once per machine and version, "
            f"later runs load them from the cache: {cache_location(fam.name)} (set "
            f"NUMBA_CACHE_DIR to move it; `orca-env warmup` compiles everything ahead)")


def ensure(name: str, *, announce: bool = True) -> int:
    """Compile the kernels of family ``name`` that the cache lacks; once per family and process.

    Before compiling it prints :func:`notice` on stderr (with ``announce``); with a warm cache
    it prints nothing and compiles nothing (the kernels then load lazily, on first call).

    Returns:
        How many kernels were missing (compiled now; compiling one compiles those it calls).
    """
    if name in _ensured:
        return 0
    fam = family(name)
    todo = missing(name)
    if todo and announce:
        print(notice(fam), file=sys.stderr, flush=True)
    for d, sig in todo:
        d.compile(sig)
    _ensured.add(name)
    return len(todo)
