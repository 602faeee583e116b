"""The page's generator keeps the sections other generators wrote, and each of those replaces only itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import iterative_rounds, scan_throughput
from benchmarks.harness import report


def test_rewriting_the_page_keeps_the_sections_other_generators_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = tmp_path / "benchmarks.md"
    scan = f"{scan_throughput.START}\n## Multi-item scans\n\nold scan figures\n{scan_throughput.END}"
    rounds = f"{iterative_rounds.START}\n## Iterative rounds\n\nold round figures\n{iterative_rounds.END}"
    doc.write_text(f"# Benchmarks\n\nold run\n\n{scan}\n\n{rounds}\n", encoding="utf-8")

    monkeypatch.setattr(report, "render", lambda data: "# Benchmarks\n\nnew run\n")
    report.write(None, doc)  # type: ignore[arg-type]
    text = doc.read_text(encoding="utf-8")
    assert "old run" not in text
    assert "new run" in text
    assert text.index(scan) < text.index(rounds)

    scan_throughput.write_section(doc, scan.replace("old", "new"))
    text = doc.read_text(encoding="utf-8")
    assert "new scan figures" in text
    assert "old scan figures" not in text
    assert rounds in text
    assert text.count(scan_throughput.START) == 1
