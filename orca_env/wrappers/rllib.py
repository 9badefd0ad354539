"""The RLlib adapter under its old name: :mod:`orca_env.training.rllib.adapter`.

Kept so that ``from orca_env.wrappers.rllib import OrcaRLlibEnv`` goes on working; the adapter
lives beside the RLlib trainer and loader in :mod:`orca_env.training.rllib`. Importing it
imports ray.
"""

from orca_env.training.rllib.adapter import (
    ENV_CONFIG_KEYS,
    SHARED_MODULE_ID,
    OrcaRLlibEnv,
    copy_index,
    limit_torch_threads,
    shared_policy_mapping,
)

__all__ = ["OrcaRLlibEnv", "SHARED_MODULE_ID", "ENV_CONFIG_KEYS", "shared_policy_mapping",
           "copy_index", "limit_torch_threads"]
