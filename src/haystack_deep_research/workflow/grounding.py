"""
Grounding eval: the judge scores the summary's cited claims against the stored text of their sources.

The judge is the deep research agent's (:func:`haystack_deep_research.report.assessment.judge_report`): one call per
cited source, with that source's stored text from the run's evidence ledger — what was really read, never a
re-fetch — and the claims that cite it. The score is ``supported / (supported + unsupported)``, 1.0 when no claim
is decided.
"""

from __future__ import annotations

from typing import Any

from haystack import component

from haystack_deep_research import _checks
from haystack_deep_research.events import PhaseEnded
from haystack_deep_research.report.assessment import judge_report
from haystack_deep_research.run._phases import Phase
from haystack_deep_research.state import PHASE_GROUND
from haystack_deep_research.workflow.workflow_run import WorkflowRun, WorkflowStep

__all__ = ["GroundingEval"]


@component
class GroundingEval(WorkflowStep):
    """
    The workflow's grounding eval (see the module docstring).

    :param judge_llm: The judge model.
    :param max_concurrency: Judge calls running at once, 1 to 50.
    :raises ConfigurationError: If a parameter is invalid.
    """

    def __init__(self, *, judge_llm: Any, max_concurrency: int = 5) -> None:
        self.judge_llm = _checks.chat_generator("judge_llm", judge_llm, needs_tools=False)
        self.max_concurrency = _checks.int_in_range("max_concurrency", max_concurrency, 1, 50)

    def _used_models(self) -> list[Any]:
        return [self.judge_llm]

    def phase(self, workflow: WorkflowRun) -> Phase[WorkflowRun]:
        """The phase; it returns the run with its judgement."""
        run = workflow.run
        judged = yield from judge_report(run, workflow.summary, workflow.verified_urls, self.judge_llm)
        detail = f"grounding score {judged.score:.2f} ({len(judged.unsupported)} unsupported claim(s))"
        run.events.emit(PhaseEnded(phase=PHASE_GROUND, detail=detail))
        return workflow.but(judgement=judged)
