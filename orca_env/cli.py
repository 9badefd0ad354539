"""The ``orca-env`` console script: ``orca-env eval ...`` and ``orca-env replay ...``.

See :mod:`orca_env.evaluate` for the subcommands and their options.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``orca-env`` console script."""
    from .evaluate import main as _main  # noqa: PLC0415

    return _main(argv, prog="orca-env")


if __name__ == "__main__":
    sys.exit(main())
