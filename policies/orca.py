"""The pure ORCA baseline (goal-directed preferred velocity, seeded symmetry-breaking noise).

Implemented in :mod:`orca_env.baselines` (the evaluation suite's built-in ``orca``, and
``orca_margin``: the same in an env built with the generalists' 0.10 m safety margin).
"""

from orca_env.baselines import OrcaMarginPolicy, OrcaPolicy

__all__ = ["OrcaMarginPolicy", "OrcaPolicy"]
