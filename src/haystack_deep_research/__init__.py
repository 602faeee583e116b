"""
haystack-deep-research: turn a question into a structured, cited Markdown research report.

>>> from haystack.dataclasses import ChatMessage
>>> from haystack_deep_research import create_deep_research_agent
>>> agent = create_deep_research_agent()
>>> result = agent.run(messages=[ChatMessage.from_user("your research question")])  # doctest: +SKIP
>>> print(result["report"])  # doctest: +SKIP

The names here are what a user touches: the four factories, the grouped settings they share, what one run is given
(``RunInputs``), the errors caught most (the rest are in ``haystack_deep_research.errors``), and the results and
events a run hands back. The rest is imported from its subpackage (docs/reference/index.md, docs/how-it-works.md).
Importing the package adds it to Haystack's deserialization allowlist, so a shape it built loads back as itself;
heavy clients (openai, tavily, trafilatura, pypdf) are imported when first used.
"""

from typing import TYPE_CHECKING

from haystack.core.serialization_security import allow_deserialization_module

from haystack_deep_research._lazy import lazy_exports
from haystack_deep_research.errors import (
    ConfigurationError,
    DeepResearchError,
    InvalidQuestionError,
    ResearchRunError,
    RunDirError,
    StructuredOutputError,
    UsageError,
)

if TYPE_CHECKING:
    from haystack_deep_research.agents import (
        create_deep_agent,
        create_deep_research_agent,
        create_iterative_research_agent,
        create_research_workflow,
    )
    from haystack_deep_research.events import Event
    from haystack_deep_research.evidence import EvidenceLedger, SourceEntry
    from haystack_deep_research.report import ReportStyle, ResearchSummary, ask_report
    from haystack_deep_research.run import EventStream, ResearchCache, ResearchRun, RunInputs
    from haystack_deep_research.settings import Budgets, Grounding, Price, Sources
    from haystack_deep_research.sources import MCPServer, WebSearchTool
    from haystack_deep_research.tools import ReadUrlTool
    from haystack_deep_research.web import FetchLimits, UrlPolicy

# Everything else is imported when first used: `import haystack_deep_research` costs little more than `import haystack`.
__getattr__, __dir__ = lazy_exports(
    __name__,
    globals(),
    {
        ".agents": (
            "create_deep_agent",
            "create_deep_research_agent",
            "create_iterative_research_agent",
            "create_research_workflow",
        ),
        ".events": ("Event",),
        ".evidence": ("EvidenceLedger", "SourceEntry"),
        ".report": ("ReportStyle", "ResearchSummary", "ask_report"),
        ".run": ("EventStream", "ResearchCache", "ResearchRun", "RunInputs"),
        ".settings": ("Budgets", "Grounding", "Price", "Sources"),
        ".sources": ("MCPServer", "WebSearchTool"),
        ".tools": ("ReadUrlTool",),
        ".web": ("FetchLimits", "UrlPolicy"),
    },
)

allow_deserialization_module("haystack_deep_research")

__version__ = "0.1.0"

__all__ = [
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
