"""
Pages a run has already read that a new page repeats, so that ``read_url`` need not summarize it again.

Two texts are near-duplicates when, with case and runs of whitespace folded, they begin or end alike (their first or
last :data:`EDGE_CHARS` characters) and share at least :data:`NEAR_DUPLICATE` of their five-word shingles (Jaccard
similarity). The first test is a cheap filter over the run's ledger, the second runs only on the pages it lets
through. On the benchmark corpus, whose pages share most of their filler sentences, two different pages share at
most 0.30 of their shingles, and a page with two words changed and a footer added still shares 0.96 with itself.
"""

from __future__ import annotations

from collections.abc import Iterable

from haystack_deep_research.evidence import SourceEntry
from haystack_deep_research.evidence.entry import normalize_url

__all__ = ["EDGE_CHARS", "NEAR_DUPLICATE", "near_duplicate"]

NEAR_DUPLICATE = 0.9
"""The least share of five-word shingles two pages have in common to count as the same page."""
EDGE_CHARS = 200
"""How much of a text's beginning or end (case and whitespace folded) two near-duplicates must have in common."""
_SHINGLE_WORDS = 5
_RAW_EDGE = 4 * EDGE_CHARS  # raw characters read to get EDGE_CHARS folded ones, whitespace runs included


def _folded(text: str) -> str:
    return " ".join(text.casefold().split())


def _edges(text: str) -> tuple[str, str]:
    return _folded(text[:_RAW_EDGE])[:EDGE_CHARS], _folded(text[-_RAW_EDGE:])[-EDGE_CHARS:]


def _shingles(text: str) -> set[int]:
    words = text.casefold().split()
    return {hash(tuple(words[i : i + _SHINGLE_WORDS])) for i in range(max(1, len(words) - _SHINGLE_WORDS + 1))}


def near_duplicate(text: str, url: str, entries: Iterable[SourceEntry]) -> SourceEntry | None:
    """
    Find a page read earlier whose text the new page repeats (see the module docstring).

    :param text: The new page's text.
    :param url: The new page's URL (an entry for the same URL is not a duplicate: that is a re-read).
    :param entries: The run's ledger entries.
    :returns: The first summarized page whose text ``text`` nearly repeats, or ``None``.
    """
    if len(_folded(text[:_RAW_EDGE])) < EDGE_CHARS:  # too short to tell by its edges: never skipped
        return None
    head, tail = _edges(text)
    key, mine = normalize_url(url), None
    for entry in entries:
        if entry.kind != "page" or not entry.summary or normalize_url(entry.url) == key:
            continue
        if not 0.8 * len(entry.text) <= len(text) <= 1.25 * len(entry.text):
            continue
        their_head, their_tail = _edges(entry.text)
        if head != their_head and tail != their_tail:
            continue
        mine = mine if mine is not None else _shingles(text)
        theirs = _shingles(entry.text)
        if len(mine & theirs) >= NEAR_DUPLICATE * len(mine | theirs):
            return entry
    return None
