"""
One agent's view of a run: the orchestrator's, or one sub-researcher's.

A :class:`RunView` forwards to its :class:`~haystack_deep_research.run.ResearchRun`, stamps the events it emits with
its researcher's sub-topic, and counts its agent's token usage into its phase as it grows, each part once.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from haystack_deep_research.run.usage import add_usage, usage_delta

if TYPE_CHECKING:
    from haystack_deep_research.events import Event
    from haystack_deep_research.evidence import EvidenceLedger, SearchLog
    from haystack_deep_research.run.read_cache import ReadCache
    from haystack_deep_research.run.research_run import ResearchRun

__all__ = ["RunView"]


class RunView:
    """
    How one agent of a run (the orchestrator, or one sub-researcher) works with the run.

    A view forwards to its run, stamps the events it emits with its researcher's sub-topic, and counts its agent's
    token usage into its phase as it grows (:meth:`count_usage`), each part once.

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
        """
        :param event: An event of this agent.
        :returns: The event as delivered (with the run id and the researcher's sub-topic).
        """
        return self.run.events.emit(event, researcher=self.researcher)

    def warn(self, phase: str, message: str, *, once: bool = False) -> None:
        """
        :param phase: One of the ``PHASE_*`` names.
        :param message: What went wrong.
        :param once: Record it only if the run holds no such warning yet.
        """
        self.run.warn(phase, message, researcher=self.researcher, once=once)

    def record_usage(self, phase: str, usage: Mapping[str, Any] | None) -> None:
        """
        :param phase: One of the ``PHASE_*`` names.
        :param usage: A usage dict of one model call.
        """
        self.run.record_usage(phase, usage, researcher=self.researcher)

    def count_usage(self, token_usage: Mapping[str, Any] | None) -> None:
        """
        Count the part of this agent's ``token_usage`` not counted yet into the view's phase.

        :param token_usage: The agent's ``token_usage`` so far.
        """
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
