"""
One source of the evidence ledger (:class:`SourceEntry`), and how sources are keyed (:func:`normalize_url`,
:func:`source_id`). An entry of a kind that backs claims is sealed: only the ledger's own writers and a ledger restored
from its own record can make one.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping
from dataclasses import InitVar, dataclass, fields
from typing import Any, Literal, cast
from urllib.parse import urlsplit, urlunsplit

from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.evidence.text import plain_title

__all__ = [
    "CITABLE_KINDS",
    "READ_KINDS",
    "SNIPPET_CHARS",
    "SNIPPET_NOTE",
    "SourceEntry",
    "SourceKind",
    "normalize_url",
    "require_strings",
    "sha256",
    "source_id",
]

SourceKind = Literal["search_result", "snippet", "page", "document"]

_KINDS: tuple[str, ...] = ("search_result", "snippet", "page", "document")
READ_KINDS = ("page", "document")
"""The kinds whose text the library read."""
CITABLE_KINDS = ("page", "document", "snippet")
"""The kinds whose text backs a claim: what was read, and what a search engine's snippet said."""
SNIPPET_CHARS = 2000
"""The most characters of a search result's snippet the ledger keeps as its passage."""
SNIPPET_NOTE = "search result snippet, not read"
"""How a Sources list, the citations' passages and every export mark a source that only a snippet backs."""
_DEFAULT_PORTS = {"http": 80, "https": 443}
_SEAL = object()
"""Held by the ledger's writers alone: an entry of a read kind is made with it or not at all."""


def normalize_url(url: str) -> str:
    """
    The comparison key of ``url``: scheme and host lower-cased, the default port, the fragment and one trailing slash
    dropped (an empty path becomes ``"/"``). Nothing looser: ``www.``, the scheme and the query stay as they are. A
    string that is no URL comes back stripped.

    :raises ConfigurationError: If ``url`` is not a string or is blank.
    """
    if not isinstance(url, str) or not url.strip():
        raise ConfigurationError(f"A URL must be a non-empty string, got {url!r}.")
    return _normalized(url.strip())


@functools.lru_cache(maxsize=4096)  # a run compares the same URLs many times over
def _normalized(url: str) -> str:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return url
    scheme = parts.scheme.lower()
    netloc = parts.netloc
    if netloc:
        userinfo, at, _ = netloc.rpartition("@")
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        if port is not None and _DEFAULT_PORTS.get(scheme) != port:
            host = f"{host}:{port}"
        netloc = f"{userinfo}{at}{host}"
    path = parts.path
    if netloc and not path:
        path = "/"
    elif len(path) > 1 and path.endswith("/"):
        path = path[:-1]
    return urlunsplit((scheme, netloc, path, parts.query, ""))


def source_id(url: str) -> str:
    """The stable short id of ``url``: ``"S"`` and 8 hex digits of the SHA-256 of its normal form (``"S1a2b3c4d"``)."""
    return "S" + hashlib.sha256(normalize_url(url).encode("utf-8")).hexdigest()[:8]


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def require_strings(**values: object) -> None:
    for name, value in values.items():
        if not isinstance(value, str):
            raise ConfigurationError(f"{name} must be a string, got {type(value).__name__}.")


@dataclass(frozen=True)
class SourceEntry:
    """
    One source in the ledger.

    :param id: Short stable id derived from the normalised URL (see :func:`source_id`).
    :param url: The URL exactly as it was retrieved.
    :param title: Title of the search result, page or document, made plain text here
        (:func:`~haystack_deep_research.evidence.text.plain_title`): no link, image or HTML.
    :param snippet: The search engine's snippet ("" when the page was read without a search result); for a document,
        the datastore it came from.
    :param kind: ``"search_result"`` (seen in results only, without a snippet), ``"snippet"`` (seen in results only:
        its ``text`` is the engine's snippet, which backs a claim as what the search engine said), ``"page"`` (its text
        was read) or ``"document"`` (retrieved from a datastore or an MCP tool: its content is the text read).
    :param fetched_at: ISO-8601 UTC time at which the entry was last recorded.
    :param content_hash: SHA-256 hex digest of ``text``; ``""`` for a bare search result.
    :param text: The text the summariser saw (a snippet entry's snippet); ``""`` for a bare search result.
    :param summary: Summary of the page; ``""`` until set.
    :param named_url: An ``http(s)`` URL the source named without the library reading it (an MCP tool's item giving a
        ``url``): kept to show as "named by <snippet>, not read"; it never verifies a citation. ``""`` when none.
    """

    id: str
    url: str
    title: str
    snippet: str
    kind: SourceKind
    fetched_at: str
    content_hash: str = ""
    text: str = ""
    summary: str = ""
    named_url: str = ""
    seal: InitVar[object] = None

    def __post_init__(self, seal: object) -> None:
        if self.kind in CITABLE_KINDS and seal is not _SEAL:
            raise ConfigurationError(
                f"A {self.kind!r} entry is made only by the evidence ledger, when the library reads the source or a "
                "search returns it (EvidenceLedger.record_page, record_document, record_search_result)."
            )
        if isinstance(self.title, str):  # the one place a title enters the ledger, from any source or a journal
            object.__setattr__(self, "title", plain_title(self.title))

    def to_dict(self) -> dict[str, str]:
        """:returns: The entry as a JSON-ready dictionary, one key per field."""
        return {item.name: getattr(self, item.name) for item in fields(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SourceEntry:
        """
        Rebuild an entry from :meth:`to_dict` output.

        :param data: The dictionary; ``id``, ``url``, ``kind`` and ``fetched_at`` are required.
        :returns: The entry.
        :raises ConfigurationError: If a required key is missing, a value is not a string or ``kind`` is unknown.
        """
        if not isinstance(data, Mapping):
            raise ConfigurationError(f"A source entry must be a mapping, got {type(data).__name__}.")
        missing = [key for key in ("id", "url", "kind", "fetched_at") if key not in data]
        if missing:
            raise ConfigurationError(f"A source entry is missing {', '.join(missing)}.")
        values = {item.name: data.get(item.name, "") for item in fields(cls)}
        require_strings(**values)
        if values["kind"] not in _KINDS:
            raise ConfigurationError(f"Unknown source kind {values['kind']!r}; expected one of {_KINDS}.")
        return cls(**cast(dict[str, Any], values), seal=_SEAL)  # the ledger's own record, restored

    @property
    def note(self) -> str:
        """:returns: How a source not read is shown: :data:`SNIPPET_NOTE` for a snippet, its :attr:`named_note` for
        a source naming a URL it did not read, else ``""``."""
        return SNIPPET_NOTE if self.kind == "snippet" else self.named_note

    @property
    def named_note(self) -> str:
        """:returns: ``"named by <source>, not read: <url>"`` for an entry with a :attr:`named_url`, else ``""``."""
        if not self.named_url:
            return ""
        return f"named by {self.snippet or 'its source'}, not read: {self.named_url}"
