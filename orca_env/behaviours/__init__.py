"""Behaviours (populations): one module each, one registry (:mod:`orca_env.behaviours.base`).

Adding one: a module that calls :func:`register_behaviour` with a :class:`Behaviour` (a
``steer`` function for its preferred velocities), imported here or by the user before the env
is built; ``groups[i].population`` then accepts its name in the single and the vector env.
"""

from __future__ import annotations

from . import learned, orca, non_reactive, linear  # noqa: F401, I001  (registration order = codes)
from .base import REGISTRY, Behaviour, behaviour, behaviour_names, register_behaviour

__all__ = ["Behaviour", "register_behaviour", "behaviour", "behaviour_names", "REGISTRY"]
