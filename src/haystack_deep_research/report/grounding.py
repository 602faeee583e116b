"""
Grounding: judge each claim of the report and repair the report while too few are supported, by rewriting it from
the same notes, then researching the unsupported claims again (docs/evidence.md, "Grounding", gives the steps and
outputs). ``create_deep_research_agent(grounding=True)`` gives the write hook a :class:`GroundingStage`; judging,
marking and the repair policy are those of :mod:`.assessment`, shared with the research workflow.
"""

from __future__ import annotations

from haystack.components.agents.state import State
from haystack.components.generators.chat.types import ChatGenerator
from haystack.tools import Tool

from haystack_deep_research import _checks
from haystack_deep_research._prompts import REPLAN_SUBTOPIC, RESEARCH_SUBTOPIC, render_text
from haystack_deep_research._serialization import InitSerialized
from haystack_deep_research.events import Notice
from haystack_deep_research.report.assessment import (
    Claim,
    Judgement,
    RepairPolicy,
    judge_report,
    mark_unsupported,
    unjudged_claims,
    verdict_outputs,
)
from haystack_deep_research.report.publish import allowed_urls, publish_report
from haystack_deep_research.report.sections import rewrite_report
from haystack_deep_research.report.style import ReportStyle
from haystack_deep_research.run import ResearchRun
from haystack_deep_research.run._phases import Call, Phase, UsesModels, failure
from haystack_deep_research.run._research_run import publish
from haystack_deep_research.state import (
    CITATIONS,
    GROUNDING,
    GROUNDING_SCORE,
    GROUNDING_UNJUDGED,
    PHASE_GROUND,
    REGENERATION_COUNT,
    REPLAN_COUNT,
    REPORT,
    TOOLS,
)

__all__ = ["GroundingStage"]


def _research_call(tool: Tool, subtopic: str) -> Call:
    return Call(lambda: tool.invoke(subtopic=subtopic), lambda: tool.invoke_async(subtopic=subtopic))


def _notice(run: ResearchRun, text: str) -> None:
    run.events.emit(Notice(phase=PHASE_GROUND, text=text))


class GroundingStage(UsesModels, InitSerialized):
    """
    A write-hook stage that judges the report's claims and repairs the report: the parameters of
    :class:`~haystack_deep_research.Grounding` (``judge_llm`` ``None`` is the writer), judge calls and researchers at
    once (``max_concurrency``, 1 to 50) and the report's ``style``; ``ConfigurationError`` for a value out of range.
    """

    _model_attributes = ("judge_llm",)

    def __init__(
        self,
        *,
        judge_llm: ChatGenerator | None = None,
        threshold: float = 0.65,
        max_regenerations: int = 1,
        max_replans: int = 2,
        max_concurrency: int = 5,
        style: ReportStyle | None = None,
    ) -> None:
        if judge_llm is not None:
            _checks.chat_generator("judge_llm", judge_llm, needs_tools=False)
        self.judge_llm = judge_llm
        self.policy = RepairPolicy(threshold=threshold, max_regenerations=max_regenerations, max_replans=max_replans)
        self.threshold, self.max_regenerations, self.max_replans = threshold, max_regenerations, max_replans
        self.max_concurrency = _checks.int_in_range("max_concurrency", max_concurrency, 1, 50)
        self.style = ReportStyle.of(style)

    def review(self, state: State, run: ResearchRun, writer: ChatGenerator) -> Phase[None]:
        """Judge the report, rewrite and replan while the score is below the threshold, mark what stays unsupported."""
        judge = self.judge_llm or writer
        judged = yield from self._judge(state, run, judge)
        regenerations = replans = 0
        while (
            step := self.policy.next_step(judged.score, regenerations=regenerations, replans=replans, spent=run.spent())
        ) != "done":
            unsupported = judged.unsupported
            if step == "spent":
                spent = str(run.spent())
                run.warn(PHASE_GROUND, f"the run's {run.budget.describe(spent)} is spent; the report is not repaired")
                break
            if step == "regenerate":
                regenerations += 1
                _notice(run, f"score {judged.score:.2f} is below {self.threshold}: rewriting the report")
                rewritten = yield from self._rewrite(state, run, writer, unsupported, found=None)
            elif step == "replan":
                tools = state.data.get(TOOLS) or []
                tool = next((t for t in tools if isinstance(t, Tool) and t.name == RESEARCH_SUBTOPIC), None)
                if tool is None:
                    run.warn(PHASE_GROUND, f"cannot replan: this run has no {RESEARCH_SUBTOPIC} tool")
                    break
                replans += 1
                found = yield from self._replan(state, run, tool, unsupported)
                if not found:
                    break
                rewritten = yield from self._rewrite(state, run, writer, unsupported, found=found)
            else:
                break
            if rewritten:  # a failed rewrite left the judged report in place
                judged = yield from self._judge(state, run, judge)
        self._finish(state, run, judged, regenerations, replans)

    def _judge(self, state: State, run: ResearchRun, judge: ChatGenerator) -> Phase[Judgement]:
        citations = state.data.get(CITATIONS) or {}
        return (yield from judge_report(run, state.data.get(REPORT) or "", citations.get("verified_urls") or [], judge))

    def _rewrite(
        self,
        state: State,
        run: ResearchRun,
        writer: ChatGenerator,
        unsupported: list[Claim],
        *,
        found: dict[str, str] | None,
    ) -> Phase[bool]:
        notes = run.notes()
        urls = allowed_urls(notes, run)
        report = state.data.get(REPORT) or ""
        written = yield from rewrite_report(
            writer, run, report, notes=notes, urls=urls, unsupported=unsupported, found=found, style=self.style
        )
        if not written.report:
            run.warn(PHASE_GROUND, f"the rewrite failed ({written.why}); the previous report is kept")
            return False
        publish_report(state, run, written.report, urls)
        return True

    def _replan(self, state: State, run: ResearchRun, tool: Tool, unsupported: list[Claim]) -> Phase[dict[str, str]]:
        per_round = getattr(tool, "max_subtopics", self.max_concurrency)
        claims = list(dict.fromkeys(claim.text for claim in unsupported))[:per_round]
        _notice(run, f"researching {len(claims)} unsupported claim(s) again")
        run.grant_subtopics(len(claims))
        subtopics = [render_text(REPLAN_SUBTOPIC, claim=claim, brief=run.brief) for claim in claims]
        run.plan(subtopics)
        outcomes = yield [_research_call(tool, subtopic) for subtopic in subtopics]
        found: dict[str, str] = {}
        for claim, outcome in zip(claims, outcomes, strict=True):
            note = outcome.value.get("note") if isinstance(outcome.value, dict) else None
            if isinstance(note, str) and note.strip():
                found[claim] = note
            else:
                run.warn(PHASE_GROUND, f"researching the claim '{claim}' again failed ({failure(outcome.error)})")
        if not found:
            run.warn(PHASE_GROUND, "replanning found nothing new; the report is kept as it is")
        return found

    def _finish(self, state: State, run: ResearchRun, judged: Judgement, regenerations: int, replans: int) -> None:
        report, marked = mark_unsupported(state.data.get(REPORT) or "", judged.unsupported)
        if marked:
            state.set(REPORT, report)
            run.warn(
                PHASE_GROUND, f"{len(marked)} claim(s) stay unsupported by their cited sources; marked in the report"
            )
        state.set(GROUNDING, verdict_outputs(judged, marked))
        state.set(GROUNDING_SCORE, judged.score)
        state.set(GROUNDING_UNJUDGED, unjudged_claims(judged))
        state.set(REGENERATION_COUNT, regenerations)
        state.set(REPLAN_COUNT, replans)
        publish(state, run)
        _notice(run, f"grounding score {judged.score:.2f} after {regenerations} rewrite(s) and {replans} replan(s)")
