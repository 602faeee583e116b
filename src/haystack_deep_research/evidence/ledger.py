"""
The evidence ledger: every source a research run has seen, keyed by its normalised URL.

One :class:`EvidenceLedger` belongs to one research run (its :class:`~haystack_deep_research.run.ResearchRun`) and is
shared by all of the run's sub-researchers, which may record sources from several threads at once; every method takes
the ledger's lock.

Entries are keyed by :func:`normalize_url`, which only removes trivial differences of spelling. Each entry gets a
short id derived from that key (``"S"`` followed by the first 8 hex digits of its SHA-256), so the same URL always
gets the same id, in any run and in any order of recording.

A search result is recorded with :meth:`EvidenceLedger.record_search_result`; reading the page later with
:meth:`EvidenceLedger.record_page` upgrades that entry in place (same id, same position) to a ``"page"`` entry
holding the text the summariser saw. A document retrieved from a datastore is recorded with
:meth:`EvidenceLedger.record_document` as a ``"document"`` entry: its content is the text that was read, so it
counts as read at once, keyed by its citation target (an ``http(s)`` URL, a ``file://`` URI or a
``doc://<store>/<id>`` URI). :meth:`EvidenceLedger.read_urls` lists only the pages and documents that were really
read, which is the set a report's citations should be verified against, and :meth:`EvidenceLedger.read_sources_in`
the read sources a note names: those it cites, and the documents whose URI it states as a tool rendered it
(``Source: file:///...``), so that a finding made of retrieved documents offers them to the writer.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.evidence.citations import extract_citations
from haystack_deep_research.evidence.clock import now_iso
from haystack_deep_research.evidence.entry import (
    READ_KINDS,
    SourceEntry,
    normalize_url,
    require_strings,
    sha256,
    source_id,
)

__all__ = ["EvidenceLedger"]


class EvidenceLedger:
    """
    Thread-safe record of every source one research run has seen, in the order first seen.

    Lookups accept any trivially different spelling of a URL (see :func:`normalize_url`).
    """

    def __init__(self) -> None:
        """Create an empty ledger."""
        self._lock = threading.Lock()
        self._entries: dict[str, SourceEntry] = {}

    def record_search_result(self, *, url: str, title: str, snippet: str) -> SourceEntry:
        """
        Record a search result.

        A URL already in the ledger keeps its entry: a page already read is never downgraded, and a known search
        result only has a blank title or snippet filled in.

        :param url: The result's URL.
        :param title: The result's title.
        :param snippet: The search engine's snippet.
        :returns: The entry now held for the URL.
        :raises ConfigurationError: If ``url`` is blank or an argument is not a string.
        """
        key = normalize_url(url)
        require_strings(title=title, snippet=snippet)
        with self._lock:
            existing = self._entries.get(key)
            if existing is None:
                entry = SourceEntry(
                    id=source_id(key),
                    url=url.strip(),
                    title=title,
                    snippet=snippet,
                    kind="search_result",
                    fetched_at=now_iso(),
                )
            else:
                entry = replace(existing, title=existing.title or title, snippet=existing.snippet or snippet)
            self._entries[key] = entry
            return entry

    def record_page(self, *, url: str, title: str, text: str, summary: str = "") -> SourceEntry:
        """
        Record a page whose text was read.

        An existing entry for the same normalised URL is upgraded in place, keeping its id, position and snippet;
        a blank ``title`` keeps the known title. Re-reading a page keeps one entry; when the text is unchanged and
        no new ``summary`` is given, the previous summary is kept.

        :param url: The URL exactly as it was retrieved.
        :param title: The page title.
        :param text: The text the summariser saw.
        :param summary: The page summary, if already known.
        :returns: The entry now held for the URL.
        :raises ConfigurationError: If ``url`` is blank or an argument is not a string.
        """
        key = normalize_url(url)
        require_strings(title=title, text=text, summary=summary)
        content_hash = sha256(text)
        with self._lock:
            existing = self._entries.get(key)
            if existing is not None and not summary and existing.content_hash == content_hash:
                summary = existing.summary
            self._entries[key] = entry = SourceEntry(
                id=existing.id if existing else source_id(key),
                url=url.strip(),
                title=title or (existing.title if existing else ""),
                snippet=existing.snippet if existing else "",
                kind="page",
                fetched_at=now_iso(),
                content_hash=content_hash,
                text=text,
                summary=summary,
            )
            return entry

    def record_document(self, *, url: str, title: str, text: str, store: str = "") -> SourceEntry:
        """
        Record a document retrieved from a datastore: its content is the text that was read.

        A web page already read under the same URL stays a page (with its text); anything else becomes a
        ``"document"`` entry, keeping an existing entry's id and position. Another chunk of the same document (same
        citation target, text not yet held) is appended to the entry's text, so the text holds every chunk read.

        :param url: The document's citation target: an ``http(s)`` URL, a ``file://`` URI or a ``doc://`` URI.
        :param title: The document's title (or file name).
        :param text: The retrieved content.
        :param store: The datastore's name, kept as the entry's snippet.
        :returns: The entry now held for the URL.
        :raises ConfigurationError: If ``url`` is blank or an argument is not a string.
        """
        key = normalize_url(url)
        require_strings(title=title, text=text, store=store)
        with self._lock:
            existing = self._entries.get(key)
            if existing is not None and existing.kind == "page":
                return existing
            if existing is not None and existing.kind == "document":
                if text in existing.text:
                    return existing
                text = f"{existing.text}\n\n{text}"
            self._entries[key] = entry = SourceEntry(
                id=existing.id if existing else source_id(key),
                url=url.strip(),
                title=title or (existing.title if existing else ""),
                snippet=store or (existing.snippet if existing else ""),
                kind="document",
                fetched_at=now_iso(),
                content_hash=sha256(text),
                text=text,
            )
            return entry

    def set_summary(self, url: str, summary: str) -> SourceEntry:
        """
        Set the summary of a recorded source.

        :param url: The source's URL, in any trivially different spelling.
        :param summary: The summary.
        :returns: The updated entry.
        :raises ConfigurationError: If the URL was never recorded or ``summary`` is not a string.
        """
        key = normalize_url(url)
        require_strings(summary=summary)
        with self._lock:
            existing = self._entries.get(key)
            if existing is None:
                raise ConfigurationError(f"{url!r} is not in the evidence ledger.")
            self._entries[key] = entry = replace(existing, summary=summary)
            return entry

    def get(self, url: str) -> SourceEntry | None:
        """
        Return the entry for ``url`` (compared in normal form), or ``None``.

        :param url: The URL to look up.
        :returns: The entry, or ``None`` when the URL was never recorded or is not a usable string.
        """
        if not isinstance(url, str) or not url.strip():
            return None
        key = normalize_url(url)
        with self._lock:
            return self._entries.get(key)

    def __contains__(self, url: object) -> bool:
        """Return whether ``url`` (compared in normal form) was recorded."""
        return isinstance(url, str) and self.get(url) is not None

    def __len__(self) -> int:
        """Return the number of distinct sources."""
        with self._lock:
            return len(self._entries)

    def entries(self) -> list[SourceEntry]:
        """:returns: A new list of every entry, in the order its URL was first recorded."""
        with self._lock:
            return list(self._entries.values())

    def urls(self) -> set[str]:
        """:returns: The URLs of every entry, search results and pages alike, exactly as retrieved."""
        return {entry.url for entry in self.entries()}

    def read_urls(self) -> set[str]:
        """:returns: The URLs of the pages and documents whose text was read: the set to verify citations against."""
        return {entry.url for entry in self.entries() if entry.kind in READ_KINDS}

    def read_sources_in(self, text: str) -> list[str]:
        """
        The read sources a text names: the URLs it cites whose pages or documents were read, then the documents whose
        URI it states as written (a ``file://`` or ``doc://`` URI is no link a Markdown reader sees), in order.

        :param text: A note or finding.
        :returns: The sources' URLs (as the text cites them; documents as recorded), without repeats.
        """
        read = {normalize_url(url) for url in self.read_urls()}
        named = {url: None for url in (c.url for c in extract_citations(text)) if normalize_url(url) in read}
        keys = {normalize_url(url) for url in named}
        documents = [e.url for e in self.entries() if e.kind == "document" and normalize_url(e.url) not in keys]
        stated = sorted((text.find(url), url) for url in documents if _states(text, url))
        return [*named, *(url for _, url in stated)]

    def to_list(self) -> list[dict[str, str]]:
        """:returns: Every entry as a JSON-ready dictionary, in insertion order."""
        return [entry.to_dict() for entry in self.entries()]

    def to_json(self) -> str:
        """:returns: The ledger as a JSON array of entries, in insertion order."""
        return json.dumps(self.to_list(), ensure_ascii=False)

    @classmethod
    def from_list(cls, data: Iterable[Mapping[str, Any]]) -> EvidenceLedger:
        """
        Rebuild a ledger from :meth:`to_list` output, keeping the order and the stored ids.

        :param data: The entry dictionaries.
        :returns: A new ledger.
        :raises ConfigurationError: If an entry is malformed or two entries share a normalised URL.
        """
        ledger = cls()
        for item in data:
            entry = SourceEntry.from_dict(item)
            key = normalize_url(entry.url)
            if key in ledger._entries:
                raise ConfigurationError(f"Two ledger entries have the URL {entry.url!r}.")
            ledger._entries[key] = entry
        return ledger

    @classmethod
    def from_json(cls, text: str) -> EvidenceLedger:
        """
        Rebuild a ledger from :meth:`to_json` output.

        :param text: The JSON text.
        :returns: A new ledger.
        :raises ConfigurationError: If the text is not a JSON array of valid entries.
        """
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise ConfigurationError(f"The evidence ledger JSON is not valid: {error}.") from error
        if not isinstance(data, list):
            raise ConfigurationError("The evidence ledger JSON must be an array of entries.")
        return cls.from_list(data)

    def __repr__(self) -> str:
        """Return a short description with the number of sources."""
        return f"EvidenceLedger({len(self)} sources)"


def _states(text: str, uri: str) -> bool:
    """Whether ``text`` holds ``uri`` as a whole token (not the start of a longer URI)."""
    return re.search(re.escape(uri) + r"(?=[.,;:!?]*(?:[\s<>()\[\]\"'`]|$))", text) is not None
