"""
haystack-deep-research: turn a question into a structured, cited Markdown research report.

>>> from haystack.dataclasses import ChatMessage
>>> from haystack_deep_research import create_deep_research_agent
>>> agent = create_deep_research_agent()
>>> result = agent.run(messages=[ChatMessage.from_user("your research question")])  # doctest: +SKIP
>>> print(result["report"])  # doctest: +SKIP

Importing the package adds it to Haystack's deserialization allowlist, so an agent it built can be loaded back
with ``Agent.from_dict`` or from a Pipeline YAML without further configuration.
"""

from haystack.core.serialization_security import allow_deserialization_module

from haystack_deep_research.agent import create_deep_research_agent
from haystack_deep_research.errors import (
    ConfigurationError,
    DeepResearchError,
    InvalidQuestionError,
    MissingCredentialsError,
    ResearchRunError,
    RunDirError,
    StructuredOutputError,
    UsageError,
)
from haystack_deep_research.evidence.ledger import EvidenceLedger, SourceEntry
from haystack_deep_research.grounding import GroundingStage
from haystack_deep_research.hooks import ScopeHook, WriteHook
from haystack_deep_research.researcher import FinalSummaryHook, ResearchSubtopicTool
from haystack_deep_research.state import PROGRESS_KEY, RUN_DIR_KEY
from haystack_deep_research.structured import ResearchSummary, StructuredOutputStage
from haystack_deep_research.tools.read_url import ReadUrlTool
from haystack_deep_research.tools.web_search import WebSearchTool
from haystack_deep_research.web import FetchLimits, UrlPolicy

allow_deserialization_module("haystack_deep_research")

__version__ = "0.1.0"

__all__ = [
    "PROGRESS_KEY",
    "RUN_DIR_KEY",
    "ConfigurationError",
    "DeepResearchError",
    "EvidenceLedger",
    "FetchLimits",
    "FinalSummaryHook",
    "GroundingStage",
    "InvalidQuestionError",
    "MissingCredentialsError",
    "ReadUrlTool",
    "ResearchRunError",
    "ResearchSubtopicTool",
    "ResearchSummary",
    "RunDirError",
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
