"""
The report of a run that read nothing: :class:`NoEvidenceStage`, a report stage of every deep research run.

When the run's evidence ledger holds no page and no document and its report cites no search result's snippet (search
down, nothing found, nothing readable, see :func:`has_evidence`), the report rests on nothing, whatever the writer
wrote. The stage then puts a notice in the report's first lines (right under its title, or at the very top when it has
none) saying so and why in one sentence (from the run's search log, without error text or queries), adds a warning
naming the cause in detail, and sets ``exit_reason`` to ``"no_evidence"`` unless the run already ended for a reason of
its own (a budget, a failed writer or orchestrator).
"""

from __future__ import annotations

from haystack.components.agents.state import State
from haystack.components.generators.chat.types import ChatGenerator

from haystack_deep_research._prompts import NO_EVIDENCE_NOTICE, render_text
from haystack_deep_research._serialization import InitSerialized
from haystack_deep_research.run import ResearchRun
from haystack_deep_research.run._phases import Phase
from haystack_deep_research.run._research_run import publish
from haystack_deep_research.state import (
    CITATIONS,
    EXIT_NO_EVIDENCE,
    EXIT_REASON,
    EXIT_SUBTOPICS_DONE,
    PHASE_RESEARCH,
    REPORT,
)

__all__ = ["NoEvidenceStage", "has_evidence"]

_NORMAL_EXITS = ("", "text", "max_agent_steps", EXIT_SUBTOPICS_DONE)
"""Haystack's own exit reasons and the orchestrator's having delegated every sub-topic: a run that ends this way with
nothing read ends with ``no_evidence`` instead."""


def has_evidence(run: ResearchRun, verified_urls: list[str]) -> bool:
    """
    :param run: The run.
    :param verified_urls: The URLs its report (or summary) cites, verified.
    :returns: Whether the report rests on evidence: the run read a page or a document, or its report cites a search
        result whose snippet backs it. A run that only searched, and cites none of the snippets, has none.
    """
    return bool(run.ledger.read_urls() or verified_urls)


def _with_notice(report: str, notice: str) -> str:
    first, newline, rest = report.partition("\n")
    if first.startswith("# "):
        return f"{first}\n\n{notice}{rest.lstrip(chr(10))}" if newline else f"{first}\n\n{notice}"
    return notice + report


class NoEvidenceStage(InitSerialized):
    """A report stage: say in the report's first lines, in ``warnings`` and in ``exit_reason`` that nothing was read."""

    max_concurrency = 1

    def review(self, state: State, run: ResearchRun, writer: ChatGenerator) -> Phase[None]:
        """
        :param state: The orchestrator's live State, holding the verified report.
        :param run: The run.
        :param writer: The writer model (unused).
        :returns: The phase; it makes no call.
        """
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
