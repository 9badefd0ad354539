"""``orca-env warmup``: compile and cache every numba kernel ahead of use.

The first use of a kernel family compiles it (see :mod:`orca_env.core.families`); ``warmup``
does all of it at once, for a Docker image build or a cluster worker's setup: the ORCA core,
the env's step pipeline (every scenario, kinematics model, sensor and reward, in one
specialisation) with its obstacle, guidance and social-force kernels, and the evaluation's
crowd metrics. It needs no display, prints one progress line per kernel on stderr (rewritten
in place on a terminal), ends with a line saying where the cache is and how long it took, and
exits 0. ``--check`` compiles nothing: it lists the kernels that are not cached and exits 1 if
there are any. Point ``NUMBA_CACHE_DIR`` at a persistent folder where the package folder is
read-only or thrown away.

Importing this module is light (argparse only); numba and the env load when it runs.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

__all__ = ["add_arguments", "run", "warmup", "FAMILY_MODULES"]

#: The modules that register the kernel families, by family (imported by :func:`warmup`).
FAMILY_MODULES = {"core": "orca_env.core.simulator", "env": "orca_env.episode",
                  "metrics": "orca_env.evaluation.social"}

DESCRIPTION = """\
Compile every numba kernel of orca-env into numba's cache, ahead of use: the ORCA core, the
env's step pipeline (one specialisation for every scenario, kinematics model, sensor and
reward) with its obstacle, guidance and social-force kernels, and the evaluation's crowd
metrics. Later processes load them from the cache and compile nothing. No display needed;
one progress line per kernel on stderr, a final line with the cache's place and the time on
stdout, exit status 0. The cache is NUMBA_CACHE_DIR if set, else __pycache__ beside the
package's modules: set it to a persistent folder in containers and on cluster workers (the
same value when the kernels are used)."""

EXAMPLES = """examples:
  orca-env warmup                        # compile everything into numba's cache
  NUMBA_CACHE_DIR=/opt/numba orca-env warmup   # e.g. in a Dockerfile: RUN orca-env warmup
  orca-env warmup --check                # exit 1 if some kernel would compile on first use
  orca-env warmup --family env           # only the env's kernels (and the core's they use)
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``orca-env warmup``."""
    p.description = DESCRIPTION
    p.epilog = EXAMPLES
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.add_argument("--family", action="append", choices=tuple(FAMILY_MODULES),
                   help="a kernel family to compile (repeatable; default: all)")
    p.add_argument("--check", action="store_true",
                   help="compile nothing: list the kernels that are not cached, exit 1 if any")
    p.add_argument("--quiet", action="store_true", help="only the final line")


def run(args: argparse.Namespace) -> int:
    """Run ``orca-env warmup`` (see the module docstring); returns the exit code."""
    return warmup(args.family or tuple(FAMILY_MODULES), check=args.check, quiet=args.quiet)


def _kernel_name(dispatcher) -> str:
    f = dispatcher.py_func
    return f"{f.__module__.removeprefix('orca_env.')}.{f.__qualname__}"


def warmup(names, *, check: bool = False, quiet: bool = False, stream=None) -> int:
    """Compile (or load) every kernel of the families ``names``; see the module docstring.

    Progress goes to ``stream`` (default stderr), the final line (or ``check``'s list) to
    stdout.

    Returns:
        The exit code: 0, or with ``check`` 1 when some kernel is not cached.
    """
    import importlib  # noqa: PLC0415

    out = sys.stderr if stream is None else stream
    names = list(dict.fromkeys(names))
    for name in names:
        importlib.import_module(FAMILY_MODULES[name])
    from .core import families  # noqa: PLC0415

    pairs, seen = [], set()
    for name in names:  # each kernel once (the env's family has the core's queries too)
        for d, sig in families.family(name).resolved():
            if (id(d), sig) not in seen:
                seen.add((id(d), sig))
                pairs.append((name, d, sig))
    where = families.cache_location()
    todo = {(id(d), sig) for _, d, sig in pairs if families.cached(d, sig) is False}
    if check:
        for name, d, sig in pairs:
            if (id(d), sig) in todo:
                print(f"not cached: {name}: {_kernel_name(d)}")
        print(f"warmup --check: {len(todo)} of {len(pairs)} kernels not cached (cache: {where})",
              flush=True)
        return 1 if todo else 0
    tty = out.isatty() and not quiet
    t0 = time.perf_counter()
    for k, (name, d, sig) in enumerate(pairs, 1):
        # Cached or not now: compiling one kernel compiles the kernels it calls.
        state = "compiling" if families.cached(d, sig) is False else "loading"
        msg = (f"[warmup] {k}/{len(pairs)} kernels  {name}: {_kernel_name(d)} ({state})  "
               f"{time.perf_counter() - t0:.1f}s elapsed")
        if tty:
            out.write(f"\r{msg}\033[K")
            out.flush()
        elif not quiet:
            print(msg, file=out, flush=True)
        d.compile(sig)
    if tty:
        out.write("\n")
    hint = "" if os.environ.get("NUMBA_CACHE_DIR") else " (set NUMBA_CACHE_DIR to move it)"
    print(f"warmup: {len(pairs)} kernels ({', '.join(names)}) ready in "
          f"{time.perf_counter() - t0:.1f} s, {len(todo)} of them compiled; cache: {where}{hint}",
          flush=True)
    return 0
