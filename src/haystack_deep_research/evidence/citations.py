"""
Finding the citations in a Markdown report and checking them against the sources that were really read.

:func:`extract_citations` finds every cited ``http(s)`` URL (and ``file://`` and ``doc://`` URIs, the citation
targets of documents retrieved from datastores): inline links ``[text](url)`` (also with a title or
with the URL in angle brackets), autolinks ``<url>``, bare URLs (trailing punctuation that is not part of the URL
is dropped, balanced parentheses are kept), reference definitions ``[1]: url``, entries of a Sources/References
list (``1. [Title](url)``, ``[1] Title — url``, ``- url``) and markers ``[1]``, ``[1, 2]`` or ``[text][label]``
in the text that point to such a definition or numbered entry. Images ``![alt](url)`` and code are never citations.

Checking the citations against what was read, and repairing the report, is
:mod:`haystack_deep_research.evidence.verification`.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from haystack_deep_research.errors import ConfigurationError

__all__ = ["Citation", "CitationKind", "extract_citations"]

CitationKind = Literal["inline", "bare", "reference"]

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:\s+(.*?))?\s*$")
_SOURCES_TITLE = re.compile(r"(?:sources|references)\s*:?(?:\s+#+)?", re.IGNORECASE)
_DEFINITION = re.compile(r"^ {0,3}\[((?:\\.|[^\[\]\\])+)\]:\s*(?:<([^<>]*)>|(\S+))(.*)$")
_LABELLED = re.compile(r"^\s*(?:[-*+]\s+)?(?:\[(\d+)\]|(\d+)[.)])\s+")
_LINK = re.compile(
    r"(!?)\[((?:\\.|[^\[\]\\]|\[(?:\\.|[^\[\]\\])*\])*)\]"  # ![image] or [text], one level of nested brackets
    r"\(\s*(?:<([^<>]*)>|((?:[^\s()]|\([^\s()]*\))*))"  # (<url> or (url with balanced parentheses
    r"""(?:\s+(?:"[^"]*"|'[^']*'|\([^()]*\)))?\s*\)"""  # an optional "title", then )
)
_SCHEMES = ("http://", "https://", "file://", "doc://")
"""The schemes a citation may use: web pages, and documents retrieved from datastores (files and ``doc://`` ids)."""
_AUTOLINK = re.compile(r"<((?:https?|file|doc)://[^\s<>]+)>", re.IGNORECASE)
_BARE = re.compile(r"(?:https?|file|doc)://[^\s<>\"'`\x00\x01]+", re.IGNORECASE)
_FULL_REF = re.compile(r"\[([^\[\]\x00]+)\]\[([^\[\]\x00]*)\]")
_MARKER = re.compile(r"\[([^\[\]\x00]+)\]")
_CODE_SPAN = re.compile(r"(`+).+?\1")
_SENTENCE_END = re.compile(r"[.!?](?=\s)")
_LINE_PREFIX = re.compile(r"^\s*(?:#+|>+|[-*+]|\d+[.)])\s+")
_ENTRY_SEPARATORS = " \t\u2014\u2013-:,"


@dataclass(frozen=True)
class Citation:
    """
    One occurrence of a cited URL in a report.

    :param url: The URL as written in the report.
    :param text: The link text, marker label or entry title; ``""`` when there is none.
    :param sentence: The sentence (within its line) the citation stood in.
    :param kind: ``"inline"`` for ``[text](url)``; ``"bare"`` for a bare URL or autolink; ``"reference"`` for a
        reference definition, a Sources list entry or a marker pointing to one.
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


@dataclass
class _Hit:
    """A span of one line that cites URLs; ``mode`` says how to remove it, ``refs`` the labels it points to."""

    line: int
    start: int
    end: int
    mode: Literal["link", "cut", "line", "marker"]
    kind: CitationKind
    urls: list[str]
    text: str = ""
    refs: list[str] = field(default_factory=list)


@dataclass
class _Doc:
    lines: list[str]
    hits: list[_Hit] = field(default_factory=list)
    section_lines: set[int] = field(default_factory=set)
    section_heading: int | None = None
    definitions: dict[str, tuple[str, int, bool]] = field(default_factory=dict)  # label: url, line, in Sources


def _is_citable(url: str) -> bool:
    lowered = url.lower()
    return any(lowered.startswith(scheme) and len(url) > len(scheme) for scheme in _SCHEMES)


def _key(label: str) -> str:
    return " ".join(label.split()).casefold()


def _trim_url(url: str) -> str:
    """Drop trailing characters of a bare URL that belong to the text around it."""
    while url and (
        url[-1] in ".,;:!?*_~'\""
        or (url[-1] == ")" and url.count("(") < url.count(")"))
        or (url[-1] == "]" and url.count("[") < url.count("]"))
    ):
        url = url[:-1]
    return url


def _scan_links(index: int, line: str, masked: str, kind: CitationKind | None) -> tuple[list[_Hit], str]:
    """Find inline links, autolinks and bare URLs in one line; return them and the line with every link masked."""
    hits: list[_Hit] = []

    def link(match: re.Match[str]) -> str:
        group = 3 if match.group(3) is not None else 4
        url, text = line[match.start(group) : match.end(group)], line[match.start(2) : match.end(2)]
        if not match.group(1) and _is_citable(url):
            hits.append(_Hit(index, match.start(), match.end(), "link", kind or "inline", [url], text))
        return "\x00" * len(match.group(0))

    def bare(match: re.Match[str]) -> str:
        autolink = match.re is _AUTOLINK
        url = line[match.start(1) : match.end(1)] if autolink else _trim_url(match.group(0))
        length = len(match.group(0)) if autolink else len(url)
        if _is_citable(url):
            hits.append(_Hit(index, match.start(), match.start() + length, "cut", kind or "bare", [url]))
        return "\x00" * length + match.group(0)[length:]

    return hits, _BARE.sub(bare, _AUTOLINK.sub(bare, _LINK.sub(link, masked)))


def _scan_line(doc: _Doc, index: int, in_section: bool) -> str | None:
    """Record the citations of one line; return the masked line to search for markers, or ``None``."""
    line = doc.lines[index]
    masked = _CODE_SPAN.sub(lambda code: "\x01" * len(code.group(0)), line)
    definition = _DEFINITION.match(masked)
    if definition:
        url = definition.group(2) if definition.group(2) is not None else definition.group(3)
        if _is_citable(url):
            title = definition.group(4).strip().strip("\"'()")
            doc.hits.append(_Hit(index, 0, len(line), "line", "reference", [url], title))
            doc.definitions.setdefault(_key(definition.group(1)), (url, index, in_section))
        return None
    labelled = _LABELLED.match(masked) if in_section else None
    if labelled:
        masked = "\x00" * labelled.end() + masked[labelled.end() :]
    hits, masked = _scan_links(index, line, masked, "reference" if in_section else None)
    if labelled and hits:
        doc.definitions.setdefault(_key(labelled.group(1) or labelled.group(2)), (hits[0].urls[0], index, True))
        hits[0].text = hits[0].text or line[labelled.end() : hits[0].start].strip(_ENTRY_SEPARATORS)
    doc.hits.extend(hits)
    return None if in_section else masked


def _scan_markers(doc: _Doc, index: int, masked: str) -> None:
    """Record ``[text][label]`` links and ``[label]`` / ``[1, 2]`` markers that point to a known definition."""
    defs = doc.definitions

    def full(match: re.Match[str]) -> str:
        text, label = match.group(1), match.group(2) or match.group(1)
        if text.strip().isdigit() or _key(label) not in defs:
            return match.group(0)
        url = defs[_key(label)][0]
        doc.hits.append(_Hit(index, match.start(), match.end(), "link", "reference", [url], text, [label]))
        return "\x00" * len(match.group(0))

    for match in _MARKER.finditer(_FULL_REF.sub(full, masked)):
        body = match.group(1)
        labels = [body] if _key(body) in defs else [part.strip() for part in re.split(r"[,;]", body)]
        if all(_key(label) in defs for label in labels):
            urls = [defs[_key(label)][0] for label in labels]
            doc.hits.append(_Hit(index, match.start(), match.end(), "marker", "reference", urls, body, labels))


def _scan(markdown: str) -> _Doc:
    """Find every citation span of a report, its Sources section and its reference definitions."""
    if not isinstance(markdown, str):
        raise ConfigurationError(f"A report must be a string, got {type(markdown).__name__}.")
    doc = _Doc(markdown.split("\n"))
    to_search: dict[int, str] = {}
    fence, section_level = "", 0
    for index, line in enumerate(doc.lines):
        opener = _FENCE.match(line)
        if fence or opener:
            closes = fence and opener and opener.group(1)[0] == fence[0] and len(opener.group(1)) >= len(fence)
            fence = "" if closes else fence or (opener.group(1) if opener else "")
            continue
        heading = _HEADING.match(line)
        if heading and len(heading.group(1)) >= 2 and _SOURCES_TITLE.fullmatch(heading.group(2) or ""):
            section_level = section_level or len(heading.group(1))
            doc.section_heading = index if doc.section_heading is None else doc.section_heading
        elif heading and len(heading.group(1)) <= section_level:
            section_level = 0
        if section_level:
            doc.section_lines.add(index)
        masked = _scan_line(doc, index, bool(section_level))
        if masked is not None:
            to_search[index] = masked
    for index, masked in to_search.items():
        _scan_markers(doc, index, masked)
    doc.hits.sort(key=lambda hit: (hit.line, hit.start))
    return doc


def _citations(doc: _Doc) -> list[Citation]:
    """Turn the hits into citations, each with the sentence it stood in."""
    by_line: dict[int, list[_Hit]] = {}
    for hit in doc.hits:
        by_line.setdefault(hit.line, []).append(hit)
    result: list[Citation] = []
    for index, hits in by_line.items():
        line, shield = doc.lines[index], list(doc.lines[index])
        for hit in hits:
            shield[hit.start : hit.end] = "x" * (hit.end - hit.start)
        ends = [found.end() for found in _SENTENCE_END.finditer("".join(shield))]
        sentences: dict[tuple[int, int], str] = {}
        for hit in hits:
            before, after = bisect_right(ends, hit.start), bisect_left(ends, hit.end)
            span = (ends[before - 1] if before else 0, ends[after] if after < len(ends) else len(line))
            if span not in sentences:
                sentences[span] = _LINE_PREFIX.sub("", line[span[0] : span[1]].strip(), count=1).strip()
            sentence = sentences[span]
            for position, url in enumerate(hit.urls):
                text = hit.refs[position] if hit.mode == "marker" else hit.text
                result.append(Citation(url, text, sentence, hit.kind, index + 1))
    return result


def extract_citations(markdown: str, *, sources_section: bool = True) -> list[Citation]:
    """
    Return every citation in a Markdown report, in document order.

    :param markdown: The report.
    :param sources_section: Whether to include the entries of the Sources section (see the module docstring);
        ``False`` keeps only the citations in the body, where claims are made.
    :returns: One :class:`Citation` per occurrence of a cited URL (a marker ``[1, 2]`` gives two).
    :raises ConfigurationError: If ``markdown`` is not a string.
    """
    doc = _scan(markdown)
    citations = _citations(doc)
    return citations if sources_section else [c for c in citations if c.line - 1 not in doc.section_lines]
