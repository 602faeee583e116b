"""
The caches: the cross-run cache on disk (docs/caching.md), and the pages one run has already summarized.

A store is anything with ``get``, ``put`` and ``to_dict`` (:class:`CacheStore`): :class:`ResearchCache` keeps entries
on disk, a recording records and replays them through the same seams. The :class:`ReadCache` belongs to one run:
researchers run in parallel, so the first to ask for a URL with a question reads it and the others wait for its
summary (docs/how-it-works.md); a read that fails is not kept. It is thread-safe, for worker threads and tasks alike.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from haystack import logging
from haystack.core.serialization import import_class_by_name

from haystack_deep_research import _checks
from haystack_deep_research._serialization import InitSerialized
from haystack_deep_research._untrusted.files import read_regular_file, write_file
from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.evidence.entry import normalize_url

__all__ = [
    "CACHE_KINDS",
    "DEFAULT_CACHE_TTL",
    "CacheStore",
    "CachedRead",
    "ReadCache",
    "ResearchCache",
    "cache_from_dict",
    "cache_of",
    "cache_to_dict",
    "check_cache",
    "check_kind",
    "folder",
    "page_key",
    "search_key",
    "summary_key",
]


logger = logging.getLogger(__name__)

DEFAULT_CACHE_TTL = 86_400.0
"""One day: how long a cached search, page or summary is used, and how long an iterative run's sources count as
fresh when it is updated."""

MAX_ENTRY_BYTES = 64 * 1024 * 1024
"""The largest cache entry read; a larger file (or one that is not a regular file inside the cache directory: a FIFO,
a device, a link out) is a miss with a logged warning, never a blocked or exhausted run."""

CACHE_KINDS = ("search", "page", "summary")
"""What is cached: search results (by engine, query and result count), page texts (by URL), page summaries (by URL,
question and model)."""


def _words(text: str) -> str:
    return " ".join(text.split()).casefold()


def search_key(engine: str, query: str, max_results: int) -> str:
    """The query compared without case and extra whitespace."""
    return json.dumps([engine, _words(query), max_results], ensure_ascii=False)


def page_key(url: str) -> str:
    """The URL in normal form."""
    return normalize_url(url)


def summary_key(url: str, question: str, model: str) -> str:
    return json.dumps([normalize_url(url), _words(question), model], ensure_ascii=False)


def folder(directory: Any) -> Path:
    """:raises ConfigurationError: If ``directory`` is not a folder path."""
    if isinstance(directory, bool) or not isinstance(directory, str | os.PathLike) or not str(directory).strip():
        raise ConfigurationError(f"directory must be a folder path (str or os.PathLike); got {directory!r}.")
    return Path(directory).expanduser()


def check_kind(kind: str) -> None:
    """:raises ConfigurationError: If ``kind`` is not one of :data:`CACHE_KINDS`."""
    if kind not in CACHE_KINDS:
        raise ConfigurationError(f"kind must be one of {', '.join(CACHE_KINDS)}; got {kind!r}.")


@runtime_checkable
class CacheStore(Protocol):
    """Where the seams look entries up (``None`` on a miss) and store them, by kind and key; values are JSON-ready."""

    def get(self, kind: str, key: str) -> dict[str, Any] | None: ...

    def put(self, kind: str, key: str, value: dict[str, Any]) -> None: ...

    def to_dict(self) -> dict[str, Any]: ...


class ResearchCache(InitSerialized):
    """
    Search results, page texts and page summaries on disk, each used for ``ttl`` seconds after it was stored.

    :param directory: Where the entries live; created on the first store.
    :param ttl: Seconds an entry is used, more than 0 (default one day).
    :raises ConfigurationError: If ``directory`` is not a path or ``ttl`` is not a positive number.
    """

    def __init__(self, *, directory: str | os.PathLike[str], ttl: float = DEFAULT_CACHE_TTL) -> None:
        self.directory = folder(directory)
        self.ttl = _checks.number_in_range("ttl", ttl, 0.0)
        self._lock = threading.Lock()
        self._counts = {"hits": 0, "misses": 0}

    def __repr__(self) -> str:
        return f"ResearchCache(directory={str(self.directory)!r}, ttl={self.ttl})"

    def _path(self, kind: str, key: str) -> Path:
        check_kind(kind)
        digest = hashlib.sha256(key.encode("utf-8")).hexdigest()
        return self.directory / kind / digest[:2] / f"{digest}.json"

    @property
    def stats(self) -> dict[str, int]:
        """``{"hits": ..., "misses": ...}`` of this object's look-ups."""
        with self._lock:
            return dict(self._counts)

    def age(self, kind: str, key: str) -> float | None:
        """
        :param kind: One of :data:`CACHE_KINDS`.
        :param key: The entry's key.
        :returns: Seconds since the entry was stored, or ``None`` when there is none.
        """
        entry = self._read(kind, key)
        return None if entry is None else max(time.time() - float(entry["stored_at"]), 0.0)

    def _read(self, kind: str, key: str) -> dict[str, Any] | None:
        path = self._path(kind, key)
        try:
            entry = json.loads(read_regular_file(path, root=self.directory, max_bytes=MAX_ENTRY_BYTES).decode("utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as error:
            logger.warning("Cache entry {path} is unreadable ({error}); it counts as a miss.", path=path, error=error)
            return None
        valid = isinstance(entry, dict) and entry.get("key") == key and isinstance(entry.get("value"), dict)
        return entry if valid and isinstance(entry.get("stored_at"), int | float) else None

    def get(self, kind: str, key: str) -> dict[str, Any] | None:
        """
        :param kind: One of :data:`CACHE_KINDS`.
        :param key: The entry's key.
        :returns: The stored value when it is younger than ``ttl``, else ``None``.
        """
        entry = self._read(kind, key)
        fresh = entry is not None and time.time() - float(entry["stored_at"]) < self.ttl
        with self._lock:
            self._counts["hits" if fresh else "misses"] += 1
        return dict(entry["value"]) if fresh and entry is not None else None

    def put(self, kind: str, key: str, value: dict[str, Any]) -> None:
        """
        Store an entry, replacing an older one; a failed write is a logged warning, never an error.

        :param kind: One of :data:`CACHE_KINDS`.
        :param key: The entry's key.
        :param value: A JSON-ready value.
        """
        path = self._path(kind, key)
        record = json.dumps({"key": key, "stored_at": time.time(), "value": value}, ensure_ascii=False)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_file(path, record)
        except OSError as error:
            logger.warning("Could not write the cache entry {path} ({error}).", path=path, error=error)


def cache_to_dict(cache: CacheStore | None) -> dict[str, Any] | None:
    return None if cache is None else cache.to_dict()


def cache_from_dict(data: dict[str, Any] | None) -> CacheStore | None:
    if data is None:
        return None
    store: CacheStore = import_class_by_name(data["type"]).from_dict(data)  # type: ignore[attr-defined]
    return store


def check_cache(cache: Any) -> CacheStore | None:
    """:raises ConfigurationError: If ``cache`` is neither ``None`` nor a store."""
    if cache is not None and not isinstance(cache, CacheStore):
        raise ConfigurationError(
            f"cache must be a ResearchCache (or another store with get, put and to_dict); got {type(cache).__name__}."
        )
    return cache


def cache_of(value: Any) -> ResearchCache | None:
    """:raises ConfigurationError: If ``value`` is neither ``None``, a folder path nor a ``ResearchCache``."""
    if value is None or isinstance(value, ResearchCache):
        return value
    if isinstance(value, str | os.PathLike) and not isinstance(value, bool):
        return ResearchCache(directory=value)
    raise ConfigurationError(
        f"cache must be a folder path or a ResearchCache(directory=..., ttl=...); got {type(value).__name__}."
    )


@dataclass(frozen=True)
class CachedRead:
    """What one researcher read of a page, which the run's other researchers may share."""

    title: str
    summary: str  # toward the question; "" when ``excerpt`` is given
    partial: bool  # the page was cut to the length limit before it was summarized
    excerpt: str = ""  # the page's passages as they are, short enough to need no summary


class ReadClaim:
    """
    The answer to :meth:`ReadCache.claim`: the right to read the page (``owner``: call :meth:`settle` exactly once,
    with ``None`` when the read failed), or a place to wait (:meth:`wait`, :meth:`wait_async`).
    """

    def __init__(self, future: Future[CachedRead | None], *, owner: bool, forget: Callable[[], None]) -> None:
        self._future = future
        self._forget = forget
        self.owner = owner

    def settle(self, read: CachedRead | None) -> None:
        """``None`` (a failed read) is not kept for later askers."""
        if read is None:
            self._forget()
        self._future.set_result(read)

    def wait(self) -> CachedRead | None:
        """The shared summary, or ``None`` (then read the page yourself)."""
        return self._future.result()

    async def wait_async(self) -> CachedRead | None:
        # Shielded: a cancelled waiter must not cancel the read that the owner and the other waiters share.
        return await asyncio.shield(asyncio.wrap_future(self._future))


class ReadCache:
    """Page summaries of one run, by URL (in normal form) and question (without case and extra whitespace)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[tuple[str, str], Future[CachedRead | None]] = {}

    def claim(self, url: str, question: str) -> ReadClaim:
        """The first asker of a URL and question owns the read, later askers share its result."""
        key = (normalize_url(url), _words(question))
        with self._lock:
            future = self._entries.get(key)
            owner = future is None
            if future is None:
                future = self._entries[key] = Future()
        return ReadClaim(future, owner=owner, forget=functools.partial(self._forget, key, future))

    def _forget(self, key: tuple[str, str], future: Future[CachedRead | None]) -> None:
        with self._lock:
            if self._entries.get(key) is future:
                del self._entries[key]
