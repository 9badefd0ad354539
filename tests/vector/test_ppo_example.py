"""examples/ppo_vector.py runs end to end on a tiny budget."""

import importlib.util
import os

import numpy as np
import pytest

pytest.importorskip("torch")

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "ppo_vector.py")


def test_ppo_vector_example_runs():
    spec = importlib.util.spec_from_file_location("ppo_vector_example", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    returns = mod.main(["--num-worlds", "2", "--num-steps", "64", "--total-steps", "4000",
                        "--minibatch", "256"])
    assert len(returns) > 0 and np.isfinite(returns).all()
