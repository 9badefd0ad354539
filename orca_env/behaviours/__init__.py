"""Behaviours (populations): one module each, one registry (:mod:`orca_env.behaviours.base`).

Adding one: a module that calls :func:`register_behaviour` with a :class:`Behaviour` (a
``steer`` function for its preferred velocities), imported here or by the user before the env
is built; ``groups[i].population`` then accepts its name in the single and the vector env.
"""
# isort: skip_file
# The import order below is the registration order, so the codes (orca_env.codes.Population).

from __future__ import annotations

from . import learned  # noqa: F401  (code 0)
from . import orca  # noqa: F401  (code 1)
from . import non_reactive  # noqa: F401  (code 2)
from . import linear  # noqa: F401  (code 3)
from . import social_force  # noqa: F401  (code 4)
from . import replay  # noqa: F401  (code 5)
from .base import REGISTRY, Behaviour, behaviour, behaviour_names, register_behaviour

__all__ = ["Behaviour", "register_behaviour", "behaviour", "behaviour_names", "REGISTRY"]
