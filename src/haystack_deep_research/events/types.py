"""
The typed events (docs/how-it-works.md, "Events"): those of a run, of the research itself (the sub-researchers or a
deep agent's subagents, the searches and pages they read, the iterative agent's rounds), of an agent's own loop and of
the deep agent's layers, and of a multi-item scan (in the scan's own stream, each with the scan's id as its
``run_id``, the phase ``scan`` and its item). Every event carries the id of its run, its phase and, for events of a
sub-researcher, its sub-topic; :meth:`Event.describe` renders it as one line for progress displays. Both agent shapes
emit the tool events; the deep research agent emits ``PlanReviewed`` (with ``approve_plan``), the deep agent the
capability events.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar, dataclass_transform


@dataclass_transform(frozen_default=True, kw_only_default=True)
@dataclass(frozen=True, kw_only=True)
class Event:
    """
    Something that happened in a run. A subclass that names its ``kind`` (``class Notice(Event, kind="notice",
    line="{text}")``) becomes a frozen keyword-only dataclass, whose ``describe()`` fills ``line`` with its fields.

    :param phase: The phase it belongs to (``scope``, ``research``, ``write``, ...).
    :param run_id: The id of its run; filled in when the run emits it.
    :param researcher: The sub-topic of the sub-researcher it belongs to, or ``""`` for the run itself.
    :param at: Wall-clock time (seconds since the epoch) when it was created.
    """

    kind: ClassVar[str] = "event"
    _line: ClassVar[str] = ""
    phase: str
    run_id: str = ""
    researcher: str = ""
    at: float = field(default_factory=time.time)

    def __init_subclass__(cls, *, kind: str | None = None, line: str = "", **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if kind is not None:
            cls.kind, cls._line = kind, line
            dataclass(frozen=True, kw_only=True)(cls)

    def describe(self) -> str:
        """:returns: The event as one human-readable line."""
        return self._line.format_map(vars(self)) if self._line else self.kind

    def to_dict(self) -> dict[str, Any]:
        """:returns: The event as a JSON-ready dictionary, with its ``kind`` and ``message``."""
        return {"kind": self.kind, **asdict(self), "message": self.describe()}


class RunStarted(Event, kind="run_started", line="run started: {question}"):
    """A run began. :param question: The research question."""

    question: str


class RunEnded(
    Event, kind="run_ended", line="run ended ({exit_reason}): {notes} notes, {sources} sources, {warnings} warnings"
):
    """
    A run ended.

    :param exit_reason: Why it ended.
    :param notes: How many notes it gathered.
    :param sources: How many sources its ledger holds.
    :param warnings: How many warnings it raised.
    """

    exit_reason: str
    notes: int = 0
    sources: int = 0
    warnings: int = 0


class PhaseStarted(Event, kind="phase_started"):
    """A phase began. :param detail: What it does."""

    detail: str = ""

    def describe(self) -> str:
        return self.detail or f"{self.phase} started"


class PhaseEnded(Event, kind="phase_ended"):
    """A phase ended. :param detail: What it gave."""

    detail: str = ""

    def describe(self) -> str:
        return self.detail or f"{self.phase} done"


class Notice(Event, kind="notice", line="{text}"):
    """Something worth showing happened. :param text: What."""

    text: str


class WarningRaised(Event, kind="warning", line="warning: {text}"):
    """Something went wrong without ending the run; it is also in the ``warnings`` output. :param text: What."""

    text: str


class CitationRemoved(Event, kind="citation_removed", line="removed a citation of {url} (never read)"):
    """A citation of a URL the run never read was removed. :param url: The URL. :param line: Its report line."""

    url: str
    line: int = 0


class BudgetReached(Event, kind="budget_reached"):
    """
    A budget is spent. :param reason: ``token_budget``, ``cost_budget`` or ``time_budget``. :param detail: The budget
    in words.
    """

    reason: str
    detail: str = ""

    def describe(self) -> str:
        return f"{self.detail or self.reason} is spent"


class UsageRecorded(Event, kind="usage"):
    """
    Token usage of model calls was counted into the run: emitted each time a phase's usage grows.

    :param tokens: The tokens just counted (of the ``researcher`` when set, else of the run's own models).
    :param run_tokens: The run's tokens so far, all phases.
    :param cost: What the run has cost so far in US dollars, or ``None`` while some phase's cost is unknown.
    """

    tokens: int
    run_tokens: int
    cost: float | None = None

    def describe(self) -> str:
        spent = f", ${self.cost:.4f}" if self.cost is not None else ""
        return f"{self.tokens} tokens ({self.run_tokens} in the run so far{spent})"


class ReportReady(Event, kind="report_ready", line="report ready ({verified} citations verified)"):
    """The verified report is in place. :param verified: Citations verified. :param removed: Citations removed."""

    verified: int
    removed: int = 0


def _by(agent: str) -> str:
    return f"subagent {agent} " if agent else ""


class SubagentSpawned(Event, kind="subagent_spawned"):
    """
    A sub-researcher started.

    :param subtopic: Its sub-topic.
    :param slot: Its number among the run's delegations (1-based).
    :param planned: How many sub-topics the run has planned so far (at least ``slot``).
    :param limit: How many sub-topics the run may delegate.
    :param agent: The name of the deep agent's subagent that runs the task (then ``subtopic`` is the task), or ``""``.
    """

    subtopic: str
    slot: int = 0
    planned: int = 0
    limit: int = 0
    agent: str = ""

    def describe(self) -> str:
        if self.agent:
            return f"subagent {self.agent}: {self.subtopic}"
        return f"[{self.slot}/{self.planned}] researching: {self.subtopic}"


class SubagentCompleted(Event, kind="subagent_completed"):
    """
    A sub-researcher returned its note.

    :param subtopic: Its sub-topic.
    :param note: The note it returned.
    :param partial: Whether it stopped early.
    :param restored: Whether the note came from the run directory instead of a new researcher.
    :param agent: The name of the deep agent's subagent that ran the task, or ``""``.
    """

    subtopic: str
    note: str
    partial: bool = False
    restored: bool = False
    agent: str = ""

    def describe(self) -> str:
        if self.restored and not self.agent:
            return f"restored from the run directory, not researched again: {self.subtopic}"
        return f"{_by(self.agent)}done{' (partial)' if self.partial else ''}: {self.subtopic}"


class SubagentFailed(Event, kind="subagent_failed"):
    """
    A sub-researcher failed without a note; the orchestrator gets the error as the tool result.

    :param subtopic: Its sub-topic.
    :param error: The error, as ``Type: message``.
    :param agent: The name of the deep agent's subagent that ran the task, or ``""``.
    """

    subtopic: str
    error: str
    agent: str = ""

    def describe(self) -> str:
        return f"{_by(self.agent)}failed: {self.subtopic} ({self.error})"


class SearchDone(Event, kind="search"):
    """
    A search returned.

    :param query: The query.
    :param results: How many results it gave.
    :param cached: Whether the results came from the cross-run cache instead of the search engine.
    """

    query: str
    results: int
    cached: bool = False

    def describe(self) -> str:
        return f"searched '{self.query}': {self.results} result(s){' (cached)' if self.cached else ''}"


class PageRead(Event, kind="page_read"):
    """
    A page was read and summarized.

    :param url: The URL.
    :param title: Its title.
    :param chars: Characters of text given to the summarizer.
    :param shared: Whether the summary was shared by another researcher of the run instead of read again.
    :param cached: Whether the page's text came from the cross-run cache instead of being fetched.
    """

    url: str
    title: str = ""
    chars: int = 0
    shared: bool = False
    cached: bool = False

    def describe(self) -> str:
        verb = "shared" if self.shared else "read (cached)" if self.cached else "read"
        return f"{verb} {self.url}"


class PageRefused(Event, kind="page_refused", line="could not read {url}: {reason}"):
    """A page could not be read. :param url: The URL. :param reason: Why."""

    url: str
    reason: str


class SearchDecided(Event, kind="search_decided"):
    """
    The analysis model decided (the seed's ``nextSearchTopic`` and ``shouldContinue``).

    :param topics: The topics to search next (after repeats were refused); empty when the search stops.
    :param should_continue: Whether the search goes on.
    :param round: The round the decision is for (1-based).
    """

    topics: tuple[str, ...] = ()
    should_continue: bool = False
    round: int = 0

    def describe(self) -> str:
        if not self.should_continue:
            return f"round {self.round}: the analysis says the findings suffice"
        return f"round {self.round}: next search: {'; '.join(self.topics)}"


class TopicRefused(Event, kind="topic_refused", line="refused a repeated topic: {topic}"):
    """A proposed topic was refused: it repeats a topic already searched. :param topic: The topic."""

    topic: str


class SearchRoundDone(Event, kind="search_round"):
    """
    A round of searches ended; ``describe()`` says which of how many, and how many topics it searched.

    :param round: The round (1-based).
    :param depth: The rounds the run may make.
    :param topics: The topics the round searched.
    """

    round: int
    depth: int
    topics: tuple[str, ...] = ()

    def describe(self) -> str:
        searched = f" ({len(self.topics)} topic{'' if len(self.topics) == 1 else 's'})" if self.topics else ""
        return f"search round {self.round} of {self.depth} done{searched}"


_PREVIEW = 120


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _PREVIEW else flat[: _PREVIEW - 1] + "…"


class ToolCalled(Event, kind="tool_called", line="calling {tool}"):
    """A tool call is about to run. :param tool: The tool's name. :param arguments: The arguments it runs with."""

    tool: str
    arguments: dict[str, Any]


class ToolReturned(Event, kind="tool_returned"):
    """
    A tool call returned.

    :param tool: The tool's name.
    :param result: Its result as the model reads it (shortened in :meth:`describe` only).
    :param error: Whether it failed (the result is then the error the model reads).
    """

    tool: str
    result: str
    error: bool = False

    def describe(self) -> str:
        return f"{self.tool} {'failed' if self.error else 'returned'}: {_preview(self.result)}"


class PlanReviewed(Event, kind="plan_reviewed"):
    """
    A person reviewed a sub-topic the orchestrator planned, before any researcher started on it.

    :param subtopic: The sub-topic as planned.
    :param decision: ``"accept"``, ``"edit"`` (researched as ``edited_to``) or ``"drop"`` (not researched; the
        orchestrator reads ``feedback``).
    :param edited_to: The sub-topic researched instead, for an edit; else ``None``.
    :param feedback: What the orchestrator was told, or ``None``.
    :param restored: Whether the decision came from the run directory instead of the person.
    """

    subtopic: str
    decision: str
    edited_to: str | None = None
    feedback: str | None = None
    restored: bool = False

    def describe(self) -> str:
        said = {"accept": "accepted", "edit": f"edited to '{self.edited_to}'", "drop": "dropped"}
        verb = said.get(self.decision, self.decision)
        return f"plan: {verb}{' (from the run directory)' if self.restored else ''}: {self.subtopic}"


class Reflected(Event, kind="reflected"):
    """
    Reflexion judged the last step.

    :param step_ok: Whether the step moved the task forward.
    :param critique: What was wrong with it, or why it was right.
    :param plan: The plan after the reflection.
    :param plan_rewritten: Whether the plan was rewritten.
    """

    step_ok: bool
    critique: str = ""
    plan: str = ""
    plan_rewritten: bool = False

    def describe(self) -> str:
        if self.plan_rewritten:
            return f"the last step was wrong, plan rewritten: {_preview(self.critique)}"
        return f"the last step was {'fine' if self.step_ok else 'wrong'}"


class ConversationCondensed(
    Event, kind="condensed", line="condensed {condensed} older message(s); {kept} kept verbatim"
):
    """Older turns became a summary. :param condensed: Messages replaced. :param kept: Messages kept verbatim."""

    condensed: int
    kept: int


class FileRead(Event, kind="fs_read", line="read {path}"):
    """A scratch-space file was read. :param path: Its path (a directory or pattern for ``ls``, ``glob``, ``grep``)."""

    path: str


class FileWritten(Event, kind="fs_write", line="wrote {path} ({chars} characters)"):
    """A scratch-space file was written. :param path: Its path. :param chars: Its size afterwards, in characters."""

    path: str
    chars: int = 0


class TodoAdded(Event, kind="todo_added", line="todo: {content}"):
    """An item joined the todo list. :param content: What is to be done."""

    content: str


class TodoCompleted(Event, kind="todo_completed", line="done: {content}"):
    """An item of the todo list was completed. :param content: What was done."""

    content: str


class ExitReached(Event, kind="exit_reached"):
    """
    An exit condition fired and the agent's loop ends.

    :param reason: The condition's reason, also the run's ``exit_reason``.
    :param detail: The condition in words.
    :param final_message_preview: The beginning of the final answer.
    """

    reason: str
    detail: str = ""
    final_message_preview: str = ""

    def describe(self) -> str:
        return f"exit: {self.detail or self.reason}"


class ScanStarted(Event, kind="scan_started", line="scan started: {total} item(s), {done} already done"):
    """
    A scan began.

    :param total: How many distinct items the provider listed.
    :param done: How many of them earlier scans already finished (they are skipped).
    """

    total: int
    done: int = 0


class ItemSkipped(Event, kind="item_skipped", line="skipped {item}: {reason}"):
    """An item is not researched. :param item: Its name. :param reason: Why."""

    item: str
    reason: str


class ItemStarted(Event, kind="item_started"):
    """An attempt at an item began. :param item: Its name. :param attempt: The attempt's number (1-based)."""

    item: str
    attempt: int = 1

    def describe(self) -> str:
        return f"researching {self.item}" + (f" (attempt {self.attempt})" if self.attempt > 1 else "")


class ItemDone(Event, kind="item_done", line="done {item} in {seconds:.1f} s"):
    """
    An item's row is written.

    :param item: Its name.
    :param attempt: The attempt that succeeded.
    :param seconds: How long that attempt took.
    """

    item: str
    attempt: int = 1
    seconds: float = 0.0


class ItemFailed(Event, kind="item_failed"):
    """
    An attempt at an item failed.

    :param item: Its name.
    :param attempt: The attempt's number.
    :param error: What went wrong, as ``Type: message``.
    :param final: Whether no attempt is left: the item is recorded as failed.
    """

    item: str
    attempt: int
    error: str
    final: bool = False

    def describe(self) -> str:
        outcome = "failed" if self.final else f"attempt {self.attempt} failed, retrying"
        return f"{self.item} {outcome}: {self.error}"


class ScanEnded(
    Event, kind="scan_ended", line="scan ended: {rows} row(s), {failed} failed, {skipped} skipped in {seconds:.1f} s"
):
    """
    A scan ended.

    :param rows: Rows written by this scan.
    :param failed: Items recorded as failed by this scan.
    :param skipped: Items skipped (done before, or listed twice).
    :param seconds: The scan's wall-clock time.
    """

    rows: int
    failed: int = 0
    skipped: int = 0
    seconds: float = 0.0
