"""What hides a report's citations from a reader, and how well the citations of reports written elsewhere are read."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from haystack_deep_research.evidence.citations import extract_citations
from haystack_deep_research.evidence.reading import reading_problems

DATA = Path(__file__).parent / "data"
FOREIGN = [
    "footnotes_with_code_style.md",
    "gpt_researcher_style.md",
    "open_deep_research_style.md",
    "perplexity_style.md",
]
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_MARKER = re.compile(r"\[(\^?\d{1,3})\]")
_ENTRY = re.compile(r"^\s*(?:-\s*)?\[(\^?\d{1,3})\]:?\s.*?(https?://\S+)\s*$")
_INLINE = re.compile(r"\]\((https?://[^)\s]+)\)")


def _written_citations(report: str) -> tuple[list[tuple[int, str]], dict[str, str]]:
    """
    The citations a reader sees in the body, read here without the library: ``(line, label or URL)`` for each marker
    and inline link outside code and outside the reference list, and the reference list's URL for each label.
    """
    cited: list[tuple[int, str]] = []
    entries: dict[str, str] = {}
    in_code = False
    for number, line in enumerate(report.splitlines(), start=1):
        if _FENCE.match(line):
            in_code = not in_code
            continue
        if in_code:
            continue
        if entry := _ENTRY.match(line):
            entries[entry.group(1)] = entry.group(2)
        elif not line.lstrip().startswith("- ") or "](" in line:
            cited += [(number, label) for label in _MARKER.findall(line)]
            cited += [(number, url) for url in _INLINE.findall(line)]
    return cited, entries


@pytest.mark.parametrize("name", FOREIGN)
def test_the_references_of_reports_written_elsewhere_are_linked_to_their_claims(name: str) -> None:
    report = (DATA / name).read_text(encoding="utf-8")
    cited, entries = _written_citations(report)
    found = {
        (c.line, c.text if c.kind == "reference" else c.url, c.url)
        for c in extract_citations(report, sources_section=False)
    }

    linked = [
        (line, ref) for line, ref in cited if (line, ref, entries.get(ref, ref)) in found and entries.get(ref, ref)
    ]

    assert len(cited) >= 9
    assert len(linked) / len(cited) >= 0.95, sorted(set(cited) - set(linked))
    assert reading_problems(report) == []


def test_a_fence_closed_with_a_marker_hides_the_references_and_says_where() -> None:
    report = (DATA / "fence_closed_with_marker.md").read_text(encoding="utf-8")

    problems = reading_problems(report)

    assert [(p.kind, p.lines) for p in problems] == [
        ("unclosed_fence", (11, 14)),
        ("unresolved_markers", (3, 4, 5, 9)),
        ("references_in_code", (18, 20, 21, 22, 23, 24)),
    ]
    assert "line 11: the code fence ``` opened here never closes, so lines 12-24 read as code" in problems[0].message
    assert "line(s) 14 look like its closing fence but are not" in problems[0].message
    assert "5 marker(s) such as [1], [2], [3]" in problems[1].message
    assert extract_citations(report) == []
    assert problems[0].to_dict()["lines"] == [11, 14]


def test_the_same_report_with_its_fence_closed_reads_as_meant() -> None:
    report = (DATA / "fence_closed_with_marker.md").read_text(encoding="utf-8").replace("``` [2]", "```\n\nSee [2].")

    assert reading_problems(report) == []
    assert {c.text for c in extract_citations(report, sources_section=False)} == {"1", "2", "3", "4", "5"}


def test_markers_without_a_reference_list_are_reported() -> None:
    problems = reading_problems("# Tides\n\nSpring tides reach 4 m [1].\n\nNeap tides stay low [2][^3].\n")

    assert [(p.kind, p.lines) for p in problems] == [("unresolved_markers", (3, 5))]
    assert "3 marker(s) such as [1], [2], [^3]" in problems[0].message


def test_a_fence_left_open_at_the_end_is_reported_even_without_citations() -> None:
    problems = reading_problems("Intro.\n\n~~~~\ncode\n~~~ not a close\n")

    assert [(p.kind, p.lines) for p in problems] == [("unclosed_fence", (3,))]
