"""
Multi-item scans: research every item of a discoverable surface, one research run each, locally or on Ray.

- :class:`KnowledgeProvider` (``list_items``, ``describe_item``, ``to_row``) with :class:`ItemRef` and
  :class:`KnowledgeRow`; :class:`ListProvider` for a list of strings or a text file.
- :class:`ScanRunner`: bounded concurrency, retries, per-item events, an append-only results file that makes a scan
  resumable, CSV export.
- :class:`LocalExecutor` (default) and :class:`RayExecutor` (``pip install 'haystack-deep-research[ray]'``).
- :func:`research_item`: how one item is researched with any of the library's shapes.
"""

from haystack_deep_research.scans.executors import LocalExecutor, ScanExecutor
from haystack_deep_research.scans.items import ItemRef, KnowledgeProvider, KnowledgeRow, ListProvider, row_data
from haystack_deep_research.scans.ray_executor import RayExecutor, import_ray
from haystack_deep_research.scans.research import ResearchFactory, research_item, research_item_async
from haystack_deep_research.scans.results import ResultsFile, write_csv
from haystack_deep_research.scans.runner import ScanResult, ScanRunner

__all__ = [
    "ItemRef",
    "KnowledgeProvider",
    "KnowledgeRow",
    "ListProvider",
    "LocalExecutor",
    "RayExecutor",
    "ResearchFactory",
    "ResultsFile",
    "ScanExecutor",
    "ScanResult",
    "ScanRunner",
    "import_ray",
    "research_item",
    "research_item_async",
    "row_data",
    "write_csv",
]
