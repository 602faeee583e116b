"""The search log explains a run that found nothing."""

from __future__ import annotations

from haystack_deep_research.evidence.searches import SearchLog, SearchOutcome


def test_each_cause_is_named() -> None:
    log = SearchLog()
    assert log.explain() == "no search was made"
    log.record(SearchOutcome(tool="web_search", query="a", error="SearchError: down"))
    assert log.explain() == "all 1 searches failed (last error, web_search: SearchError: down)"
    log.record(SearchOutcome(tool="search_docs", query="b", results=0))
    assert log.explain() == "1 of 2 searches returned no results, 1 failed (last error, web_search: SearchError: down)"
    log.record(SearchOutcome(tool="web_search", query="c", results=3))
    assert log.explain() == "the searches returned 3 results, but no page or document could be read"


def test_a_notice_is_given_once() -> None:
    log = SearchLog()
    assert [log.first("keyless"), log.first("keyless"), log.first("other")] == [True, False, True]


def test_the_summary_holds_no_error_text_and_an_echoed_error_is_recognised() -> None:
    log = SearchLog()
    assert log.summary() == "no search was made"
    log.record(SearchOutcome("web_search", "solar", error="SearchError: 400 Client Error: Bad Request for url"))
    assert log.summary() == "every search failed"
    assert log.echoes_error("searcherror: 400 client error: bad request for url http://x")  # repeats the error
    assert log.echoes_error("HTTP 429 Too Many Requests")  # shaped like one
    assert log.echoes_error("ValueError: invalid literal")
    assert not log.echoes_error("solar capacity growth in 2025")
    assert not log.echoes_error("Error correction in quantum computers")
