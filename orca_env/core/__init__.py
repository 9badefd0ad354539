"""ORCA crowd simulator with RVO2 2.0 semantics, in numpy + numba.

Imports only numpy and numba. See :class:`Simulator` and ``docs/core-api.md``.
"""

from .simulator import Simulator

__all__ = ["Simulator"]
