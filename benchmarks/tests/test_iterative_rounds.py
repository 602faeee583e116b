"""The iterative benchmark: every case runs, the cache and the replay make no request, and its section replaces only
itself in the page."""

from __future__ import annotations

from pathlib import Path

from benchmarks import iterative_rounds


def test_the_cases_run_and_the_cache_and_replay_make_no_request() -> None:
    figures = iterative_rounds.measure(repeats=1, page_delay=0.0)

    assert (figures["sequential"].rounds, figures["parallel"].rounds) == (3, 1)
    assert (figures["sequential"].searches, figures["sequential"].fetches) == (3, 6)
    assert (figures["cached"].searches, figures["cached"].fetches) == (0, 0)
    assert (figures["replay"].searches, figures["replay"].fetches) == (0, 0)
    assert figures["replay"].matches


def test_the_section_replaces_itself_and_keeps_the_rest(tmp_path: Path) -> None:
    doc = tmp_path / "benchmarks.md"
    doc.write_text("# Benchmarks\n\nOther sections.\n", encoding="utf-8")
    first = f"{iterative_rounds.START}\nold figures\n{iterative_rounds.END}"
    iterative_rounds.write_section(doc, first)
    iterative_rounds.write_section(doc, first.replace("old", "new"))

    text = doc.read_text(encoding="utf-8")
    assert text.startswith("# Benchmarks\n\nOther sections.\n\n")
    assert "new figures" in text
    assert "old figures" not in text
    assert text.count(iterative_rounds.START) == 1
