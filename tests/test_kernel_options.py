"""Every numba kernel of the package skips numba's C-callable wrapper (issue 25 item 2).

Nothing calls the kernels through a C function pointer, and the wrapper's lowering and LLVM
work were about a tenth of a cold compile (benchmarks/profile_compile.py): a kernel added
with a plain ``@njit(cache=True)`` would bring it back.
"""

import importlib
import pkgutil

from numba.core.registry import CPUDispatcher

import orca_env

# Modules that need optional extras (torch, ray, ...) hold no kernels.
_OPTIONAL = (".training", ".wrappers", ".policies", ".evaluation.bench")


def _kernels():
    found = {}
    for info in pkgutil.walk_packages(orca_env.__path__, "orca_env."):
        if any(part in info.name for part in _OPTIONAL):
            continue
        mod = importlib.import_module(info.name)
        for name, value in vars(mod).items():
            if isinstance(value, CPUDispatcher) and value.py_func.__module__ == info.name:
                found[f"{info.name}.{name}"] = value
    return found


def test_every_kernel_skips_the_cfunc_wrapper():
    kernels = _kernels()
    assert len(kernels) > 50, sorted(kernels)  # the walk found the kernels
    assert "orca_env.stages.run_worlds" in kernels
    missing = [k for k, d in kernels.items() if not d.targetoptions.get("no_cfunc_wrapper")]
    assert not missing, f"kernels with numba's cfunc wrapper: {missing}"
    uncached = [k for k, d in kernels.items() if type(d._cache).__name__ == "NullCache"]
    assert not uncached, f"kernels without cache=True: {uncached}"
