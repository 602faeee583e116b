"""
Publishing a report: the URLs it may cite, verifying its citations against the ledger, and the outputs it sets.

- :func:`allowed_urls`: the URLs a report may cite (URLs in the notes whose pages the run really read, or whose search
  results' snippets it holds).
- :func:`verify_report`: verify a report's citations against them (see :mod:`haystack_deep_research.evidence`) and
  repair it, with the run's warnings and events; the research workflow verifies every summary with it.
- :func:`publish_report`: :func:`verify_report`, then set ``report`` and ``citations`` and the outputs that mirror the
  run. The write hook calls it for the first draft; the grounding stage calls it again for every rewrite.
- :func:`reset_review_outputs`: the outputs of the report stages, before any stage has run.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from haystack.components.agents.state import State
from haystack.components.agents.state.state_utils import replace_values

from haystack_deep_research._prompts import unfence
from haystack_deep_research.events import CitationRemoved, ReportReady
from haystack_deep_research.evidence.verification import CitationCheck, verify_citations
from haystack_deep_research.report.passages import cited_passages
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

__all__ = ["allowed_urls", "citation_findings", "publish_report", "reset_review_outputs", "verify_report"]


def allowed_urls(notes: list[str], run: ResearchRun) -> list[str]:
    """
    The URLs the report may cite: URLs in the notes whose pages the run really read or whose search results' snippets
    it holds (cited as snippets), and the documents it retrieved whose URI the notes state (see
    :meth:`~haystack_deep_research.evidence.EvidenceLedger.read_sources_in`).

    A search result without a snippet does not count: nothing of it was read. An empty ledger allows nothing: a run
    that read nothing cannot cite anything, whatever URLs the notes hold.

    :param notes: The researchers' notes.
    :param run: The run, whose ledger lists what was read.
    :returns: The allowed URLs, in the order the notes first mention them.
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
        passage of its source behind each citation (see :func:`~haystack_deep_research.report.passages.cited_passages`).
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


def citation_findings(check: CitationCheck) -> dict[str, Any]:
    """
    :param check: The outcome of a verification.
    :returns: The ``citations`` output: the findings of the check, without the report; ``passages`` holds the
        passage of its source behind each verified citation.
    """
    return {key: value for key, value in check.to_dict().items() if key != "report"}


def publish_report(state: State, run: ResearchRun, report: str, urls: list[str]) -> CitationCheck:
    """
    Verify a report's citations against the allowed URLs, repair it, and make it the run's report.

    Sets ``report`` (repaired), ``citations`` (the findings, without the report) and the outputs that mirror the run
    (``sources``, ``warnings``, usage, ...); see :func:`verify_report` for the warnings and events.

    :param state: The orchestrator's live State.
    :param run: The run.
    :param report: The report as the writer wrote it.
    :param urls: The URLs it may cite (see :func:`allowed_urls`).
    :returns: The outcome of the verification.
    """
    check = verify_report(run, report, urls)
    state.set(REPORT, check.report)
    state.set(CITATIONS, citation_findings(check))
    publish(state, run)
    return check


def reset_review_outputs(state: State) -> None:
    """
    Set the outputs of the report stages to their values when no stage runs.

    ``grounding_score`` and ``structured`` are ``None``, ``grounding`` and ``grounding_unjudged`` are empty and both
    counts are 0.

    :param state: The orchestrator's live State.
    """
    empty: dict[str, Any] = {GROUNDING_SCORE: None, GROUNDING: [], GROUNDING_UNJUDGED: [], REGENERATION_COUNT: 0}
    for key, value in {**empty, REPLAN_COUNT: 0}.items():
        state.set(key, value, handler_override=replace_values)
    state.set(STRUCTURED, None, handler_override=replace_values)
