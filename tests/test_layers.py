"""The layering of docs/architecture.md: imports point downward only, and no import cycles.

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
             "orca_env.env_state", "orca_env.registry", "orca_env.sensors", "orca_env.finished",
             "orca_env.behaviours", "orca_env.behaviours.base", "orca_env.behaviours.learned",
             "orca_env.behaviours.orca", "orca_env.behaviours.non_reactive",
             "orca_env.behaviours.linear", "orca_env.behaviours.social_force",
             "orca_env.behaviours.replay", "orca_env.kinematics", "orca_env.kinematics.base",
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
    if module in ENV_LAYER or module.startswith(("orca_env.kinematics.", "orca_env.behaviours.")):
        return 3  # every motion model and behaviour module is part of the env layer
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


def edges(name: str, path: str, is_package: bool):
    """``(module, line)`` of every package module that importing ``name`` executes.

    What Python runs: ``import a.b.c`` and ``from a.b import c`` (``c`` a module) run ``a.b.c``
    and the ``__init__`` of every package above it that is not above ``name`` too (those have
    started already); ``from a.b import x`` (``x`` an attribute) reads ``a.b`` itself, so it
    depends on ``a/b/__init__.py`` even when that package holds ``name``.
    """
    known = {m for m, _, _ in ALL}
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read(), path)
    package = name if is_package else name.rpartition(".")[0]
    mine = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 2)}
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Import):
            targets = [(alias.name, False) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module
            for alias in node.names:
                sub = f"{mod}.{alias.name}"
                targets.append((sub, False) if sub in known else (mod, True))
        for imp, attribute in targets:
            if imp.split(".")[0] != "orca_env":
                continue
            target = _resolve(imp)
            if target is None or target == name:
                continue
            if attribute or target not in mine:
                yield target, node.lineno
            while "." in target:
                target = target.rpartition(".")[0]
                if target not in mine:
                    yield target, node.lineno


#: Cycles not broken yet, each as the set of its modules. A cycle listed here must still exist:
#: remove it once it is broken. None is left (``config`` <-> ``mixture`` went with the step
#: pipeline: the mixture module registers its parser with the config module).
KNOWN_CYCLES: list = []


def _graph() -> dict[str, dict[str, int]]:
    """``{module: {imported module: first line}}`` over :func:`edges`."""
    graph: dict[str, dict[str, int]] = {}
    for name, path, is_package in ALL:
        out = graph.setdefault(name, {})
        for target, line in edges(name, path, is_package):
            out.setdefault(target, line)
    return graph


def _cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _loop(graph: dict[str, dict[str, int]], comp: list[str]) -> str:
    """One shortest import loop through the first module of ``comp``, with the import lines."""
    start, inside = comp[0], set(comp)
    prev: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v]):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(prev[path[-1]])
                    path = path[::-1] + [start]
                    return " -> ".join(
                        [path[0]] + [f"{b} (line {graph[a][b]} of {a})"
                                     for a, b in zip(path, path[1:], strict=False)])
                if w in inside and w not in prev and w != start:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    return " -> ".join(comp)


def test_no_import_cycles():
    graph = _graph()
    cycles = _cycles(graph)
    new = [c for c in cycles if frozenset(c) not in KNOWN_CYCLES]
    assert not new, "import cycles:\n" + "\n".join(
        f"  {len(c)} modules: {', '.join(c)}\n    e.g. {_loop(graph, c)}" for c in new)
    gone = [sorted(c) for c in KNOWN_CYCLES if c not in {frozenset(c) for c in cycles}]
    assert not gone, f"no longer cycles, remove them from KNOWN_CYCLES: {gone}"


def test_the_cycle_check_sees_lazy_and_package_imports(tmp_path):
    """A lazy import closes a loop, and so does a package ``__init__`` run on the way."""
    graph = {"orca_env.a": {"orca_env.b": 1}, "orca_env.b": {"orca_env.a": 3}}
    assert _cycles(graph) == [["orca_env.a", "orca_env.b"]]
    assert _loop(graph, ["orca_env.a", "orca_env.b"]) == \
        "orca_env.a -> orca_env.b (line 1 of orca_env.a) -> orca_env.a (line 3 of orca_env.b)"
    lazy = tmp_path / "lazy.py"
    lazy.write_text("def f():\n    from orca_env.evaluation.suite import evaluate\n")
    assert sorted(edges("orca_env.training.x", str(lazy), False)) == [
        ("orca_env.evaluation", 2), ("orca_env.evaluation.suite", 2)]
    sibling = tmp_path / "sibling.py"
    sibling.write_text("from . import config\nfrom .. import __version__\n")
    assert sorted(edges("orca_env.training.x", str(sibling), False)) == [
        ("orca_env", 2), ("orca_env.training.config", 1)]


def test_every_module_is_classified():
    names = {m for m, _, _ in ALL}
    assert ENV_LAYER <= names
    assert "orca_env.core.simulator" in names and "orca_env.policies.sb3" in names
