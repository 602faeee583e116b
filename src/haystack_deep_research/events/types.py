"""
The typed events of a run (docs/how-it-works.md, "Events"). Every event carries the id of its run, the phase it
belongs to and, for events of a sub-researcher, the sub-topic it researches; :meth:`Event.describe` renders it as one
line for progress displays. Those of the research itself are in :mod:`haystack_deep_research.events.research`, those
of an agent's loop and of the deep agent's layers in :mod:`haystack_deep_research.events.agent`.
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
    """A budget is spent. :param reason: ``token_budget`` or ``time_budget``. :param detail: The budget in words."""

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
