"""The layering of docs/architecture.md: imports point downward only.

Every import of every module of the package counts, lazy imports inside functions included.
"""

import ast
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: Package folders and the module prefix they install as.
TREES = {os.path.join(ROOT, "orca_env"): "orca_env",
         os.path.join(ROOT, "policies"): "orca_env.policies",
         os.path.join(ROOT, "configs"): "orca_env.configs"}

ENV_LAYER = {"orca_env", "orca_env.configs", "orca_env.codes", "orca_env.frames", "orca_env.config",
             "orca_env.observations", "orca_env.step", "orca_env.collisions",
             "orca_env.rewards", "orca_env.guidance", "orca_env.environment",
             "orca_env.vector", "orca_env.single", "orca_env.mixture", "orca_env.agents",
             "orca_env.episode", "orca_env.infos", "orca_env.pipeline", "orca_env.stages",
             "orca_env.env_state",
             "orca_env.behaviours", "orca_env.behaviours.base", "orca_env.behaviours.learned",
             "orca_env.behaviours.orca", "orca_env.behaviours.non_reactive",
             "orca_env.behaviours.linear", "orca_env.kinematics", "orca_env.kinematics.base",
             "orca_env.kinematics.holonomic"}
#: Third-party packages each layer may use (the standard library is always allowed).
THIRD_PARTY = {1: {"numpy", "numba"}, 2: {"numpy"},
               3: {"numpy", "numba", "gymnasium", "pettingzoo", "yaml"}}
#: Upward imports that are part of the design: the env draws itself with the renderer, lazily
#: inside render(), as Gymnasium's envs do.
ALLOWED_UP = {("orca_env.environment", "orca_env.render")}


def layer(module: str) -> int:
    if module == "orca_env.core" or module.startswith("orca_env.core."):
        return 1
    if module == "orca_env.scenarios" or module.startswith("orca_env.scenarios."):
        return 2
    if module in ENV_LAYER:
        return 3
    return 4


def modules():
    for top, prefix in TREES.items():
        for folder, _, files in os.walk(top):
            for f in sorted(files):
                if not f.endswith(".py"):
                    continue
                rel = os.path.relpath(os.path.join(folder, f), top)[:-3].split(os.sep)
                if rel[-1] == "__init__":
                    rel = rel[:-1]
                yield ".".join([prefix, *rel]), os.path.join(folder, f), f == "__init__.py"


def imports(name: str, path: str, is_package: bool):
    """Absolute names of everything ``path`` imports, anywhere in the file."""
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read(), path)
    package = name if is_package else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module
            yield mod
            for alias in node.names:  # "from . import render" imports a module
                yield f"{mod}.{alias.name}"


ALL = sorted(modules())


def _resolve(mod: str) -> str | None:
    """The package module that ``mod`` names (dropping a trailing attribute), or None."""
    known = {m for m, _, _ in ALL}
    while mod and mod not in known:
        mod = mod.rpartition(".")[0]
    return mod or None


@pytest.mark.parametrize("name,path,is_package", ALL, ids=[m for m, _, _ in ALL])
def test_imports_point_downward(name, path, is_package):
    mine = layer(name)
    for imp in imports(name, path, is_package):
        top = imp.split(".")[0]
        assert top != "policies", f"{name} imports a bare 'policies' package: {imp}"
        if top == "orca_env":
            target = _resolve(imp)
            if target is None or (name, target) in ALLOWED_UP:
                continue
            assert layer(target) <= mine, f"{name} (layer {mine}) imports {target} " \
                                          f"(layer {layer(target)})"
        elif mine in THIRD_PARTY and top not in sys.stdlib_module_names \
                and top != "__future__":
            assert top in THIRD_PARTY[mine], f"{name} (layer {mine}) imports {imp}"


def test_every_module_is_classified():
    names = {m for m, _, _ in ALL}
    assert ENV_LAYER <= names
    assert "orca_env.core.simulator" in names and "orca_env.policies.sb3" in names
