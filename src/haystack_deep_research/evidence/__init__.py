"""
Evidence: what a run really read, the citations of a report, and their verification.

- :class:`EvidenceLedger` records every search result and page of one run as :class:`SourceEntry` items
  (:mod:`.ledger`).
- :func:`.citations.extract_citations` finds the cited URLs of a Markdown report.
- :class:`.searches.SearchLog` records what a run's searches gave, to explain a run that found nothing.
- :func:`.verification.verify_citations` checks them against what was read and repairs the report.
- :func:`.reading.reading_problems` finds what hides a report's citations from a reader.
- :func:`.text.clean_text` makes text from outside the library safe to store and show.
"""

from haystack_deep_research.evidence.entry import SourceEntry
from haystack_deep_research.evidence.ledger import EvidenceLedger

__all__ = ["EvidenceLedger", "SourceEntry"]
