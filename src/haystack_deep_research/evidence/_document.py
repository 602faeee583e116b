"""
A report as the citation layer sees it: the parsed report and the spans (:class:`Hit`) that cite something, with
what removing each takes. A citation is any link a browser would open as another document but ``mailto:`` and
``tel:``; only the kinds a run reads (``http(s)``, ``file://``, ``doc://``, ``mcp://``) can be verified.
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
    A span of the report that cites ``urls``. Its ``mode`` says how to remove it: ``link`` keeps the span ``keep``
    (a link's text), ``cut`` removes it, ``line`` removes ``lines`` (a definition or a footnote; otherwise the lines
    of its block), ``marker`` removes the labels (``refs``, one per URL) that fail. ``tail`` goes with it (an
    anchor's closing tag); when its place is unknown (``mapped`` false) repairing it removes its block's lines.
    ``entry``: it stands in a definition or a reference-list entry, where no claim is made.
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
    A scanned report: its hits, the lines of its Sources section(s) and of its first title, each label's URL, line
    and whether that is in the section, the lines of definitions and entries, and the body's spans that look like
    markers but name no label (with their text).
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
        return self.parsed.lines

    def text(self, span: tuple[int, int] | None) -> str:
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
