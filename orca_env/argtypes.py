"""Command-line argument types: argparse ``type=`` callables shared by every command line.

``orca-env`` (:mod:`orca_env.cli`) and the training command (``python train.py``,
:mod:`orca_env.training.cli`) take their numbers through these, so that one kind of argument
is checked, and refused, the same way everywhere. Each returns the parsed value or raises
``argparse.ArgumentTypeError`` (argparse prints it as a usage error, exit status 2).

Importing this module is light: the standard library only.
"""

from __future__ import annotations

import argparse
import math

__all__ = ["positive_int", "non_negative_int", "pixels", "frames_per_second", "count_or_all",
           "names"]


def positive_int(value: str) -> int:
    """An integer >= 1."""
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {value!r}")
    return n


def non_negative_int(value: str) -> int:
    """An integer >= 0."""
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {value!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {value!r}")
    return n


def pixels(value: str) -> int:
    """An image size in pixels, 240 .. 8192.

    The renderer's bounds (``orca_env.render.MIN_SIZE``, ``MAX_SIZE``), not imported: this
    module stays light.
    """
    try:
        n = int(value)
    except ValueError:
        n = 0
    if not 240 <= n <= 8192:
        raise argparse.ArgumentTypeError(f"expected an integer number of pixels in 240 .. 8192, "
                                         f"got {value!r}")
    return n


def frames_per_second(value: str) -> float:
    """A finite number of frames per second > 0."""
    try:
        x = float(value)
    except ValueError:
        x = math.nan
    if not (math.isfinite(x) and x > 0):
        raise argparse.ArgumentTypeError(f"expected a finite number of frames per second > 0, "
                                         f"got {value!r}")
    return x


def count_or_all(value: str) -> int:
    """A count >= 0, or ``all`` (returned as -1)."""
    if value == "all":
        return -1
    try:
        n = int(value)
    except ValueError:
        n = -1
    if n < 0:
        raise argparse.ArgumentTypeError(f"expected a count >= 0 or 'all', got {value!r}")
    return n


def names(value: str) -> list[str]:
    """Comma-separated names, none empty."""
    out = [v.strip() for v in value.split(",")]
    if not all(out):
        raise argparse.ArgumentTypeError(f"expected comma-separated names, got {value!r}")
    return out
