"""One compiled specialisation per kernel: after the kernel families are ensured, no shipped
config (single env, vector env, heuristic actions, render data), no simulator path and no
evaluation metric makes numba compile anything (issue 25, item 2: a new scenario family in a
process with a warm cache costs no compile).

Runs in this process with the suite's numba cache: a cold cache compiles the families first
(that is not measured), then every path runs under a listener of numba's compile events.
"""

import glob
import os

import numba.core.event as ev
import numpy as np
import pytest

import orca_env
from orca_env.core import Simulator, families
from orca_env.vector import OrcaVectorEnv

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIGS = sorted(os.path.basename(p)[:-5] for p in glob.glob(os.path.join(ROOT, "configs",
                                                                          "*.yaml")))


class _Compiles(ev.Listener):
    """The dispatchers numba compiles (cache loads are not compiles) while installed."""

    def __init__(self):
        self.names = []

    def on_start(self, event):
        d = event.data["dispatcher"]
        self.names.append(f"{d.py_func.__module__}.{d.py_func.__qualname__}"
                          f"{tuple(event.data['args'])}")

    def on_end(self, event):
        pass


@pytest.fixture(scope="module")
def compiles():
    import orca_env.episode  # noqa: F401  (registers the env family)
    import orca_env.evaluation.social  # noqa: F401  (registers the metrics family)

    for name in families.families():
        families.ensure(name, announce=False)
    listener = _Compiles()
    with ev.install_listener("numba:compile", listener):
        yield listener


def test_the_shipped_configs_are_all_there():
    assert len(CONFIGS) >= 20 and "circle_dense" in CONFIGS and "bottleneck_sf" in CONFIGS


@pytest.mark.parametrize("name", CONFIGS)
def test_a_shipped_config_compiles_nothing_new(compiles, name):
    start = len(compiles.names)
    env = orca_env.parallel_env(name)
    env.reset(seed=0)
    for _ in range(3):
        if not env.agents:
            break
        env.render_data()
        env.step(env.heuristic_actions())
    env.close()
    venv = OrcaVectorEnv(name, 2, seed=0)
    venv.reset()
    for _ in range(3):
        venv.step(np.zeros((venv.num_envs,) + venv.single_action_space.shape))
    venv.close()
    assert compiles.names[start:] == []


def test_the_simulator_compiles_nothing_new(compiles):
    start = len(compiles.names)
    rng = np.random.default_rng(0)
    for threads in (1, 2):  # 2: the parallel step (100 agents)
        sim = Simulator(num_threads=min(threads, __import__("numba").config.NUMBA_NUM_THREADS))
        sim.add_agents(rng.uniform(-30.0, 30.0, (100, 2)))
        sim.add_obstacle(np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]]))
        sim.add_obstacle(np.array([[5.0, 5.0], [6.0, 5.0]]))
        sim.add_boundary(np.array([[-50.0, -50.0], [50.0, -50.0], [50.0, 50.0], [-50.0, 50.0]]))
        sim.set_pref_velocities(-sim.positions / 10.0)
        sim.step()
        sim.orca_lines(0)
        sim.agent_neighbors(1)
        sim.obstacle_neighbors(2)
        sim.query_agent_neighbors(3, 10.0)
        sim.query_obstacle_neighbors(sim.positions, 10.0, 2)
        sim.query_visibility((-5.0, 0.0), (5.0, 0.0), 0.5)
        sim.is_walkable(sim.positions, clearance=0.1)
    assert compiles.names[start:] == []


def test_the_crowd_metrics_compile_nothing_new(compiles):
    from orca_env.evaluation.suite import evaluate

    start = len(compiles.names)
    evaluate("bottleneck", "orca", episodes=1, overrides={"max_steps": 20})
    assert compiles.names[start:] == []


def test_every_family_lists_each_kernel_once_with_one_signature():
    import orca_env.episode  # noqa: F401
    import orca_env.evaluation.social  # noqa: F401

    assert {"core", "env", "metrics"} <= set(families.families())
    for name, fam in families.families().items():
        pairs = fam.resolved()
        kernels = [d for d, _ in pairs]
        assert len(set(map(id, kernels))) == len(kernels), name  # one signature per kernel
        for d, sig in pairs:
            assert all(getattr(t, "layout", "C") == "C" for t in sig), (name, d, sig)


def test_no_kernel_is_specialised_on_an_integer_literal():
    """A loop counter that starts as the constant 0 and is passed to a kernel types as
    ``Literal[int](0)`` on the first pass of numba's type inference: the callee compiles once
    for the literal and again for int64 (measured: _compute_range and _apply_range compiled
    four times instead of two, about 3 CPU-s of the env family's cold compile). Boolean
    literals are on purpose (flags specialised at the call site).

    Compiles uncached copies of the two callers from their Python source with the family's
    signatures; their callees come from the cache or compile, and register every signature
    they were asked for."""
    from numba import njit
    from numba.core import types

    from orca_env.core import kernels

    def compile_copy(d, sig):
        njit(no_cfunc_wrapper=True, error_model="numpy")(d.py_func).compile(sig)

    sigs = {id(d): sig for d, sig in families.family("core").resolved()}
    # _compute_block is called by the serial step (its signature registers when loaded).
    compile_copy(kernels.compute_velocities_serial, sigs[id(kernels.compute_velocities_serial)])
    # (other tests may have compiled it for other signatures too: each is checked)
    assert kernels._compute_block.overloads
    for sig in list(kernels._compute_block.overloads):
        compile_copy(kernels._compute_block, sig)
    compile_copy(kernels.apply_velocities, sigs[id(kernels.apply_velocities)])
    for callee in (kernels._compute_range, kernels._apply_range):
        for sig in callee.overloads:
            assert not any(isinstance(t, types.IntegerLiteral) for t in sig), (callee, sig)
