"""
The deep research agent's ``after_run`` hook (:class:`WriteHook`): write the report in parts (:mod:`.sections`),
verify it, run the report stages in order (grounding, structured output), add its contradictions' section, close the
run (docs/how-it-works.md, "Write and check"). A stage may raise (structured output raises
``StructuredOutputError``); the report's outputs are set and the run closed before the error propagates.
:class:`NoEvidenceStage` says so when the report rests on nothing read (docs/sources.md, "When nothing could be
read").
"""

from __future__ import annotations

from typing import Any, Protocol

from haystack.components.agents.state import State
from haystack.components.generators.chat.types import ChatGenerator
from haystack.core.serialization import default_to_dict

from haystack_deep_research import _checks
from haystack_deep_research._prompts import NO_EVIDENCE_NOTICE, render_text
from haystack_deep_research._serialization import InitSerialized, init_parameters
from haystack_deep_research.events import PhaseStarted
from haystack_deep_research.report.contradictions import add_contradictions
from haystack_deep_research.report.grounding import GroundingStage
from haystack_deep_research.report.publish import allowed_urls, publish_report, reset_review_outputs
from haystack_deep_research.report.sections import fallback_report, write_report
from haystack_deep_research.report.style import ReportStyle
from haystack_deep_research.research.final_summary import model_failure
from haystack_deep_research.run import ResearchRun
from haystack_deep_research.run._lifecycle import CloseRunHook
from haystack_deep_research.run._phases import Phase
from haystack_deep_research.run._research_run import publish
from haystack_deep_research.state import (
    CITATIONS,
    EXIT_CLARIFICATION_NEEDED,
    EXIT_NO_EVIDENCE,
    EXIT_ORCHESTRATOR_FAILED,
    EXIT_REASON,
    EXIT_SUBTOPICS_DONE,
    EXIT_TIME_BUDGET,
    EXIT_WRITER_FAILED,
    MESSAGES,
    PHASE_ORCHESTRATOR,
    PHASE_RESEARCH,
    PHASE_WRITE,
    REPORT,
)

__all__ = ["NoEvidenceStage", "ReportStage", "WriteHook", "has_evidence"]


class ReportStage(Protocol):
    """A step after the report is written and verified; ``max_concurrency`` bounds one batch of its phase's calls."""

    max_concurrency: int

    def review(self, state: State, run: ResearchRun, writer: ChatGenerator) -> Phase[None]:
        """The phase that reviews the verified report in ``state``; ``writer`` is the writer's chat generator."""
        ...

    def to_dict(self) -> dict[str, Any]: ...


class WriteHook(CloseRunHook):
    """
    ``after_run``: the writer ``chat_generator`` writes the report in ``style``, ``max_concurrency`` parts at once (1 to
    50), its citations are verified, then the ``stages`` run in order; ``ConfigurationError`` for a bad argument.
    """

    def __init__(
        self,
        *,
        chat_generator: ChatGenerator,
        stages: list[ReportStage] | None = None,
        max_concurrency: int = 5,
        style: ReportStyle | None = None,
    ) -> None:
        self.chat_generator = _checks.chat_generator("chat_generator", chat_generator, needs_tools=False)
        self.stages = list(stages or [])
        self.writer_concurrency = _checks.int_in_range("max_concurrency", max_concurrency, 1, 50)
        self.style = ReportStyle.of(style)
        self.max_concurrency = max([self.writer_concurrency, *(stage.max_concurrency for stage in self.stages)])

    def _used_models(self) -> list[Any]:
        return [self.chat_generator, *self.stages]

    def finish(self, state: State, run: ResearchRun) -> Phase[None]:
        """Write and verify the report, then run the stages; a clarifying question gets an empty report, no stage."""
        if state.data.get(EXIT_REASON) == EXIT_CLARIFICATION_NEEDED:  # the scope phase asked the user: nothing to write
            reset_review_outputs(state)
            publish_report(state, run, "", [])
            return
        failed = model_failure(state.data.get(MESSAGES))
        if failed is not None:
            run.warn(PHASE_ORCHESTRATOR, f"the orchestrator model failed ({failed}); the report uses the notes so far")
            state.set(EXIT_REASON, EXIT_ORCHESTRATOR_FAILED)
        notes = run.notes()
        urls = allowed_urls(notes, run)
        detail = f"writing the report in {len(notes) + 1} parts from {len(notes)} notes and {len(urls)} sources"
        run.events.emit(PhaseStarted(phase=PHASE_WRITE, detail=detail))
        written = yield from write_report(self.chat_generator, run, notes, urls, style=self.style)
        report = written.report
        if not report:
            run.warn(PHASE_WRITE, f"the writer failed ({written.why}); the report was assembled from the notes")
            report = fallback_report(run, written.why, notes, urls)
            state.set(EXIT_REASON, EXIT_TIME_BUDGET if run.out_of_time() else EXIT_WRITER_FAILED)
        reset_review_outputs(state)
        publish_report(state, run, report, urls)
        for stage in self.stages:
            yield from stage.review(state, run, self.chat_generator)
        judge = next((s.judge_llm or self.chat_generator for s in self.stages if isinstance(s, GroundingStage)), None)
        passages = (state.data.get(CITATIONS) or {}).get("passages") or []
        state.set(REPORT, (yield from add_contradictions(run, str(state.data.get(REPORT) or ""), passages, judge)))

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(self, **init_parameters(self, max_concurrency=self.writer_concurrency))


_NORMAL_EXITS = ("", "text", "max_agent_steps", EXIT_SUBTOPICS_DONE)
"""The exits a run that read nothing ends with ``no_evidence`` instead of: Haystack's own, all sub-topics delegated."""


def has_evidence(run: ResearchRun, verified_urls: list[str]) -> bool:
    """Whether the run read a page or a document, or ``verified_urls`` (what its report cites) holds a snippet."""
    return bool(run.ledger.read_urls() or verified_urls)


def _with_notice(report: str, notice: str) -> str:
    first, newline, rest = report.partition("\n")
    if first.startswith("# "):
        return f"{first}\n\n{notice}{rest.lstrip(chr(10))}" if newline else f"{first}\n\n{notice}"
    return notice + report


class NoEvidenceStage(InitSerialized):
    """
    A report stage: say in the report's first lines (under its title), in ``warnings`` and in ``exit_reason`` that
    nothing was read, unless the run already ended for a reason of its own.
    """

    max_concurrency = 1

    def review(self, state: State, run: ResearchRun, writer: ChatGenerator) -> Phase[None]:
        yield from ()
        citations = state.data.get(CITATIONS)
        if has_evidence(run, list(citations.get("verified_urls") or []) if isinstance(citations, dict) else []):
            return
        run.warn(PHASE_RESEARCH, f"no evidence: {run.searches.explain()}; the report cites no source")
        notice = render_text(NO_EVIDENCE_NOTICE, cause=run.searches.summary())
        state.set(REPORT, _with_notice(str(state.data.get(REPORT) or ""), notice))
        if str(state.data.get(EXIT_REASON) or "") in _NORMAL_EXITS:
            state.set(EXIT_REASON, EXIT_NO_EVIDENCE)
        publish(state, run)
