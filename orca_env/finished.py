"""What the envs do with agents that finished before their world ended.

Two options of :class:`orca_env.OrcaEnv` (the vector env takes the first):

* ``finished_agents``: ``"leave"`` (default; PettingZoo's convention: an agent is in the dicts
  of the step on which it terminates or is truncated, then gone from ``agents`` and from every
  later dict) or ``"absorb"`` (the absorbing state, "black death": a finished agent stays in
  ``agents`` with an all-zero observation, reward 0 and ``terminated = truncated = False``
  until its world ends; then every agent reports its end on the same step, see
  :meth:`RowRecord.absorb`). Libraries that need every agent on every step (SuperSuit's vector
  envs, skrl, TorchRL, BenchMARL) use ``"absorb"``.
* ``finished_actions`` (PettingZoo env only): ``"error"`` (default: the action dict must hold
  exactly ``agents``) or ``"ignore"`` (actions for agents that finished are ignored, given or
  not; an action for a name that is not an agent is still an error).

Neither changes the episode: the worlds step exactly as with the defaults.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["FINISHED_AGENTS", "FINISHED_ACTIONS", "check_choice", "RowRecord"]

#: Values of ``finished_agents``.
FINISHED_AGENTS = ("leave", "absorb")
#: Values of ``finished_actions``.
FINISHED_ACTIONS = ("error", "ignore")


def check_choice(name: str, value: Any, choices: tuple) -> str:
    """``value`` if it is one of ``choices``, else a ``ValueError`` naming ``name``."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}")
    return value


class RowRecord:
    """What the envs remember of each agent row between steps, for ``finished_agents="absorb"``.

    Per agent row: whether its agent terminated, and its last status. :meth:`absorb` turns a
    step's results into the absorbing state's view:

    * an agent that finishes before its world ends reports that step's observation and reward,
      with ``terminated = truncated = False`` (its status says why it finished); on later steps
      it did not act (``res.acted``): observation zero, reward zero, its last status;
    * on the step its world ends (no agent left running) every agent of the world reports its
      end: ``terminated`` if it terminated (on this step or before), and ``truncated`` for every
      agent when the world ended by truncation (time limit or deadlock), also for agents that
      terminated, as Gymnasium's ``TimeLimit`` sets both. So on a world's last step either
      every agent is truncated or every agent is terminated, which the libraries that end an
      episode on ``all(terminated)`` or ``all(truncated)`` need (RLlib's
      ``ParallelPettingZooEnv``).

    Args:
        num_worlds: B.
        num_learned: L, agent rows per world.
    """

    def __init__(self, num_worlds: int, num_learned: int) -> None:
        self._shape = (int(num_worlds), int(num_learned))
        n = self._shape[0] * self._shape[1]
        self.terminated = np.zeros(n, dtype=bool)
        self.status = np.zeros(n, dtype=np.int64)

    def reset(self, rows: np.ndarray | slice) -> None:
        """Forget the agents of ``rows`` (their worlds start an episode)."""
        self.terminated[rows] = False
        self.status[rows] = 0

    def last_status(self, res: Any) -> np.ndarray:
        """(B*L,) int64 each row's status: this step's where it acted, else its last one."""
        acted = res.acted
        self.status[acted] = res.status[acted]
        return self.status.copy()

    def absorb(self, res: Any) -> None:
        """Turn a step's :class:`~orca_env.stages.StepResult` into the absorbing view, in place.

        Observations and rewards of rows that did not act are already zero.
        """
        self.terminated |= res.term
        res.status = self.last_status(res)
        end = np.repeat(res.world_done, self._shape[1])
        by_truncation = np.repeat(res.trunc.reshape(self._shape).any(axis=1), self._shape[1])
        res.term = end & self.terminated
        res.trunc = end & by_truncation
