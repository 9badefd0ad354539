"""The stable-baselines3 adapter under its old name: :mod:`orca_env.training.sb3.adapter`.

Kept so that ``from orca_env.wrappers.sb3 import make_vec_env`` goes on working; the adapter
lives beside the SB3 trainer and loader in :mod:`orca_env.training.sb3`.
"""

from orca_env.training.sb3.adapter import (
    BACKENDS,
    BOOTSTRAP_MODES,
    MaskedReplayBuffer,
    MaskedRolloutBuffer,
    MaskedVecNormalize,
    SB3VecEnv,
    attach_masks,
    check_bootstrap,
    make_vec_env,
)

__all__ = ["SB3VecEnv", "make_vec_env", "MaskedRolloutBuffer", "MaskedReplayBuffer",
           "MaskedVecNormalize", "attach_masks", "BACKENDS", "BOOTSTRAP_MODES",
           "check_bootstrap"]
