"""The scan benchmark: a small local scan finishes every item, and its section replaces only itself in the page."""

from __future__ import annotations

from pathlib import Path

from benchmarks import scan_throughput
from haystack_deep_research.scans import LocalExecutor
from haystack_deep_research.testing import LoopbackSearchServer, LoopbackWebServer, SearchDocument


def test_a_small_local_scan_writes_a_row_per_item() -> None:
    with LoopbackWebServer() as web:
        web.add_page("/a.html", "<html><body><article><h1>Solar</h1><p>Solar grew in 2025.</p></article></body></html>")
        with LoopbackSearchServer([SearchDocument(web.url("/a.html"), "Solar", "solar item")]) as search:
            measured = scan_throughput.scan_once(["solar item 1", "solar item 2"], search.base_url, LocalExecutor(), 2)

    assert measured.rows == 2
    assert measured.per_minute > 0


def test_the_section_replaces_itself_and_keeps_the_rest(tmp_path: Path) -> None:
    doc = tmp_path / "benchmarks.md"
    doc.write_text("# Benchmarks\n\nOther sections.\n", encoding="utf-8")
    first = f"{scan_throughput.START}\nold figures\n{scan_throughput.END}"
    scan_throughput.write_section(doc, first)
    scan_throughput.write_section(doc, first.replace("old", "new"))

    text = doc.read_text(encoding="utf-8")
    assert text.startswith("# Benchmarks\n\nOther sections.\n\n")
    assert "new figures" in text
    assert "old figures" not in text
    assert text.count(scan_throughput.START) == 1
