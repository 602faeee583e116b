"""
haystack-deep-research: turn a question into a structured, cited Markdown research report.

>>> from haystack.dataclasses import ChatMessage
>>> from haystack_deep_research import create_deep_research_agent
>>> agent = create_deep_research_agent()
>>> result = agent.run(messages=[ChatMessage.from_user("your research question")])  # doctest: +SKIP
>>> print(result["report"])  # doctest: +SKIP

``create_deep_agent(chat_generator=..., tools=..., system_prompt=...)`` builds the other shape: one agent loop with
composable exit conditions, reflexion, per-turn grounding and opt-in capability layers (docs/deep-agent.md).

Importing the package adds it to Haystack's deserialization allowlist, so a shape it built can be loaded back as itself
(``type(agent).from_dict``, or from a Pipeline YAML) without further configuration. Heavy clients (openai, tavily,
trafilatura, pypdf) are imported when first used.

The names here are what a user touches: the four factories; the grouped settings every factory takes under the same
names (``Budgets``, ``Grounding``, ``Sources``, ``ReportStyle``) and what they hold (``UrlPolicy``, ``FetchLimits``,
``Price``, ``MCPServer``, ``ResearchCache``, ``WebSearchTool``, ``ReadUrlTool``); what one run is given besides its
question, the same for every shape (``RunInputs``: ``run(messages, inputs=RunInputs(run_dir=..., on_event=...))``);
the errors a caller catches most (the rest are in ``haystack_deep_research.errors``); and the
results and events a run hands back (``ResearchRun``, ``EvidenceLedger``, ``SourceEntry``, ``ResearchSummary``,
``Event``, ``EventStream``); and ``ask_report``, which answers a question from a finished run's evidence (every
shape's ``ask`` calls it with its own writer). What a user composes beyond these (exit conditions, search backends,
exports, scans, the testing kit) is imported from its subpackage; the parts the library wires itself (hooks, stages,
steps, the deep agent's layers) from their own modules.

The package is organised by concept; each subpackage's ``__init__`` is its public face:
``agents`` (the shapes), ``run`` (one run's lifecycle and data), ``events``, ``research``, ``deep_agent`` (the deep
agent's layers), ``report``, ``evidence``, ``sources``, ``tools``, ``web``, ``workflow`` (the research workflow's
steps), ``scans`` (multi-item scans), ``cli`` and ``testing``.
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
