"""Crowd-navigation networks over the universal observation: DeepSets pooling and SARL attention.

The universal layout (:mod:`orca_env.observations`) holds an agent's own features, ``K``
neighbour slots of 6 (the 6th is the present flag) and ``M`` segment slots of 5 (the 5th is the
present flag), then the sensor block, the scenario's features, the stall time and the time. An
MLP reads the slots by position; the networks here read them as sets. :class:`CrowdEncoder`
splits the observation by the layout of the env config (K, M from
:func:`orca_env.config.universal_observation`; never guessed from the size):

* own ``s``: indices 0..7 and everything after the segment block (heading, LiDAR, the
  scenario's features, stall, time);
* neighbours ``h_1 .. h_K`` (6 each) with present flags ``m_i``;
* segments ``w_1 .. w_M`` (5 each) with present flags ``n_j``.

``deepsets`` (Zaheer et al. 2017): ``phi(s, h_i)`` per neighbour, pooled over the present ones
(mean, or sum); likewise ``psi(s, w_j)`` for segments; the features are
``[s, pool_i phi(s, h_i), pool_j psi(s, w_j)]``.

``sarl`` (Chen, Liu, Kreiss, Alahi, "Crowd-Robot Interaction", ICRA 2019): a pairwise embedding
``e_i = MLP_e(s, h_i)`` (ReLU on its last layer, as CrowdNav's), a crowd summary
``g = mean of e_i over the present neighbours``, scores ``a_i = MLP_a(e_i, g)`` (last layer
linear, width 1), attention ``alpha = softmax over the present neighbours only`` (padding gets
``-inf``; with no neighbour present every ``alpha_i`` is 0, no NaN), and the crowd feature
``c = sum_i alpha_i MLP_v(e_i)``; the features are ``[s, c, pool_j psi(s, w_j)]``. The policy
and value heads (SB3's ``net_arch``, RLlib's ``head_fcnet_hiddens``) follow.

Both are invariant to the order of the neighbours and of the segments, and padded slots do not
change their output, whatever values the padding holds. Only torch is imported here; the SB3
features extractor is :class:`orca_env.training.sb3.extractor.CrowdExtractor`, the RLlib
module :class:`orca_env.training.rllib.module.CrowdPPOModule`. The config keys
(``policy_kwargs.extractor``, ``extractor_kwargs``) are checked by
:func:`orca_env.training.config.check_extractor`.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from orca_env.observations import OWN, PER_AGENT, PER_SEGMENT

__all__ = ["CrowdEncoder", "mlp", "split_observation"]


def mlp(sizes: Sequence[int], last_relu: bool = True) -> nn.Sequential:
    """Linear layers ``sizes[0] -> sizes[1] -> ...`` with ReLU between (and after, if asked)."""
    layers: list[nn.Module] = []
    for k in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[k], sizes[k + 1]))
        if k < len(sizes) - 2 or last_relu:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def split_observation(obs: torch.Tensor, num_agents: int, num_obstacles: int
                      ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(own (B, D - 6K - 5M), neighbours (B, K, 6), segments (B, M, 5))`` of observations."""
    s = OWN + PER_AGENT * num_agents + PER_SEGMENT * num_obstacles
    n = obs.shape[0]
    own = torch.cat([obs[:, :OWN], obs[:, s:]], dim=1)
    nbr = obs[:, OWN:OWN + PER_AGENT * num_agents].reshape(n, num_agents, PER_AGENT)
    seg = obs[:, OWN + PER_AGENT * num_agents:s].reshape(n, num_obstacles, PER_SEGMENT)
    return own, nbr, seg


def _masked_pool(x: torch.Tensor, mask: torch.Tensor, mean: bool) -> torch.Tensor:
    """Sum (or mean) of ``x`` (B, N, F) over the slots where ``mask`` (B, N) holds; 0 if none."""
    x = torch.where(mask.unsqueeze(-1), x, torch.zeros((), dtype=x.dtype))
    total = x.sum(dim=1)
    if not mean:
        return total
    count = mask.sum(dim=1, keepdim=True).clamp(min=1).to(x.dtype)
    return total / count


class CrowdEncoder(nn.Module):
    """DeepSets or SARL features of universal observations (module docstring).

    Args:
        obs_size: D, the observation's length.
        num_agents: K, neighbour slots (>= 1).
        num_obstacles: M, segment slots (>= 0; 0: no segment branch).
        kind: ``"deepsets"`` or ``"sarl"``.
        embed: hidden sizes of ``phi`` (deepsets) or ``MLP_e`` (sarl), input ``[s, h_i]``.
        segment: hidden sizes of ``psi`` (both), input ``[s, w_j]``.
        attention: (sarl) hidden sizes of ``MLP_a`` (a last layer of width 1 follows).
        value: (sarl) sizes of ``MLP_v``.
        pooling: (deepsets) ``"mean"`` or ``"sum"`` over the present slots.
        global_state: (sarl) score ``[e_i, g]`` (True, CrowdNav's ``with_global_state``) or
            ``e_i`` alone.

    Attributes:
        out_dim: The length of the features.
    """

    def __init__(self, obs_size: int, num_agents: int, num_obstacles: int, kind: str = "sarl",
                 embed: Sequence[int] = (64, 64), segment: Sequence[int] = (32, 32),
                 attention: Sequence[int] = (64,), value: Sequence[int] = (64,),
                 pooling: str = "mean", global_state: bool = True) -> None:
        super().__init__()
        if kind not in ("deepsets", "sarl"):
            raise ValueError(f"kind must be deepsets or sarl, got {kind!r}")
        k, m = int(num_agents), int(num_obstacles)
        s = OWN + PER_AGENT * k + PER_SEGMENT * m
        if k < 1 or m < 0 or obs_size < s:
            raise ValueError(f"a {kind} network needs K >= 1 neighbour slots, M >= 0 segment "
                             f"slots and an observation of at least 8 + 6K + 5M = {s} features; "
                             f"got K={k}, M={m}, size {obs_size}")
        if not embed or (kind == "sarl" and not value) or (m and not segment):
            raise ValueError(f"a {kind} network needs at least one layer in each of its MLPs")
        self.kind, self.num_agents, self.num_obstacles = kind, k, m
        self.mean = pooling == "mean"
        self.global_state = bool(global_state)
        own = obs_size - PER_AGENT * k - PER_SEGMENT * m
        self.own_dim = own
        if kind == "deepsets":
            self.phi = mlp([own + PER_AGENT, *embed])
            crowd = embed[-1]
        else:
            self.embed = mlp([own + PER_AGENT, *embed], last_relu=True)
            width = embed[-1] * (2 if self.global_state else 1)
            self.attention = mlp([width, *attention, 1], last_relu=False)
            self.value = mlp([embed[-1], *value], last_relu=False)
            crowd = value[-1]
        self.psi = mlp([own + PER_SEGMENT, *segment]) if m else None
        self.out_dim = own + crowd + (segment[-1] if m else 0)

    def _pairs(self, own: torch.Tensor, slots: torch.Tensor) -> torch.Tensor:
        """``[s, x_i]`` for every slot: (B, N, own + slot width)."""
        n = slots.shape[1]
        return torch.cat([own.unsqueeze(1).expand(-1, n, -1), slots], dim=2)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        """Features (B, out_dim) of observations (B, D)."""
        own, nbr, seg = split_observation(obs, self.num_agents, self.num_obstacles)
        mask = nbr[..., PER_AGENT - 1] > 0.5
        pairs = self._pairs(own, nbr)
        if self.kind == "deepsets":
            crowd = _masked_pool(self.phi(pairs), mask, self.mean)
        else:
            e = self.embed(pairs)                                     # (B, K, E)
            if self.global_state:
                g = _masked_pool(e, mask, True)
                e_in = torch.cat([e, g.unsqueeze(1).expand_as(e)], dim=2)
            else:
                e_in = e
            scores = self.attention(e_in).squeeze(-1)                 # (B, K)
            scores = scores.masked_fill(~mask, float("-inf"))
            top = scores.max(dim=1, keepdim=True).values
            top = torch.where(torch.isfinite(top), top, torch.zeros_like(top))
            w = torch.where(mask, torch.exp(scores - top), torch.zeros_like(scores))
            alpha = w / w.sum(dim=1, keepdim=True).clamp(min=1e-30)   # 0 where none present
            self.last_attention = alpha.detach()
            crowd = _masked_pool(alpha.unsqueeze(-1) * self.value(e), mask, False)
        parts = [own, crowd]
        if self.psi is not None:
            smask = seg[..., PER_SEGMENT - 1] > 0.5
            parts.append(_masked_pool(self.psi(self._pairs(own, seg)), smask, self.mean))
        return torch.cat(parts, dim=1)
