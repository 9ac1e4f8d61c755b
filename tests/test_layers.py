"""The package's imports run one way, down the layers, with no cycle.

Every import statement in ``src/zero`` -- at module level or inside a function;
only ``if TYPE_CHECKING:`` blocks are exempt -- is read from the source, resolved
to the module it names, and checked: the imported module's layer may not be above
the importer's, and the import graph has no cycle at all (within a layer either).
"""
from __future__ import annotations

import ast
from pathlib import Path

import zero

PACKAGE = Path(zero.__file__).parent

# Lowest first. A module belongs to the first layer one of whose prefixes it starts with.
LAYERS = [
    ("foundation", ("zero.errors", "zero.dtypes", "zero.random", "zero.grad_mode", "zero.files", "zero.hooks",
                    "zero.lazy_modules")),
    ("backends", ("zero.backends",)),
    ("tensors", ("zero.tensors",)),
    ("autograd", ("zero.autograd",)),
    ("ops", ("zero.ops",)),
    ("library", ("zero.nn", "zero.optim", "zero.data", "zero.serialization", "zero.profiler", "zero.cpu",
                 "zero.cuda", "zero.amp", "zero.distributed", "zero.cuda_graphs", "zero.graphed_callables")),
    ("compat", ("zero.compat",)),
    ("models", ("zero.models",)),
    ("cli", ("zero.cli", "zero.__main__")),
    ("public namespace", ("zero",)),
]


def module_files() -> dict[str, Path]:
    modules = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def layer_of(module: str) -> int:
    for index, (_, prefixes) in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return index
    raise AssertionError(f"{module} is in no layer: add it to LAYERS")


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_nodes(tree: ast.AST):
    """Every import statement, except those inside ``if TYPE_CHECKING:``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def imports_of(module: str, path: Path, known: set[str]) -> set[str]:
    """The internal modules ``module`` imports (the module named, or the module a name is taken from)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in _import_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.split(".")[0] == "zero")
            continue
        if node.level:
            base = package.split(".")
            base = base[:len(base) - (node.level - 1)]
            source = ".".join(base + ([node.module] if node.module else []))
        else:
            source = node.module or ""
        if source.split(".")[0] != "zero":
            continue
        for alias in node.names:
            submodule = f"{source}.{alias.name}"
            found.add(submodule if submodule in known else source)
    found.discard(module)
    return found


def import_graph() -> dict[str, set[str]]:
    files = module_files()
    known = set(files)
    return {module: imports_of(module, path, known) for module, path in files.items()}


def test_every_import_points_down_the_layers():
    upward = []
    for module, imported in sorted(import_graph().items()):
        for target in sorted(imported):
            if layer_of(target) > layer_of(module):
                upward.append(f"{module} ({LAYERS[layer_of(module)][0]}) imports {target} "
                              f"({LAYERS[layer_of(target)][0]})")
    assert not upward, "imports that run up the layers:\n" + "\n".join(upward)


def test_the_import_graph_has_no_cycle():
    graph = import_graph()
    cycles = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for start in sorted(graph):
        if start in state:
            continue
        path = [start]
        state[start] = 1
        iterators = [iter(sorted(graph[start]))]
        while iterators:
            target = next(iterators[-1], None)
            if target is None:
                state[path.pop()] = 2
                iterators.pop()
            elif target not in graph:
                continue
            elif state.get(target) == 1:
                cycles.append(" -> ".join(path[path.index(target):] + [target]))
            elif target not in state:
                state[target] = 1
                path.append(target)
                iterators.append(iter(sorted(graph[target])))
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_the_checker_sees_function_level_imports(tmp_path):
    """The checker itself: an import inside a function counts, one under TYPE_CHECKING does not."""
    source = tmp_path / "sample.py"
    source.write_text("from typing import TYPE_CHECKING\n"
                      "if TYPE_CHECKING:\n    from ..cli import main\n"
                      "def f():\n    from ..models import gpt\n    return gpt\n")
    found = imports_of("zero.ops.sample", source, {"zero.models.gpt", "zero.cli.main"})
    assert found == {"zero.models.gpt"}
