"""Load a policy trained with the RLlib backend (``backend: rllib``) from its run folder.

The loader of the RLlib backend, :mod:`orca_env.training.rllib.loader` (beside its adapter and
trainer), under the name users call it by::

    from orca_env.policies.rllib import load
    policy = load("runs/circle_rllib_s0_20260101-120000")

:mod:`orca_env.training.rllib.loader` documents what is read from a run folder (nothing is
unpickled); ray and torch load only when a policy is built.
"""

from orca_env.training.rllib.loader import RLlibPolicy, is_rllib_run, load

__all__ = ["RLlibPolicy", "is_rllib_run", "load"]
