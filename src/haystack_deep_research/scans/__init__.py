"""
Multi-item scans: research every item of a discoverable surface, one research run each, locally or on Ray.

- :class:`KnowledgeProvider` (``list_items``, ``describe_item``, ``to_row``) with :class:`ItemRef` and
  :class:`KnowledgeRow`; :class:`ListProvider` for a list of strings or a text file, its rows made by
  :func:`row_data`.
- :class:`ScanRunner`: bounded concurrency, retries, per-item events, an append-only results file that makes a scan
  resumable; it returns a :class:`ScanResult` (rows, CSV export).
- :class:`.executors.LocalExecutor` (default) and :class:`RayExecutor` (``pip install 'haystack-deep-research[ray]'``).
- :func:`.executors.research_item`: how one item is researched with any of the library's shapes.
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
