"""
One research run: the :class:`ResearchRun`, which owns everything of one run and is thread-safe (parallel
sub-researchers write into it at once), the :class:`RunView` each agent works through, and the shared outputs every
shape returns. It is opened and closed by :mod:`._lifecycle`.
"""

from __future__ import annotations

import functools
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from haystack import logging
from haystack.components.agents.state import State
from haystack.components.agents.state.state_utils import replace_values

from haystack_deep_research.events import BudgetReached, UsageRecorded, WarningRaised
from haystack_deep_research.events.bus import EventBus
from haystack_deep_research.evidence import EvidenceLedger
from haystack_deep_research.evidence.searches import SearchLog
from haystack_deep_research.run._budget import CostMeter, RunBudget, add_usage, total_tokens, usage_delta
from haystack_deep_research.run._cache import ReadCache
from haystack_deep_research.settings.grouped import Price
from haystack_deep_research.state import (
    BRIEF,
    CONTRADICTIONS,
    COST,
    NOTES,
    PHASE_ORCHESTRATOR,
    PHASE_RESEARCH,
    PHASE_RUN,
    SOURCES,
    TOKEN_USAGE,
    USAGE_BY_PHASE,
    WARNINGS,
)

if TYPE_CHECKING:
    from haystack_deep_research.events import Event
    from haystack_deep_research.run._journal import RunJournal

logger = logging.getLogger(__name__)

T = TypeVar("T")


class RunGuard:
    """
    What a run opened, closed once, newest first: an agent run's (the ``before_run`` hook registers, the agent closes
    it once its run returned or raised; closing twice is harmless) or a run's resources. One closer that raises is
    handed to ``failed`` (logged by default) and the others still run.
    """

    def __init__(self, failed: Callable[[Exception], None] | None = None) -> None:
        self._lock = threading.Lock()
        self._closers: list[Callable[[], None]] = []
        self._failed = failed or _log_close_failure

    def __repr__(self) -> str:
        return f"RunGuard(open={len(self._closers)})"

    def on_close(self, closer: Callable[[], None]) -> None:
        with self._lock:
            self._closers.append(closer)

    def close(self) -> None:
        with self._lock:
            closers, self._closers = self._closers[::-1], []
        for closer in closers:
            try:
                closer()
            except Exception as error:  # closing must go on; the run's own outcome is what the caller sees
                self._failed(error)


def _log_close_failure(error: Exception) -> None:
    logger.warning("Closing a run failed: {error_type}: {error}", error_type=type(error).__name__, error=error)


class ResearchRun:
    """
    Everything of one research run.

    :param question: The research question.
    :param budget: The run's budget; no limits by default.
    :param journal: The open journal of the run directory, or ``None`` when the run has none.
    :param events: Where the run's events go; a bus with no subscribers by default.
    :param streaming_callback: A Haystack streaming callback every model of the run streams to, or ``None``.
    :param phase_models: The model each phase calls, by phase name (``{"scope": "gpt-5.4", ...}``): what its usage
        costs. A phase with usage and no model here has no known cost.
    :param prices: Model prices on top of the default ones (see :mod:`haystack_deep_research.run._budget`).
    """

    def __init__(
        self,
        *,
        question: str = "",
        budget: RunBudget | None = None,
        journal: RunJournal | None = None,
        events: EventBus | None = None,
        streaming_callback: Any = None,
        phase_models: Mapping[str, str] | None = None,
        prices: Mapping[str, Price] | None = None,
    ) -> None:
        self.id = events.run_id if events is not None else uuid.uuid4().hex
        self.question = question
        self.brief = ""
        self.ledger = EvidenceLedger()
        self.searches = SearchLog()
        self.reads = ReadCache()
        self.budget = budget or RunBudget()
        self.journal = journal
        self.events = events or EventBus(self.id)
        self.streaming_callback = streaming_callback
        self.costs = CostMeter(phase_models=phase_models, prices=prices, warn=self.warn)
        self._lock = threading.Lock()
        self._resources: dict[str, Any] = {}
        self._closers = RunGuard(
            lambda error: self.warn(PHASE_RUN, f"closing a resource of the run failed: {type(error).__name__}: {error}")
        )
        self._restored: list[str] = []  # notes restored from a run directory: before every delegated note
        self._notes: dict[int, str] = {}  # delegated notes by planned place
        self._plan: list[str | None] = []  # planned sub-topics; None once a place is claimed
        self._delegated = 0
        self._granted = 0
        self._usage: dict[str, dict[str, Any]] = {}
        self._warnings: list[str] = []
        self._spent: set[str] = set()

    def __repr__(self) -> str:
        return f"ResearchRun(id={self.id!r}, notes={len(self.notes())}, sources={len(self.ledger)})"

    def view(self, phase: str = PHASE_ORCHESTRATOR) -> RunView:
        """
        :param phase: The phase the run's own agent counts its model calls toward.
        :returns: The run's own view, through which its agent (the orchestrator, or a deep agent) and hooks work.
        """
        return RunView(self, researcher="", phase=phase)

    def adopt_streaming(self, callback: Any) -> None:
        """Take the streaming callback an Agent's ``run`` handed its tools, unless the run already has one."""
        with self._lock:
            if self.streaming_callback is None and callback is not None:
                self.streaming_callback = callback

    def resource(self, key: str, factory: Callable[[], T], *, close: Callable[[T], None] | None = None) -> T:
        """
        A resource that lives as long as the run (a scratch space, a todo list, a connection), made on first use.

        :param key: The resource's name.
        :param factory: Makes it (cheaply: it runs under the run's lock).
        :param close: Called with the resource when the run closes (see :meth:`close`), if it was made.
        :returns: The run's resource under ``key``.
        """
        with self._lock:
            if key not in self._resources:
                self._resources[key] = made = factory()
                if close is not None:
                    self._closers.on_close(lambda: close(made))
            resource: T = self._resources[key]
            return resource

    def close(self) -> None:
        """Close the run's resources newest first, once, however the run ends; one that raises is a warning."""
        self._closers.close()

    def researcher(self, subtopic: str) -> RunView:
        """
        :param subtopic: The sub-topic a sub-researcher is about to research.
        :returns: That researcher's view of the run.
        """
        return RunView(self, researcher=subtopic, phase=PHASE_RESEARCH)

    def plan(self, subtopics: Iterable[str]) -> None:
        """
        Record the sub-topics about to be researched side by side: their notes keep this order.

        :param subtopics: The sub-topics, as delegated.
        """
        with self._lock:
            self._plan.extend(" ".join(subtopic.split()) for subtopic in subtopics)

    def planned(self) -> int:
        """:returns: How many sub-topics were planned (or delegated unplanned) so far in the run."""
        with self._lock:
            return len(self._plan)

    def position(self, subtopic: str) -> int:
        """
        Take the place of a sub-topic among the run's notes: its first unclaimed planned place, else the next one.

        :param subtopic: The sub-topic, as delegated.
        :returns: The place (0-based).
        """
        key = " ".join(subtopic.split())
        with self._lock:
            for index, planned in enumerate(self._plan):
                if planned == key:
                    self._plan[index] = None
                    return index
            self._plan.append(None)
            return len(self._plan) - 1

    def add_notes(self, notes: Iterable[str], *, position: int | None = None) -> None:
        """
        Add notes for the writer; a note already held is kept once (a resumed run may delegate a sub-topic again).

        :param notes: The notes.
        :param position: The place of a delegated sub-topic's note (see :meth:`position`); notes given without one
            (restored from a run directory) come before every delegated note, in the order given.
        """
        with self._lock:
            for note in notes:
                if note in self._restored or note in self._notes.values():
                    continue
                if position is None:
                    self._restored.append(note)
                else:
                    self._notes[position] = note

    def place_of(self, note: str) -> int | None:
        """:returns: The note's place among the delegated notes (see :meth:`position`); ``None`` if restored."""
        with self._lock:
            return next((place for place, held in self._notes.items() if held == note), None)

    def notes(self) -> list[str]:
        """:returns: A copy of the notes: restored ones first, then delegated ones in the order they were asked for."""
        with self._lock:
            return [*self._restored, *(self._notes[key] for key in sorted(self._notes))]

    def claim_subtopic(self, limit: int) -> int | None:
        """
        Claim one delegation slot.

        :param limit: How many sub-topics the run may delegate in all.
        :returns: The 1-based number of the claimed slot, or ``None`` when ``limit`` were already delegated.
        """
        with self._lock:
            if self._delegated >= limit + self._granted:
                return None
            self._delegated += 1
            return self._delegated

    def delegations_left(self, limit: int) -> int:
        """:returns: How many more slots :meth:`claim_subtopic` would grant under ``limit`` (0 once all are taken)."""
        with self._lock:
            return max(limit + self._granted - self._delegated, 0)

    def grant_subtopics(self, count: int) -> None:
        """Allow ``count`` more delegations beyond the limit: grounding's replanning researches with these."""
        with self._lock:
            self._granted += max(count, 0)

    def record_usage(self, phase: str, usage: Mapping[str, Any] | None, *, researcher: str = "") -> None:
        """
        Add token usage to a phase's total; a :class:`~haystack_deep_research.events.UsageRecorded` event follows
        with the run's tokens and cost so far.

        :param phase: One of the ``PHASE_*`` names.
        :param usage: A usage dict as found in ``ChatMessage.meta["usage"]``.
        :param researcher: The sub-topic of the researcher whose model calls these were, if any.
        """
        if not usage:
            return
        with self._lock:
            self._usage[phase] = add_usage(self._usage.get(phase), usage)
        if tokens := total_tokens(usage):
            spent = self.usage_by_phase()
            run_tokens = sum(total_tokens(phase_usage) for phase_usage in spent.values())
            cost = self.costs.estimate(spent)  # no warning here: the run's outputs say once when a cost is unknown
            counted = UsageRecorded(phase=phase, tokens=tokens, run_tokens=run_tokens, cost=cost)
            self.events.emit(counted, researcher=researcher)

    def usage_by_phase(self) -> dict[str, dict[str, Any]]:
        """:returns: A copy of the token usage recorded so far, per phase."""
        with self._lock:
            return {phase: dict(usage) for phase, usage in self._usage.items()}

    def total_usage(self) -> dict[str, Any]:
        """:returns: The token usage of all phases summed."""
        return functools.reduce(add_usage, self.usage_by_phase().values(), {})

    def tokens_used(self) -> int:
        """:returns: The tokens spent so far across all phases."""
        return sum(total_tokens(usage) for usage in self.usage_by_phase().values())

    def cost_by_phase(self) -> dict[str, float | None]:
        """
        :returns: What each phase's usage cost in US dollars, at the price of the phase's model; ``None`` for a phase
            whose cost is unknown (a warning says why, once).
        """
        return self.costs.by_phase(self.usage_by_phase())

    def cost(self) -> float | None:
        """:returns: What the run has cost so far in US dollars, or ``None`` when some phase's cost is unknown."""
        return self.costs.total(self.usage_by_phase())

    def usage_report(self) -> dict[str, dict[str, Any]]:
        """
        :returns: The token usage per phase (as :meth:`usage_by_phase`), each with the phase's ``model`` (or
            ``None``) and ``cost`` in US dollars (``None`` when unknown).
        """
        return self.costs.report(self.usage_by_phase())

    def warn(self, phase: str, message: str, *, researcher: str = "", once: bool = False) -> None:
        """
        Record something that went wrong without ending the run; it appears in the ``warnings`` output.

        :param phase: One of the ``PHASE_*`` names.
        :param message: What happened.
        :param researcher: The sub-topic of the researcher it happened to, if any.
        :param once: Record it only if the run holds no such warning yet (something every researcher may notice).
        """
        line = f"{phase}: {message}"
        with self._lock:
            if once and line in self._warnings:
                return
            self._warnings.append(line)
        self.events.emit(WarningRaised(phase=phase, text=message), researcher=researcher)

    def warnings(self) -> list[str]:
        """:returns: A copy of the warnings recorded so far."""
        with self._lock:
            return list(self._warnings)

    def out_of_time(self) -> bool:
        """
        Say whether the time budget is spent (a model call failing now was cut at the deadline), as :meth:`spent` does.

        :returns: ``True`` when the run's time budget is spent.
        """
        return self.budget.time_left() == 0 and self.spent() is not None

    def spent(self) -> str | None:
        """
        Check the budget; the first time each budget is found spent, a warning naming it and a :class:`BudgetReached`
        event follow (so the budget that ends the run is always the one a warning names).

        :returns: ``"token_budget"``, ``"cost_budget"`` or ``"time_budget"`` when that budget is spent, else ``None``.
        """
        cost = self.cost() if self.budget.cost_budget is not None else None
        found = self.budget.check(self.tokens_used(), cost)
        if found is None:
            return None
        reason, detail = found
        with self._lock:
            first = reason not in self._spent
            self._spent.add(reason)
        if first:
            self.events.emit(BudgetReached(phase=PHASE_ORCHESTRATOR, reason=reason, detail=detail))
            self.warn(
                PHASE_ORCHESTRATOR,
                f"{detail} is spent: no new research starts and the report is written from what was gathered",
            )
        return reason


class RunView:
    """
    How one agent of a run (the orchestrator, or one sub-researcher) works with the run: it stamps the events it emits
    with its researcher's sub-topic, and counts its agent's token usage into its phase, each part once.

    :param run: The run.
    :param researcher: The sub-topic of the sub-researcher, or ``""`` for the orchestrator.
    :param phase: The phase its agent's model calls count toward.
    """

    def __init__(self, run: ResearchRun, *, researcher: str, phase: str) -> None:
        self.run = run
        self.researcher = researcher
        self.phase = phase
        self._counted: dict[str, Any] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"RunView(run={self.run.id!r}, researcher={self.researcher!r})"

    @property
    def ledger(self) -> EvidenceLedger:
        """The run's evidence ledger."""
        return self.run.ledger

    @property
    def searches(self) -> SearchLog:
        """The run's search log."""
        return self.run.searches

    @property
    def reads(self) -> ReadCache:
        """The run's read cache."""
        return self.run.reads

    def emit(self, event: Event) -> Event:
        """:returns: The event as delivered, stamped with the run id and the view's researcher."""
        return self.run.events.emit(event, researcher=self.researcher)

    def warn(self, phase: str, message: str, *, once: bool = False) -> None:
        """As :meth:`ResearchRun.warn`, for the view's researcher."""
        self.run.warn(phase, message, researcher=self.researcher, once=once)

    def record_usage(self, phase: str, usage: Mapping[str, Any] | None) -> None:
        """As :meth:`ResearchRun.record_usage`, for the view's researcher."""
        self.run.record_usage(phase, usage, researcher=self.researcher)

    def count_usage(self, token_usage: Mapping[str, Any] | None) -> None:
        """Count the part of the agent's ``token_usage`` (so far) not counted yet into the view's phase."""
        with self._lock:
            delta = usage_delta(token_usage, self._counted)
            self._counted = add_usage(self._counted, delta)
        self.run.record_usage(self.phase, delta, researcher=self.researcher)

    def spent(self) -> str | None:
        """:returns: The budget that is spent (see :meth:`ResearchRun.spent`), or ``None``."""
        return self.run.spent()

    def time_left(self) -> float | None:
        """:returns: Seconds left of the run's time budget, or ``None`` without one."""
        return self.run.budget.time_left()


def run_outputs(run: ResearchRun) -> dict[str, Any]:
    """The shared outputs the run holds (``contradictions``: ``[]`` before the report's contradiction check ran)."""
    usage = run.usage_report()  # may warn once of an unknown cost, so before the warnings are read
    return {
        BRIEF: run.brief,
        NOTES: run.notes(),
        SOURCES: run.ledger.to_list(),
        WARNINGS: run.warnings(),
        USAGE_BY_PHASE: usage,
        COST: run.cost(),
        TOKEN_USAGE: run.total_usage(),
        CONTRADICTIONS: list(run.resource(CONTRADICTIONS, list)),
    }


def publish(state: State, run: ResearchRun, outputs: Mapping[str, Any] | None = None) -> None:
    """Set the outputs (:func:`run_outputs` by default) that the agent's state schema declares."""
    for key, value in (run_outputs(run) if outputs is None else outputs).items():
        if key in state.schema:  # an agent shape declares the outputs it has
            state.set(key, value, handler_override=replace_values)
