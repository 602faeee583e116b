"""The search log explains a run that found nothing."""

from __future__ import annotations

from haystack_deep_research.evidence import SearchLog, SearchOutcome


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
