"""
Publishing a report: the URLs it may cite, verifying its citations against the ledger and repairing it, the outputs
it sets, and the passage behind each citation (docs/evidence.md, "The passage behind each citation").
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from haystack.components.agents.state import State
from haystack.components.agents.state.state_utils import replace_values

from haystack_deep_research._prompts import unfence
from haystack_deep_research.events import CitationRemoved, ReportReady
from haystack_deep_research.evidence import EvidenceLedger, SourceEntry
from haystack_deep_research.evidence.citations import extract_citations
from haystack_deep_research.evidence.entry import CITABLE_KINDS, normalize_url
from haystack_deep_research.evidence.verification import CitationCheck, verify_citations
from haystack_deep_research.run import ResearchRun
from haystack_deep_research.run._research_run import publish
from haystack_deep_research.state import (
    CITATIONS,
    GROUNDING,
    GROUNDING_SCORE,
    GROUNDING_UNJUDGED,
    PHASE_WRITE,
    REGENERATION_COUNT,
    REPLAN_COUNT,
    REPORT,
    STRUCTURED,
)
from haystack_deep_research.tools.passages import PASSAGE_CHARS, best_passages

__all__ = [
    "allowed_urls",
    "citation_findings",
    "cited_passages",
    "publish_report",
    "reset_review_outputs",
    "verify_report",
]


def allowed_urls(notes: list[str], run: ResearchRun) -> list[str]:
    """
    The URLs the report may cite, in the order the notes first mention them: those whose pages or documents the run
    read or whose snippets it holds (:meth:`~haystack_deep_research.evidence.EvidenceLedger.read_sources_in`).
    """
    return list(dict.fromkeys(url for note in notes for url in run.ledger.read_sources_in(note)))


def verify_report(run: ResearchRun, report: str, urls: list[str]) -> CitationCheck:
    """
    Verify a report's citations against the allowed URLs and repair it.

    The library's own fence tags (``<untrusted_page ...>``), which a model may echo from its prompt, are removed
    first: every shape's report, summary and draft passes here, so none reaches a reader.

    A report that cited URLs the run never read adds a warning, and so does a report that cites none of the sources
    the run read (once per run, also over rewrites); each removed citation adds a
    :class:`~haystack_deep_research.events.CitationRemoved` event; a :class:`~haystack_deep_research.events.ReportReady`
    event follows, unless the report is empty (a run that only asked a clarifying question).

    :param run: The run, whose ledger gives the sources' titles.
    :param report: The report as the model wrote it.
    :param urls: The URLs it may cite (see :func:`allowed_urls`).
    :returns: The outcome of the verification; ``check.report`` is the repaired report and ``check.passages`` the
        passage of its source behind each citation (see :func:`~haystack_deep_research.report.publish.cited_passages`).
    """
    titles = {entry.url: entry.title for entry in run.ledger.entries() if entry.title}
    check = verify_citations(unfence(report), urls, titles=titles, named=run.ledger.named_notes())
    check = replace(check, passages=cited_passages(check.report, run.ledger))
    for citation in check.unverified:
        run.events.emit(CitationRemoved(phase=PHASE_WRITE, url=citation.url, line=citation.line))
    if check.unverified:
        run.warn(PHASE_WRITE, f"removed {len(check.unverified)} citation(s) of URLs the run never retrieved")
    read = len(run.ledger.read_urls())
    uncited = f"the run read {read} source{'s' if read != 1 else ''} and the report cites none"
    if read and not check.verified_urls and f"{PHASE_WRITE}: {uncited}" not in run.warnings():  # once per run
        run.warn(PHASE_WRITE, uncited)
    if check.report.strip():  # a run that only asked a clarifying question has no report to be ready
        run.events.emit(ReportReady(phase=PHASE_WRITE, verified=len(check.verified), removed=len(check.unverified)))
    return check


def cited_passages(report: str, ledger: EvidenceLedger, *, size: int = PASSAGE_CHARS) -> list[dict[str, str]]:
    """
    The passage of its source behind every citation of a verified ``report``, chosen by the library with BM25+
    (:func:`~haystack_deep_research.tools.passages.best_passages`), never written by a model: one entry per cited
    sentence and URL, in citing order, with ``url``, ``title``, ``read_at``, ``sentence``, ``passage`` and ``kind``,
    and for a source not read ``named`` (how it was not read).
    """
    wanted: dict[tuple[str, str], SourceEntry] = {}
    for citation in extract_citations(report, sources_section=False):
        entry = ledger.get(citation.url)
        if entry is not None and entry.kind in CITABLE_KINDS and entry.text.strip():
            wanted.setdefault((normalize_url(entry.url), citation.sentence), entry)
    by_source: dict[str, tuple[SourceEntry, list[str]]] = {}
    for (key, sentence), entry in wanted.items():
        by_source.setdefault(key, (entry, []))[1].append(sentence)
    chosen: dict[tuple[str, str], str] = {}
    for key, (entry, sentences) in by_source.items():
        for sentence, passage in zip(sentences, best_passages(entry.text, sentences, size=size), strict=True):
            chosen[(key, sentence)] = passage
    return [
        {
            "url": entry.url,
            "title": entry.title,
            "read_at": entry.fetched_at,
            "sentence": sentence,
            "passage": chosen[(key, sentence)],
            "kind": entry.kind,
            **({"named": entry.note} if entry.note else {}),
        }
        for (key, sentence), entry in wanted.items()
    ]


def citation_findings(check: CitationCheck) -> dict[str, Any]:
    """
    :param check: The outcome of a verification.
    :returns: The ``citations`` output: the findings of the check, without the report; ``passages`` holds the
        passage of its source behind each verified citation.
    """
    return {key: value for key, value in check.to_dict().items() if key != "report"}


def publish_report(state: State, run: ResearchRun, report: str, urls: list[str]) -> CitationCheck:
    """Verify a report (:func:`verify_report`) and make it the run's: ``report``, ``citations``, the run's outputs."""
    check = verify_report(run, report, urls)
    state.set(REPORT, check.report)
    state.set(CITATIONS, citation_findings(check))
    publish(state, run)
    return check


def reset_review_outputs(state: State) -> None:
    """Set the report stages' outputs as when no stage ran."""
    empty: dict[str, Any] = {GROUNDING_SCORE: None, GROUNDING: [], GROUNDING_UNJUDGED: [], REGENERATION_COUNT: 0}
    for key, value in {**empty, REPLAN_COUNT: 0, STRUCTURED: None}.items():
        state.set(key, value, handler_override=replace_values)
