"""
Evidence: what a run really read (:class:`EvidenceLedger`, of :class:`SourceEntry` items), the citations of a report
(:mod:`.citations`), their verification and repair (:mod:`.verification`), what hides them from a reader
(:mod:`.reading`), what a run's searches gave (:mod:`.searches`) and outside text made safe (:mod:`.text`).
"""

from haystack_deep_research.evidence.entry import SourceEntry
from haystack_deep_research.evidence.ledger import EvidenceLedger

__all__ = ["EvidenceLedger", "SourceEntry"]
