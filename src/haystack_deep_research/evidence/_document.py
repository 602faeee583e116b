"""
A report as the citation layer sees it: the parsed report and the spans that cite something.

A span (:class:`Hit`) is a link, a reference definition, an entry of a reference list or a marker pointing to one,
with what removing it takes (its ``mode``). Which destinations count as citations is decided here: anything a
browser would open as another document (a URL with a scheme, or one starting with two slashes), except ``mailto:``
and ``tel:``. Only the kinds of URL a run reads can ever be verified: ``http`` and ``https``, ``file://`` and
``doc://`` for documents retrieved from datastores, and ``mcp://`` for resources read through tools.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal, cast

from haystack_deep_research.evidence._markdown import Link, Parsed

__all__ = ["CitationKind", "Doc", "Hit", "citable", "key", "link_hit", "verifiable"]

CitationKind = Literal["inline", "bare", "reference", "image", "html"]
Mode = Literal["link", "cut", "line", "marker"]

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
_NOT_SOURCES = frozenset({"mailto", "tel"})
_READ_SCHEMES = frozenset({"http", "https", "file", "doc", "mcp"})


def _as_browsed(url: str) -> str:
    """The URL as a browser reads it: C0 controls and spaces stripped at both ends, tabs and line breaks removed."""
    return re.sub(r"[\t\n\r]", "", url.strip("".join(map(chr, range(33)))))


def citable(url: str) -> bool:
    """:returns: Whether a link to ``url`` cites another document (see the module docstring)."""
    browsed = _as_browsed(url)
    if browsed[:2].replace("\\", "/") == "//":
        return True
    scheme = _SCHEME.match(browsed)
    return scheme is not None and scheme.group(1).lower() not in _NOT_SOURCES


def verifiable(url: str) -> bool:
    """:returns: Whether ``url`` is of a kind a run reads: ``http(s)://``, ``file://``, ``doc://`` or ``mcp://``."""
    browsed = _as_browsed(url)
    scheme = _SCHEME.match(browsed)
    return scheme is not None and scheme.group(1).lower() in _READ_SCHEMES and browsed[scheme.end() :][:2] == "//"


def key(label: str) -> str:
    """:returns: The comparison key of a reference label (blanks collapsed, case folded)."""
    return " ".join(label.split()).casefold()


@dataclass
class Hit:
    """
    A span of the report that cites URLs.

    :param start: Offset of its first character.
    :param end: Offset after its last character.
    :param mode: How to remove it: ``link`` keeps the span ``keep`` (a link's text), ``cut`` removes it, ``line``
        removes the lines ``lines`` (a definition or a footnote), ``marker`` removes the labels that fail.
    :param kind: The kind of citation it is.
    :param urls: The URLs it cites (a marker ``[1, 2]`` cites two).
    :param text: The link text, entry title or marker label.
    :param refs: The labels it uses (markers and reference links), one per URL.
    :param keep: For ``link``: the span whose text stays.
    :param tail: A span removed with it (an anchor's closing tag).
    :param lines: For ``line``: the lines to remove; otherwise the lines of its block.
    :param mapped: ``False`` when its position is unknown: repairing it removes the lines of its block.
    :param entry: Whether it stands in a definition or a reference-list entry, where no claim is made.
    """

    start: int
    end: int
    mode: Mode
    kind: CitationKind
    urls: list[str]
    text: str = ""
    refs: list[str] = field(default_factory=list)
    keep: tuple[int, int] | None = None
    tail: tuple[int, int] | None = None
    lines: tuple[int, int] = (0, 0)
    mapped: bool = True
    entry: bool = False


@dataclass
class Doc:
    """
    A scanned report.

    :param parsed: The parsed report.
    :param hits: Every span that cites something, in document order once scanned.
    :param section_lines: The lines of the Sources section(s).
    :param section_heading: The line of the first Sources title, if any.
    :param definitions: For each label key: its URL, the line defining it and whether that is in the Sources section.
    :param entry_lines: Lines of definitions and reference-list entries.
    :param unresolved: The body's spans that look like markers (``[3]``) but name a label nothing defines, with
        their text.
    """

    parsed: Parsed
    hits: list[Hit] = field(default_factory=list)
    section_lines: set[int] = field(default_factory=set)
    section_heading: int | None = None
    definitions: dict[str, tuple[str, int, bool]] = field(default_factory=dict)
    entry_lines: set[int] = field(default_factory=set)
    unresolved: list[tuple[int, int, str]] = field(default_factory=list)

    @property
    def lines(self) -> list[str]:
        """:returns: The report's lines."""
        return self.parsed.lines

    def text(self, span: tuple[int, int] | None) -> str:
        """:returns: The report's text in ``span``; ``""`` for none."""
        return self.parsed.text[span[0] : span[1]] if span else ""

    def line(self, hit: Hit) -> int:
        """:returns: The 0-based line where ``hit`` starts."""
        return self.parsed.line_of(hit.start)


def link_hit(doc: Doc, link: Link) -> Hit:
    """The span of one link: its text stays when the link goes, a URL standing for itself is cut."""
    kind = cast(CitationKind, "bare" if link.form == "autolink" else link.form)
    if link.text is None:
        return Hit(link.start, link.end, "cut", kind, [link.url], lines=link.lines, mapped=link.mapped)
    refs = [link.label] if link.label is not None else []
    return Hit(
        link.start,
        link.end,
        "link",
        kind,
        [link.url],
        doc.text(link.text),
        refs,
        keep=link.text,
        tail=link.tail,
        lines=link.lines,
        mapped=link.mapped,
    )
