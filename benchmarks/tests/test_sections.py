"""The page's generated sections: each generator's section replaces only itself, and the page's own generator keeps
the sections other generators wrote."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from benchmarks import iterative_rounds, scan_throughput
from benchmarks.harness import report, sections

SCAN = f"{scan_throughput.START}\n## Multi-item scans\n\nold scan figures\n{scan_throughput.END}"
ROUNDS = f"{iterative_rounds.START}\n## Iterative rounds\n\nold round figures\n{iterative_rounds.END}"


def test_a_section_is_appended_once_then_replaced_in_place(tmp_path: Path) -> None:
    doc = tmp_path / "benchmarks.md"
    doc.write_text("# Benchmarks\n\nOther sections.\n", encoding="utf-8")
    sections.write_section(doc, SCAN)
    sections.write_section(doc, ROUNDS)
    sections.write_section(doc, SCAN.replace("old", "new"))

    text = doc.read_text(encoding="utf-8")
    assert text.startswith("# Benchmarks\n\nOther sections.\n\n")
    assert "new scan figures" in text
    assert "old scan figures" not in text
    assert text.count(scan_throughput.START) == 1
    assert text.index(scan_throughput.START) < text.index(ROUNDS)  # replaced where it stood


def test_text_that_is_not_one_marked_section_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="NAME:start"):
        sections.write_section(tmp_path / "benchmarks.md", "## Figures without markers")


def test_rewriting_the_page_keeps_the_sections_other_generators_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = tmp_path / "benchmarks.md"
    doc.write_text(f"# Benchmarks\n\nold run\n\n{SCAN}\n\n{ROUNDS}\n", encoding="utf-8")
    monkeypatch.setattr(report, "render", lambda data: "# Benchmarks\n\nnew run\n")

    report.write(None, doc)  # type: ignore[arg-type]

    text = doc.read_text(encoding="utf-8")
    assert "old run" not in text
    assert "new run" in text
    assert text.index(SCAN) < text.index(ROUNDS)


def test_a_generator_prints_its_section_and_writes_it_unless_told_not_to(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parser = argparse.ArgumentParser()
    sections.add_page_arguments(parser)
    doc = tmp_path / "page.md"
    section = "<!-- demo:start -->\n## Demo\n<!-- demo:end -->"

    assert sections.publish(parser.parse_args(["--doc", str(doc), "--no-doc"]), section) == 0
    assert not doc.exists()
    assert sections.publish(parser.parse_args(["--doc", str(doc)]), section) == 0
    assert doc.read_text(encoding="utf-8").strip() == section
    assert capsys.readouterr().out.count("## Demo") == 2
