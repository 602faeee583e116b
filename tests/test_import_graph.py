"""
No import cycle between the package's modules.

The graph is built from the source with ``ast``: an edge for each ``import`` of a package module at run time, at
module level or deferred into a function (deferring the import that closes a loop only hides the loop), and
separately for those under ``if TYPE_CHECKING:`` (types only, allowed to point back up). A subpackage's
``__init__`` is a node of its own, so a module that imports a name of ``haystack_deep_research.run`` depends on
``run/__init__.py`` and on everything it imports; ``from package import submodule`` inside that package depends on
the submodule only (the package is being initialised already).
"""

from __future__ import annotations

import ast
from pathlib import Path

import haystack_deep_research

PACKAGE = Path(haystack_deep_research.__file__).parent
NAME = "haystack_deep_research"


def _module_name(path: Path) -> str:
    parts = [NAME, *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _resolve(module: str, current: str, is_package: bool, level: int) -> str:
    if not level:
        return module
    base = current.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, module] if module else base)


def _imports(path: Path, modules: set[str]) -> tuple[set[str], set[str]]:
    """:returns: The package modules imported at run time (now or deferred) and those for type checking only."""
    current = _module_name(path)
    is_package = path.name == "__init__.py"
    runtime: set[str] = set()
    typing_only: set[str] = set()

    def targets(node: ast.Import | ast.ImportFrom) -> set[str]:
        found: set[str] = set()
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            base = _resolve(node.module or "", current, is_package, node.level)
            names = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        for name in names:
            # ``import a.b.c`` runs a, a.b and a.b.c: the deepest package module named is the edge.
            target = name
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target.startswith(NAME) and target != current:
                found.add(target)
        submodules_only = all(f"{names[0]}.{alias.name}" in modules for alias in node.names)
        if isinstance(node, ast.ImportFrom) and submodules_only and current.startswith(f"{names[0]}."):
            found.discard(names[0])
        return found

    def visit(body: list[ast.stmt], into: set[str]) -> None:
        for node in body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                into |= targets(node)
            elif isinstance(node, ast.If) and _is_type_checking(node.test):
                visit(node.body, typing_only)
                visit(node.orelse, into)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                visit(node.body, runtime)
            elif isinstance(node, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
                for block in (node.body, getattr(node, "orelse", []), getattr(node, "finalbody", [])):
                    visit(block, into)
                for handler in getattr(node, "handlers", []):
                    visit(handler.body, into)

    visit(ast.parse(path.read_text(encoding="utf-8")).body, runtime)
    return runtime, typing_only - runtime


def import_graph() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    paths = sorted(PACKAGE.rglob("*.py"))
    modules = {_module_name(path) for path in paths}
    runtime: dict[str, set[str]] = {}
    typing_only: dict[str, set[str]] = {}
    for path in paths:
        runtime[_module_name(path)], typing_only[_module_name(path)] = _imports(path, modules)
    return runtime, typing_only


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """:returns: One cycle of each strongly connected component with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


def test_the_graph_sees_runtime_and_type_checking_imports_apart() -> None:
    runtime, typing_only = import_graph()
    assert f"{NAME}.errors" in runtime[f"{NAME}"]
    assert f"{NAME}.agents" in typing_only[f"{NAME}"]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_module_imports_itself_back_at_run_time() -> None:
    runtime, _ = import_graph()
    assert cycles(runtime) == []


def test_sources_sit_below_tools() -> None:
    """The search tools and the library's tools share a base below both; sources never import tools."""
    runtime, typing_only = import_graph()
    upward = {
        f"{module} -> {target}"
        for module in runtime
        if module.startswith(f"{NAME}.sources")
        for target in runtime[module] | typing_only[module]
        if target.startswith(f"{NAME}.tools")
    }
    assert not upward


def _package(module: str) -> str:
    """The package a module belongs to: its subpackage (``run``, ``web``, ...), or the module itself at the root."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "<root>"


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """:returns: The graph between subpackages (and root modules): an edge where any module of one imports the other."""
    packages: dict[str, set[str]] = {}
    for module, targets in graph.items():
        for target in targets:
            if _package(module) != _package(target):
                packages.setdefault(_package(module), set()).add(_package(target))
    return packages


def test_packages_import_each_other_one_way_only() -> None:
    """Packages form floors: an import between two of them, deferred ones included, runs one way only."""
    runtime, _ = import_graph()

    assert cycles(package_graph(runtime)) == []
    assert cycles(package_graph({f"{NAME}.a.x": {f"{NAME}.b.y"}, f"{NAME}.b.z": {f"{NAME}.a.w"}})) == [["a", "b"]]
