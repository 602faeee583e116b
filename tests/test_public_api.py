"""The public surface stays tidy."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import haystack_deep_research
from haystack_deep_research import errors

FACES: dict[str, list[str]] = {
    "agents": [
        "IterativeResearchAgent",
        "ResearchAgent",
        "ResearchWorkflow",
        "chat_generator",
        "create_deep_agent",
        "create_deep_research_agent",
        "create_iterative_research_agent",
        "create_research_workflow",
        "default_chat_generator",
        "role_models",
    ],
    "cli": ["main"],
    "deep_agent": [],
    "events": [
        "BudgetReached",
        "CitationRemoved",
        "ConversationCondensed",
        "Event",
        "ExitReached",
        "FileRead",
        "FileWritten",
        "ItemDone",
        "ItemFailed",
        "ItemSkipped",
        "ItemStarted",
        "Notice",
        "PageRead",
        "PageRefused",
        "PhaseEnded",
        "PhaseStarted",
        "PlanReviewed",
        "Reflected",
        "ReportReady",
        "RunEnded",
        "RunStarted",
        "ScanEnded",
        "ScanStarted",
        "SearchDecided",
        "SearchDone",
        "SearchRoundDone",
        "SubagentCompleted",
        "SubagentFailed",
        "SubagentSpawned",
        "Subscriber",
        "TodoAdded",
        "TodoCompleted",
        "ToolCalled",
        "ToolReturned",
        "TopicRefused",
        "UsageRecorded",
        "WarningRaised",
        "progress_view",
    ],
    "evidence": ["EvidenceLedger", "SourceEntry"],
    "iterative": [],
    "mcp_server": ["build_server"],
    "notebook": ["LiveProgress", "ResearchResult", "display_result", "run_with_progress"],
    "report": [
        "NOT_ANSWERED",
        "ReportStyle",
        "ResearchSummary",
        "ask_report",
        "citation_findings",
        "export_docx",
        "export_evidence",
        "export_html",
        "export_pdf",
        "find_contradictions",
        "verify_report",
    ],
    "research": [
        "AllOf",
        "AnyOf",
        "ConfidenceMet",
        "ExitCondition",
        "MaxIterations",
        "StepCall",
        "StepFacts",
        "TextReply",
        "TokenLimit",
        "ToolUsed",
    ],
    "run": [
        "MAX_QUESTION_CHARS",
        "EventStream",
        "Recording",
        "RecordingChatGenerator",
        "ReplayChatGenerator",
        "ResearchCache",
        "ResearchRun",
        "RunInputs",
        "RunView",
        "current_run",
        "usage_cost",
    ],
    "scans": [
        "ItemRef",
        "KnowledgeProvider",
        "KnowledgeRow",
        "ListProvider",
        "RayExecutor",
        "ScanResult",
        "ScanRunner",
        "row_data",
    ],
    "serving": [
        "RequestGuard",
        "RequestGuardMiddleware",
        "agent_factory",
        "http_status",
        "question_from_chat",
        "question_from_text",
        "stream_research",
    ],
    "settings": ["DEFAULT_PRICES", "PRICES_AS_OF", "Budgets", "Grounding", "Price", "Sources"],
    "sources": [
        "DdgsSearch",
        "FolderIndex",
        "MCPServer",
        "SearchTool",
        "TavilySearch",
        "WebSearchTool",
        "datastore_tools",
        "index_folder",
        "routing_prompt",
    ],
    "testing": [
        "LoopbackChatServer",
        "LoopbackSearchServer",
        "LoopbackWebServer",
        "NetworkForbiddenError",
        "ScriptedChatGenerator",
        "SearchDocument",
        "forbid_network",
        "kit_commands",
        "make_pdf",
        "prompt_of",
        "serve_kit",
    ],
    "tools": [
        "DiskBackend",
        "MemoryBackend",
        "ReadUrlTool",
        "ResearchTool",
        "RunToolset",
        "ScratchBackend",
        "SubAgentDef",
        "TodoState",
        "coerce_arguments",
    ],
    "web": [
        "ExtractedText",
        "FetchLimits",
        "FetchedDocument",
        "SearchScope",
        "UrlPolicy",
        "extract_text",
        "extract_text_async",
        "fetch",
        "fetch_async",
    ],
    "workflow": ["ExecuteStep", "execute_agent"],
}
"""Each subpackage's face, written out: a name is on it because users import it (docs, examples) or type or subclass
with it (an event a subscriber matches on, a setting, a base class); the rest is imported from its own module."""


@pytest.mark.parametrize("module", ["haystack_deep_research", *(f"haystack_deep_research.{name}" for name in FACES)])
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


def test_each_face_is_the_listed_one() -> None:
    """A name added to a face, or one left on it, is a deliberate change to this list (and to the CHANGELOG)."""
    package = Path(haystack_deep_research.__file__).parent
    for name in sorted(path.parent.name for path in package.glob("[!_]*/__init__.py")):
        face = importlib.import_module(f"haystack_deep_research.{name}")
        assert getattr(face, "__all__", []) == FACES.get(name, []), name


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
