"""The Ray RLlib training backend (``backend: rllib``), in one folder.

* :mod:`~orca_env.training.rllib.adapter`: the env adapter, an RLlib ``MultiAgentEnv``.
* :mod:`~orca_env.training.rllib.algorithm`: the ``PPOConfig`` and the shared module's spec of
  a training config, which the trainer trains and the loader rebuilds.
* :mod:`~orca_env.training.rllib.trainer`: training and its whole pipeline,
  :func:`~orca_env.training.rllib.trainer.run_experiment`.
* :mod:`~orca_env.training.rllib.loader`: a trained module as a policy, unpickling nothing
  (``orca_env.policies.rllib`` re-exports it).

Importing this package imports none of them: the adapter imports ray, and the loader is needed
below the evaluation suite, which the trainer uses.
"""
