"""A uniform random policy, seeded per episode.

Implemented in :mod:`orca_env.baselines` (the evaluation suite's built-in ``random``).
"""

from orca_env.baselines import RandomPolicy

__all__ = ["RandomPolicy"]
