"""
How a written report becomes the run's outputs.

- :func:`allowed_urls`: the URLs a report may cite (URLs in the notes whose pages the run really read).
- :func:`publish_report`: verify a report's citations against them (see :mod:`haystack_deep_research.evidence`),
  repair it, and fill ``report``, ``citations``, ``sources`` and the totals. The write hook calls it for the first
  draft; the grounding stage calls it again for every rewrite.
- :func:`publish_totals`: refresh ``usage_by_phase``, ``token_usage`` and ``warnings`` after further calls.
- :func:`reset_review_outputs`: the outputs of the report stages, before any stage has run.
"""

from __future__ import annotations

from typing import Any

from haystack.components.agents.state import State
from haystack.components.agents.state.state_utils import replace_values

from haystack_deep_research.evidence.citations import extract_citations
from haystack_deep_research.evidence.ledger import normalize_url
from haystack_deep_research.evidence.verification import CitationCheck, verify_citations
from haystack_deep_research.state import (
    CITATIONS,
    GROUNDING,
    GROUNDING_SCORE,
    PHASE_WRITE,
    REGENERATION_COUNT,
    REPLAN_COUNT,
    REPORT,
    SOURCES,
    STRUCTURED,
    TOKEN_USAGE,
    USAGE_BY_PHASE,
    WARNINGS,
    ResearchRun,
    add_usage,
)

__all__ = ["allowed_urls", "publish_report", "publish_totals", "reset_review_outputs"]


def allowed_urls(notes: list[str], run: ResearchRun) -> list[str]:
    """
    The URLs the report may cite: URLs in the notes whose pages the run really read.

    A search result alone does not count: its page was never read. When the ledger is empty (the researchers used
    tools that do not record into it), the notes' URLs are used.

    :param notes: The researchers' notes.
    :param run: The run, whose ledger lists what was read.
    :returns: The allowed URLs, in the order the notes first mention them.
    """
    in_notes = list(dict.fromkeys(c.url for note in notes for c in extract_citations(note)))
    if len(run.ledger) == 0:
        return in_notes
    read = {normalize_url(url) for url in run.ledger.read_urls()}
    return [url for url in in_notes if normalize_url(url) in read]


def publish_totals(state: State, run: ResearchRun) -> None:
    """
    Refresh the outputs that sum up the run so far: ``usage_by_phase``, ``token_usage`` and ``warnings``.

    :param state: The orchestrator's live State.
    :param run: The run.
    """
    usage = run.usage_by_phase()
    total: dict[str, Any] = {}
    for phase_usage in usage.values():
        total = add_usage(total, phase_usage)
    state.set(USAGE_BY_PHASE, usage)
    state.set(TOKEN_USAGE, total)
    state.set(WARNINGS, run.warnings(), handler_override=replace_values)


def publish_report(state: State, run: ResearchRun, report: str, urls: list[str]) -> CitationCheck:
    """
    Verify a report's citations against the allowed URLs, repair it, and make it the run's report.

    Sets ``report`` (repaired), ``citations`` (the findings, without the report), ``sources`` (the ledger) and the
    totals of :func:`publish_totals`. A report that cited URLs the run never read adds a warning.

    :param state: The orchestrator's live State.
    :param run: The run.
    :param report: The report as the writer wrote it.
    :param urls: The URLs it may cite (see :func:`allowed_urls`).
    :returns: The outcome of the verification.
    """
    titles = {entry.url: entry.title for entry in run.ledger.entries() if entry.title}
    check = verify_citations(report, urls, titles=titles)
    if check.unverified:
        run.warn(PHASE_WRITE, f"removed {len(check.unverified)} citation(s) of URLs the run never retrieved")
    state.set(REPORT, check.report)
    state.set(CITATIONS, {key: value for key, value in check.to_dict().items() if key != "report"})
    state.set(SOURCES, run.ledger.to_list())
    publish_totals(state, run)
    return check


def reset_review_outputs(state: State) -> None:
    """
    Set the outputs of the report stages to their values when no stage runs.

    ``grounding_score`` and ``structured`` are ``None``, ``grounding`` is empty and both counts are 0.

    :param state: The orchestrator's live State.
    """
    for key, value in ((GROUNDING_SCORE, None), (GROUNDING, []), (REGENERATION_COUNT, 0), (REPLAN_COUNT, 0)):
        state.set(key, value, handler_override=replace_values)
    state.set(STRUCTURED, None, handler_override=replace_values)
