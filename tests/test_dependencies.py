"""Every third-party module the package imports is declared in pyproject.toml: core imports as dependencies, imports
made where first used (optional integrations) as dependencies or in an extra."""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "haystack_deep_research"


def _name(requirement: str) -> str:
    return re.sub(r"[-_.]+", "-", re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0]).lower()


def _declared() -> tuple[set[str], set[str]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    core = {_name(r) for r in project["dependencies"]}
    extras = {_name(r) for group in project.get("optional-dependencies", {}).values() for r in group}
    return core, extras - {"haystack-deep-research"}


def _imports() -> dict[str, bool]:
    """Top-level module name -> whether some import of it runs when its module is imported."""
    found: dict[str, bool] = {}
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        lazy = {
            id(n) for f in ast.walk(tree) if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef) for n in ast.walk(f)
        }
        type_only = {
            id(n)
            for block in ast.walk(tree)
            if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
            for n in ast.walk(block)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in (n.split(".")[0] for n in names):
                if name in sys.stdlib_module_names or name == "haystack_deep_research" or id(node) in type_only:
                    continue
                found[name] = found.get(name, False) or id(node) not in lazy
    return found


def test_every_imported_module_is_declared() -> None:
    core, extras = _declared()
    distributions = importlib.metadata.packages_distributions()
    missing = []
    for module, eager in sorted(_imports().items()):
        names = {_name(d) for d in distributions.get(module, [module])}
        allowed = core if eager else core | extras
        if not names & allowed:
            missing.append(f"{module} ({'imported at module level' if eager else 'imported where used'})")
    assert not missing, f"declare in pyproject.toml: {missing}"


def _run_time_haystack_imports() -> list[tuple[str, str]]:
    """(file, module) of every ``from haystack... import`` made inside a function: it may run on a worker thread."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("haystack."):
                    found.append((str(path.relative_to(PACKAGE)), node.module or ""))
    return found


def test_nothing_is_imported_through_a_lazy_haystack_package_at_run_time() -> None:
    # A Haystack package that resolves its names lazily (a LazyImporter in sys.modules) is not safe to resolve from
    # two threads at once: one of them can get ImportError. Imports made where first used name the defining module.
    from lazy_imports import LazyImporter

    imports = _run_time_haystack_imports()
    assert any(module.endswith("in_memory.document_store") for _, module in imports)  # the check sees them
    lazy = sorted(
        f"{file}: {module}"
        for file, module in set(imports)
        if isinstance(sys.modules.get(module) or importlib.import_module(module), LazyImporter)
    )
    assert not lazy, f"import from the defining module instead: {lazy}"
