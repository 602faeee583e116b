"""Titles from pages, search results and documents enter the ledger as plain text: no link, image or HTML."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from haystack.components.agents import Agent
from haystack.dataclasses import ChatMessage
from markdown_it import MarkdownIt

from haystack_deep_research import EvidenceLedger, SourceEntry
from haystack_deep_research.testing import LoopbackSearchServer, LoopbackWebServer, SearchDocument

HOSTILE_TITLES = [
    "Spring tides <https://evil.example/steal>",
    "Spring tides [click](https://evil.example/steal)",
    'Spring tides <a href="https://evil.example/steal">here</a>',
    "Spring tides <script>fetch('https://evil.example/steal')</script>",
    "Spring tides ![pixel](https://evil.example/steal.png)",
    "Spring tides https://evil.example/steal and www.evil.example",
    "Spring tides &lt;https://evil.example/steal&gt; &#104;ttps://evil.example/x",
]
PAGE_TITLE = "Solar capacity <https://evil.example/steal> [more](https://evil.example/more) <b>2025</b>"
SEARCH_TITLE = "Battery storage ![x](https://evil.example/pixel.png) https://evil.example/bare <script>x()</script>"


def _rendered_sources(report: str) -> str:
    """The report's Sources section as HTML, the way a GFM renderer with bare links shows it."""
    assert "## Sources" in report
    return MarkdownIt("gfm-like").render(report.split("## Sources", 1)[1])


@pytest.fixture
def search(web: LoopbackWebServer) -> Iterator[LoopbackSearchServer]:
    """The shared corpus, with a hostile search title for the PDF (whose page has no title of its own)."""
    documents = [
        SearchDocument(web.url("/solar.html"), "Solar capacity 2025", "Global solar capacity grew in 2025 solar."),
        SearchDocument(web.url("/storage.pdf"), SEARCH_TITLE, "Grid battery storage doubled in 2025."),
    ]
    with LoopbackSearchServer(documents, require_api_key="test-key") as server:
        yield server


@pytest.mark.parametrize("title", HOSTILE_TITLES)
def test_every_kind_of_entry_keeps_only_the_plain_title(title: str) -> None:
    ledger = EvidenceLedger()
    found = ledger.record_search_result(url="https://a.example/1", title=title, snippet="tides")
    page = ledger.record_page(url="https://a.example/2", title=title, text="Tides rise twice a day.")
    document = ledger.record_document(url="https://a.example/3", title=title, text="Tides rise.", store="notes")
    restored = SourceEntry.from_dict({**page.to_dict(), "title": title})  # a journal or recording written elsewhere

    for entry in (found, page, document, restored):
        assert entry.title.startswith("Spring tides")
        assert "evil.example" not in entry.title
        assert "<" not in MarkdownIt("gfm-like").renderInline(entry.title)  # no tag: no link, image or HTML


def test_plain_titles_are_kept_as_they_are() -> None:
    ledger = EvidenceLedger()
    for title in ("Imagerie médicale — 2025", "A < B and C > D", "C++ & Rust: [draft]", "潮汐と月"):
        assert ledger.record_page(url="https://a.example/p", title=title, text="x").title == title


def test_no_page_or_search_title_becomes_a_link_in_the_sources_list(
    make_agent: Callable[..., Agent], web: LoopbackWebServer
) -> None:
    web.add_page(
        "/solar.html",
        f"<html><head><title>{PAGE_TITLE}</title></head><body><article>"
        "<p>Global solar capacity grew by 450 gigawatts in 2025, a record year for installations worldwide.</p>"
        "<p>China installed more than half of the new capacity, followed by Europe and the United States.</p>"
        "</article></body></html>",
    )
    web.add_pdf("/storage.pdf", ["Battery storage report. Grid battery storage doubled in 2025 to 300 GWh."])

    result = make_agent().run(messages=[ChatMessage.from_user("How fast is solar growing?")])

    titles = {entry["url"]: entry["title"] for entry in result["sources"]}
    assert titles[web.url("/solar.html")] == "Solar capacity more 2025"
    assert titles[web.url("/storage.pdf")] == "Battery storage x x()"
    assert set(result["citations"]["verified_urls"]) == {web.url("/solar.html"), web.url("/storage.pdf")}
    rendered = _rendered_sources(result["report"])
    assert "evil.example" not in rendered
    assert not any(tag in rendered for tag in ("<script", "<img", "<b>"))
    assert rendered.count("<a ") == 2
