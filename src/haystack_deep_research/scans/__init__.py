"""
Multi-item scans: research every item of a discoverable surface (a :class:`KnowledgeProvider`), one research run each,
locally or on Ray (:class:`RayExecutor`), with :class:`ScanRunner`; see docs/scans.md.
"""

from haystack_deep_research.scans.executors import RayExecutor
from haystack_deep_research.scans.items import ItemRef, KnowledgeProvider, KnowledgeRow, ListProvider, row_data
from haystack_deep_research.scans.runner import ScanResult, ScanRunner

__all__ = [
    "ItemRef",
    "KnowledgeProvider",
    "KnowledgeRow",
    "ListProvider",
    "RayExecutor",
    "ScanResult",
    "ScanRunner",
    "row_data",
]
