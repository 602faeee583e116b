"""
What the exports share: the report read by markdown-it (raw HTML off, so no tag of the report passes through), each
cited link followed by a ``cite`` token numbering its passage, and the passages themselves.

markdown-it's link check stays (no ``javascript:``, ``vbscript:`` or ``data:`` link), except that a ``file:`` or
``doc:`` link to a source a passage was taken from is kept: verification proved the run read it.

A link gets the passage whose URL it links to and whose citing sentence stands in the link's block (the sentence
verification found it in); failing that, the first passage of its URL. Passages come from the run's ``citations``
output (``citations["passages"]``, see :func:`~haystack_deep_research.report.publish.cited_passages`); a result
without them exports without citation notes, and a passage whose URL is not of a kind a run reads (``http(s)://``,
``file://``, ``doc://``) is ignored, whoever wrote the result. A note shows when its source was read as people read
a time (``2026-12-01 21:35 UTC``) and its citing sentence as the text a reader sees (a link gives its text); a source
only a search result's snippet backs (its passage's ``kind`` is ``"snippet"``) is marked "search result snippet, not
read" instead of being said read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.evidence._document import verifiable
from haystack_deep_research.evidence._reader import plain_text
from haystack_deep_research.evidence.entry import SNIPPET_NOTE, normalize_url

__all__ = ["Cited", "Passage", "cited_tokens", "xml_text"]

_NOT_XML = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class Passage:
    """One numbered citation note: the source's title, URL, when it was read, and the passage behind the sentence;
    ``kind`` is the source's ledger kind (``"snippet"``: only a search result's snippet backs it)."""

    number: int
    url: str
    title: str
    read_at: str
    sentence: str
    passage: str
    named: str = ""
    kind: str = ""

    @property
    def snippet(self) -> bool:
        """:returns: Whether only a search result's snippet backs the citation (its page was not read)."""
        return self.kind == "snippet"

    def read_note(self) -> str:
        """:returns: How the source was seen, as a note says it: ``read 2026-12-01 21:35 UTC`` (``read during the
        run`` without a time), or for a snippet ``search result snippet, not read``."""
        if self.snippet:
            return SNIPPET_NOTE
        return f"read {self.read_when()}" if self.read_at.strip() else "read during the run"

    def read_when(self) -> str:
        """:returns: When the source was read, in UTC to the minute (``2026-12-01 21:35 UTC``); ``""`` if unknown."""
        try:
            read = datetime.fromisoformat(self.read_at.strip())
        except ValueError:
            return _flat(self.read_at)  # not a time the library wrote: shown as it is
        return (read if read.tzinfo else read.replace(tzinfo=UTC)).astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")

    def sentence_text(self) -> str:
        """:returns: The citing sentence as a reader sees it: a link gives its text, a bare URL nothing."""
        return _flat(plain_text(self.sentence, {}, is_marker=_no_marker))


@dataclass(frozen=True)
class Cited:
    """The report's tokens, with ``cite`` tokens after cited links, and the passages they number (used ones only)."""

    tokens: list[Token]
    passages: list[Passage]
    title: str


def xml_text(text: str) -> str:
    """:returns: ``text`` without the characters XML 1.0 cannot hold (Word and PDF writers refuse them)."""
    return _NOT_XML.sub("", text)


def _passages(result: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    citations = result.get("citations") or {}
    found = citations.get("passages") if isinstance(citations, Mapping) else None
    return [p for p in found or [] if isinstance(p, Mapping) and isinstance(p.get("url"), str) and verifiable(p["url"])]


def _flat(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


def _no_marker(_text: str) -> bool:
    return False


def cited_tokens(result: Mapping[str, Any]) -> Cited:
    """
    :param result: A run's result: ``report`` (Markdown) and ``citations`` (with ``passages``).
    :returns: The report's tokens with their citations numbered.
    :raises ConfigurationError: If ``report`` is not a string.
    """
    report = result.get("report") or ""
    if not isinstance(report, str):
        raise ConfigurationError(f"A report must be a string, got {type(report).__name__}.")
    by_url: dict[str, list[Mapping[str, Any]]] = {}
    for entry in _passages(result):
        by_url.setdefault(normalize_url(entry["url"]), []).append(entry)
    md = MarkdownIt("commonmark", {"html": False, "linkify": True}).enable(["linkify", "table"])
    usual = md.validateLink
    # markdown-it refuses file: links; a verified citation of a document read from a folder is one (see the module).
    md.validateLink = lambda url: usual(url) or (bool(url.strip()) and normalize_url(url) in by_url)  # type: ignore[method-assign]
    tokens = md.parse(report)
    numbers: dict[tuple[str, str], Passage] = {}
    for block in tokens:
        if block.type != "inline" or not block.children:
            continue
        content = _flat(block.content)
        children: list[Token] = []
        cite: Token | None = None
        for child in block.children:
            children.append(child)
            href = str(child.attrGet("href") or "")
            if child.type == "link_open" and href.strip():
                cite = _cite(by_url.get(normalize_url(href), []), content, numbers)
            elif child.type == "link_close" and cite is not None:
                children.append(cite)
                cite = None
        block.children = children
    headings = (_flat(t.content) for i, t in enumerate(tokens) if t.type == "inline" and tokens[i - 1].tag == "h1")
    title = next(headings, "")
    return Cited(tokens, sorted(numbers.values(), key=lambda p: p.number), title)


def _cite(candidates: list[Mapping[str, Any]], content: str, numbers: dict[tuple[str, str], Passage]) -> Token | None:
    """The ``cite`` token for a link to one of ``candidates``, numbering its passage on first use."""
    if not candidates:
        return None
    entry = next((c for c in candidates if _flat(str(c.get("sentence") or "")) in content), candidates[0])
    key = (normalize_url(entry["url"]), str(entry.get("sentence") or ""))
    if key not in numbers:
        numbers[key] = Passage(
            number=len(numbers) + 1,
            url=entry["url"].strip(),
            title=str(entry.get("title") or ""),
            read_at=str(entry.get("read_at") or ""),
            sentence=str(entry.get("sentence") or ""),
            passage=str(entry.get("passage") or ""),
            named=str(entry.get("named") or ""),
            kind=str(entry.get("kind") or ""),
        )
    token = Token("cite", "", 0)
    token.meta = {"passage": numbers[key]}
    return token


@dataclass
class Run:
    """A piece of a block's text and how it is shown; ``cite`` numbers the passage of the link it follows."""

    text: str
    bold: bool = False
    italic: bool = False
    code: bool = False
    cite: int | None = None


@dataclass
class Block:
    """A heading (``level`` 1-6), paragraph, list item (``level``: nesting), quote or code block of the report."""

    kind: str
    level: int = 0
    runs: list[Run] | None = None

    def text(self) -> str:
        """:returns: The block's text, citations left out."""
        return "".join(run.text for run in self.runs or [] if run.cite is None)


def blocks(cited: Cited) -> list[Block]:
    """
    :param cited: The report's tokens.
    :returns: The report as plain blocks for the Word and PDF writers; a link keeps its text and, when that differs
        from its URL and no citation note gives it, the URL after it in parentheses; an image keeps its description.
    """
    found: list[Block] = []
    lists = quotes = 0
    kind, level = "paragraph", 0
    for token in cited.tokens:
        if token.type in ("bullet_list_open", "ordered_list_open"):
            lists += 1
        elif token.type in ("bullet_list_close", "ordered_list_close"):
            lists -= 1
        elif token.type in ("blockquote_open", "blockquote_close"):
            quotes += 1 if token.nesting > 0 else -1
        elif token.type == "heading_open":
            kind, level = "heading", int(token.tag[1:])
        elif token.type == "paragraph_open":
            kind, level = "item" if lists else "quote" if quotes else "paragraph", lists
        elif token.type in ("fence", "code_block"):
            found.append(Block("code", 0, [Run(token.content.rstrip("\n"), code=True)]))
        elif token.type == "inline":
            found.append(Block(kind, level, _runs(token.children or [])))
        elif token.type in ("heading_close", "paragraph_close"):
            kind, level = "paragraph", 0
    return found


def _runs(children: list[Token]) -> list[Run]:
    runs: list[Run] = []
    bold = italic = start = 0
    href = ""
    for child in children:
        if child.type in ("strong_open", "strong_close"):
            bold += child.nesting
        elif child.type in ("em_open", "em_close"):
            italic += child.nesting
        elif child.type == "text":
            runs.append(Run(child.content, bool(bold), bool(italic)))
        elif child.type == "code_inline":
            runs.append(Run(child.content, code=True))
        elif child.type in ("softbreak", "hardbreak"):
            runs.append(Run(" " if child.type == "softbreak" else "\n"))
        elif child.type == "image":
            runs.append(Run(child.content or "image", italic=True))
        elif child.type == "link_open":
            href, start = str(child.attrGet("href") or ""), len(runs)
        elif child.type == "link_close":
            shown = "".join(run.text for run in runs[start:])
            if href and shown.strip() != href.strip() and child.markup != "linkify":
                runs.append(Run(f" ({href})"))
        elif child.type == "cite":
            if runs and runs[-1].text == f" ({href})":  # the endnote gives the URL of a cited link
                runs.pop()
            runs.append(Run(str(child.meta["passage"].number), cite=child.meta["passage"].number))
    return runs
