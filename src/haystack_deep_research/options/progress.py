"""
Where a run stands and how it ended, for every surface that follows one: the command's displays, the notebook's live
progress and the MCP server's status line fold the same events (:class:`RunTracker`) and say the same outcome
(:class:`RunSummary`, :func:`outcome_line`, :func:`money`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any

from haystack_deep_research import events
from haystack_deep_research.options.exit_codes import in_words
from haystack_deep_research.run._budget import total_tokens
from haystack_deep_research.state import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    PHASE_ORCHESTRATOR,
    PHASE_RESEARCH,
    PHASE_RUN,
    PHASE_SUMMARIZE,
)

__all__ = [
    "DONE",
    "FAILED",
    "PARTIAL",
    "RESTORED",
    "RUNNING",
    "STATE_MARKS",
    "STOPPED",
    "Researcher",
    "RunProgress",
    "RunSummary",
    "RunTracker",
    "money",
    "outcome_line",
]


RUNNING, DONE, PARTIAL, FAILED, RESTORED, STOPPED = "running", "done", "partial", "failed", "restored", "stopped"
"""A researcher's states: ``restored`` is a note taken from the run directory, ``stopped`` one cut short (Ctrl-C,
SIGTERM)."""

STATE_MARKS = {
    RUNNING: ("●", "yellow"),
    DONE: ("✓", "green"),
    PARTIAL: ("◐", "yellow"),
    FAILED: ("✗", "red"),
    RESTORED: ("↺", "cyan"),
    STOPPED: ("■", "red"),
}
"""How each state shows: its mark, and the colour of the live view."""

_STAGE_OF = {PHASE_ORCHESTRATOR: PHASE_RESEARCH, PHASE_SUMMARIZE: PHASE_RESEARCH}
_COPIED = ("question", "limit", "tokens", "cost", "verified", "removed", "exit_reason", "rounds", "depth", "searches")
"""The fields of :class:`RunProgress` that the tracker holds as they are, in ``_<field>``."""


@dataclass(frozen=True)
class Stage:
    """One stage of the run: its phase name, how long it took (so far), whether it is under way."""

    name: str
    seconds: float
    active: bool


@dataclass(frozen=True)
class Researcher:
    """One sub-researcher, as it stands."""

    slot: int  # its number among the run's delegations (0 for a note restored from the run directory)
    subtopic: str
    state: str  # RUNNING, DONE, PARTIAL, FAILED, RESTORED or STOPPED
    searches: int = 0
    pages: int = 0
    tokens: int = 0  # its model calls' and its summarizer's
    seconds: float = 0.0  # how long it took, or has taken so far
    error: str = ""  # why it failed, if it did
    cached: int = 0  # of its searches, those the cross-run cache served


@dataclass(frozen=True)
class RunProgress:
    """Where a run stands; each count is of the run so far."""

    question: str
    stages: tuple[Stage, ...]
    researchers: tuple[Researcher, ...]  # in the order they started
    planned: int
    limit: int  # sub-topics the run may delegate (0 while unknown)
    tokens: int
    cost: float | None  # estimated, in US dollars (None while unknown)
    warnings: tuple[str, ...]  # as "phase: text"
    pages_read: int  # distinct pages
    verified: int | None  # citations verified in the report (None before the report is ready)
    removed: int
    exit_reason: str | None  # None while the run goes on
    seconds: float
    rounds: int = 0  # search rounds done (the iterative mode; 0 otherwise)
    depth: int = 0  # the rounds the run may make (the iterative mode)
    searches: int = 0  # by every researcher and by the run itself
    refused: int = 0  # pages the URL policy or a guard refused to read

    @property
    def done(self) -> int:
        """Sub-topics with a note (done, partial or restored)."""
        return sum(r.state in (DONE, PARTIAL, RESTORED) for r in self.researchers)

    @property
    def failed(self) -> int:
        """Sub-topics whose researcher failed."""
        return sum(r.state == FAILED for r in self.researchers)


@dataclass
class _Researcher:
    slot: int
    subtopic: str
    started: float
    state: str = RUNNING
    searches: int = 0
    pages: int = 0
    tokens: int = 0
    ended: float | None = None
    error: str = ""
    cached: int = 0


class RunTracker:
    """
    Follow a run from its events, thread-safe (researchers emit from several threads), reading their fields, never
    their text. In the iterative mode each topic a round searches is a sub-topic. A stage starts with its first event
    and ends with its ``PhaseEnded`` or when the next stage starts (the orchestrator's and summarizer's calls count
    toward ``research``); an event of a stage that has ended does not open it again.

    :param clock: Seconds as a monotonic number; ``time.monotonic`` by default (tests pass a fake clock).
    """

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._started = clock()
        self._ended: float | None = None
        self._question = ""
        self._stages: dict[str, list[float | None]] = {}  # name -> [started, ended]
        self._current: str | None = None
        self._researchers: dict[str, _Researcher] = {}
        self._planned = self._limit = self._tokens = 0
        self._cost: float | None = None
        self._warnings: list[str] = []
        self._pages: set[str] = set()
        self._searches = self._refused = 0
        self._verified: int | None = None
        self._removed = 0
        self._exit_reason: str | None = None
        self._rounds = self._depth = 0

    def start(self) -> None:
        """Start the clock of the run (it also starts when the tracker is made)."""
        with self._lock:
            self._started = self._clock()

    def __call__(self, event: events.Event) -> None:
        """Take one event of the run."""
        with self._lock:
            now = self._clock()
            self._follow_stage(event, now)
            self._take(event, now)

    def researcher(self, subtopic: str) -> Researcher | None:
        """The researcher of a sub-topic (as its events name it) as it stands, or ``None``."""
        with self._lock:
            found = self._researchers.get(subtopic)
            return self._frozen(found, self._clock()) if found is not None else None

    def stage_seconds(self, name: str) -> float | None:
        """How long the stage took (so far), or ``None`` if it has not started."""
        with self._lock:
            times = self._stages.get(_STAGE_OF.get(name, name))
            if times is None or times[0] is None:
                return None
            return (times[1] if times[1] is not None else self._clock()) - times[0]

    def interrupt(self) -> None:
        """Mark the run as cut short: its stage ends, and every researcher still running is ``stopped``."""
        with self._lock:
            now = self._clock()
            self._close_stage(now)
            self._ended = now
            for found in self._researchers.values():
                if found.state == RUNNING:
                    found.state, found.ended = STOPPED, now

    def progress(self) -> RunProgress:
        """:returns: Where the run stands now."""
        with self._lock:
            now = self._clock()
            stages = tuple(
                Stage(name, (end if end is not None else now) - (start or now), end is None)
                for name, (start, end) in self._stages.items()
            )
            return RunProgress(
                **{name: getattr(self, f"_{name}") for name in _COPIED},
                stages=stages,
                researchers=tuple(self._frozen(found, now) for found in self._researchers.values()),
                planned=max(self._planned, sum(r.slot > 0 for r in self._researchers.values())),
                warnings=tuple(self._warnings),
                pages_read=len(self._pages),
                seconds=(self._ended if self._ended is not None else now) - self._started,
                refused=self._refused,
            )

    @staticmethod
    def _frozen(found: _Researcher, now: float) -> Researcher:
        copied = {field.name: getattr(found, field.name) for field in fields(Researcher) if field.name != "seconds"}
        return Researcher(**copied, seconds=(found.ended if found.ended is not None else now) - found.started)

    def _close_stage(self, now: float) -> None:
        if self._current is not None:
            self._stages[self._current][1] = now
            self._current = None

    def _follow_stage(self, event: events.Event, now: float) -> None:
        if event.phase == PHASE_RUN or isinstance(event, events.WarningRaised):
            return
        stage = _STAGE_OF.get(event.phase, event.phase)
        if stage not in self._stages:
            self._close_stage(now)
            self._stages[stage] = [now, None]
            self._current = stage
        if isinstance(event, events.PhaseEnded) and stage == self._current:
            self._close_stage(now)

    def _take(self, event: events.Event, now: float) -> None:
        found = self._researchers.get(event.researcher) if event.researcher else None
        if isinstance(event, events.RunStarted):
            self._question = event.question
        elif isinstance(event, events.RunEnded):
            self._exit_reason = event.exit_reason
            self._close_stage(now)
            self._ended = now
        elif isinstance(event, events.SubagentSpawned):
            self._researchers[event.subtopic] = _Researcher(slot=event.slot, subtopic=event.subtopic, started=now)
            self._planned, self._limit = max(self._planned, event.planned), max(self._limit, event.limit)
        elif isinstance(event, events.SubagentCompleted):
            done = self._researchers.setdefault(event.subtopic, _Researcher(0, event.subtopic, started=now))
            done.state = RESTORED if event.restored else PARTIAL if event.partial else DONE
            done.ended = now
        elif isinstance(event, events.SubagentFailed):
            failed = self._researchers.setdefault(event.subtopic, _Researcher(0, event.subtopic, started=now))
            failed.state, failed.error, failed.ended = FAILED, event.error, now
        elif isinstance(event, events.SearchDecided):
            for topic in event.topics:  # the iterative mode: each topic of the round is one researcher's
                slot = sum(r.slot > 0 for r in self._researchers.values()) + 1
                self._researchers.setdefault(topic, _Researcher(slot=slot, subtopic=topic, started=now))
        elif isinstance(event, events.SearchRoundDone):
            self._rounds, self._depth = max(self._rounds, event.round), event.depth
            for topic in event.topics:
                if (searched := self._researchers.get(topic)) is not None and searched.state == RUNNING:
                    searched.state, searched.ended = DONE, now
        elif isinstance(event, events.SearchDone):
            self._searches += 1
            if found is not None:
                found.searches += 1
                found.cached += event.cached
        elif isinstance(event, events.PageRead):
            self._pages.add(event.url)
            if found is not None:
                found.pages += 1
        elif isinstance(event, events.PageRefused):
            self._refused += 1
        elif isinstance(event, events.UsageRecorded):
            if event.run_tokens >= self._tokens:  # events of parallel researchers may arrive out of order
                self._tokens, self._cost = event.run_tokens, event.cost
            if found is not None:
                found.tokens += event.tokens
        elif isinstance(event, events.WarningRaised):
            self._warnings.append(f"{event.phase}: {in_words(event.text)}")
        elif isinstance(event, events.ReportReady):
            self._verified, self._removed = event.verified, event.removed


_READ_KINDS = ("page", "document")


def money(cost: float | None) -> str:
    """US dollars as every surface shows them (``$0.0123``, ``$1.25``), or ``unknown``."""
    if cost is None:
        return "unknown"
    return f"${cost:.2f}" if cost >= 1 else f"${cost:.4f}"


def outcome_line(result: Mapping[str, Any]) -> str:
    """How a run's result (any shape) ended, in one line: exit reason, notes, pages read, warnings and cost."""
    pages = sum(isinstance(entry, Mapping) and entry.get("kind") == "page" for entry in result.get("sources") or [])
    cost = result.get("cost")
    return (
        f"exit reason: {result.get('exit_reason') or 'unknown'} · {len(result.get('notes') or [])} notes · "
        f"{pages} pages read · {len(result.get('warnings') or [])} warnings · "
        f"cost: {money(cost if isinstance(cost, int | float) else None)}"
    )


@dataclass(frozen=True)
class RunSummary:
    """How a run ended, as the lines printed when it is over."""

    exit_reason: str  # "interrupted" or "failed" when it never finished
    seconds: float
    planned: int  # sub-topics planned (in the iterative mode: topics its rounds chose)
    done: int  # sub-topics with a note
    partial: int  # of those, notes of a researcher that stopped early
    failed: int
    found: int  # sources in the evidence ledger (search results included)
    read: int  # pages and documents really read
    verified: int | None  # citations verified in the report (None when no report was written)
    removed: int
    tokens: int
    cost: float | None  # estimated, in US dollars (None when unknown)
    warnings: tuple[str, ...]
    saved: tuple[str, ...] = ()  # where the outputs went, one line each
    terminated: bool = False  # SIGTERM, not Ctrl-C, interrupted the run
    rounds: int = 0  # search rounds done (the iterative mode; 0 otherwise)
    depth: int = 0
    contradictions: int = 0
    claims: tuple[int, int, int] | None = None  # an update's claims: new, changed, no longer supported

    @classmethod
    def of(
        cls, result: Mapping[str, Any], progress: RunProgress, *, saved: tuple[str, ...] = (), terminated: bool = False
    ) -> RunSummary:
        """The summary of a run's (possibly partial) result and what the tracker saw."""
        sources = list(result.get("sources") or [])
        citations = result.get("citations") or {}
        usage = result.get("usage_by_phase") or {}
        tokens = sum(total_tokens(phase) for phase in usage.values()) if usage else progress.tokens
        changes = result.get("changes") or {}
        new, changed, dropped = (
            len(changes.get(kind) or []) for kind in ("new_claims", "changed_claims", "no_longer_supported")
        )
        return cls(
            exit_reason=str(result.get("exit_reason") or ""),
            seconds=progress.seconds,
            planned=progress.planned,
            done=progress.done,
            partial=sum(r.state == PARTIAL for r in progress.researchers),
            failed=progress.failed,
            found=len(sources),
            read=sum(source.get("kind") in _READ_KINDS for source in sources),
            verified=len(citations["verified"]) if "verified" in citations else None,
            removed=len(citations.get("unverified") or []),
            tokens=tokens,
            cost=result.get("cost") if usage else progress.cost,
            warnings=tuple(in_words(warning) for warning in result.get("warnings") or progress.warnings),
            saved=saved,
            terminated=terminated,
            rounds=progress.rounds,
            depth=progress.depth,
            contradictions=len(result.get("contradictions") or []),
            claims=(new, changed, dropped) if "changed_claims" in changes else None,
        )

    def headline(self) -> str:
        """:returns: How the run ended, in one line."""
        if self.exit_reason == EXIT_INTERRUPTED:
            return f"{'terminated (SIGTERM)' if self.terminated else 'interrupted (Ctrl-C)'} after {self.seconds:.1f}s"
        if self.exit_reason == EXIT_FAILED:
            return f"failed after {self.seconds:.1f}s"
        return f"finished in {self.seconds:.1f}s (exit reason: {self.exit_reason})"

    def lines(self) -> list[str]:
        """:returns: The summary without its warnings, one fact per line."""
        extra = [f"{self.partial} partial"] if self.partial else []
        extra += [f"{self.failed} failed"] if self.failed else []
        if self.depth:  # the iterative mode: topics chosen round by round
            rounds = f"{self.rounds} round{'' if self.rounds == 1 else 's'} of at most {self.depth}"
            subtopics = f"topics: {self.done} searched of {self.planned} chosen, in {rounds}"
        else:
            subtopics = f"sub-topics: {self.done} done of {self.planned} planned"
        subtopics += f" ({', '.join(extra)})" if extra else ""
        citations = (
            f"citations: {self.verified} verified, {self.removed} removed"
            if self.verified is not None
            else "citations: no report was checked"
        )
        lines = [
            self.headline(),
            subtopics,
            f"sources: {self.read} read, {self.found} found; {citations}",
            f"tokens: {self.tokens:,}; cost: {money(self.cost)}{' (estimated)' if self.cost is not None else ''}",
        ]
        if self.contradictions:
            lines.append(f"contradictions: {self.contradictions} between cited sources (see the report's section)")
        if self.claims is not None:
            new, changed, dropped = self.claims
            lines.append(f"claims since the last run: {new} new, {changed} changed, {dropped} no longer supported")
        return lines + list(self.saved)
