"""
Evidence: what a run really read, the citations of a report, and their verification.

- :class:`EvidenceLedger` records every search result and page of one run (:mod:`.ledger`).
- :func:`extract_citations` finds the cited URLs of a Markdown report (:mod:`.citations`).
- :class:`SearchLog` records what a run's searches gave, to explain a run that found nothing (:mod:`.searches`).
- :func:`verify_citations` checks them against what was read and repairs the report (:mod:`.verification`).
- :func:`reading_problems` finds what hides a report's citations from a reader (:mod:`.problems`).
- :func:`clean_text` makes text from outside the library safe to store and show (:mod:`.text`).
"""

from haystack_deep_research.evidence.citations import Citation, CitationKind, extract_citations
from haystack_deep_research.evidence.entry import SourceEntry, SourceKind, normalize_url, source_id
from haystack_deep_research.evidence.ledger import EvidenceLedger
from haystack_deep_research.evidence.searches import SearchLog, SearchOutcome
from haystack_deep_research.evidence.verification import CitationCheck, verify_citations

__all__ = [
    "Citation",
    "CitationCheck",
    "CitationKind",
    "EvidenceLedger",
    "SearchLog",
    "SearchOutcome",
    "SourceEntry",
    "SourceKind",
    "extract_citations",
    "normalize_url",
    "source_id",
    "verify_citations",
]
