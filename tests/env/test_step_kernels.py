"""The env's numba step kernels against their own Python source (``.py_func``).

numba 0.68 / llvmlite 0.50 miscompiled a vectorised conditional store of bools in a core kernel
(lost flags for 8 of every 32 agents); the same pattern appears in the step kernels. Running each
kernel and its Python function on the same random inputs, at sizes where loops vectorise,
catches such a miscompile.
"""

import numpy as np
import pytest

from orca_env.collisions import agent_collisions, obstacle_collisions
from orca_env.kinematics.base import KIN_PARAMS
from orca_env.step import goals_and_stalls, outcomes, preferred_velocities


def _both(kernel, *args):
    """Run the compiled kernel and its Python function on copies; return both argument lists."""
    a = [x.copy() if isinstance(x, np.ndarray) else x for x in args]
    b = [x.copy() if isinstance(x, np.ndarray) else x for x in args]
    ra = kernel(*a)
    rb = kernel.py_func(*b)
    return (ra, a), (rb, b)


def _assert_same(res_a, res_b):
    (ra, a), (rb, b) = res_a, res_b
    assert ra == rb
    for x, y in zip(a, b, strict=True):
        if isinstance(x, np.ndarray):
            assert np.array_equal(x, y, equal_nan=True)


@pytest.mark.parametrize("n", [7, 40, 129, 300])
@pytest.mark.parametrize("seed", range(3))
def test_outcomes_kernel_matches_python(n, seed):
    rng = np.random.default_rng(seed)
    live = np.sort(rng.choice(n, size=max(1, n // 3), replace=False)).astype(np.int64)
    L = live.size
    b = lambda k: rng.random(k) < 0.4  # noqa: E731
    args = (live, b(L), b(L), b(n), b(n), b(n), b(n), rng.integers(0, 3, n), bool(seed % 2),
            bool(seed < 2), np.zeros(L, bool), np.zeros(L, bool), np.zeros(L, np.int64),
            np.zeros(n, bool), b(n), rng.integers(0, 5, n).astype(np.int8), np.zeros(n, bool))
    _assert_same(*_both(outcomes, *args))


@pytest.mark.parametrize("n", [7, 40, 129, 300])
def test_goals_and_stalls_kernel_matches_python(n):
    rng = np.random.default_rng(n)
    pos = rng.normal(size=(n, 2))
    goals = pos + rng.normal(scale=0.5, size=(n, 2))
    args = (pos, rng.normal(scale=0.05, size=(n, 2)), rng.random(n) < 0.8, rng.random(n) < 0.2,
            goals, np.full(n, 0.3), np.ones(n), 0.05, 3, rng.integers(0, 5, n), np.zeros(n, bool),
            np.zeros(n, bool), np.zeros(n, bool), np.zeros(n))
    _assert_same(*_both(goals_and_stalls, *args))


@pytest.mark.parametrize("n", [7, 129])
@pytest.mark.parametrize("world_frame", [False, True])
@pytest.mark.parametrize("residual", [False, True])
def test_preferred_velocities_kernel_matches_python(n, world_frame, residual):
    rng = np.random.default_rng(n)
    live = np.arange(0, n, 2, dtype=np.int64)
    external = rng.random(n) < 0.2  # slots a Python behaviour steered: left as they are
    external[live] = False
    # Every motion model among the learned slots (residual actions are holonomic only).
    kin = np.zeros(n, dtype=np.int64) if residual else rng.integers(0, 3, n)
    kp = rng.uniform(0.1, 2.0, (n, KIN_PARAMS))
    rows = rng.permutation(live.size + 3)[:live.size]  # each live agent's row of the actions
    args = (rng.normal(size=(n, 2)), rng.normal(size=(n, 2)), np.ones(n), np.full(n, 1.5),
            rng.uniform(0, 6, n), rng.uniform(0, 1e-4, n), True, external, kin, live,
            rng.uniform(-1, 1, (live.size + 3, 2)), rows, world_frame, residual,
            rng.uniform(-3, 3, n), kp,
            0.25, np.zeros((n, 2)), rng.normal(size=(n, 2)))
    _assert_same(*_both(preferred_velocities, *args))


@pytest.mark.parametrize("n", [7, 129, 300])
def test_collision_kernels_match_python(n):
    rng = np.random.default_rng(n)
    p0 = rng.uniform(0, 0.3 * np.sqrt(n), size=(n, 2))
    p1 = p0 + rng.normal(scale=0.1, size=(n, 2))
    check = np.arange(0, n, 3, dtype=np.int64)
    radii = rng.uniform(0.1, 0.3, n)
    args = (check, p0, p1, radii, rng.random(n) < 0.9, 0.01, np.zeros(check.size, bool))
    _assert_same(*_both(agent_collisions, *args))
    square = np.array([[1.0, 1.0], [2.0, 1.0], [2.0, 2.0], [1.0, 2.0]])
    nxt = np.array([1, 2, 3, 0], dtype=np.int64)
    args = (check, p0, p1, radii, square, nxt, 0.01, np.zeros(check.size, bool))
    _assert_same(*_both(obstacle_collisions, *args))
