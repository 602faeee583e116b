"""
Search results rendered as text, read back into ``(title, url, snippet)`` triples.

A user's own search tool often returns what it would show a model: one block per result with a title, the URL and a
snippet. The renderings read here, each with one URL per result:

- labelled lines, as Haystack's ``TavilyWebSearchTool`` renders (``- title`` / ``URL: url`` / ``snippet``), and
  likewise ``Source:``, ``Link:``, ``Href:``, with an optional ``Title:`` / ``Snippet:`` / ``Content:`` label;
- markdown links, one per list item or line: ``- [title](url) - snippet``;
- numbered or bulleted lists (``1.``, ``[1]``, ``-``, ``*``) or blank-line separated blocks holding a bare URL.

Results are blocks: a new one starts at a list marker or after a blank line. A block holding several labelled URLs
(results rendered without separators) is split before each, the line just above a URL line being its title. When a
text has labelled URLs, only those count: a URL inside a snippet is no result of its own.

Hand-written on purpose: no library reads free-form result listings, and the rules above are few.
"""

from __future__ import annotations

import re

__all__ = ["text_results"]

_MARKER = re.compile(r"^\s*(?:[-*+\u2022]|\d{1,3}[.)]|\[\d{1,3}\]|#{1,6})\s+")
_LABELLED = re.compile(r"^\s*(?:url|source|link|href)\s*:\s*<?(https?://\S+?)>?\s*$", re.IGNORECASE)
_LINK = re.compile(r"\[([^\]\n]*)\]\(\s*<?(https?://[^\s)>]+)>?(?:\s+\"[^\"\n]*\")?\s*\)")
_BARE = re.compile(r"https?://[^\s<>\"'()\[\]]+")
_LABEL = re.compile(r"^\s*(?:title|name|snippet|content|body|description|summary)\s*:\s*", re.IGNORECASE)
_TITLE_LABEL = re.compile(r"^\s*(?:title|name)\s*:", re.IGNORECASE)
_TRAILING = ".,;:!?"


def _blocks(text: str) -> list[list[str]]:
    blocks: list[list[str]] = [[]]
    for line in text.splitlines():
        if not line.strip():
            blocks.append([])
        elif _MARKER.match(line) and blocks[-1]:
            blocks.append([line])
        else:
            blocks[-1].append(line)
    return [block for block in blocks if block]


def _split_labelled(block: list[str]) -> list[list[str]]:
    """Split a block holding several labelled URLs before each (taking the title line above it along)."""
    urls = [i for i, line in enumerate(block) if _LABELLED.match(line)]
    if len(urls) < 2:
        return [block]
    starts = [0]
    for index in urls[1:]:
        start = index - 1 if index - 1 > starts[-1] and not _LABELLED.match(block[index - 1]) else index
        if start > 1 and _TITLE_LABEL.match(block[start - 1]):
            start -= 1  # "Title:" above a "Content:" or similar line
        starts.append(start)
    return [block[a:b] for a, b in zip(starts, [*starts[1:], len(block)], strict=True)]


def _clean(line: str) -> str:
    return _LABEL.sub("", _MARKER.sub("", line)).strip()


def _labelled(block: list[str]) -> tuple[str, str, str] | None:
    at = next((i for i, line in enumerate(block) if _LABELLED.match(line)), None)
    if at is None:
        return None
    url = _LABELLED.match(block[at]).group(1)  # type: ignore[union-attr]
    rest = [i for i in range(len(block)) if i != at]
    titled = [i for i in rest if _TITLE_LABEL.match(block[i])]
    title = titled[0] if titled else (rest[0] if rest and rest[0] < at else None)
    snippet = [_clean(block[i]) for i in rest if i != title and not _LABELLED.match(block[i])]
    return (_clean(block[title]) if title is not None else ""), url, " ".join(part for part in snippet if part)


def _linked(line: str, rest: list[str]) -> tuple[str, str, str] | None:
    line = _MARKER.sub("", line)
    link = _LINK.search(line)
    if link:
        title, url = link.group(1).strip(), link.group(2)
        around = (line[: link.start()] + " " + line[link.end() :]).strip(" -:\u2013\u2014|")
        snippet = " ".join(part for part in [_clean(around), *map(_clean, rest)] if part)
        return title, url, snippet
    bare = _BARE.search(line)
    if bare is None:
        return None
    url = bare.group(0).rstrip(_TRAILING)
    title = _clean((line[: bare.start()] + line[bare.end() :]).strip(" -:\u2013\u2014|<>"))
    return title, url, " ".join(part for part in map(_clean, rest) if part)


def _unlabelled(block: list[str]) -> list[tuple[str, str, str]]:
    """Each line holding a link or URL starts a result; the lines after it, up to the next, are its snippet."""
    found: list[tuple[str, str, str]] = []
    heads = [i for i, line in enumerate(block) if _LINK.search(line) or _BARE.search(line)]
    for position, index in enumerate(heads):
        end = heads[position + 1] if position + 1 < len(heads) else len(block)
        title_above = _clean(block[index - 1]) if position == 0 and index == 1 else ""
        hit = _linked(block[index], block[index + 1 : end])
        if hit is not None:
            title, url, snippet = hit
            if title_above and not title:
                title = title_above
            elif title_above:
                snippet = f"{title_above} {snippet}".strip()
            found.append((title or "", url, snippet))
    return found


def text_results(text: str) -> list[tuple[str, str, str]]:
    """
    ``(title, url, snippet)`` per search result rendered as text (see the module docstring), in order; ``[]``
    when the text holds no URL.
    """
    blocks = _blocks(text)
    if any(_LABELLED.match(line) for block in blocks for line in block):
        labelled = [_labelled(part) for block in blocks for part in _split_labelled(block)]
        return [hit for hit in labelled if hit is not None]
    return [hit for block in blocks for hit in _unlabelled(block)]
