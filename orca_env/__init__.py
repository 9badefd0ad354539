"""orca-env: PettingZoo multi-agent navigation on a numba ORCA (RVO2 2.0) crowd simulator.

``import orca_env`` is light: the env (gymnasium, pettingzoo) and the core (numba) load on first
use of ``orca_env.parallel_env``, ``orca_env.env`` or ``orca_env.OrcaEnv``.
``orca_env.sim`` is an alias of ``orca_env.core``.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["parallel_env", "env", "OrcaEnv", "core", "sim"]
__version__ = "0.1.0"

_LAZY = {"parallel_env": "env", "env": "env", "OrcaEnv": "env"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        mod = importlib.import_module(f".{_LAZY[name]}", __name__)
        value = getattr(mod, name)
        # Importing the submodule orca_env.env binds the package attribute ``env`` to the
        # module; rebind it to the function (the module is callable too, see env.py).
        globals()[name] = value
        return value
    if name in ("core", "sim"):
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
