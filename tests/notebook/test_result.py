"""A run's result in a notebook: still the dict, rendered as the report and a table of the sources read."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from haystack.components.agents import Agent
from haystack.dataclasses import ChatMessage
from IPython.core.formatters import DisplayFormatter

from haystack_deep_research.errors import UsageError
from haystack_deep_research.notebook import ResearchResult
from haystack_deep_research.testing import LoopbackWebServer


def _result(**extra: object) -> dict[str, object]:
    return {
        "report": "# Report\n\nSolar grew [fast](https://example.org/solar).\n",
        "notes": ["a note"],
        "sources": [
            {"id": 1, "kind": "search", "url": "https://example.org/hit", "title": "A search hit"},
            {"id": 2, "kind": "page", "url": "https://example.org/solar", "title": "Solar | 2025 <b>record</b>"},
        ],
        "warnings": [],
        "exit_reason": "text",
        "cost": 0.0123,
        **extra,
    }


def test_the_result_is_still_the_dict_the_agent_returned() -> None:
    plain = _result()
    wrapped = ResearchResult.from_run(plain)

    assert isinstance(wrapped, dict)
    assert wrapped == plain
    assert ResearchResult.from_run(wrapped) is wrapped


def test_ipython_renders_the_report_then_the_pages_read_as_a_table() -> None:
    data, _ = DisplayFormatter().format(ResearchResult(_result()))

    markdown = data["text/markdown"]
    assert markdown.startswith("# Report\n\nSolar grew [fast](https://example.org/solar).")
    assert "| # | title | URL |" in markdown
    # Only pages read are listed, and a page title cannot add table cells, Markdown or HTML.
    assert "| 2 | Solar \\| 2025 \\<b\\>record\\</b\\> | <https://example.org/solar> |" in markdown
    assert "A search hit" not in markdown
    assert "exit reason: text · 1 notes · 1 pages read · 0 warnings · cost: $0.0123" in markdown


def test_an_unknown_cost_and_warnings_are_shown() -> None:
    markdown = ResearchResult(_result(cost=None, warnings=["write: the writer failed"])).to_markdown()

    assert "cost: unknown" in markdown
    assert "- write: the writer failed" in markdown


def test_a_cost_is_written_as_the_command_line_writes_it() -> None:
    assert ResearchResult(_result(cost=1.25)).summary_line().endswith("cost: $1.25")
    assert ResearchResult(_result(cost=0.0004)).summary_line().endswith("cost: $0.0004")


def test_a_url_that_is_not_http_is_shown_as_text_not_a_link() -> None:
    sources = [{"id": 1, "kind": "page", "url": "javascript:alert(1)", "title": "t"}]
    table = ResearchResult(_result(sources=sources)).sources_table()

    assert "<javascript" not in table
    assert "javascript\u2060:alert\\(1\\)" in table  # escaped, with a word joiner no linkify reads across


def test_something_that_is_not_a_result_is_refused() -> None:
    with pytest.raises(UsageError, match="ResearchResult takes the dict a research run returned"):
        ResearchResult({"replies": []})


def test_a_real_runs_result_renders(make_agent: Callable[..., Agent], web: LoopbackWebServer) -> None:
    result = ResearchResult.from_run(make_agent().run(messages=[ChatMessage.from_user("How fast is solar growing?")]))

    markdown = result._repr_markdown_()
    assert markdown.startswith("# Research report")
    assert f"<{web.url('/solar.html')}>" in markdown
    assert f"<{web.url('/storage.pdf')}>" in markdown
    assert "cost: $0.0000" in markdown
