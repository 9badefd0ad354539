"""Adapters from the PettingZoo env to training libraries, under their old names.

The adapters live with their training backends: :mod:`orca_env.training.sb3.adapter`
(``SB3VecEnv``, ``make_vec_env``: stable-baselines3) and :mod:`orca_env.training.rllib.adapter`
(``OrcaRLlibEnv``: Ray RLlib); :mod:`orca_env.wrappers.sb3` and :mod:`orca_env.wrappers.rllib`
re-export them. They are imported lazily so that ``import orca_env.wrappers`` imports neither
stable-baselines3, torch nor ray.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["SB3VecEnv", "make_vec_env", "OrcaRLlibEnv"]


def __getattr__(name: str) -> Any:
    if name in ("SB3VecEnv", "make_vec_env"):
        return getattr(importlib.import_module(".sb3", __name__), name)
    if name == "OrcaRLlibEnv":
        return getattr(importlib.import_module(".rllib", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
