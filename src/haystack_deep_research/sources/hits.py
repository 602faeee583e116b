"""
One search result, whatever engine gave it: :class:`SearchHit` (title, exact URL, snippet), and
:func:`normalize_hits`, which turns the shapes search engines and Haystack components answer with into hits.

Accepted shapes:

- a Tavily response: ``{"results": [{"url", "title", "content"}, ...]}``;
- a Haystack web-search component's output: ``{"documents": [Document, ...], "links": [str, ...]}`` (documents carry
  the URL in ``meta["link"]``, ``meta["url"]`` or ``meta["source_url"]`` and the title in ``meta["title"]``; links
  without a document become hits without a snippet);
- a list of such documents, of dictionaries (``url`` / ``href`` / ``link``; ``title``; ``snippet`` / ``content`` /
  ``body`` / ``description``, as ddgs answers) or of URL strings;
- text: the results rendered one URL per result (as Haystack's ``TavilyWebSearchTool`` renders them, ``URL:`` or
  ``Source:`` lines, markdown links, numbered lists of bare URLs; see :mod:`._hit_text`), or JSON of a shape above.

Any other answer is refused with :class:`~haystack_deep_research.errors.SearchShapeError`, which names these shapes.

A result without an ``http(s)`` URL is dropped: nothing else could be read or cited. The URL is kept exactly as the
engine gave it (stripped); duplicates keep their first occurrence.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from haystack import Document

from haystack_deep_research.errors import SearchShapeError
from haystack_deep_research.evidence.text import clean_text, plain_title
from haystack_deep_research.sources._hit_text import text_results

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
    if isinstance(item, Document):
        meta = item.meta or {}
        url = _first(meta, _URL_KEYS)
        return SearchHit(
            title=_text(_first(meta, _TITLE_KEYS)),
            url=clean_text(url.strip()),
            snippet=_text(item.content),
            published=_text(_first(meta, _DATE_KEYS)),
        )
    if isinstance(item, Mapping):
        url = _first(item, _URL_KEYS)
        return SearchHit(
            title=_text(_first(item, _TITLE_KEYS)),
            url=clean_text(url.strip()),
            snippet=_text(_first(item, _SNIPPET_KEYS)),
            published=_text(_first(item, _DATE_KEYS)),
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
