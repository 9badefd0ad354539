"""The pure ORCA baseline (goal-directed preferred velocity, seeded symmetry-breaking noise).

Implemented in :mod:`orca_env.baselines` (the evaluation suite's built-in ``orca``).
"""

from orca_env.baselines import OrcaPolicy

__all__ = ["OrcaPolicy"]
