"""
What travels along the research workflow's edges: one :class:`WorkflowRun` per run, plain data each step passes on
with its results, so one Pipeline object serves many runs at once; and the steps' base.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from haystack import component
from haystack.dataclasses import ChatMessage

from haystack_deep_research._serialization import InitSerialized
from haystack_deep_research.report.assessment import UNKNOWN, Judgement
from haystack_deep_research.run import ResearchRun
from haystack_deep_research.run._lifecycle import current_run
from haystack_deep_research.run._phases import Phase, UsesModels, drive, drive_async

__all__ = ["WorkflowRun", "WorkflowStep"]


@dataclass(frozen=True)
class WorkflowRun:
    """
    One run of the research workflow, as it moves from step to step: plain data (see docs/how-it-works.md);
    :attr:`run` finds the run it belongs to.

    :param causal_chain: The causal chain built from the findings, or ``""`` (causal inference off, or failed).
    :param summary: The current summary, its citations verified.
    :param citations: The citation check of the summary, without the summary (``verified_urls``, ``unverified``, ...).
    :param judgement: The grounding judge's verdicts on the current summary, or ``None`` before it was judged.
    :param regenerations: Rewrites of the summary so far.
    :param replans: Replans so far.
    :param task: The focused task of the next Execute round (set by Replan), or ``None`` for the question itself.
    :param task_title: The heading of the note that task's findings become.
    :param exit_reason: Why the loop ended (set when it does).
    :param writer_failed: The current summary was assembled from the notes because the writer failed on every part of
        it: it is not judged (its score is ``None``) and the run ends with ``writer_failed``.
    """

    causal_chain: str = ""
    summary: str = ""
    citations: dict[str, Any] = field(default_factory=dict)
    judgement: Judgement | None = None
    regenerations: int = 0
    replans: int = 0
    task: ChatMessage | None = None
    task_title: str = ""
    exit_reason: str = ""
    writer_failed: bool = False

    @property
    def run(self) -> ResearchRun:
        """The research run this value belongs to: the run its shape opened (see ``run.shape``)."""
        return current_run().run

    def but(self, **changes: Any) -> WorkflowRun:
        """:returns: A copy with the fields in ``changes`` changed."""
        return dataclasses.replace(self, **changes)

    @property
    def verified_urls(self) -> list[str]:
        """The URLs the current summary cites that the run really read."""
        return list(self.citations.get("verified_urls") or [])

    @property
    def score(self) -> float | None:
        """
        The grounding score of the current summary; ``None`` before it was judged, when no claim was decided, or when
        the summary is a fallback assembled from the notes.
        """
        if self.judgement is None or self.writer_failed:
            return None
        if all(v.verdict == UNKNOWN for v in self.judgement.verdicts):
            return None
        return self.judgement.score


class WorkflowStep(UsesModels, InitSerialized):
    """A step that takes the run and passes it on with its results: its ``phase``, driven sync or async."""

    max_concurrency = 5

    @component.output_types(workflow=WorkflowRun)
    def run(self, workflow: WorkflowRun) -> dict[str, WorkflowRun]:
        """:returns: ``workflow``: the run with this step's results (see its ``phase``)."""
        return {"workflow": drive(self.phase(workflow), max_concurrency=self.max_concurrency)}

    @component.output_types(workflow=WorkflowRun)
    async def run_async(self, workflow: WorkflowRun) -> dict[str, WorkflowRun]:
        """As :meth:`run`, on the event loop."""
        return {"workflow": await drive_async(self.phase(workflow), max_concurrency=self.max_concurrency)}

    def phase(self, workflow: WorkflowRun) -> Phase[WorkflowRun]:
        """The step's work; it returns the run with its results."""
        raise NotImplementedError
