"""
The run layer: one :class:`ResearchRun` per run, its lifecycle hooks, budget, journal, read cache, usage and cost, and
the phase driver every hook and tool is written with.
"""

from haystack_deep_research.run.bounded import DEADLINE_META, DeadlineChatGenerator
from haystack_deep_research.run.budget import RunBudget
from haystack_deep_research.run.cache import (
    CACHE_KINDS,
    DEFAULT_CACHE_TTL,
    CacheStore,
    ResearchCache,
    cache_from_dict,
    cache_to_dict,
    check_cache,
    page_key,
    search_key,
    summary_key,
)
from haystack_deep_research.run.context import event_bus, question_from, view_of
from haystack_deep_research.run.cost import DEFAULT_PRICES, PRICES_AS_OF, CostMeter, Price, price_of, usage_cost
from haystack_deep_research.run.door import (
    MAX_QUESTION_CHARS,
    RunGuard,
    check_hook_context,
    check_messages,
    check_question,
)
from haystack_deep_research.run.hooks import PhaseHook, RunBound, StatelessHook, UsesModels
from haystack_deep_research.run.journal import (
    JOURNAL_FILE,
    LEDGER_FILE,
    LOCK_FILE,
    REPORT_FILE,
    RunJournal,
    subtopic_key,
)
from haystack_deep_research.run.lifecycle import BudgetHook, CloseRunHook, OpenRunHook
from haystack_deep_research.run.outputs import publish
from haystack_deep_research.run.phases import (
    MODEL_CALL_SPAN,
    Call,
    Outcome,
    Phase,
    ask,
    blocking,
    drive,
    drive_async,
    failure,
    model_name,
    subphase,
)
from haystack_deep_research.run.read_cache import CachedRead, ReadCache, ReadClaim
from haystack_deep_research.run.recording import (
    EXCHANGES_FILE,
    Recording,
    RecordingChatGenerator,
    ReplayChatGenerator,
    prompt_key,
)
from haystack_deep_research.run.research_run import ResearchRun, RunView
from haystack_deep_research.run.shape import OpenRun, PipelineShape, current_run, running
from haystack_deep_research.run.streaming import (
    AGENT_META,
    ROLE_META,
    accepts_streaming,
    for_async,
    for_sync,
    tag_chunk,
)
from haystack_deep_research.run.usage import add_usage, total_tokens, usage_delta

__all__ = [
    "AGENT_META",
    "CACHE_KINDS",
    "DEADLINE_META",
    "DEFAULT_CACHE_TTL",
    "DEFAULT_PRICES",
    "EXCHANGES_FILE",
    "JOURNAL_FILE",
    "LEDGER_FILE",
    "LOCK_FILE",
    "MAX_QUESTION_CHARS",
    "MODEL_CALL_SPAN",
    "PRICES_AS_OF",
    "REPORT_FILE",
    "ROLE_META",
    "BudgetHook",
    "CacheStore",
    "CachedRead",
    "Call",
    "CloseRunHook",
    "CostMeter",
    "DeadlineChatGenerator",
    "OpenRun",
    "OpenRunHook",
    "Outcome",
    "Phase",
    "PhaseHook",
    "PipelineShape",
    "Price",
    "ReadCache",
    "ReadClaim",
    "Recording",
    "RecordingChatGenerator",
    "ReplayChatGenerator",
    "ResearchCache",
    "ResearchRun",
    "RunBound",
    "RunBudget",
    "RunGuard",
    "RunJournal",
    "RunView",
    "StatelessHook",
    "UsesModels",
    "accepts_streaming",
    "add_usage",
    "ask",
    "blocking",
    "cache_from_dict",
    "cache_to_dict",
    "check_cache",
    "check_hook_context",
    "check_messages",
    "check_question",
    "current_run",
    "drive",
    "drive_async",
    "event_bus",
    "failure",
    "for_async",
    "for_sync",
    "model_name",
    "page_key",
    "price_of",
    "prompt_key",
    "publish",
    "question_from",
    "running",
    "search_key",
    "subphase",
    "subtopic_key",
    "summary_key",
    "tag_chunk",
    "total_tokens",
    "usage_cost",
    "usage_delta",
    "view_of",
]
