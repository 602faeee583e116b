"""
The quality loop's decisions: :class:`GroundingRouter` after each grounding eval, :class:`ReplanStep` before a
focused Execute round.

After each judgement the router sends the run on exactly one way:

- ``done`` when the summary cannot be judged: it cites nothing the run read, or most of its cited claims got no
  verdict (exit reason ``not_judged``, or ``no_evidence`` when the run read nothing), with a warning. A summary is
  never called grounded on claims nobody judged. Its claims that cite nothing are judged against the passages the
  run read, and count in the score;
- ``done`` when the score meets ``threshold`` (exit reason ``grounded``);
- ``regenerate`` while fewer than ``max_regenerations`` rewrites were made (a rewrite runs no tool);
- ``replan`` once rewrites are used up, while fewer than ``max_replans`` replans were made;
- ``done`` when both are used up (exit reason ``grounding_exhausted``), or once the run's token or time budget is
  spent (exit reason ``token_budget`` / ``time_budget``, with a warning): no further model call starts.

Rewrites are counted over the whole run, not per replan. :class:`ReplanStep` turns the judge's unsupported claims
into a task for Execute focused on exactly those claims.
"""

from __future__ import annotations

from haystack import component

from haystack_deep_research._prompts import REPLAN_NOTE_TITLE, REPLAN_TASK, fence, render_text, render_user
from haystack_deep_research._serialization import InitSerialized
from haystack_deep_research.events import Notice
from haystack_deep_research.evidence.clock import today
from haystack_deep_research.report.assessment import RepairPolicy, cites_nothing
from haystack_deep_research.report.judge import UNKNOWN
from haystack_deep_research.report.writer import has_evidence
from haystack_deep_research.state import (
    EXIT_GROUNDED,
    EXIT_GROUNDING_EXHAUSTED,
    EXIT_NO_EVIDENCE,
    EXIT_NOT_JUDGED,
    PHASE_GROUND,
    PHASE_REPLAN,
)
from haystack_deep_research.workflow.workflow_run import WorkflowRun

__all__ = ["GroundingRouter", "ReplanStep"]


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
    """
    Route a judged run: done, regenerate or replan (see the module docstring).

    :param threshold: The lowest acceptable grounding score, 0 to 1.
    :param max_regenerations: Rewrites of the summary in one run, 0 to 5.
    :param max_replans: Replans in one run, 0 to 5.
    :raises ConfigurationError: If a parameter is outside its range.
    """

    def __init__(self, *, threshold: float = 0.65, max_regenerations: int = 1, max_replans: int = 2) -> None:
        self.policy = RepairPolicy(threshold=threshold, max_regenerations=max_regenerations, max_replans=max_replans)
        self.threshold, self.max_regenerations, self.max_replans = threshold, max_regenerations, max_replans

    @component.output_types(done=WorkflowRun, regenerate=WorkflowRun, replan=WorkflowRun)
    def run(self, workflow: WorkflowRun) -> dict[str, WorkflowRun]:
        """
        :param workflow: The judged run.
        :returns: Exactly one of ``done``, ``regenerate`` (rewrite count raised) or ``replan`` (replan count raised).
        """
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
        """
        :param workflow: The run routed to a replan (its replan count already raised).
        :returns: ``workflow``: the run with its focused ``task`` for Execute.
        """
        run = workflow.run
        unsupported = workflow.judgement.unsupported if workflow.judgement is not None else []
        claims = list(dict.fromkeys(claim.text for claim in unsupported))
        date = today()
        task = render_user(REPLAN_TASK, today=date, question=run.question, claims=[fence(claim) for claim in claims])
        title = render_text(REPLAN_NOTE_TITLE, round=workflow.replans, claims=claims)
        run.events.emit(Notice(phase=PHASE_REPLAN, text=f"replan {workflow.replans}: {len(claims)} claim(s) to check"))
        return {"workflow": workflow.but(task=task, task_title=title)}
