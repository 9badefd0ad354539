"""orca-env: PettingZoo multi-agent navigation on a numba ORCA (RVO2 2.0) crowd simulator.

* :class:`OrcaEnv`: the PettingZoo ``ParallelEnv`` (module :mod:`orca_env.environment`).
* :func:`parallel_env`, :func:`env`, :func:`raw_env`: PettingZoo's factories (parallel, AEC,
  AEC without the order-enforcing wrapper).
* :mod:`orca_env.core`: the ORCA simulator (numpy + numba only).

``import orca_env`` is light: the env (gymnasium, pettingzoo) and the core (numba) load on the
first use of one of the names above (PEP 562 ``__getattr__``).
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["OrcaEnv", "parallel_env", "env", "raw_env", "__version__"]
__version__ = "0.1.0"

_FROM_ENVIRONMENT = ("OrcaEnv", "parallel_env", "env", "raw_env")


def __getattr__(name: str) -> Any:
    if name in _FROM_ENVIRONMENT:
        value = getattr(importlib.import_module(".environment", __name__), name)
        globals()[name] = value
        return value
    if name == "core":
        return importlib.import_module(".core", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_FROM_ENVIRONMENT) | {"core"})
