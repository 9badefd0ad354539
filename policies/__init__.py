"""Policies acting on observation dicts: ``policy(observations, env) -> actions``.

Every policy here is a callable taking the env's observation dict (``{agent: (obs_dim,)
float32}``) and the env itself (so scripted policies may read its public state) and returning an
action dict for the same agents, as ``env.step`` expects.

* :mod:`policies.orca`: pure ORCA (goal-directed preferred velocity, seeded symmetry-breaking
  noise); with the safety layer this is exactly an ORCA crowd agent.
* :mod:`policies.random`: uniform random actions (seeded).
* :mod:`policies.sb3`: a trained stable-baselines3 model from a run folder or ``.zip``.

``make_policy(name_or_path)`` builds one from a name (``orca``, ``random``) or a path;
``load_policy(model_path, env)`` is the loader interface of :mod:`orca_env.evaluation`
(``python -m orca_env.evaluate --policy run/model.zip`` uses it).
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["make_policy", "load_policy", "SHIPPED_MODEL"]

#: The small trained policy shipped with the repository (the default config's result).
SHIPPED_MODEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "trained",
                             "circle_ppo")


def make_policy(spec: str, **kwargs: Any):
    """A policy callable from ``"orca"``, ``"random"``, ``"shipped"`` or a model path.

    Args:
        spec: Policy name or path to a run folder / model ``.zip``.
        **kwargs: Passed to the policy's constructor (e.g. ``seed``, ``noise``,
            ``deterministic``).
    """
    if spec == "orca":
        from .orca import OrcaPolicy  # noqa: PLC0415

        return OrcaPolicy(**kwargs)
    if spec == "random":
        from .random import RandomPolicy  # noqa: PLC0415

        return RandomPolicy(**kwargs)
    from .sb3 import load  # noqa: PLC0415

    return load(SHIPPED_MODEL if spec == "shipped" else spec, **kwargs)


def load_policy(model_path: str, env: Any = None):
    """Loader for :mod:`orca_env.evaluation`: a trained SB3 model as a policy callable.

    Args:
        model_path: Run folder, ``model.zip`` or checkpoint.
        env: The evaluation env; when given, the model is checked against it (observation shape:
            ``ValueError``; different ``observation`` or ``groups`` config: ``UserWarning``).
    """
    from .sb3 import load  # noqa: PLC0415

    return load(model_path, env=env)
