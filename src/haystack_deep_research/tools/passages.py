"""
What of a page the summarizer reads: the passages most relevant to the question, up to a budget of characters, and
:func:`near_duplicate`, which finds a page the run already read that a new page repeats. How passages are cut,
ranked and kept, and when two pages are near-duplicates: docs/how-it-works.md ("Orchestrator and sub-researchers").
"""

from __future__ import annotations

import functools
import inspect
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import pairwise

from haystack.dataclasses import ChatMessage

from haystack_deep_research._prompts import OMITTED, SUMMARIZER, SUMMARIZER_PASSAGES, fence, render_chat
from haystack_deep_research.evidence import SourceEntry
from haystack_deep_research.evidence._markdown import kept_for_recent_texts
from haystack_deep_research.evidence.citations import sentence_ends
from haystack_deep_research.evidence.entry import normalize_url

__all__ = [
    "CONCRETE_SATURATION",
    "CONCRETE_WEIGHT",
    "EDGE_CHARS",
    "NEAR_DUPLICATE",
    "PASSAGE_CHARS",
    "Excerpt",
    "best_passages",
    "concrete_content",
    "near_duplicate",
    "ranked_passages",
    "relevant_passages",
    "split_passages",
    "summarizer_prompt",
]

CONCRETE_WEIGHT = 2.0
"""What a passage full of concrete content adds to its score (its BM25 score is at most 1): a passage of figures
outranks one that only repeats the question's words."""

CONCRETE_SATURATION = 3
"""Concrete items (figures, dates, multi-word names) from which a passage counts as full of them."""

PASSAGE_CHARS = 400
"""The longest passage, in characters (shorter paragraphs are packed together up to it)."""

_K1, _B, _DELTA = 1.5, 0.75, 1.0
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
# A number (1,204 or 41.2 or 2020 count once each), or two or more capitalised words in a row (a person, a place,
# an organisation; a sentence's first word alone is not one). Two patterns, each starting with a character class the
# regex engine scans for: one alternation starting with ``\b`` was tried at every position, at twice the cost.
_FIGURES = re.compile(r"\d+(?:[.,:/-]\d+)*")
_NAMES = re.compile(r"[A-Z](?<!\w[A-Z])[a-z]+(?:[ -][A-Z][a-z]+)+\b")


@dataclass(frozen=True)
class Excerpt:
    """The kept passages of a page in page order, their 0-based places, and how many it was split into."""

    passages: tuple[str, ...]
    positions: tuple[int, ...]
    total: int

    @property
    def whole(self) -> bool:
        return len(self.passages) == self.total

    def text(self, omission: str) -> str:
        """The kept passages as one text, ``omission`` where passages were left out."""
        parts: list[str] = []
        expected = 0
        for position, passage in zip(self.positions, self.passages, strict=True):
            if position > expected:
                parts.append(omission)
            parts.append(passage)
            expected = position + 1
        if expected < self.total:
            parts.append(omission)
        return "\n\n".join(parts)


def _pieces(paragraph: str, size: int) -> list[str]:
    """Cut a paragraph longer than ``size`` at sentence ends, and a sentence longer than ``size`` at spaces."""
    sentences: list[str] = []
    ends = [0, *sentence_ends(paragraph), len(paragraph)]
    for sentence in (paragraph[start:end] for start, end in pairwise(ends)):
        rest = sentence.strip()
        while len(rest) > size:
            cut = rest.rfind(" ", 0, size)
            cut = cut if cut > 0 else size
            sentences.append(rest[:cut])
            rest = rest[cut:].lstrip()
        if rest:
            sentences.append(rest)
    return _packed(sentences, size, " ")


def _packed(parts: list[str], size: int, joiner: str) -> list[str]:
    packed: list[str] = []
    for part in parts:
        if packed and len(packed[-1]) + len(joiner) + len(part) <= size:
            packed[-1] = f"{packed[-1]}{joiner}{part}"
        else:
            packed.append(part)
    return packed


def split_passages(text: str, size: int = PASSAGE_CHARS) -> list[str]:
    """Passages of at most ``size`` characters, in page order; joined, they hold every word of the text."""
    return list(_split(text, size))


@kept_for_recent_texts  # a page read is split again for the passages behind the report's citations
def _split(text: str, size: int) -> tuple[str, ...]:
    paragraphs: list[str] = []
    for block in _BLANK_LINE.split(text):
        paragraph = block.strip()
        if paragraph:
            paragraphs += [paragraph] if len(paragraph) <= size else _pieces(paragraph, size)
    return tuple(_packed(paragraphs, size, "\n\n"))


@functools.cache
def _tokenizer() -> Callable[[str], list[str]]:
    """Haystack's BM25 tokenizer (its ``InMemoryDocumentStore``'s default), on the lower-cased NFC text."""
    # Imported from the defining module, not its package: the package resolves names lazily, and two threads doing
    # so at once (the researchers' first pages are read side by side) can fail with ImportError.
    from haystack.document_stores.in_memory.document_store import InMemoryDocumentStore

    pattern = inspect.signature(InMemoryDocumentStore).parameters["bm25_tokenization_regex"].default
    findall, words = re.compile(pattern).findall, re.compile(r"\w+").findall
    # ASCII text has no CJK character and is its own NFC form: there the pattern finds what \w+ finds, faster
    # (tests/tools/test_passage_ranking.py compares with the store, so a change of Haystack's pattern shows).
    return lambda text: words(text.lower()) if text.isascii() else findall(unicodedata.normalize("NFC", text.lower()))


@dataclass(frozen=True)
class _Counted:
    """Passages with each one's words counted (a word that recurs is one string) and its length in words."""

    passages: tuple[str, ...]
    counts: tuple[dict[str, int], ...]
    lengths: tuple[int, ...]


@kept_for_recent_texts  # a page read is ranked toward its question, then for the sentences that cite it
def _counted(text: str, size: int) -> _Counted:
    tokenize, passages, words = _tokenizer(), _split(text, size), dict[str, str]()
    token_lists = [[words.setdefault(token, token) for token in tokenize(passage)] for passage in passages]
    return _Counted(passages, tuple(Counter(tokens) for tokens in token_lists), tuple(map(len, token_lists)))


def _ranked(counted: _Counted, queries: list[str]) -> list[list[tuple[int, float]]]:
    """
    For each query, ``(index, score)`` of the passages that share a word with it, best first, ties in passage order:
    BM25+ with Haystack's tokenizer, formula and defaults (k1 1.5, b 0.75, delta 1), as its ``InMemoryDocumentStore``
    ranks. Computed here: a throwaway store per page spent more than half of a ranking on copying documents.
    """
    tokenize = _tokenizer()
    frequency: Counter[str] = Counter()
    average = 0.0
    for number, (counts, length) in enumerate(zip(counted.counts, counted.lengths, strict=True), start=1):
        frequency.update(counts.keys())
        average = (length + average * (number - 1)) / number  # the store's running mean, to the bit
    if not average:
        return [[] for _ in queries]
    total = len(counted.passages)
    norms = [_K1 * (1 - _B + _B * length / average) for length in counted.lengths]
    ranked: list[list[tuple[int, float]]] = []
    for query in queries:
        weights = {}
        for token in tokenize(query):
            if n := frequency.get(token, 0):  # a word no passage holds adds nothing
                weights[token] = math.log(1 + (total - n + 0.5) / (n + 0.5))
        scores = []
        for index, counts in enumerate(counted.counts):
            score = 0.0
            for token, weight in weights.items():
                if found := counts.get(token, 0):
                    score += weight * (found * (1.0 + _K1) / (found + norms[index]) + _DELTA)
            if score > 0:
                scores.append((index, score))
        ranked.append(sorted(scores, key=lambda item: -item[1]))
    return ranked


def _scores(text: str, question: str) -> tuple[tuple[str, ...], list[float]]:
    """The passages of ``text`` and their BM25+ scores against the question, scaled so the best one scores 1."""
    counted = _counted(text, PASSAGE_CHARS)
    scores = [0.0] * len(counted.passages)
    for index, score in _ranked(counted, [question])[0]:
        scores[index] = score
    best = max(scores)
    return counted.passages, [score / best for score in scores] if best > 0 else scores


def concrete_content(passage: str) -> float:
    """How much concrete content (figures, dates, names) a passage holds, from 0 to 1."""
    return min(1.0, (len(_FIGURES.findall(passage)) + len(_NAMES.findall(passage))) / CONCRETE_SATURATION)


def relevant_passages(text: str, question: str, *, budget: int) -> Excerpt:
    """The passages the summarizer reads toward ``question``, within ``budget`` characters (separators not counted)."""
    if len(text) <= budget or not text.strip():  # (blank text has no passage to rank)
        return Excerpt((text,), (0,), 1)
    passages, lexical = _scores(text, question)
    scores = [
        score + CONCRETE_WEIGHT * concrete_content(passage) for score, passage in zip(lexical, passages, strict=True)
    ]
    order = sorted(range(len(passages)), key=lambda index: (-scores[index], index))
    kept: list[int] = []
    used = 0
    for index in order:
        if used + len(passages[index]) <= budget:
            kept.append(index)
            used += len(passages[index])
    if not kept:  # every passage is longer than the budget: keep the best one, cut to it
        best = order[0]
        return Excerpt((passages[best][:budget],), (best,), len(passages))
    kept.sort()
    return Excerpt(tuple(passages[index] for index in kept), tuple(kept), len(passages))


def best_passages(text: str, queries: list[str], *, size: int = PASSAGE_CHARS) -> list[str]:
    """
    The passage of ``text`` that best matches each query, in the queries' order (``""`` when the text is blank); ties
    go to the earlier passage, so a query sharing no word with the text gets its beginning.
    """
    if not (passages := _split(text, size)):
        return ["" for _ in queries]
    if len(passages) == 1:
        return [passages[0] for _ in queries]
    return [passages[found[0][0]] if found else passages[0] for found in _ranked(_counted(text, size), queries)]


def ranked_passages(texts: list[str], queries: list[str], *, size: int = PASSAGE_CHARS) -> list[list[tuple[int, str]]]:
    """
    For each query, the passages of ``texts`` that share a word with it, best first, as ``(index of their text,
    passage)``: every text split, all ranked together.
    """
    if not any(query.strip() for query in queries):
        return [[] for _ in queries]
    each = [_counted(text, size) for text in texts]
    passages = [(number, part) for number, counted in enumerate(each) for part in counted.passages]
    if not passages:
        return [[] for _ in queries]
    joined = _Counted(
        tuple(part for _, part in passages),
        tuple(counts for counted in each for counts in counted.counts),
        tuple(length for counted in each for length in counted.lengths),
    )
    return [[passages[index] for index, _ in found] for found in _ranked(joined, queries)]


def summarizer_prompt(url: str, title: str, text: str, excerpt: Excerpt, question: str) -> list[ChatMessage]:
    """The summarizer's messages for a page (the whole page, or the kept passages); text, title and question fenced."""
    values = {"question": fence(question), "url": url, "title": fence(title)}
    if excerpt.whole:
        return render_chat(SUMMARIZER, content=fence(text), **values)
    content = fence(excerpt.text(OMITTED))
    return render_chat(SUMMARIZER_PASSAGES, content=content, kept=len(excerpt.passages), total=excerpt.total, **values)


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
    """The first summarized page of ``entries`` (not ``url`` itself: that is a re-read) that ``text`` nearly repeats."""
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
