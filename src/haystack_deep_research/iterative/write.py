"""
The comprehensive analysis: :class:`WriteStep` writes the report from every finding, in parts side by side as every
shape does (see :mod:`haystack_deep_research.report.sections`), verifies its citations, judges it when there is a
judge, adds an update's "what changed" section and the contradictions (see docs/iterative.md).
"""

from __future__ import annotations

import re
from typing import Any

from haystack import component

from haystack_deep_research import _checks
from haystack_deep_research._prompts import NO_EVIDENCE_NOTICE, WHAT_CHANGED, render_text
from haystack_deep_research._serialization import InitSerialized
from haystack_deep_research.events import PhaseStarted
from haystack_deep_research.evidence.entry import normalize_url
from haystack_deep_research.evidence.text import inert_text
from haystack_deep_research.iterative.iteration import IterationRun, IterationStep
from haystack_deep_research.iterative.update import changes, claim_changes
from haystack_deep_research.report import ReportStyle, citation_findings, verify_report
from haystack_deep_research.report.assessment import judge_report, mark_unsupported, verdict_outputs
from haystack_deep_research.report.contradictions import add_contradictions
from haystack_deep_research.report.headings import ReportSections, report_sections
from haystack_deep_research.report.publish import allowed_urls
from haystack_deep_research.report.sections import Framing, Outline, fallback_report, write_report
from haystack_deep_research.report.writer import has_evidence
from haystack_deep_research.run._phases import Phase
from haystack_deep_research.state import (
    EXIT_COST_BUDGET,
    EXIT_NO_EVIDENCE,
    EXIT_TIME_BUDGET,
    EXIT_TOKEN_BUDGET,
    EXIT_WRITER_FAILED,
    PHASE_GROUND,
    PHASE_WRITE,
)

__all__ = ["WriteStep"]

_OWN_REASONS = (EXIT_TOKEN_BUDGET, EXIT_TIME_BUDGET, EXIT_COST_BUDGET, EXIT_WRITER_FAILED)


def _with_changes(report: str, section: str) -> str:
    """Put the section after the report's title line (or first, when it has none)."""
    lines = report.split("\n")
    title = next((index for index, line in enumerate(lines) if line.startswith("# ")), None)
    if title is not None:
        rest = "\n".join(lines[title + 1 :]).lstrip("\n")
        return "\n".join([*lines[: title + 1], "", section.rstrip(), "", rest])
    return f"{section.rstrip()}\n\n{report}"


def _shown(claims: list[dict[str, Any]], read: set[str]) -> list[dict[str, Any]]:
    """Claims as the section shows them: their text and figures escaped, a source the run read as an autolink."""

    def source(url: str) -> str:
        readable = normalize_url(url) in {normalize_url(address) for address in read}
        return f"<{url}>" if readable and not re.search(r"[\s<>]", url) else inert_text(url)

    return [
        {
            **{key: inert_text(value) for key, value in claim.items() if isinstance(value, str)},
            **{key: [source(url) for url in value] for key, value in claim.items() if isinstance(value, list)},
        }
        for claim in claims
    ]


def _changes_section(found: dict[str, Any], sections: ReportSections, read: set[str]) -> str:
    return render_text(
        WHAT_CHANGED,
        labels=sections.to_dict(),
        since=found["since"],
        new_topics=[inert_text(topic) for topic in found["new_topics"]],  # the analysis model's, and the journal's
        rechecked=[inert_text(topic) for topic in found["rechecked_topics"]],
        kept=[inert_text(topic) for topic in found["kept_topics"]],
        changed=found["changed_sources"],
        added=found["new_sources"],
        changed_claims=_shown(found["changed_claims"], read),
        new_claims=_shown(found["new_claims"], read),
        dropped_claims=_shown(found["no_longer_supported"], read),
    )


@component
class WriteStep(IterationStep, InitSerialized):
    """
    Write, verify (and, with a ``judge_llm``, judge) the report with the ``chat_generator`` (``writer_llm``), at most
    ``max_concurrency`` calls at once (1 to 50), in the ``style`` given.
    """

    _model_attributes = ("chat_generator", "judge_llm")

    def __init__(
        self, *, chat_generator: Any, judge_llm: Any = None, max_concurrency: int = 5, style: ReportStyle | None = None
    ) -> None:
        self.chat_generator = _checks.chat_generator("writer_llm", chat_generator, needs_tools=False)
        self.judge_llm = (
            None if judge_llm is None else _checks.chat_generator("judge_llm", judge_llm, needs_tools=False)
        )
        self.max_concurrency = _checks.int_in_range("max_concurrency", max_concurrency, 1, 50)
        self.style = ReportStyle.of(style)

    def phase(self, iteration: IterationRun) -> Phase[IterationRun]:
        """The report of the finished rounds, with its ``citations`` (and ``judgement``)."""
        run, exit_reason = iteration.run, iteration.exit_reason
        notes = run.notes()
        urls = allowed_urls(notes, run)
        sections = report_sections(run.question)
        detail = f"writing the report in {len(notes) + 1} parts from {len(notes)} findings and {len(urls)} sources"
        run.events.emit(PhaseStarted(phase=PHASE_WRITE, detail=detail))
        closing = (sections.conclusions, sections.uncertainties, sections.future)
        outline = Outline(sections.summary, sections.findings, closing, sections.sources, sections.translate)
        framing = Framing(outline=outline, topics=tuple(iteration.topics))
        written = yield from write_report(self.chat_generator, run, notes, urls, style=self.style, framing=framing)
        report = written.report
        if not report:
            why = written.why
            run.warn(PHASE_WRITE, f"the writer failed ({why}); the report was assembled from the findings")
            report = fallback_report(run, why, notes, urls)
            exit_reason = EXIT_TIME_BUDGET if run.out_of_time() else EXIT_WRITER_FAILED
        found = changes(iteration)
        check = verify_report(run, report, urls)
        report = check.report
        if not has_evidence(run, check.verified_urls):
            run.warn(PHASE_WRITE, f"the run read no page and no document ({run.searches.explain()})")
            report = render_text(NO_EVIDENCE_NOTICE, cause=run.searches.summary()) + report
            exit_reason = exit_reason if exit_reason in _OWN_REASONS else EXIT_NO_EVIDENCE
        iteration = iteration.but(report=report, citations=citation_findings(check), exit_reason=exit_reason)
        if self.judge_llm is not None:
            judged = yield from judge_report(run, report, check.verified_urls, self.judge_llm)
            report, marked = mark_unsupported(report, judged.unsupported)
            if marked:
                run.warn(PHASE_GROUND, f"{len(marked)} claim(s) are not supported by their cited sources; marked")
            iteration = iteration.but(judgement=judged, grounding=tuple(verdict_outputs(judged, marked)))
        if found and iteration.update is not None:
            found = {**found, **claim_changes(iteration.update.previous_report, report, sections)}
            report = _with_changes(report, _changes_section(found, sections, run.ledger.read_urls()))
        report = yield from add_contradictions(run, report, check.passages, self.judge_llm)
        return iteration.but(report=report, changes=found)
