"""Imports inside zero.backends point one way: no cycle, module-level or inside a function,
and nothing above the backends (tensor, autograd, ops, nn ...) is imported from them.

Every ``import`` and ``from ... import`` in the package's source is read (function bodies
included, ``if TYPE_CHECKING:`` blocks excepted) and resolved to the module it names; a
``from package import name`` counts as an import of the submodule when one of that name
exists, and only then (``from . import kernels`` in a package imports the submodule, not
the package itself). That importing ``a.b.c`` first runs ``a/b/__init__`` is not counted: a
package may import its own submodules.
"""
from __future__ import annotations

import ast
from pathlib import Path

import zero.backends

ROOT = Path(zero.backends.__file__).parent
BELOW = {"zero.errors", "zero.dtypes", "zero.device"}   # what the backends may use from the rest of zero


def _module_name(path: Path) -> str:
    parts = ("zero", "backends", *path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    return isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def _imports(path: Path, modules: set) -> set:
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(node) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            submodules = {f"{base}.{alias.name}" for alias in node.names} & modules
            found.update(submodules)
            if len(submodules) < len(node.names):  # names from the module (or package) itself
                found.add(base)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text()))
    return {m for m in found if m.startswith("zero.")}


def _graph() -> dict:
    paths = sorted(ROOT.rglob("*.py"))
    modules = {_module_name(p) for p in paths}
    return {_module_name(p): _imports(p, modules) for p in paths}


def test_no_import_cycle_inside_the_backends():
    graph = _graph()
    state: dict = {}
    path: list = []

    def walk(module: str) -> None:
        state[module] = "open"
        path.append(module)
        for target in sorted(graph.get(module, ())):
            if target not in graph:
                continue
            if state.get(target) == "open":
                cycle = path[path.index(target):] + [target]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if target not in state:
                walk(target)
        path.pop()
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            walk(module)
    assert len(graph) > 30


def test_the_backends_import_nothing_above_them():
    upward = {f"{module} imports {target}" for module, targets in _graph().items() for target in targets
              if not target.startswith("zero.backends") and target not in BELOW and target != "zero"}
    assert not upward, "\n".join(sorted(upward))
