"""
haystack-deep-research: turn a question into a structured, cited Markdown research report.

>>> from haystack.dataclasses import ChatMessage
>>> from haystack_deep_research import create_deep_research_agent
>>> agent = create_deep_research_agent()
>>> result = agent.run(messages=[ChatMessage.from_user("your research question")])  # doctest: +SKIP
>>> print(result["report"])  # doctest: +SKIP

Importing the package adds it to Haystack's deserialization allowlist, so an agent it built can be loaded back
with ``Agent.from_dict`` or from a Pipeline YAML without further configuration. Heavy clients (openai, tavily,
trafilatura, pypdf) are imported when first used.

The package is organised by concept; each subpackage's ``__init__`` is its public face:
``agents`` (the shapes), ``run`` (one run's lifecycle and data), ``events``, ``research``, ``report``,
``evidence``, ``tools``, ``web``, ``cli`` and ``testing``.
"""

from haystack.core.serialization_security import allow_deserialization_module

from haystack_deep_research.agents import create_deep_research_agent
from haystack_deep_research.errors import (
    ConfigurationError,
    DeepResearchError,
    InvalidQuestionError,
    MissingCredentialsError,
    ResearchRunError,
    RunDirError,
    RunDirInUseError,
    StructuredOutputError,
    UsageError,
)
from haystack_deep_research.events import Event, EventStream
from haystack_deep_research.evidence import EvidenceLedger, SourceEntry
from haystack_deep_research.report import GroundingStage, ResearchSummary, StructuredOutputStage, WriteHook
from haystack_deep_research.research import FinalSummaryHook, ResearchSubtopicTool, ScopeHook
from haystack_deep_research.run import Price, ResearchRun
from haystack_deep_research.state import BRIEF_KEY, EVENTS_KEY, PROGRESS_KEY, RUN_DIR_KEY
from haystack_deep_research.tools import ReadUrlTool, RunToolset, WebSearchTool
from haystack_deep_research.web import FetchLimits, UrlPolicy

allow_deserialization_module("haystack_deep_research")

__version__ = "0.1.0"

__all__ = [
    "BRIEF_KEY",
    "EVENTS_KEY",
    "PROGRESS_KEY",
    "RUN_DIR_KEY",
    "ConfigurationError",
    "DeepResearchError",
    "Event",
    "EventStream",
    "EvidenceLedger",
    "FetchLimits",
    "FinalSummaryHook",
    "GroundingStage",
    "InvalidQuestionError",
    "MissingCredentialsError",
    "Price",
    "ReadUrlTool",
    "ResearchRun",
    "ResearchRunError",
    "ResearchSubtopicTool",
    "ResearchSummary",
    "RunDirError",
    "RunDirInUseError",
    "RunToolset",
    "ScopeHook",
    "SourceEntry",
    "StructuredOutputError",
    "StructuredOutputStage",
    "UrlPolicy",
    "UsageError",
    "WebSearchTool",
    "WriteHook",
    "create_deep_research_agent",
]
