"""
The typed events of a run. Every event carries the id of its run, the phase it belongs to and, for events of a
sub-researcher, the sub-topic it researches; :meth:`Event.describe` renders it as one line for progress displays.

Event classes (``kind`` in brackets)::

    Event
    ├── RunStarted (run_started)            a run began: the question
    ├── RunEnded (run_ended)                the run ended: exit reason, counts
    ├── PhaseStarted (phase_started)        a phase began (scope, write, ground, structure, ...)
    ├── PhaseEnded (phase_ended)            a phase ended
    ├── Notice (notice)                     something worth showing happened
    ├── WarningRaised (warning)             something went wrong without ending the run
    ├── SubagentSpawned (subagent_spawned)  a sub-researcher (or a deep agent's subagent) started
    ├── SubagentCompleted (subagent_completed)  it returned its note (restored from a run directory, or partial)
    ├── SubagentFailed (subagent_failed)    it failed: no note (the orchestrator reads the error)
    ├── SearchDone (search)                 a search returned results
    ├── PageRead (page_read)                a page was fetched, extracted and summarized
    ├── PageRefused (page_refused)          a page could not be read, and why
    ├── CitationRemoved (citation_removed)  a citation of something the run never read left the report
    ├── BudgetReached (budget_reached)      a token or time budget is spent
    ├── UsageRecorded (usage)               model calls' token usage was counted: the run's tokens and cost so far
    └── ReportReady (report_ready)          the verified report is in place

The events of an agent's loop and of the deep agent's layers are in :mod:`haystack_deep_research.events.agent`.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

__all__ = [
    "BudgetReached",
    "CitationRemoved",
    "Event",
    "Notice",
    "PageRead",
    "PageRefused",
    "PhaseEnded",
    "PhaseStarted",
    "ReportReady",
    "RunEnded",
    "RunStarted",
    "SearchDone",
    "SubagentCompleted",
    "SubagentFailed",
    "SubagentSpawned",
    "UsageRecorded",
    "WarningRaised",
]


@dataclass(frozen=True, kw_only=True)
class Event:
    """
    Something that happened in a run.

    :param phase: The phase it belongs to (``scope``, ``research``, ``write``, ...).
    :param run_id: The id of its run; filled in when the run emits it.
    :param researcher: The sub-topic of the sub-researcher it belongs to, or ``""`` for the run itself.
    :param at: Wall-clock time (seconds since the epoch) when it was created.
    """

    kind: ClassVar[str] = "event"
    phase: str
    run_id: str = ""
    researcher: str = ""
    at: float = field(default_factory=time.time)

    def describe(self) -> str:
        """:returns: The event as one human-readable line."""
        return self.kind

    def to_dict(self) -> dict[str, Any]:
        """:returns: The event as a JSON-ready dictionary, with its ``kind`` and ``message``."""
        return {"kind": self.kind, **asdict(self), "message": self.describe()}


@dataclass(frozen=True, kw_only=True)
class RunStarted(Event):
    """A run began. :param question: The research question."""

    kind: ClassVar[str] = "run_started"
    question: str

    def describe(self) -> str:
        return f"run started: {self.question}"


@dataclass(frozen=True, kw_only=True)
class RunEnded(Event):
    """
    A run ended.

    :param exit_reason: Why it ended.
    :param notes: How many notes it gathered.
    :param sources: How many sources its ledger holds.
    :param warnings: How many warnings it raised.
    """

    kind: ClassVar[str] = "run_ended"
    exit_reason: str
    notes: int = 0
    sources: int = 0
    warnings: int = 0

    def describe(self) -> str:
        return f"run ended ({self.exit_reason}): {self.notes} notes, {self.sources} sources, {self.warnings} warnings"


@dataclass(frozen=True, kw_only=True)
class PhaseStarted(Event):
    """A phase began. :param detail: What it does."""

    kind: ClassVar[str] = "phase_started"
    detail: str = ""

    def describe(self) -> str:
        return self.detail or f"{self.phase} started"


@dataclass(frozen=True, kw_only=True)
class PhaseEnded(Event):
    """A phase ended. :param detail: What it gave."""

    kind: ClassVar[str] = "phase_ended"
    detail: str = ""

    def describe(self) -> str:
        return self.detail or f"{self.phase} done"


@dataclass(frozen=True, kw_only=True)
class Notice(Event):
    """Something worth showing happened. :param text: What."""

    kind: ClassVar[str] = "notice"
    text: str

    def describe(self) -> str:
        return self.text


@dataclass(frozen=True, kw_only=True)
class WarningRaised(Event):
    """Something went wrong without ending the run; it is also in the ``warnings`` output. :param text: What."""

    kind: ClassVar[str] = "warning"
    text: str

    def describe(self) -> str:
        return f"warning: {self.text}"


@dataclass(frozen=True, kw_only=True)
class SubagentSpawned(Event):
    """
    A sub-researcher started.

    :param subtopic: Its sub-topic.
    :param slot: Its number among the run's delegations (1-based).
    :param planned: How many sub-topics the run has planned so far (at least ``slot``).
    :param limit: How many sub-topics the run may delegate.
    :param agent: The name of the deep agent's subagent that runs the task (then ``subtopic`` is the task), or ``""``.
    """

    kind: ClassVar[str] = "subagent_spawned"
    subtopic: str
    slot: int = 0
    planned: int = 0
    limit: int = 0
    agent: str = ""

    def describe(self) -> str:
        if self.agent:
            return f"subagent {self.agent}: {self.subtopic}"
        return f"[{self.slot}/{self.planned}] researching: {self.subtopic}"


@dataclass(frozen=True, kw_only=True)
class SubagentCompleted(Event):
    """
    A sub-researcher returned its note.

    :param subtopic: Its sub-topic.
    :param note: The note it returned.
    :param partial: Whether it stopped early.
    :param restored: Whether the note came from the run directory instead of a new researcher.
    :param agent: The name of the deep agent's subagent that ran the task, or ``""``.
    """

    kind: ClassVar[str] = "subagent_completed"
    subtopic: str
    note: str
    partial: bool = False
    restored: bool = False
    agent: str = ""

    def describe(self) -> str:
        if self.agent:
            return f"subagent {self.agent} done{' (partial)' if self.partial else ''}: {self.subtopic}"
        if self.restored:
            return f"restored from the run directory, not researched again: {self.subtopic}"
        return f"done{' (partial)' if self.partial else ''}: {self.subtopic}"


@dataclass(frozen=True, kw_only=True)
class SubagentFailed(Event):
    """
    A sub-researcher failed without a note; the orchestrator gets the error as the tool result.

    :param subtopic: Its sub-topic.
    :param error: The error, as ``Type: message``.
    :param agent: The name of the deep agent's subagent that ran the task, or ``""``.
    """

    kind: ClassVar[str] = "subagent_failed"
    subtopic: str
    error: str
    agent: str = ""

    def describe(self) -> str:
        if self.agent:
            return f"subagent {self.agent} failed: {self.subtopic} ({self.error})"
        return f"failed: {self.subtopic} ({self.error})"


@dataclass(frozen=True, kw_only=True)
class SearchDone(Event):
    """
    A search returned.

    :param query: The query.
    :param results: How many results it gave.
    :param cached: Whether the results came from the cross-run cache instead of the search engine.
    """

    kind: ClassVar[str] = "search"
    query: str
    results: int
    cached: bool = False

    def describe(self) -> str:
        return f"searched '{self.query}': {self.results} result(s){' (cached)' if self.cached else ''}"


@dataclass(frozen=True, kw_only=True)
class PageRead(Event):
    """
    A page was read and summarized.

    :param url: The URL.
    :param title: Its title.
    :param chars: Characters of text given to the summarizer.
    :param shared: Whether the summary was shared by another researcher of the run instead of read again.
    :param cached: Whether the page's text came from the cross-run cache instead of being fetched.
    """

    kind: ClassVar[str] = "page_read"
    url: str
    title: str = ""
    chars: int = 0
    shared: bool = False
    cached: bool = False

    def describe(self) -> str:
        verb = "shared" if self.shared else "read (cached)" if self.cached else "read"
        return f"{verb} {self.url}"


@dataclass(frozen=True, kw_only=True)
class PageRefused(Event):
    """A page could not be read. :param url: The URL. :param reason: Why."""

    kind: ClassVar[str] = "page_refused"
    url: str
    reason: str

    def describe(self) -> str:
        return f"could not read {self.url}: {self.reason}"


@dataclass(frozen=True, kw_only=True)
class CitationRemoved(Event):
    """A citation of a URL the run never read was removed. :param url: The URL. :param line: Its report line."""

    kind: ClassVar[str] = "citation_removed"
    url: str
    line: int = 0

    def describe(self) -> str:
        return f"removed a citation of {self.url} (never read)"


@dataclass(frozen=True, kw_only=True)
class BudgetReached(Event):
    """A budget is spent. :param reason: ``token_budget`` or ``time_budget``. :param detail: The budget in words."""

    kind: ClassVar[str] = "budget_reached"
    reason: str
    detail: str = ""

    def describe(self) -> str:
        return f"{self.detail or self.reason} is spent"


@dataclass(frozen=True, kw_only=True)
class UsageRecorded(Event):
    """
    Token usage of model calls was counted into the run: emitted each time a phase's usage grows.

    :param tokens: The tokens just counted (of the ``researcher`` when set, else of the run's own models).
    :param run_tokens: The run's tokens so far, all phases.
    :param cost: What the run has cost so far in US dollars, or ``None`` while some phase's cost is unknown.
    """

    kind: ClassVar[str] = "usage"
    tokens: int
    run_tokens: int
    cost: float | None = None

    def describe(self) -> str:
        spent = f", ${self.cost:.4f}" if self.cost is not None else ""
        return f"{self.tokens} tokens ({self.run_tokens} in the run so far{spent})"


@dataclass(frozen=True, kw_only=True)
class ReportReady(Event):
    """The verified report is in place. :param verified: Citations verified. :param removed: Citations removed."""

    kind: ClassVar[str] = "report_ready"
    verified: int
    removed: int = 0

    def describe(self) -> str:
        return f"report ready ({self.verified} citations verified)"
