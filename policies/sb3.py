"""Load a trained stable-baselines3 model as a policy acting on observation dicts.

The loader of the SB3 backend, :mod:`orca_env.training.sb3.loader` (beside its adapter and
trainer), under the name users call it by::

    from orca_env.policies import SHIPPED_MODEL
    from orca_env.policies.sb3 import load
    policy = load(SHIPPED_MODEL)

:mod:`orca_env.training.sb3.loader` documents what is read from a run folder (nothing is
unpickled) and what is checked against the env.
"""

from orca_env.training.sb3.loader import (
    SB3Policy,
    check_env,
    convert_legacy_normalizer,
    load,
    normalizes_observations,
)

__all__ = ["SB3Policy", "load", "check_env", "normalizes_observations",
           "convert_legacy_normalizer"]
