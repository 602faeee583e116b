"""The iterative benchmark: every case runs, the cache and the replay make no request."""

from __future__ import annotations

from benchmarks import iterative_rounds


def test_the_cases_run_and_the_cache_and_replay_make_no_request() -> None:
    figures = iterative_rounds.measure(repeats=1, page_delay=0.0)

    assert (figures["sequential"].rounds, figures["parallel"].rounds) == (3, 1)
    assert (figures["sequential"].searches, figures["sequential"].fetches) == (3, 6)
    assert (figures["cached"].searches, figures["cached"].fetches) == (0, 0)
    assert (figures["replay"].searches, figures["replay"].fetches) == (0, 0)
    assert figures["replay"].matches
