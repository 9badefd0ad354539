"""Alias of :mod:`orca_env.core`: ``import orca_env.sim`` gives the same module object."""

import sys

from . import core as _core

sys.modules[__name__] = _core
