"""
What travels along the iterative agent's edges: one :class:`IterationRun` per run of its Pipeline.

The components hold no per-run data. Each step receives the run's :class:`IterationRun`, works in the
:class:`~haystack_deep_research.run.ResearchRun` it carries (findings as the run's notes, evidence ledger, events,
usage, budget, journal) and passes on a copy with its own results: the seed's variables (``topics``, the
``nextSearchTopic`` of the next round as ``planned``, ``shouldContinue`` as the route taken) and the report.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from haystack import component

from haystack_deep_research.report.judge import Judgement
from haystack_deep_research.run import ResearchRun
from haystack_deep_research.run._lifecycle import current_run
from haystack_deep_research.run._phases import Phase, UsesModels, drive, drive_async

__all__ = ["IterationRun", "IterationStep", "UpdatePlan"]


@dataclass(frozen=True)
class UpdatePlan:
    """
    How an update of a finished run starts (see :mod:`.update`).

    :param since: The date of the run being updated (``YYYY-MM-DD``).
    :param previous_report: Its report.
    :param kept: Topics whose sources are still fresh: their findings are kept as they are.
    :param stale: Topics with a stale source (or none read): searched again first.
    :param hashes: The content hash of every source the run read, by normalized URL, before the update.
    :param read_at: When each of those sources was read, by normalized URL, before the update.
    """

    since: str
    previous_report: str
    kept: tuple[str, ...] = ()
    stale: tuple[str, ...] = ()
    hashes: dict[str, str] = field(default_factory=dict)
    read_at: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class IterationRun:
    """
    One run of the iterative research agent, as it moves from step to step.

    Haystack's Pipeline deep-copies the values it hands from one component to the next, so an ``IterationRun`` is
    plain data: the run it belongs to is not on it but opened around the Pipeline (:attr:`run` finds it).

    :param topics: The topics searched so far, in order (never searched again).
    :param rounds: The search rounds run so far (at most ``depth``).
    :param planned: The topics the next round searches (the decision's ``nextSearchTopic``).
    :param recheck: Topics an update searches again before its rounds (their sources are stale).
    :param exit_reason: Why the rounds ended (set when they do).
    :param report: The verified report (set by the write step).
    :param citations: The citation check of the report, without the report.
    :param judgement: The grounding judge's verdicts, or ``None`` without grounding.
    :param grounding: One verdict per claim (with ``marked``), empty without grounding.
    :param update: How an update started, or ``None`` for a fresh (or resumed) run.
    :param changes: What an update changed (see :mod:`.update`); empty for other runs.
    """

    topics: tuple[str, ...] = ()
    rounds: int = 0
    planned: tuple[str, ...] = ()
    recheck: tuple[str, ...] = ()
    exit_reason: str = ""
    report: str = ""
    citations: dict[str, Any] = field(default_factory=dict)
    judgement: Judgement | None = None
    grounding: tuple[dict[str, Any], ...] = ()
    update: UpdatePlan | None = None
    changes: dict[str, Any] = field(default_factory=dict)

    @property
    def run(self) -> ResearchRun:
        """The research run this value belongs to: the run its shape opened (see ``run._lifecycle.PipelineShape``)."""
        return current_run().run

    def but(self, **changes: Any) -> IterationRun:
        """:returns: A copy with the fields in ``changes`` changed."""
        return dataclasses.replace(self, **changes)


class IterationStep(UsesModels):
    """A step that takes the run and passes it on with its results: its ``phase``, driven sync or async."""

    max_concurrency = 5

    @component.output_types(iteration=IterationRun)
    def run(self, iteration: IterationRun) -> dict[str, IterationRun]:
        """
        :param iteration: The run.
        :returns: ``iteration``: the run with this step's results (see its ``phase``).
        """
        return {"iteration": drive(self.phase(iteration), max_concurrency=self.max_concurrency)}

    @component.output_types(iteration=IterationRun)
    async def run_async(self, iteration: IterationRun) -> dict[str, IterationRun]:
        """As :meth:`run`, on the event loop."""
        return {"iteration": await drive_async(self.phase(iteration), max_concurrency=self.max_concurrency)}

    def phase(self, iteration: IterationRun) -> Phase[IterationRun]:
        """The step's work; it returns the run with its results."""
        raise NotImplementedError
