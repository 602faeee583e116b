"""
The evidence ledger: every source a research run has seen, keyed by its normalised URL. One ledger belongs to one run
and is shared by its sub-researchers across threads (every method takes its lock); it is the one way in for evidence,
and every ``http(s)`` URL that enters passes the run's URL policy (docs/evidence.md, "One way in").
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from haystack_deep_research.errors import ConfigurationError, FetchError, URLRefusedError
from haystack_deep_research.evidence.citations import extract_citations
from haystack_deep_research.evidence.clock import now_iso
from haystack_deep_research.evidence.entry import (
    _SEAL,
    CITABLE_KINDS,
    READ_KINDS,
    SNIPPET_CHARS,
    SourceEntry,
    normalize_url,
    require_strings,
    sha256,
    source_id,
)

if TYPE_CHECKING:
    from haystack_deep_research.web import UrlPolicy

__all__ = ["EvidenceLedger"]

_DOCUMENT_SCHEMES = ("http://", "https://", "file://", "doc://", "mcp://")


class EvidenceLedger:
    """Thread-safe record of every source one run has seen, in the order first seen, looked up in any trivially
    different spelling of a URL (see :func:`normalize_url`)."""

    def __init__(self, *, url_policy: UrlPolicy | None = None) -> None:
        """
        :param url_policy: The policy every ``http(s)`` URL entering it must pass; by default the one first adopted
            (see :meth:`adopt_policy`), else public addresses only.
        """
        self._lock = threading.Lock()
        self._entries: dict[str, SourceEntry] = {}
        self._policy = url_policy

    def adopt_policy(self, policy: UrlPolicy) -> None:
        """Take the run's URL policy (the one its reading tools carry), unless the ledger already has one."""
        with self._lock:
            if self._policy is None:
                self._policy = policy

    def check_url(self, url: str, policy: UrlPolicy | None = None) -> None:
        """
        The door's check of a URL: an ``http(s)`` URL must pass the URL policy (host names are not resolved here:
        a fetch resolves and checks them); a ``file://``, ``doc://`` or ``mcp://`` address is the library's own.

        :param url: The URL.
        :param policy: The writer's policy; the ledger's by default.
        :raises URLRefusedError: If the policy refuses the URL, or its scheme is none of these.
        """
        if not isinstance(url, str) or not url.strip().lower().startswith(_DOCUMENT_SCHEMES):
            raise URLRefusedError(f"URL refused: {str(url)[:80]!r} is no address the library reads.", url=str(url))
        if not url.strip().lower().startswith(("http://", "https://")):
            return
        if policy is None:
            with self._lock:
                policy = self._policy
        if policy is None:
            from haystack_deep_research.web import UrlPolicy

            policy = UrlPolicy()
        try:
            policy.check(url, resolver=_unresolved)
        except URLRefusedError:
            raise
        except FetchError:
            return  # a host name: resolved and checked when (and if) it is fetched

    def record_search_result(self, *, url: str, title: str, snippet: str) -> SourceEntry:
        """
        Record a search result: with a snippet, as a ``"snippet"`` entry whose text is the snippet (its first
        :data:`~.entry.SNIPPET_CHARS` characters); without one, as a bare ``"search_result"``.

        A URL already in the ledger keeps its entry: a page or document already read is never downgraded, a known
        snippet keeps its text, and a known search result only has a blank title filled in and takes this search's
        snippet (never a snippet it came with: a bare result restored from a journal is unsealed, so its text is not
        the engine's).

        :param url: The result's URL.
        :param title: The result's title.
        :param snippet: The search engine's snippet: untrusted text, fenced whenever it reaches a model.
        :returns: The entry now held for the URL.
        :raises ConfigurationError: If ``url`` is blank or an argument is not a string.
        :raises URLRefusedError: If the run's URL policy refuses ``url`` (see :meth:`check_url`).
        """
        key = normalize_url(url)
        require_strings(title=title, snippet=snippet)
        self._check_http(url, None)
        snippet = snippet.strip()[:SNIPPET_CHARS]
        with self._lock:
            existing = self._entries.get(key)
            if existing is not None and existing.kind != "search_result":  # read, or a snippet already held
                snippet = existing.snippet or (snippet if existing.kind == "page" else "")
                entry = replace(existing, title=existing.title or title, snippet=snippet, seal=_SEAL)
            else:
                entry = SourceEntry(
                    id=existing.id if existing else source_id(key),
                    url=existing.url if existing else url.strip(),
                    title=(existing.title if existing else "") or title,
                    snippet=snippet,
                    kind="snippet" if snippet else "search_result",
                    fetched_at=now_iso(),
                    content_hash=sha256(snippet) if snippet else "",
                    text=snippet,
                    seal=_SEAL,
                )
            self._entries[key] = entry
            return entry

    def record_page(
        self, *, url: str, title: str, text: str, summary: str = "", policy: UrlPolicy | None = None
    ) -> SourceEntry:
        """
        Record a page whose text was read, upgrading an existing entry in place (its id, position and snippet kept, and
        its title when ``title`` is blank; its summary too when the text is unchanged and no ``summary`` is given).

        :param url: The URL exactly as it was retrieved.
        :param title: The page title.
        :param text: The text the summariser saw.
        :param summary: The page summary, if already known.
        :param policy: The reading tool's URL policy (the one its fetch passed); the ledger's by default.
        :returns: The entry now held for the URL.
        :raises ConfigurationError: If ``url`` is blank or an argument is not a string.
        :raises URLRefusedError: If the URL policy refuses ``url`` (see :meth:`check_url`).
        """
        key = normalize_url(url)
        require_strings(title=title, text=text, summary=summary)
        self._check_http(url, policy)
        content_hash = sha256(text)
        with self._lock:
            existing = self._entries.get(key)
            if existing is not None and not summary and existing.content_hash == content_hash:
                summary = existing.summary
            snippet = existing.snippet if existing else ""
            entry = _read(key, existing, url, title, text, kind="page", snippet=snippet, summary=summary)
            self._entries[key] = entry
            return entry

    def record_document(
        self, *, url: str, title: str, text: str, store: str = "", named_url: str = "", policy: UrlPolicy | None = None
    ) -> SourceEntry:
        """
        Record a document retrieved from a datastore, or an item an MCP tool answered: its content is the text read.

        A web page already read under the same URL stays a page (with its text); anything else becomes a
        ``"document"`` entry, keeping an existing entry's id and position. Another chunk of the same document (same
        citation target, text not yet held) is appended to the entry's text, so the text holds every chunk read.

        :param url: The document's citation target: an ``http(s)`` URL, a ``file://``, ``doc://`` or ``mcp://`` URI.
        :param title: The document's title (or file name).
        :param text: The retrieved content.
        :param store: The datastore's (or MCP server's) name, kept as the entry's snippet.
        :param named_url: An ``http(s)`` URL the document names but the library did not read (see
            :attr:`SourceEntry.named_url`); it must pass the URL policy too.
        :param policy: The writer's URL policy; the ledger's by default.
        :returns: The entry now held for the URL.
        :raises ConfigurationError: If ``url`` is blank or an argument is not a string.
        :raises URLRefusedError: If ``url`` or ``named_url`` is refused (see :meth:`check_url`).
        """
        key = normalize_url(url)
        require_strings(title=title, text=text, store=store, named_url=named_url)
        self.check_url(url, policy)
        if named_url:
            self._check_http(named_url, policy)
        with self._lock:
            existing = self._entries.get(key)
            if existing is not None and existing.kind == "page":
                return existing
            if existing is not None and existing.kind == "document":
                if text in existing.text:
                    return existing
                text = f"{existing.text}\n\n{text}"
            snippet = store or (existing.snippet if existing else "")
            named = named_url.strip() or (existing.named_url if existing else "")
            entry = _read(key, existing, url, title, text, kind="document", snippet=snippet, named_url=named)
            self._entries[key] = entry
            return entry

    def set_summary(self, url: str, summary: str) -> SourceEntry:
        """
        Set the summary of a recorded source.

        :returns: The updated entry.
        :raises ConfigurationError: If the URL was never recorded or ``summary`` is not a string.
        """
        key = normalize_url(url)
        require_strings(summary=summary)
        with self._lock:
            existing = self._entries.get(key)
            if existing is None:
                raise ConfigurationError(f"{url!r} is not in the evidence ledger.")
            self._entries[key] = entry = replace(existing, summary=summary, seal=_SEAL)
            return entry

    def _check_http(self, url: str, policy: UrlPolicy | None) -> None:
        if not url.strip().lower().startswith(("http://", "https://")):
            raise URLRefusedError("URL refused: only http and https URLs can be read.", url=url)
        self.check_url(url, policy)

    def get(self, url: str) -> SourceEntry | None:
        """:returns: The entry for ``url`` (compared in normal form), or ``None`` (never recorded, or not a URL)."""
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
        """:returns: The URLs of the pages and documents whose text was read."""
        return {entry.url for entry in self.entries() if entry.kind in READ_KINDS}

    def citable_urls(self) -> set[str]:
        """:returns: The URLs whose text backs a claim: the pages and documents read, and the search results' snippets
        (see :data:`~.entry.CITABLE_KINDS`). The set to verify citations against."""
        return {entry.url for entry in self.entries() if entry.kind in CITABLE_KINDS}

    def read_sources_in(self, text: str) -> list[str]:
        """
        The citable sources a text names: the URLs it cites whose pages or documents were read or whose snippets a
        search returned, then the documents whose URI it states as written (a ``file://`` or ``doc://`` URI is no link
        a Markdown reader sees), in order.

        :param text: A note or finding.
        :returns: The sources' URLs (as the text cites them; documents as recorded), without repeats.
        """
        read = {normalize_url(url) for url in self.citable_urls()}
        named = {url: None for url in (c.url for c in extract_citations(text)) if normalize_url(url) in read}
        keys = {normalize_url(url) for url in named}
        documents = [e.url for e in self.entries() if e.kind == "document" and normalize_url(e.url) not in keys]
        stated = sorted((text.find(url), url) for url in documents if _states(text, url))
        return [*named, *(url for _, url in stated)]

    def named_notes(self) -> dict[str, str]:
        """:returns: For each entry shown as not read (a snippet, or a source naming a URL it did not read), by its
        URL: its :attr:`SourceEntry.note`."""
        return {entry.url: entry.note for entry in self.entries() if entry.note}

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
    def from_urls(cls, urls: Iterable[str]) -> EvidenceLedger:
        """
        A record of what was read elsewhere, as URLs (blank ones skipped): each a page without stored text, to verify a
        report against (nothing is fetched, so no URL policy applies).

        :raises ConfigurationError: If a URL is not a string.
        """
        ledger = cls()
        for url in urls:
            if not isinstance(url, str):
                raise ConfigurationError(f"A URL must be a string, got {type(url).__name__}.")
            key = normalize_url(url) if url.strip() else ""
            if key and key not in ledger._entries:
                ledger._entries[key] = _read(key, None, url, "", "", kind="page", snippet="")
        return ledger

    @classmethod
    def from_json(cls, text: str) -> EvidenceLedger:
        """
        Rebuild a ledger from :meth:`to_json` output.

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


def _read(key: str, existing: SourceEntry | None, url: str, title: str, text: str, **fields: Any) -> SourceEntry:
    """A sealed entry of ``text`` read now, keeping an existing entry's id (and title, when ``title`` is blank)."""
    return SourceEntry(
        id=existing.id if existing else source_id(key),
        url=url.strip(),
        title=title or (existing.title if existing else ""),
        fetched_at=now_iso(),
        content_hash=sha256(text),
        text=text,
        seal=_SEAL,
        **fields,
    )


def _unresolved(host: str, port: int) -> list[str]:
    """The door resolves nothing: a host name is judged when a fetch resolves it."""
    raise OSError(f"{host} is not resolved by the evidence ledger")


def _states(text: str, uri: str) -> bool:
    """Whether ``text`` holds ``uri`` as a whole token (not the start of a longer URI)."""
    return re.search(re.escape(uri) + r"(?=[.,;:!?]*(?:[\s<>()\[\]\"'`]|$))", text) is not None
