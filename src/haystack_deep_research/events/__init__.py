"""
Typed events: what happens in a run, as it happens.

Pass ``inputs=RunInputs(on_event=on_event)`` to a run to receive every :class:`Event`, or iterate them with
:class:`EventStream`. ``RunInputs(on_event=progress_view(progress))`` gives a ``progress(phase, message)`` callback
each event as one ``progress(phase, line)`` call.
"""

from haystack_deep_research.events.agent import (
    ConversationCondensed,
    ExitReached,
    FileRead,
    FileWritten,
    PlanReviewed,
    Reflected,
    TodoAdded,
    TodoCompleted,
    ToolCalled,
    ToolReturned,
)
from haystack_deep_research.events.bus import Subscriber, progress_view
from haystack_deep_research.events.research import (
    PageRead,
    PageRefused,
    SearchDecided,
    SearchDone,
    SearchRoundDone,
    SubagentCompleted,
    SubagentFailed,
    SubagentSpawned,
    TopicRefused,
)
from haystack_deep_research.events.scan import ItemDone, ItemFailed, ItemSkipped, ItemStarted, ScanEnded, ScanStarted
from haystack_deep_research.events.types import (
    BudgetReached,
    CitationRemoved,
    Event,
    Notice,
    PhaseEnded,
    PhaseStarted,
    ReportReady,
    RunEnded,
    RunStarted,
    UsageRecorded,
    WarningRaised,
)

__all__ = [
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
]
