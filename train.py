"""Train a shared navigation policy with stable-baselines3 and compare it with pure ORCA.

``python train.py`` trains the default config (``configs/train/circle_ppo.yaml``: a dense
symmetric circle crossing where pure ORCA jams) in about a minute on two idle CPU cores (three to
four minutes on a busy machine: the figures are in docs/training.md), then
evaluates on held-out seeds, side by side: the trained policy with the ORCA safety layer, pure
ORCA, and the trained policy without the safety layer. Everything lands in a run folder under
``runs/`` (layout: :mod:`orca_env.training.run_folder`; config keys:
:mod:`orca_env.training.config`). ``python train.py --help`` lists the options.

Ctrl-C (or SIGTERM) during training saves a resumable checkpoint with its normaliser, prints it
and the ``--resume`` command, and exits with 130 (143). Run folders hold no pickles: the
normaliser is ``vecnormalize.npz``; a legacy ``vecnormalize.pkl`` is refused (convert a trusted
one with ``orca_env.policies.sb3.convert_legacy_normalizer``).

This script is a thin command over :func:`orca_env.training.cli.main` (``orca-env train`` is the
same command).

Examples::

    python train.py                                    # default config, about a minute
    python train.py --config configs/train/circle_ppo.yaml --n-timesteps 20000 --seed 3
    python train.py --resume runs/circle_ppo_s0_20250101-120000   # continue to n_timesteps
"""

import sys

from orca_env.training.cli import main

if __name__ == "__main__":
    sys.exit(main())
