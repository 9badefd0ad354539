"""The crowd networks (:mod:`orca_env.training.networks`) as an RLlib PPO module (new API stack).

Selected as for SB3, by ``policy_kwargs.extractor`` (``deepsets`` or ``sarl``) and
``extractor_kwargs`` in a config of backend rllib
(:func:`orca_env.training.rllib.algorithm.algorithm_config`). :class:`CrowdPPOModule` is RLlib's
default PPO torch module with its encoder replaced: a
:class:`~orca_env.training.networks.CrowdEncoder` (K and M from the env config, handed over in
the model config's ``crowd`` entry) whose features feed RLlib's own policy and value heads
(``head_fcnet_hiddens``, ``head_fcnet_activation``). With ``vf_share_layers: true`` the actor and
the critic share one encoder; otherwise (RLlib's default) each has its own, as RLlib's MLP
encoders do. ``fcnet_hiddens`` is not used by this module.
"""

from __future__ import annotations

from typing import Any

from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
from ray.rllib.core.columns import Columns
from ray.rllib.core.models.base import ACTOR, CRITIC, ENCODER_OUT
from torch import nn

from ..networks import CrowdEncoder

__all__ = ["CrowdPPOModule", "CROWD_KEY"]

#: The model config entry holding the :class:`CrowdEncoder` arguments but ``obs_size``.
CROWD_KEY = "crowd"


class _Encoder(nn.Module):
    """One crowd encoder as RLlib calls it: ``{ENCODER_OUT: features}`` of a batch."""

    def __init__(self, obs_size: int, kwargs: dict) -> None:
        super().__init__()
        self.net = CrowdEncoder(obs_size, **kwargs)

    def forward(self, batch: dict) -> dict:
        return {ENCODER_OUT: self.net(batch[Columns.OBS])}


class _ActorCriticEncoder(nn.Module):
    """RLlib's actor-critic encoder contract: ``{ENCODER_OUT: {ACTOR: ..., CRITIC: ...}}``."""

    def __init__(self, obs_size: int, kwargs: dict, shared: bool, inference_only: bool) -> None:
        super().__init__()
        self.shared = shared
        self.actor_encoder = _Encoder(obs_size, kwargs)
        self.out_dim = self.actor_encoder.net.out_dim
        if not shared and not inference_only:
            self.critic_encoder = _Encoder(obs_size, kwargs)

    def forward(self, batch: dict) -> dict:
        actor = self.actor_encoder(batch)[ENCODER_OUT]
        if self.shared:
            critic = actor
        elif hasattr(self, "critic_encoder"):
            critic = self.critic_encoder(batch)[ENCODER_OUT]
        else:  # inference only: no critic
            critic = None
        return {ENCODER_OUT: {ACTOR: actor, CRITIC: critic}}


class CrowdPPOModule(DefaultPPOTorchRLModule):
    """RLlib's PPO module with a DeepSets or SARL encoder (module docstring)."""

    def setup(self) -> None:
        """Build the crowd encoder, then RLlib's policy and value heads on its features."""
        mc: dict[str, Any] = self.model_config
        kwargs = dict(mc[CROWD_KEY])
        shared = bool(mc.get("vf_share_layers"))
        self.encoder = _ActorCriticEncoder(int(self.observation_space.shape[0]), kwargs,
                                           shared, bool(self.inference_only))
        # The heads read the encoder's features instead of the default MLP encoder's.
        self.catalog.latent_dims = (self.encoder.out_dim,)
        self.catalog.vf_head_config.input_dims = (self.encoder.out_dim,)
        self.pi = self.catalog.build_pi_head(framework=self.framework)
        self.vf = self.catalog.build_vf_head(framework=self.framework)

    def get_non_inference_attributes(self) -> list[str]:
        """The value head and (unless shared) the critic's encoder: training only."""
        return ["vf"] + ([] if self.model_config.get("vf_share_layers")
                         else ["encoder.critic_encoder"])
