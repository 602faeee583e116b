"""
The quality loop's decisions and its end (see docs/workflow.md): :class:`GroundingRouter` after each grounding eval,
:class:`ReplanStep` before a focused Execute round, and :class:`WorkflowFinishStep` once the run is done. A summary is
never called grounded on claims nobody judged.
"""

from __future__ import annotations

from typing import Any

from haystack import component
from haystack.core.serialization import default_from_dict, default_to_dict
from haystack.utils.type_serialization import deserialize_type
from pydantic import BaseModel

from haystack_deep_research import _checks
from haystack_deep_research._prompts import REPLAN_NOTE_TITLE, REPLAN_TASK, fence, render_text, render_user
from haystack_deep_research._serialization import InitSerialized, init_parameters, restore_parameters
from haystack_deep_research.errors import StructuredOutputError
from haystack_deep_research.events import Notice
from haystack_deep_research.evidence.clock import today
from haystack_deep_research.report.assessment import (
    UNKNOWN,
    RepairPolicy,
    cites_nothing,
    mark_unsupported,
    unjudged_claims,
    verdict_outputs,
)
from haystack_deep_research.report.contradictions import add_contradictions
from haystack_deep_research.report.structured import StructuredOutputStage
from haystack_deep_research.report.writer import has_evidence
from haystack_deep_research.run._lifecycle import close_run
from haystack_deep_research.run._phases import Phase, UsesModels, drive, drive_async
from haystack_deep_research.state import (
    BRIEF,
    CAUSAL_CHAIN,
    CITATIONS,
    CONTRADICTIONS,
    COST,
    EXIT_GROUNDED,
    EXIT_GROUNDING_EXHAUSTED,
    EXIT_NO_EVIDENCE,
    EXIT_NOT_JUDGED,
    EXIT_REASON,
    EXIT_STRUCTURED_OUTPUT_FAILED,
    EXIT_TIME_BUDGET,
    EXIT_WRITER_FAILED,
    GROUNDING,
    GROUNDING_SCORE,
    GROUNDING_UNJUDGED,
    NOTES,
    PHASE_GROUND,
    PHASE_REPLAN,
    PHASE_STRUCTURE,
    REGENERATION_COUNT,
    REPLAN_COUNT,
    REPORT,
    SOURCES,
    STRUCTURED,
    TOKEN_USAGE,
    USAGE_BY_PHASE,
    WARNINGS,
)
from haystack_deep_research.workflow.workflow_run import WorkflowRun

__all__ = ["OUTPUT_TYPES", "GroundingRouter", "ReplanStep", "WorkflowFinishStep"]


def _unjudged(workflow: WorkflowRun) -> str | None:
    """Why the summary cannot be called grounded whatever its score, or ``None`` when enough of it was judged."""
    judged = [] if workflow.judgement is None else workflow.judgement.verdicts
    verdicts = [v.verdict for v in judged if not cites_nothing(v.claim)]
    unknown = verdicts.count(UNKNOWN)
    if not verdicts:
        return "the summary cites no source the run read, so none of it could be judged; it is not called grounded"
    if unknown * 2 > len(verdicts):
        return (
            f"{unknown} of {len(verdicts)} cited claim(s) could not be judged against their sources; the summary is "
            "not called grounded"
        )
    return None


@component
class GroundingRouter(InitSerialized):
    """Route a judged run: done, regenerate or replan (the ranges are ``RepairPolicy``'s; see docs/workflow.md)."""

    def __init__(self, *, threshold: float = 0.65, max_regenerations: int = 1, max_replans: int = 2) -> None:
        self.policy = RepairPolicy(threshold=threshold, max_regenerations=max_regenerations, max_replans=max_replans)
        self.threshold, self.max_regenerations, self.max_replans = threshold, max_regenerations, max_replans

    @component.output_types(done=WorkflowRun, regenerate=WorkflowRun, replan=WorkflowRun)
    def run(self, workflow: WorkflowRun) -> dict[str, WorkflowRun]:
        """:returns: Exactly one of ``done``, ``regenerate`` or ``replan`` (its count raised)."""
        run = workflow.run
        if (unjudged := _unjudged(workflow)) is not None:
            run.warn(PHASE_GROUND, unjudged)
            if not has_evidence(run, workflow.verified_urls):
                return {"done": workflow.but(exit_reason=EXIT_NO_EVIDENCE)}
            return {"done": workflow.but(exit_reason=EXIT_NOT_JUDGED)}
        score = workflow.score if workflow.score is not None else 1.0
        spent = run.spent()
        step = self.policy.next_step(score, regenerations=workflow.regenerations, replans=workflow.replans, spent=spent)
        if step == "done":
            return {"done": workflow.but(exit_reason=EXIT_GROUNDED)}
        if step == "spent":
            run.warn(PHASE_GROUND, f"the run's {run.budget.describe(str(spent))} is spent; the summary is not repaired")
            return {"done": workflow.but(exit_reason=str(spent))}
        below = f"score {score:.2f} is below {self.threshold}"
        if step == "regenerate":
            run.events.emit(Notice(phase=PHASE_GROUND, text=f"{below}: rewriting the summary"))
            return {"regenerate": workflow.but(regenerations=workflow.regenerations + 1)}
        if step == "replan":
            run.events.emit(Notice(phase=PHASE_GROUND, text=f"{below}: gathering evidence on the unsupported claims"))
            return {"replan": workflow.but(replans=workflow.replans + 1)}
        run.events.emit(Notice(phase=PHASE_GROUND, text=f"{below} after every rewrite and replan"))
        return {"done": workflow.but(exit_reason=EXIT_GROUNDING_EXHAUSTED)}


@component
class ReplanStep(InitSerialized):
    """Write Execute's next task: gather evidence on exactly the claims the judge found unsupported."""

    @component.output_types(workflow=WorkflowRun)
    def run(self, workflow: WorkflowRun) -> dict[str, WorkflowRun]:
        """:returns: ``workflow``: the run with its focused ``task`` for Execute (its replan count already raised)."""
        run = workflow.run
        unsupported = workflow.judgement.unsupported if workflow.judgement is not None else []
        claims = list(dict.fromkeys(claim.text for claim in unsupported))
        date = today()
        task = render_user(REPLAN_TASK, today=date, question=run.question, claims=[fence(claim) for claim in claims])
        title = render_text(REPLAN_NOTE_TITLE, round=workflow.replans, claims=claims)
        run.events.emit(Notice(phase=PHASE_REPLAN, text=f"replan {workflow.replans}: {len(claims)} claim(s) to check"))
        return {"workflow": workflow.but(task=task, task_title=title)}


OUTPUT_TYPES: dict[str, Any] = {
    REPORT: str,
    BRIEF: str,
    NOTES: list[str],
    SOURCES: list[dict[str, Any]],
    CITATIONS: dict[str, Any],
    WARNINGS: list[str],
    EXIT_REASON: str,
    USAGE_BY_PHASE: dict[str, Any],
    COST: float | None,
    TOKEN_USAGE: dict[str, Any],
    STRUCTURED: BaseModel | None,
    GROUNDING_SCORE: float | None,
    GROUNDING: list[dict[str, Any]],
    GROUNDING_UNJUDGED: list[str],
    CONTRADICTIONS: list[dict[str, Any]],
    CAUSAL_CHAIN: str,
    REGENERATION_COUNT: int,
    REPLAN_COUNT: int,
}
"""The workflow's outputs and their types: the shared outputs and its own (``causal_chain``, ``regeneration_count``,
``replan_count``)."""


@component
class WorkflowFinishStep(UsesModels):
    """
    The workflow's last step: mark the claims still unsupported, make the structured output of ``output_schema`` with
    the ``chat_generator`` (a failure: ``structured_output_failed``, the research kept), add the contradictions (asking
    ``judge_llm`` when there is one) and close the run.
    """

    _model_attributes = ("chat_generator", "judge_llm")

    def __init__(
        self, *, chat_generator: Any, output_schema: type[BaseModel] | None = None, judge_llm: Any = None
    ) -> None:
        self.chat_generator = _checks.chat_generator("chat_generator", chat_generator, needs_tools=False)
        self.judge_llm = (
            None if judge_llm is None else _checks.chat_generator("judge_llm", judge_llm, needs_tools=False)
        )
        self._stage = None if output_schema is None else StructuredOutputStage(output_schema=output_schema)
        self.output_schema = output_schema

    @component.output_types(**OUTPUT_TYPES)
    def run(self, workflow: WorkflowRun) -> dict[str, Any]:
        """:returns: The shared outputs and the workflow's own (see docs/workflow.md)."""
        return drive(self.phase(workflow))

    @component.output_types(**OUTPUT_TYPES)
    async def run_async(self, workflow: WorkflowRun) -> dict[str, Any]:
        """As :meth:`run`, on the event loop."""
        return await drive_async(self.phase(workflow))

    def phase(self, workflow: WorkflowRun) -> Phase[dict[str, Any]]:
        run = workflow.run
        summary, verdicts, exit_reason = workflow.summary, [], workflow.exit_reason
        if workflow.judgement is not None:
            summary, marked = mark_unsupported(summary, workflow.judgement.unsupported)
            if marked:
                run.warn(PHASE_GROUND, f"{len(marked)} claim(s) stay unsupported by their cited sources; marked")
            verdicts = verdict_outputs(workflow.judgement, marked)
        structured: BaseModel | None = None
        if self._stage is not None:
            try:
                structured = yield from self._stage.convert(run, summary, workflow.verified_urls, self.chat_generator)
            except StructuredOutputError as error:
                run.warn(PHASE_STRUCTURE, f"{error}: {error.errors}")
                exit_reason = EXIT_TIME_BUDGET if run.out_of_time() else EXIT_STRUCTURED_OUTPUT_FAILED
        if workflow.writer_failed:  # the summary is a fallback from the notes: the root cause is the writer
            exit_reason = EXIT_TIME_BUDGET if run.out_of_time() else EXIT_WRITER_FAILED
        passages = workflow.citations.get("passages") or []
        summary = yield from add_contradictions(run, summary, passages, self.judge_llm)
        outputs = yield from close_run(run, report=summary, exit_reason=exit_reason)
        return {
            **outputs,
            CITATIONS: dict(workflow.citations),
            STRUCTURED: structured,
            GROUNDING_SCORE: workflow.score,
            GROUNDING: verdicts,
            GROUNDING_UNJUDGED: unjudged_claims(workflow.judgement),
            CAUSAL_CHAIN: workflow.causal_chain,
            REGENERATION_COUNT: workflow.regenerations,
            REPLAN_COUNT: workflow.replans,
        }

    def to_dict(self) -> dict[str, Any]:
        """:returns: The serialized step; the schema is stored by its import path (``ConfigurationError`` if none)."""
        schema = None if self._stage is None else self._stage.to_dict()["init_parameters"]["output_schema"]
        return default_to_dict(self, **init_parameters(self, output_schema=schema))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WorkflowFinishStep:
        """:returns: The step, with the schema imported from its path (subject to Haystack's allowlist)."""
        params = restore_parameters(cls, data["init_parameters"])
        if params.get("output_schema") is not None:
            params["output_schema"] = deserialize_type(params["output_schema"])
        return default_from_dict(cls, {**data, "init_parameters": params})
