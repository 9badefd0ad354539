"""A uniform random policy (seeded)."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["RandomPolicy"]


class RandomPolicy:
    """Actions drawn uniformly from each agent's action box.

    The generator is re-seeded at every new episode from ``(seed, env.np_random_seed)``, so an
    episode depends only on its env seed.

    Args:
        seed: Extra seed mixed into the per-episode generator.
    """

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.seed = int(seed)
        self._episode = None
        self._rng = np.random.default_rng(self.seed)

    def __call__(self, observations: dict, env: Any) -> dict:
        """Actions of the live agents (``env.agents``)."""
        if env.sim is not self._episode:
            self._episode = env.sim
            self._rng = np.random.default_rng([self.seed, int(env.np_random_seed or 0)])
        out = {}
        for k in env.agents:  # only live agents act
            sp = env.action_space(k)
            out[k] = self._rng.uniform(sp.low, sp.high).astype(np.float32)
        return out
