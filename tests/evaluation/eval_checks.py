"""Shared by the evaluation tests: the shipped configs they run and the one-line CLI error check."""

import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CROWDNAV = os.path.join(ROOT, "configs", "crowdnav_circle.yaml")
BOTTLENECK = os.path.join(ROOT, "configs", "bottleneck.yaml")
SHORT = {"max_steps": 8}


def one_line_error(capsys, command):
    """The captured stderr, checked to be one ``orca-env COMMAND: error: ...`` line."""
    err = capsys.readouterr().err
    assert err.startswith(f"orca-env {command}: error: ") and err.count("\n") == 1, err
    return err
