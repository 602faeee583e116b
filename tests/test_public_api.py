"""The public surface stays tidy."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import haystack_deep_research
from haystack_deep_research import errors


@pytest.mark.parametrize(
    "module",
    [
        "haystack_deep_research",
        *(
            f"haystack_deep_research.{name}"
            for name in (
                *("agents", "cli", "deep_agent", "events", "evidence", "report", "research"),
                *("run", "scans", "sources", "testing", "tools", "web", "workflow"),
            )
        ),
    ],
)
def test_all_is_sorted_and_complete(module: str) -> None:
    imported = importlib.import_module(module)
    names = imported.__all__
    # Sorted the way ruff's RUF022 sorts: CONSTANTS, then Classes, then functions.
    assert names == sorted(names, key=lambda n: (0 if n.isupper() else 1 if n[0].isupper() else 2, n))
    for name in names:
        assert hasattr(imported, name), name


PUBLIC_NAMES = [
    "Budgets",
    "ConfigurationError",
    "DeepResearchError",
    "Event",
    "EventStream",
    "EvidenceLedger",
    "FetchLimits",
    "Grounding",
    "InvalidQuestionError",
    "MCPServer",
    "Price",
    "ReadUrlTool",
    "ReportStyle",
    "ResearchCache",
    "ResearchRun",
    "ResearchRunError",
    "ResearchSummary",
    "RunDirError",
    "RunInputs",
    "SourceEntry",
    "Sources",
    "StructuredOutputError",
    "UrlPolicy",
    "UsageError",
    "WebSearchTool",
    "ask_report",
    "create_deep_agent",
    "create_deep_research_agent",
    "create_iterative_research_agent",
    "create_research_workflow",
]
"""The top-level surface, written out: a change to it is a deliberate change to this list (and to the CHANGELOG)."""


def test_the_top_level_surface_is_the_listed_one() -> None:
    assert haystack_deep_research.__all__ == PUBLIC_NAMES
    assert {name for name in dir(haystack_deep_research) if not name.startswith("_")} >= set(PUBLIC_NAMES)


def test_every_error_derives_from_the_base() -> None:
    for name in errors.__all__:
        assert issubclass(getattr(errors, name), errors.DeepResearchError)


def test_usage_errors_are_value_errors_and_run_errors_are_not() -> None:
    assert issubclass(errors.ConfigurationError, ValueError)
    assert issubclass(errors.InvalidQuestionError, ValueError)
    assert not issubclass(errors.FetchError, ValueError)


def test_version_is_exposed() -> None:
    assert haystack_deep_research.__version__ == "0.1.0"


def test_tests_import_only_modules_that_exist() -> None:
    """Tests may import private modules (a test needs no wider surface); each import names a module of the package."""
    package = Path(haystack_deep_research.__file__).parent
    missing = []
    for path in Path(__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("haystack_deep_research"):
                target = package.joinpath(*node.module.split(".")[1:])
                if not (target.is_dir() or target.with_suffix(".py").is_file()):
                    missing.append(f"{path.name}: {node.module}")
    assert not missing
