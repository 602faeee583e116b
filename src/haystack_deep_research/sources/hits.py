"""
One search result, whatever engine gave it: :class:`SearchHit` (title, exact URL, snippet), and :func:`normalize_hits`,
which reads the shapes engines and Haystack components answer with (listed in docs/sources.md) and refuses any other
with :class:`~haystack_deep_research.errors.SearchShapeError`. A result without an ``http(s)`` URL is dropped, a URL is
kept as the engine gave it, and duplicates keep their first occurrence.

Text results are blocks (a new one at a list marker or after a blank line); a block holding several labelled URLs is
split before each, the line above a URL line being its title; when a text has labelled URLs, only those count.
Hand-written on purpose: no library reads free-form result listings, and the rules are few.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from haystack import Document

from haystack_deep_research.errors import SearchShapeError
from haystack_deep_research.evidence.text import clean_text, plain_title

__all__ = ["SearchHit", "normalize_hits"]

_URL_KEYS = ("url", "href", "link", "source_url")
_TITLE_KEYS = ("title", "name")
_SNIPPET_KEYS = ("snippet", "content", "body", "description")
_DATE_KEYS = ("published_date", "published", "date", "publication_date")


@dataclass(frozen=True)
class SearchHit:
    """
    One search result.

    :param title: The result's title as plain text, the one the ledger keeps ("" when the engine gave none): links,
        images and HTML in an engine's title are dropped, so a title cannot hand a researcher a URL to read.
    :param url: The exact URL, as the engine gave it.
    :param snippet: The engine's snippet ("" when it gave none).
    :param published: When the engine says the result was published, as it said it ("" when it did not); a search
        with a recency window drops a result whose date falls before it.
    """

    title: str
    url: str
    snippet: str = ""
    published: str = ""

    def __post_init__(self) -> None:
        if isinstance(self.title, str):
            object.__setattr__(self, "title", plain_title(self.title))

    def to_dict(self) -> dict[str, str]:
        """:returns: ``{"title", "url", "snippet"}``, and ``"published"`` when known."""
        data = {"title": self.title, "url": self.url, "snippet": self.snippet}
        return {**data, "published": self.published} if self.published else data


def _text(value: Any) -> str:
    return clean_text(" ".join(str(value).split())) if value is not None else ""


def _first(data: Mapping[str, Any], keys: tuple[str, ...]) -> str:
    for key in keys:
        value = data.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return ""


def _hit(item: Any) -> SearchHit | None:
    if isinstance(item, SearchHit):
        return item
    if isinstance(item, str):
        return SearchHit(title="", url=clean_text(item.strip()))
    if isinstance(item, Document | Mapping):
        data = (item.meta or {}) if isinstance(item, Document) else item
        snippet = item.content if isinstance(item, Document) else _first(item, _SNIPPET_KEYS)
        return SearchHit(
            title=_text(_first(data, _TITLE_KEYS)),
            url=clean_text(_first(data, _URL_KEYS).strip()),
            snippet=_text(snippet),
            published=_text(_first(data, _DATE_KEYS)),
        )
    return None


def _from_text(text: str) -> Iterable[Any]:
    stripped = text.strip()
    if stripped[:1] in ("[", "{"):
        try:
            return _items(json.loads(stripped))
        except ValueError:
            pass  # not JSON after all: read as rendered text
    return [
        SearchHit(title=_text(title), url=url, snippet=_text(snippet)) for title, url, snippet in text_results(text)
    ]


def _items(raw: Any) -> Iterable[Any]:
    if isinstance(raw, str):
        return _from_text(raw)
    if isinstance(raw, Mapping):
        if isinstance(raw.get("results"), list):
            return raw["results"]
        if "documents" in raw or "links" in raw:
            documents = list(raw.get("documents") or [])
            known = {hit.url for hit in map(_hit, documents) if hit is not None}
            links = [link for link in raw.get("links") or [] if isinstance(link, str) and link.strip() not in known]
            return [*documents, *links]
        raise SearchShapeError(
            f"a mapping without 'results', 'documents' or 'links' (its keys are {sorted(map(str, raw))[:8]})"
        )
    if isinstance(raw, list | tuple):
        unread = [item for item in raw if not isinstance(item, SearchHit | str | Document | Mapping)]
        if unread:
            raise SearchShapeError(f"a list holding {type(unread[0]).__name__}")
        return raw
    raise SearchShapeError(type(raw).__name__)


def normalize_hits(raw: Any, *, limit: int) -> list[SearchHit]:
    """
    At most ``limit`` hits with an ``http(s)`` URL from what a search engine answered (see the module docstring for
    the shapes), duplicates removed, in the engine's order.

    :raises SearchShapeError: If the answer has none of the accepted shapes.
    """
    hits: dict[str, SearchHit] = {}
    for item in _items(raw):
        hit = _hit(item)
        if hit is None or not hit.url.lower().startswith(("http://", "https://")) or hit.url in hits:
            continue
        hits[hit.url] = hit
        if len(hits) >= limit:
            break
    return list(hits.values())


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
