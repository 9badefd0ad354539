"""The stable-baselines3 training backend (``backend: sb3``, the default), in one folder.

* :mod:`~orca_env.training.sb3.adapter`: the env adapter, a ``VecEnv`` with one entry per
  learned agent, and the masked buffers and normaliser that leave finished agents' steps out.
* :mod:`~orca_env.training.sb3.trainer`: training, resuming, checkpoints, shipping, and its
  whole pipeline, :func:`~orca_env.training.sb3.trainer.run_experiment`.
* :mod:`~orca_env.training.sb3.loader`: a trained model as a policy, unpickling nothing
  (``orca_env.policies.sb3`` re-exports it).

Importing this package imports none of them: the adapter imports stable-baselines3, and the
loader is needed below the evaluation suite, which the trainer uses.
"""
