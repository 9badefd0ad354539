"""The crowd networks (:mod:`orca_env.training.networks`) as a stable-baselines3 features extractor.

Selected in a training config by ``policy_kwargs.extractor`` (``deepsets`` or ``sarl``) with
``policy_kwargs.extractor_kwargs``; :func:`orca_env.training.config.policy_kwargs_from_config`
turns them into SB3's ``features_extractor_class`` and ``features_extractor_kwargs``, with K and M
from the env config, for training and for the loader alike (a class is never named in a file).
"""

from __future__ import annotations

from typing import Any

import torch
from gymnasium import spaces
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

from ..networks import CrowdEncoder

__all__ = ["CrowdExtractor"]


class CrowdExtractor(BaseFeaturesExtractor):
    """:class:`~orca_env.training.networks.CrowdEncoder` features of a universal observation.

    Args:
        observation_space: The env's (flat ``Box``) observation space.
        **kwargs: :class:`~orca_env.training.networks.CrowdEncoder`'s arguments but
            ``obs_size`` (``num_agents``, ``num_obstacles``, ``kind``, the layer sizes).
    """

    def __init__(self, observation_space: spaces.Box, **kwargs: Any) -> None:
        encoder = CrowdEncoder(int(observation_space.shape[0]), **kwargs)
        super().__init__(observation_space, encoder.out_dim)
        self.encoder = encoder

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        """Features (B, features_dim) of observations (B, D)."""
        return self.encoder(observations)
