"""orca-env: PettingZoo multi-agent navigation on a numba ORCA (RVO2 2.0) crowd simulator.

* :class:`OrcaEnv`: the PettingZoo ``ParallelEnv`` (module :mod:`orca_env.environment`).
* :func:`parallel_env`, :func:`env`, :func:`raw_env`: PettingZoo's factories (parallel, AEC,
  AEC without the order-enforcing wrapper).
* :class:`SingleAgentEnv`: a ``gymnasium.Env`` for configs with one learned agent, registered
  as ``orca_env/CrowdNavCircle-v0`` etc. (module :mod:`orca_env.single`).
* :mod:`orca_env.core`: the ORCA simulator (numpy + numba only).

``import orca_env`` is light: the env (gymnasium, pettingzoo) and the core (numba) load on the
first use of one of the names above (PEP 562 ``__getattr__``). When gymnasium is already
imported, ``import orca_env`` registers the Gymnasium ids (entry-point strings: no env, no
numba); otherwise ``import orca_env.single`` does (see :mod:`orca_env.single`).
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

__all__ = ["OrcaEnv", "parallel_env", "env", "raw_env", "SingleAgentEnv", "__version__"]
__version__ = "0.1.0"

_FROM_ENVIRONMENT = ("OrcaEnv", "parallel_env", "env", "raw_env")

# Gymnasium ids: registering costs nothing once gymnasium is loaded, and would import gymnasium
# and numpy otherwise (the command line starts without them).
if sys.modules.get("gymnasium") is not None:
    importlib.import_module(".single", __name__)


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
