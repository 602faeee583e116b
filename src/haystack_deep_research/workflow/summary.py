"""
Summarize and Regenerate: distil the evidence into a summary whose citations are verified against the ledger.

:class:`SummarizeStep` writes the summary from the run's notes (and the causal chain, when there is one), citing only
the URLs the run really read; :class:`RegenerateStep` rewrites it after a low grounding score, from the same notes and
without running any tool, told which claims the judge found unsupported. Either way the summary's citations are
verified and repaired exactly as the deep research agent's report is (``verify_report``): a citation of anything the
run never read is removed.

Nothing is lost on a failure: a failed summary call gives a summary assembled from the notes (with a warning), and a
failed rewrite keeps the previous summary (with a warning).
"""

from __future__ import annotations

from typing import Any

from haystack import component
from haystack.core.serialization import component_to_dict, default_from_dict, default_to_dict
from haystack.dataclasses import ChatMessage
from haystack.utils.deserialization import deserialize_component_inplace

from haystack_deep_research import _checks
from haystack_deep_research.events import PhaseStarted
from haystack_deep_research.prompts import FALLBACK_REPORT, SUMMARY, SUMMARY_REWRITE, fence, render_chat, render_text
from haystack_deep_research.report import ReportStyle, allowed_urls, citation_findings, verify_report
from haystack_deep_research.report.attempts import Request, ask_twice
from haystack_deep_research.run import Phase
from haystack_deep_research.run.hooks import UsesModels
from haystack_deep_research.run.phases import drive, drive_async
from haystack_deep_research.state import PHASE_SUMMARY
from haystack_deep_research.workflow.workflow_run import WorkflowRun

__all__ = ["RegenerateStep", "SummarizeStep"]


def _write(workflow: WorkflowRun, model: Any, *, rewrite: bool, style: ReportStyle) -> Phase[WorkflowRun]:
    run = workflow.run
    notes = run.notes()
    urls = allowed_urls(notes, run)
    variables: dict[str, Any] = {
        "question": run.question,
        "findings": [fence(note) for note in notes],
        "causal_chain": fence(workflow.causal_chain),
        "urls": urls,
    }
    if rewrite:
        unsupported = workflow.judgement.unsupported if workflow.judgement is not None else []
        variables.update(previous=fence(workflow.summary), unsupported=[fence(claim.text) for claim in unsupported])
        detail = f"rewriting the summary without {len(unsupported)} unsupported claim(s); no tool runs"
    else:
        detail = f"summarizing {len(notes)} note(s) and {len(urls)} source(s)"
    run.events.emit(PhaseStarted(phase=PHASE_SUMMARY, detail=detail))
    prompt: list[ChatMessage] = style.apply(render_chat(SUMMARY_REWRITE if rewrite else SUMMARY, **variables))
    what = "the rewrite" if rewrite else "the summary"
    request = Request(what=what, messages=prompt)
    [written] = yield from ask_twice(model, [request], run, role="summarize", phase=PHASE_SUMMARY)
    text = written.text
    writer_failed = False
    if not text:
        why = written.why
        if rewrite:
            run.warn(PHASE_SUMMARY, f"the rewrite failed ({why}); the previous summary is kept")
            return workflow
        run.warn(PHASE_SUMMARY, f"the summary failed ({why}); it was assembled from the notes")
        text = render_text(FALLBACK_REPORT, error=why, brief=run.question, notes=notes, urls=urls)
        writer_failed = True
    check = verify_report(run, text, urls)
    return workflow.but(
        summary=check.report, citations=citation_findings(check), judgement=None, writer_failed=writer_failed
    )


class _SummaryStep(UsesModels):
    """The shared shape of the two steps: one model, one phase, sync and async shells, serialization."""

    rewrite = False

    def __init__(self, *, chat_generator: Any, style: ReportStyle | None = None) -> None:
        self.chat_generator = _checks.chat_generator("chat_generator", chat_generator, needs_tools=False)
        self.style = ReportStyle.of(style)

    def _used_models(self) -> list[Any]:
        return [self.chat_generator]

    def phase(self, workflow: WorkflowRun) -> Phase[WorkflowRun]:
        """
        :param workflow: The run.
        :returns: The phase; it returns the run with its new, verified summary.
        """
        return _write(workflow, self.chat_generator, rewrite=self.rewrite, style=self.style)

    def to_dict(self) -> dict[str, Any]:
        """:returns: The serialized step."""
        return default_to_dict(
            self,
            chat_generator=component_to_dict(obj=self.chat_generator, name="chat_generator"),
            style=self.style.to_dict(),
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Any:
        """
        :param data: What ``to_dict`` returned.
        :returns: The step.
        """
        deserialize_component_inplace(data["init_parameters"], key="chat_generator")
        return default_from_dict(cls, data)


@component
class SummarizeStep(_SummaryStep):
    """
    The workflow's Summarize step: notes (and causal chain) → a summary with verified citations.

    :param chat_generator: The model that writes the summary.
    :param style: The summary's type, tone and length (see :class:`~haystack_deep_research.report.ReportStyle`).
    :raises ConfigurationError: If it is not a chat generator.
    """

    @component.output_types(workflow=WorkflowRun)
    def run(self, workflow: WorkflowRun) -> dict[str, WorkflowRun]:
        """
        :param workflow: The run, after Execute (and causal inference).
        :returns: ``workflow``: the run with its ``summary`` and ``citations``.
        """
        return {"workflow": drive(self.phase(workflow))}

    @component.output_types(workflow=WorkflowRun)
    async def run_async(self, workflow: WorkflowRun) -> dict[str, WorkflowRun]:
        """
        :param workflow: The run, after Execute (and causal inference).
        :returns: ``workflow``: the run with its ``summary`` and ``citations``.
        """
        return {"workflow": await drive_async(self.phase(workflow))}


@component
class RegenerateStep(_SummaryStep):
    """
    The workflow's Regenerate step: rewrite the summary from the same notes, without tools, minus unsupported claims.

    :param chat_generator: The model that rewrites the summary.
    :param style: The summary's type, tone and length, kept in the rewrite.
    :raises ConfigurationError: If it is not a chat generator.
    """

    rewrite = True

    @component.output_types(workflow=WorkflowRun)
    def run(self, workflow: WorkflowRun) -> dict[str, WorkflowRun]:
        """
        :param workflow: The run, routed here by a low grounding score.
        :returns: ``workflow``: the run with its rewritten ``summary`` and ``citations``.
        """
        return {"workflow": drive(self.phase(workflow))}

    @component.output_types(workflow=WorkflowRun)
    async def run_async(self, workflow: WorkflowRun) -> dict[str, WorkflowRun]:
        """
        :param workflow: The run, routed here by a low grounding score.
        :returns: ``workflow``: the run with its rewritten ``summary`` and ``citations``.
        """
        return {"workflow": await drive_async(self.phase(workflow))}
