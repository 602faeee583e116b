"""
Finding the citations of a Markdown report: every link a reader can follow, and every marker that points to one, as
listed in docs/evidence.md ("Citation verification").
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import asdict, dataclass
from itertools import pairwise
from typing import Any

from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.evidence._markdown import kept_for_recent_texts, parse
from haystack_deep_research.evidence._styles import (
    CitationKind,
    Doc,
    Hit,
    find_entries,
    find_markers,
    find_sections,
    split_links,
)

__all__ = ["Citation", "CitationKind", "Sentence", "body_sentences", "extract_citations", "sentence_ends"]

_TERMINAL = re.compile(r"[.!?\u3002\uff01\uff1f]")
_CLOSERS = "\"'\u201d\u2019\u00bb)"
_LINE_PREFIX = re.compile(r"^\s*(?:#+|>+|[-*+]|\d+[.)])\s+")


@dataclass(frozen=True)
class Citation:
    """
    One occurrence of a cited URL in a report.

    :param url: The URL as written in the report (entities and escapes decoded; ``http://`` added to a ``www.`` link).
    :param text: The link text, image description, marker label or entry title; ``""`` when there is none.
    :param sentence: The sentence (within its line) the citation stood in; a marker right after a sentence's final
        punctuation belongs to that sentence.
    :param kind: ``"inline"`` for ``[text](url)``; ``"bare"`` for a bare URL or autolink; ``"reference"`` for a
        reference definition, a Sources list entry or a marker pointing to one; ``"image"`` for an image;
        ``"html"`` for a raw HTML tag.
    :param line: 1-based line number in the report.
    """

    url: str
    text: str
    sentence: str
    kind: CitationKind
    line: int

    def to_dict(self) -> dict[str, Any]:
        """:returns: The citation as a JSON-ready dictionary."""
        return asdict(self)


def _scan(markdown: str) -> Doc:
    """Find every span of a report that cites something, its Sources section and its labels."""
    if not isinstance(markdown, str):
        raise ConfigurationError(f"A report must be a string, got {type(markdown).__name__}.")
    doc = Doc(parse(markdown))
    find_sections(doc)
    doc.hits, maybe = split_links(doc)
    find_entries(doc)
    find_markers(doc, maybe)
    for hit in doc.hits:
        if doc.line(hit) in doc.section_lines:
            hit.kind, hit.entry = "reference", True
    doc.hits.sort(key=lambda hit: (hit.start, -hit.end))
    return doc


def _sentence_ends(line: str, shield: str, markers: list[tuple[int, int]]) -> list[int]:
    """Where a line's sentences end, by the rule of :func:`body_sentences`."""
    ends: list[int] = []
    starts = {start: end for start, end in markers}
    for found in _TERMINAL.finditer(shield):
        at = found.end()
        while at < len(line) and line[at] in _CLOSERS:
            at += 1
        probe, extended = at, at
        while True:
            blank = probe
            while blank < len(line) and line[blank] in " \t":
                blank += 1
            if blank not in starts:
                break
            probe = extended = starts[blank]
        after = extended if extended > at else at
        if after >= len(line) or line[after].isspace() or found.group(0) in "\u3002\uff01\uff1f":
            ends.append(after)
    return sorted(set(ends))


def _split_line(doc: Doc, index: int, hits: list[Hit]) -> tuple[str, list[tuple[int, int]], list[int]]:
    """One line of the report, the spans of its hits within it, and where its sentences end."""
    line, base = doc.lines[index], doc.parsed.starts[index]
    spans = [(hit.start - base, min(hit.end - base, len(line))) for hit in hits]
    shield = list(line)
    for start, end in spans:
        shield[start:end] = "x" * (end - start)
    markers = [span for span, hit in zip(spans, hits, strict=True) if hit.mode == "marker"]
    return line, spans, _sentence_ends(line, "".join(shield), markers)


def _sentence(line: str, span: tuple[int, int]) -> str:
    """A sentence as written, without the list, quote or heading marks that start its line."""
    return _LINE_PREFIX.sub("", line[span[0] : span[1]].strip(), count=1).strip()


def _by_line(doc: Doc, hits: list[Hit]) -> dict[int, list[Hit]]:
    by_line: dict[int, list[Hit]] = {}
    for hit in hits:
        by_line.setdefault(doc.line(hit), []).append(hit)
    return by_line


def sentence_ends(text: str) -> list[int]:
    """The offsets just after each sentence of a plain text, by the rule :func:`body_sentences` cuts a line by."""
    ends: list[int] = []
    base = 0
    for line in text.split("\n"):
        ends += [base + end for end in _sentence_ends(line, line, [])]
        base += len(line) + 1
    return ends


def _citations(doc: Doc) -> list[Citation]:
    """Turn the hits into citations, each with the sentence it stood in."""
    result: list[Citation] = []
    for index, hits in _by_line(doc, doc.hits).items():
        line, spans, ends = _split_line(doc, index, hits)
        sentences: dict[tuple[int, int], str] = {}
        for (start, end), hit in zip(spans, hits, strict=True):
            before, after = bisect_right(ends, start), bisect_left(ends, end)
            span = (ends[before - 1] if before else 0, ends[after] if after < len(ends) else len(line))
            span = (0, len(line)) if hit.entry else span  # an entry is not split into sentences
            if span not in sentences:
                sentences[span] = _sentence(line, span)
            for position, url in enumerate(hit.urls):
                text = hit.refs[position] if hit.mode == "marker" else hit.text
                result.append(Citation(url, text, sentences[span], hit.kind, index + 1))
    return result


@dataclass(frozen=True)
class Sentence:
    """One sentence of a report's body as written, its 1-based line and the URLs it cites, in order."""

    text: str
    line: int
    urls: tuple[str, ...]


def body_sentences(markdown: str) -> list[Sentence]:
    """
    Every sentence of a report's body (its paragraphs, list items and quotes included), cited or not: the one sentence
    splitter of a report's claims. A sentence ends after final punctuation followed by a blank or the line's end (CJK
    punctuation needs none); a marker right after the punctuation belongs to the sentence before it.
    """
    doc = _scan(markdown)
    by_line = _by_line(doc, [hit for hit in doc.hits if not hit.entry])
    paragraphs = [block for block in doc.parsed.blocks if block.kind == "paragraph"]
    rows = {index for block in paragraphs for index in range(block.first, min(block.end, len(doc.lines)))}
    found: list[Sentence] = []
    for index in sorted(rows - doc.section_lines - doc.entry_lines):
        hits = by_line.get(index, [])
        line, spans, ends = _split_line(doc, index, hits)
        bounds = [0, *(end for end in ends if 0 < end < len(line)), len(line)]
        for first, last in pairwise(bounds):
            text = _sentence(line, (first, last))
            if text:
                inside = [hit for (start, _), hit in zip(spans, hits, strict=True) if first <= start < last]
                urls = [url for hit in inside for url in hit.urls]
                found.append(Sentence(text, index + 1, tuple(urls)))
    return found


def extract_citations(markdown: str, *, sources_section: bool = True) -> list[Citation]:
    """
    Every citation of a Markdown report in document order, one per cited URL (a marker ``[1, 2]`` gives two);
    ``sources_section=False`` keeps only the body's, leaving out the Sources section, definitions and entries.
    """
    if not isinstance(markdown, str):
        raise ConfigurationError(f"A report must be a string, got {type(markdown).__name__}.")
    return list(_extracted(markdown, bool(sources_section)))


@kept_for_recent_texts
def _extracted(markdown: str, sources_section: bool) -> tuple[Citation, ...]:
    doc = _scan(markdown)
    if not sources_section:
        doc.hits = [hit for hit in doc.hits if not hit.entry]
    return tuple(_citations(doc))
