"""orca-env: PettingZoo multi-agent navigation on a numba ORCA (RVO2 2.0) crowd simulator.

* :class:`OrcaEnv`: the PettingZoo ``ParallelEnv`` (module :mod:`orca_env.environment`).
* :func:`parallel_env`, :func:`env`, :func:`raw_env`: PettingZoo's factories (parallel, AEC,
  AEC without the order-enforcing wrapper).
* :class:`SingleAgentEnv`: a ``gymnasium.Env`` for configs with one learned agent, registered
  as ``orca_env/CrowdNavCircle-v0`` etc. (module :mod:`orca_env.single`).
* :mod:`orca_env.core`: the ORCA simulator (numpy + numba only).

``import orca_env`` is light: the env (gymnasium, pettingzoo) and the core (numba) load on the
first use of one of the names above (PEP 562 ``__getattr__``). The Gymnasium ids are registered
in either import order (entry-point strings: no env, no numba): at once when gymnasium is
already imported, otherwise as soon as gymnasium finishes importing (see
:mod:`orca_env.single`).
"""

from __future__ import annotations

import importlib
import importlib.abc
import sys
from typing import Any

__all__ = ["OrcaEnv", "parallel_env", "env", "raw_env", "SingleAgentEnv", "__version__"]
__version__ = "0.1.0"

_FROM_ENVIRONMENT = ("OrcaEnv", "parallel_env", "env", "raw_env")



class _RegisterWithGymnasium(importlib.abc.MetaPathFinder):
    """Registers the Gymnasium ids right after ``gymnasium`` is imported, whenever that is.

    Gymnasium 1.x has no plugin entry points (they were removed in 1.0), and importing it here
    would make ``import orca_env`` heavy (gymnasium and numpy; the command line starts without
    them). So this finder, first on ``sys.meta_path`` until gymnasium is imported, lets the
    usual finders find ``gymnasium`` and wraps its loader's ``exec_module``: once the package has
    run, :mod:`orca_env.single` registers (entry-point strings only) and the finder removes
    itself. It finds nothing itself; a mere ``importlib.util.find_spec("gymnasium")`` (an
    availability check) leaves it in place for the real import.
    """

    registers_orca_env = True

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "gymnasium":
            return None
        for finder in [f for f in sys.meta_path if f is not self]:
            find = getattr(finder, "find_spec", None)
            spec = find(fullname, path, target) if find is not None else None
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        exec_module = getattr(loader, "exec_module", None)
        if exec_module is None or not hasattr(loader, "__dict__"):
            return None  # a loader we cannot wrap: import orca_env.single registers

        def exec_then_register(module):
            try:
                exec_module(module)
            finally:
                # An instance attribute: the loader (and its type) stay gymnasium's own.
                vars(loader).pop("exec_module", None)
            if self in sys.meta_path:
                sys.meta_path.remove(self)
            importlib.import_module(".single", __name__)

        loader.exec_module = exec_then_register
        return spec


if sys.modules.get("gymnasium") is not None:
    importlib.import_module(".single", __name__)
elif not any(getattr(f, "registers_orca_env", False) for f in sys.meta_path):  # reload: one
    sys.meta_path.insert(0, _RegisterWithGymnasium())


def __getattr__(name: str) -> Any:
    if name in _FROM_ENVIRONMENT:
        value = getattr(importlib.import_module(".environment", __name__), name)
        globals()[name] = value
        return value
    if name == "SingleAgentEnv":
        value = importlib.import_module(".single", __name__).SingleAgentEnv
        globals()[name] = value
        return value
    if name == "core":
        return importlib.import_module(".core", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_FROM_ENVIRONMENT) | {"SingleAgentEnv", "core"})
