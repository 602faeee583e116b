"""
A parsed report: its lines, its blocks with inline content, its link reference definitions and every link a reader
sees, each by its offsets in the report (see :mod:`._markdown`, which makes it).
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Block", "Code", "Definition", "Link", "LinkForm", "Parsed"]

LinkForm = Literal["inline", "reference", "image", "autolink", "bare", "html"]


@dataclass
class Link:
    """
    One link a reader sees.

    :param url: The destination as written (entities and escapes decoded); ``http://`` added to a ``www.`` link.
    :param form: How it is written.
    :param start: Offset of its first character in the report.
    :param end: Offset after its last character.
    :param text: The span of its visible text (link text, image description, anchor content), if it has one.
    :param label: For a reference link, the label it uses, as written.
    :param tail: For an HTML anchor, the span of its closing tag.
    :param mapped: ``False`` when its place in the report could not be established.
    :param lines: The lines of its block, first and past-the-end.
    """

    url: str
    form: LinkForm
    start: int
    end: int
    text: tuple[int, int] | None = None
    label: str | None = None
    tail: tuple[int, int] | None = None
    mapped: bool = True
    lines: tuple[int, int] = (0, 0)


@dataclass
class Block:
    """A block with inline content: ``kind`` (paragraph, heading, cell), lines, content, level and plain text spans."""

    kind: str
    first: int
    end: int
    content: str
    level: int = 0
    segments: list[tuple[int, int]] = field(default_factory=list)


@dataclass(frozen=True)
class Code:
    """A code block or fence: its lines (first and past-the-end), its fence (``""`` for an indented block), closed."""

    first: int
    end: int
    fence: str
    closed: bool


@dataclass(frozen=True)
class Definition:
    """A link reference definition ``[label]: url "title"``; ``after`` is the offset just after its ``]:``."""

    label: str
    url: str
    title: str
    first: int
    end: int
    after: int


@dataclass
class Parsed:
    """
    A parsed report.

    :param text: The report, its line ends normalised to ``\\n``.
    :param lines: Its lines.
    :param starts: The offset of each line.
    :param links: Its links, in document order.
    :param blocks: Its blocks with inline content.
    :param definitions: Its link reference definitions (duplicates too).
    :param units: Its top-level blocks: first line, past-the-end line and markdown-it token type.
    :param references: markdown-it's reference definitions, by normalised label.
    :param code: Its code blocks and fences, at any depth.
    :param unclosed: The line that closes its last block when that runs to the end unclosed (a fence, an HTML
        comment, ...), so that text appended after it is not swallowed; ``""`` otherwise.
    """

    text: str
    lines: list[str]
    starts: list[int]
    links: list[Link] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)
    definitions: list[Definition] = field(default_factory=list)
    units: list[tuple[int, int, str]] = field(default_factory=list)
    references: dict[str, Any] = field(default_factory=dict)
    code: list[Code] = field(default_factory=list)
    unclosed: str = ""

    def line_of(self, offset: int) -> int:
        """:returns: The 0-based line holding ``offset``."""
        return bisect_right(self.starts, offset) - 1
