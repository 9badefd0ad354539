"""Ray's and RLlib's harmless notices, kept off stderr in the project's RLlib runs.

A normal RLlib run of orca-env (train.py, ``orca-env eval`` of an RLlib run) printed seven lines
of stderr that ask nothing of the user (issue 25). :func:`quiet_ray` drops exactly these
records, matched by the start of their message, from the handlers of the ``ray`` and
``ray.rllib`` loggers; every other warning and every error still shows:

* ``Token authentication is enabled ...``: Ray's notice at ``ray.init`` (authentication stays on);
* ``You are running PPO on the new API stack! ...``: the stack the project chose on purpose;
* ``DeprecationWarning: `RLModule(config=...)``` : raised inside RLlib's own PPO module
  construction (its catalog), not by a call the project makes;
* ``Install gputil for GPU system monitoring.``: the runs are CPU-only.

``ray.init`` is called with ``logging_level=WARNING`` (no ``Started a local Ray instance.``)
and ``log_to_driver=False`` (the env runners' output is not copied to the driver). Left as is:
the ``core_worker.cc`` line about actor constructor arguments in the object store and
``max_restarts > 0`` (ray-project/ray#53727), logged at error level by Ray's C++ core: only
``RAY_BACKEND_LOG_LEVEL=fatal`` would hide it, and that would hide the core's real errors too.
"""

from __future__ import annotations

import logging

__all__ = ["HARMLESS", "quiet_ray", "RAY_INIT_KWARGS"]

#: Starts of the messages :func:`quiet_ray` drops.
HARMLESS = (
    "Token authentication is enabled for this Ray cluster",
    "You are running PPO on the new API stack!",
    "DeprecationWarning: `RLModule(config=[RLModuleConfig object])` has been deprecated",
    "Install gputil for GPU system monitoring",
)

#: What the project passes to ``ray.init`` when it starts a local Ray itself.
RAY_INIT_KWARGS = {"include_dashboard": False, "log_to_driver": False,
                   "logging_level": logging.WARNING}


class _DropHarmless(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001  (a broken record is not ours to judge)
            return True
        return not message.startswith(HARMLESS)


_FILTER = _DropHarmless()


def quiet_ray() -> None:
    """Drop the :data:`HARMLESS` records from the ``ray`` and ``ray.rllib`` loggers' output.

    Idempotent; call it after importing ray (Ray sets up its handlers on import). Records
    reach the filter through the loggers' own handlers (Ray's loggers do not propagate) and,
    for the root logger's handlers, through the loggers themselves.
    """
    for name in ("ray", "ray.rllib"):
        logger = logging.getLogger(name)
        for target in (logger, *logger.handlers):
            if _FILTER not in target.filters:
                target.addFilter(_FILTER)
