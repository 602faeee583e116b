"""
Done: close the run and set the iterative agent's outputs.

With a run directory, :class:`IterativeFinishStep` journals the end of the run (with the sources not journaled yet),
writes ``ledger.json`` and ``report.md`` (an update first keeps the report it replaces as ``report.previous.md``)
and releases the directory; a write that fails is a warning, never a lost report. The run is closed as every run is
(:func:`~haystack_deep_research.run._lifecycle.close_run`: the run directory's outcome, usage, ``RunEnded``, the shared
outputs).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from haystack import component

from haystack_deep_research._serialization import InitSerialized
from haystack_deep_research._untrusted.files import write_file
from haystack_deep_research.iterative.iteration import IterationRun
from haystack_deep_research.report.assessment import unjudged_claims
from haystack_deep_research.run import ResearchRun
from haystack_deep_research.run._lifecycle import close_run
from haystack_deep_research.run._phases import Phase, blocking, drive, drive_async
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

__all__ = ["OUTPUT_TYPES", "PREVIOUS_REPORT_FILE", "IterativeFinishStep"]

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
    """The iterative agent's last step (see the module docstring)."""

    @component.output_types(**OUTPUT_TYPES)
    def run(self, iteration: IterationRun) -> dict[str, Any]:
        """
        :param iteration: The run, its report written.
        :returns: The shared outputs (see docs/iterative.md), and the agent's own ``topics`` (searched, in order),
            ``rounds`` and ``changes`` (what an update changed; ``{}`` otherwise).
        """
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
