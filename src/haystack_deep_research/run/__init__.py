"""
The run layer: one :class:`ResearchRun` per run, its lifecycle hooks, budget, journal, read cache, usage and cost, and
the phase driver every hook and tool is written with.
"""

from haystack_deep_research.run.budget import RunBudget
from haystack_deep_research.run.cache import CacheStore, ResearchCache
from haystack_deep_research.run.context import RunInputs, current_run
from haystack_deep_research.run.cost import usage_cost
from haystack_deep_research.run.door import MAX_QUESTION_CHARS, check_question
from haystack_deep_research.run.journal import JOURNAL_FILE, LEDGER_FILE, REPORT_FILE
from haystack_deep_research.run.phases import Call, Phase, blocking, model_name
from haystack_deep_research.run.recording import EXCHANGES_FILE, Recording, RecordingChatGenerator, ReplayChatGenerator
from haystack_deep_research.run.research_run import ResearchRun
from haystack_deep_research.run.shape import PipelineShape
from haystack_deep_research.run.stream import EventStream
from haystack_deep_research.run.view import RunView

__all__ = [
    "EXCHANGES_FILE",
    "JOURNAL_FILE",
    "LEDGER_FILE",
    "MAX_QUESTION_CHARS",
    "REPORT_FILE",
    "CacheStore",
    "Call",
    "EventStream",
    "Phase",
    "PipelineShape",
    "Recording",
    "RecordingChatGenerator",
    "ReplayChatGenerator",
    "ResearchCache",
    "ResearchRun",
    "RunBudget",
    "RunInputs",
    "RunView",
    "blocking",
    "check_question",
    "current_run",
    "model_name",
    "usage_cost",
]
