"""
What travels along the iterative agent's edges (one :class:`IterationRun` per run, plain data the steps pass on with
their results), the steps' base, and :class:`IterativeFinishStep`, which closes the run (see docs/iterative.md).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from haystack import component

from haystack_deep_research._serialization import InitSerialized
from haystack_deep_research._untrusted.files import write_file
from haystack_deep_research.report.assessment import Judgement, unjudged_claims
from haystack_deep_research.run import ResearchRun
from haystack_deep_research.run._lifecycle import close_run, current_run
from haystack_deep_research.run._phases import Phase, UsesModels, blocking, drive, drive_async
from haystack_deep_research.state import (
    BRIEF,
    CHANGES,
    CITATIONS,
    CONTRADICTIONS,
    COST,
    EXIT_REASON,
    GROUNDING,
    GROUNDING_SCORE,
    GROUNDING_UNJUDGED,
    NOTES,
    PHASE_WRITE,
    REPORT,
    ROUNDS,
    SOURCES,
    STRUCTURED,
    TOKEN_USAGE,
    TOPICS,
    USAGE_BY_PHASE,
    WARNINGS,
)

__all__ = ["OUTPUT_TYPES", "PREVIOUS_REPORT_FILE", "IterationRun", "IterationStep", "IterativeFinishStep", "UpdatePlan"]


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
    One run of the iterative research agent, as it moves from step to step: plain data (see docs/how-it-works.md);
    :attr:`run` finds the run it belongs to.

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
        """:returns: ``iteration``: the run with this step's results (see its ``phase``)."""
        return {"iteration": drive(self.phase(iteration), max_concurrency=self.max_concurrency)}

    @component.output_types(iteration=IterationRun)
    async def run_async(self, iteration: IterationRun) -> dict[str, IterationRun]:
        """As :meth:`run`, on the event loop."""
        return {"iteration": await drive_async(self.phase(iteration), max_concurrency=self.max_concurrency)}

    def phase(self, iteration: IterationRun) -> Phase[IterationRun]:
        """The step's work; it returns the run with its results."""
        raise NotImplementedError


PREVIOUS_REPORT_FILE = "report.previous.md"
"""Where an update keeps the report it replaced, in the run directory."""

OUTPUT_TYPES: dict[str, Any] = {
    REPORT: str,
    TOPICS: list[str],
    BRIEF: str,
    NOTES: list[str],
    STRUCTURED: Any,
    SOURCES: list[dict[str, Any]],
    CITATIONS: dict[str, Any],
    WARNINGS: list[str],
    EXIT_REASON: str,
    ROUNDS: int,
    USAGE_BY_PHASE: dict[str, Any],
    COST: float | None,
    TOKEN_USAGE: dict[str, Any],
    GROUNDING_SCORE: float | None,
    GROUNDING: list[dict[str, Any]],
    GROUNDING_UNJUDGED: list[str],
    CONTRADICTIONS: list[dict[str, Any]],
    CHANGES: dict[str, Any],
}
"""The iterative agent's outputs and their types: the shared outputs and its own (``topics``, ``rounds``,
``changes``)."""


def _keep_previous(run: ResearchRun, iteration: IterationRun) -> Phase[None]:
    journal = run.journal
    if journal is None or iteration.update is None or not iteration.update.previous_report:
        return
    previous, text = Path(journal.directory) / PREVIOUS_REPORT_FILE, iteration.update.previous_report
    [written] = yield [blocking(write_file, previous, text)]
    if written.error is not None:
        run.warn(PHASE_WRITE, f"could not write {PREVIOUS_REPORT_FILE} to the run directory ({written.error})")


@component
class IterativeFinishStep(InitSerialized):
    """
    The iterative agent's last step: keep an update's replaced report as ``report.previous.md``, then close the run as
    every run is (:func:`~haystack_deep_research.run._lifecycle.close_run`); a write that fails is a warning.
    """

    @component.output_types(**OUTPUT_TYPES)
    def run(self, iteration: IterationRun) -> dict[str, Any]:
        """:returns: The shared outputs and the agent's own ``topics``, ``rounds`` and ``changes``."""
        return drive(self.phase(iteration))

    @component.output_types(**OUTPUT_TYPES)
    async def run_async(self, iteration: IterationRun) -> dict[str, Any]:
        """As :meth:`run`, on the event loop."""
        return await drive_async(self.phase(iteration))

    def phase(self, iteration: IterationRun) -> Phase[dict[str, Any]]:
        run = iteration.run
        yield from _keep_previous(run, iteration)
        outputs = yield from close_run(run, report=iteration.report, exit_reason=iteration.exit_reason)
        return {
            **outputs,
            TOPICS: list(iteration.topics),
            STRUCTURED: None,
            CITATIONS: dict(iteration.citations),
            ROUNDS: iteration.rounds,
            GROUNDING_SCORE: iteration.judgement.score if iteration.judgement is not None else None,
            GROUNDING: list(iteration.grounding),
            GROUNDING_UNJUDGED: unjudged_claims(iteration.judgement),
            CHANGES: dict(iteration.changes),
        }
