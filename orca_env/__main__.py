"""``python -m orca_env``: the ``orca-env`` command line (see :mod:`orca_env.cli`)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main(prog="python -m orca_env"))
