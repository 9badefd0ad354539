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
import torch.nn.functional as F  # noqa: N812
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
    """Sum (or mean) of ``x`` (B, N, F) over the slots where ``mask`` (B, N) is 1; 0 if none.

    ``x`` must be finite (padded slots' inputs are zeroed first), so that ``0 * x`` is 0.
    """
    total = torch.einsum("bn,bnf->bf", mask, x)
    if not mean:
        return total
    return total / mask.sum(dim=1, keepdim=True).clamp(min=1.0)


def _pair_layer(layer: nn.Linear, own: torch.Tensor, slots: torch.Tensor) -> torch.Tensor:
    """``layer([own, slot_i])`` for every slot (B, N, out), the own part computed once per row.

    The same as applying ``layer`` to the concatenation (a linear map of a concatenation is the
    sum of the maps of its parts), without building it ``N`` times.
    """
    n_own = own.shape[1]
    w = layer.weight
    return F.linear(slots, w[:, n_own:]) + F.linear(own, w[:, :n_own], layer.bias).unsqueeze(1)


def _pair_mlp(seq: nn.Sequential, own: torch.Tensor, slots: torch.Tensor) -> torch.Tensor:
    """``seq([own, slot_i])`` for every slot, its first layer by :func:`_pair_layer`."""
    x = _pair_layer(seq[0], own, slots)
    for layer in seq[1:]:
        x = layer(x)
    return x


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
        value: (sarl) sizes of ``MLP_v``. With one layer (linear) it is applied after the
            weighted sum, which is the same function: ``sum_i alpha_i (W e_i + b) =
            W (sum_i alpha_i e_i) + b sum_i alpha_i``.
        pooling: (deepsets) ``"mean"`` or ``"sum"`` over the present slots.
        global_state: (sarl) score ``[e_i, g]`` (True, CrowdNav's ``with_global_state``) or
            ``e_i`` alone.

    Attributes:
        out_dim: The length of the features.
        own_dim: The length of the own block ``s``.
    """

    def __init__(self, obs_size: int, num_agents: int, num_obstacles: int, kind: str = "sarl",
                 embed: Sequence[int] = (64, 32), segment: Sequence[int] = (32, 32),
                 attention: Sequence[int] = (32,), value: Sequence[int] = (32,),
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

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        """Features (B, out_dim) of observations (B, D)."""
        own, nbr, seg = split_observation(obs, self.num_agents, self.num_obstacles)
        present = nbr[..., PER_AGENT - 1] > 0.5
        mask = present.to(obs.dtype)
        # Padded slots' values never reach the output (nor, as NaN or inf, a product with 0).
        nbr = torch.where(present.unsqueeze(-1), nbr, torch.zeros((), dtype=obs.dtype))
        if self.kind == "deepsets":
            crowd = _masked_pool(_pair_mlp(self.phi, own, nbr), mask, self.mean)
        else:
            e = _pair_mlp(self.embed, own, nbr)                      # (B, K, E)
            if self.global_state:  # score [e_i, g], the g part once per row
                g = _masked_pool(e, mask, True)
                first = self.attention[0]
                n_e = e.shape[2]
                x = F.linear(e, first.weight[:, :n_e]) + \
                    F.linear(g, first.weight[:, n_e:], first.bias).unsqueeze(1)
                for layer in self.attention[1:]:
                    x = layer(x)
                scores = x.squeeze(-1)                               # (B, K)
            else:
                scores = self.attention(e).squeeze(-1)
            scores = scores.masked_fill(~present, float("-inf"))
            top = scores.max(dim=1, keepdim=True).values
            top = torch.where(torch.isfinite(top), top, torch.zeros_like(top))
            w = torch.exp(scores - top) * mask                       # exp(-inf) = 0
            alpha = w / w.sum(dim=1, keepdim=True).clamp(min=1e-30)  # 0 where none present
            self.last_attention = alpha.detach()
            if len(self.value) == 1:  # linear: pool first (same function, K times cheaper)
                lin = self.value[0]
                crowd = F.linear(_masked_pool(e, alpha, False), lin.weight) + \
                    alpha.sum(dim=1, keepdim=True) * lin.bias
            else:
                crowd = _masked_pool(self.value(e), alpha, False)
        parts = [own, crowd]
        if self.psi is not None:
            spresent = seg[..., PER_SEGMENT - 1] > 0.5
            seg = torch.where(spresent.unsqueeze(-1), seg, torch.zeros((), dtype=obs.dtype))
            parts.append(_masked_pool(_pair_mlp(self.psi, own, seg),
                                      spresent.to(obs.dtype), self.mean))
        return torch.cat(parts, dim=1)
