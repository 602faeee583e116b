"""The scan benchmark: a small local scan finishes every item."""

from __future__ import annotations

from benchmarks import scan_throughput
from haystack_deep_research.scans.executors import LocalExecutor
from haystack_deep_research.testing import LoopbackSearchServer, LoopbackWebServer, SearchDocument


def test_a_small_local_scan_writes_a_row_per_item() -> None:
    with LoopbackWebServer() as web:
        web.add_page("/a.html", "<html><body><article><h1>Solar</h1><p>Solar grew in 2025.</p></article></body></html>")
        with LoopbackSearchServer([SearchDocument(web.url("/a.html"), "Solar", "solar item")]) as search:
            measured = scan_throughput.scan_once(["solar item 1", "solar item 2"], search.base_url, LocalExecutor(), 2)

    assert measured.rows == 2
    assert measured.per_minute > 0
