"""
Causal inference, Summarize, Regenerate and the grounding eval (see docs/workflow.md): the summary is written (and
rewritten, without tools, only in its parts that hold unsupported claims) as every shape's report is, its citations
verified against the ledger, then judged. Nothing is lost on a failure: each is a warning, and the run goes on.
"""

from __future__ import annotations

from typing import Any

from haystack import component

from haystack_deep_research import _checks
from haystack_deep_research._prompts import CAUSAL, fence, render_chat
from haystack_deep_research.events import PhaseEnded, PhaseStarted
from haystack_deep_research.report import ReportStyle, citation_findings, verify_report
from haystack_deep_research.report.assessment import judge_report
from haystack_deep_research.report.publish import allowed_urls
from haystack_deep_research.report.sections import Framing, Written, fallback_report, rewrite_report, write_report
from haystack_deep_research.run._phases import Phase, ask_counted, failure
from haystack_deep_research.state import PHASE_CAUSAL, PHASE_GROUND, PHASE_SUMMARY
from haystack_deep_research.workflow.workflow_run import WorkflowRun, WorkflowStep

__all__ = ["CausalStep", "GroundingEval", "RegenerateStep", "SummarizeStep"]


def _write(workflow: WorkflowRun, model: Any, *, rewrite: bool, style: ReportStyle) -> Phase[WorkflowRun]:
    run = workflow.run
    notes = run.notes()
    urls = allowed_urls(notes, run)
    framing = Framing(causal_chain=workflow.causal_chain, phase=PHASE_SUMMARY, role="summarize")
    written: Written
    if rewrite:
        unsupported = workflow.judgement.unsupported if workflow.judgement is not None else []
        detail = f"rewriting the parts of the summary with {len(unsupported)} unsupported claim(s); no tool runs"
        run.events.emit(PhaseStarted(phase=PHASE_SUMMARY, detail=detail))
        written = yield from rewrite_report(
            model, run, workflow.summary, notes=notes, urls=urls, unsupported=unsupported, style=style, framing=framing
        )
    else:
        detail = f"summarizing {len(notes)} note(s) and {len(urls)} source(s) in {len(notes) + 1} parts"
        run.events.emit(PhaseStarted(phase=PHASE_SUMMARY, detail=detail))
        written = yield from write_report(model, run, notes, urls, style=style, framing=framing)
    text = written.report
    writer_failed = False
    if not text:
        why = written.why
        if rewrite:
            run.warn(PHASE_SUMMARY, f"the rewrite failed ({why}); the previous summary is kept")
            return workflow
        run.warn(PHASE_SUMMARY, f"the summary failed ({why}); it was assembled from the notes")
        text = fallback_report(run, why, notes, urls)
        writer_failed = True
    check = verify_report(run, text, urls)
    return workflow.but(
        summary=check.report, citations=citation_findings(check), judgement=None, writer_failed=writer_failed
    )


class _SummaryStep(WorkflowStep):
    """
    Summarize's and Regenerate's shared shape: one model, one phase.

    :param chat_generator: The model that writes (or rewrites) the summary.
    :param style: The summary's type, tone and length (see :class:`~haystack_deep_research.report.ReportStyle`).
    :param max_concurrency: The writer's calls (the parts of the summary) running at once, 1 to 50.
    :raises ConfigurationError: If a parameter is invalid.
    """

    rewrite = False
    _model_attributes = ("chat_generator",)

    def __init__(self, *, chat_generator: Any, style: ReportStyle | None = None, max_concurrency: int = 5) -> None:
        self.chat_generator = _checks.chat_generator("chat_generator", chat_generator, needs_tools=False)
        self.style = ReportStyle.of(style)
        self.max_concurrency = _checks.int_in_range("max_concurrency", max_concurrency, 1, 50)

    def phase(self, workflow: WorkflowRun) -> Phase[WorkflowRun]:
        return _write(workflow, self.chat_generator, rewrite=self.rewrite, style=self.style)


@component
class SummarizeStep(_SummaryStep):
    """The workflow's Summarize step: notes (and causal chain) → a summary written in parts, with verified citations."""


@component
class RegenerateStep(_SummaryStep):
    """The workflow's Regenerate step: rewrite the parts of the summary that hold unsupported claims, without tools."""

    rewrite = True


@component
class CausalStep(WorkflowStep):
    """The workflow's causal inference: one call, without tools, over the notes fenced as data (a failure: no chain)."""

    _model_attributes = ("chat_generator",)

    def __init__(self, *, chat_generator: Any) -> None:
        self.chat_generator = _checks.chat_generator("chat_generator", chat_generator, needs_tools=False)

    def phase(self, workflow: WorkflowRun) -> Phase[WorkflowRun]:
        """The phase; it returns the run with its causal chain (``""`` after a failure)."""
        run = workflow.run
        notes = run.notes()
        run.events.emit(PhaseStarted(phase=PHASE_CAUSAL, detail=f"building the causal chain from {len(notes)} note(s)"))
        prompt = render_chat(CAUSAL, question=run.question, findings=[fence(note) for note in notes])
        outcome = yield from ask_counted(run, PHASE_CAUSAL, self.chat_generator, prompt, role="causal")
        if not outcome.text:
            run.warn(PHASE_CAUSAL, f"causal inference failed ({failure(outcome.error)}); the summary has no chain")
            return workflow.but(causal_chain="")
        run.events.emit(PhaseEnded(phase=PHASE_CAUSAL, detail="causal chain ready"))
        return workflow.but(causal_chain=outcome.text)


@component
class GroundingEval(WorkflowStep):
    """
    The workflow's grounding eval: the deep research agent's judge scores the summary's claims against the stored text
    of their sources (see :func:`~haystack_deep_research.report.assessment.judge_report`).

    :param judge_llm: The judge model.
    :param max_concurrency: Judge calls running at once, 1 to 50.
    :raises ConfigurationError: If a parameter is invalid.
    """

    _model_attributes = ("judge_llm",)

    def __init__(self, *, judge_llm: Any, max_concurrency: int = 5) -> None:
        self.judge_llm = _checks.chat_generator("judge_llm", judge_llm, needs_tools=False)
        self.max_concurrency = _checks.int_in_range("max_concurrency", max_concurrency, 1, 50)

    def phase(self, workflow: WorkflowRun) -> Phase[WorkflowRun]:
        run = workflow.run
        judged = yield from judge_report(run, workflow.summary, workflow.verified_urls, self.judge_llm)
        detail = f"grounding score {judged.score:.2f} ({len(judged.unsupported)} unsupported claim(s))"
        run.events.emit(PhaseEnded(phase=PHASE_GROUND, detail=detail))
        return workflow.but(judgement=judged)
