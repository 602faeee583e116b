"""
The caches and record and replay (docs/caching.md): the cross-run cache on disk, a run's recording, and the pages one
run has already summarized.

A store is anything with ``get``, ``put`` and ``to_dict`` (:class:`CacheStore`): :class:`ResearchCache` keeps entries
on disk, a :class:`Recording` records and replays them through the same seams, and :class:`RecordingChatGenerator`
and :class:`ReplayChatGenerator` wrap the models; a look-up a recording cannot answer raises
:class:`~haystack_deep_research.errors.ReplayMissError`, never a network request. A recording's ``exchanges.jsonl``
and ``recording.json`` are validated before anything is replayed (docs/safety.md). The :class:`ReadCache` belongs to
one run: researchers run in parallel, so the first to ask for a URL with a question reads it and the others wait for
its summary (docs/how-it-works.md); a read that fails is not kept. It is thread-safe, for threads and tasks alike.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import os
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from haystack import component, logging
from haystack.core.serialization import import_class_by_name
from haystack.dataclasses import ChatMessage
from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError, field_validator

import haystack_deep_research._untrusted.json_text as _safe_json
from haystack_deep_research import _checks
from haystack_deep_research._serialization import InitSerialized
from haystack_deep_research._untrusted.files import open_appending, read_regular_file, write_all, write_file
from haystack_deep_research.errors import ConfigurationError, RecordingError, ReplayMissError
from haystack_deep_research.evidence.entry import normalize_url
from haystack_deep_research.evidence.text import clean_text
from haystack_deep_research.run._budget import model_name

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


@dataclass(frozen=True)
class ReadClaim:
    """
    The answer to :meth:`ReadCache.claim`: the right to read the page (``owner``: call :meth:`settle` exactly once,
    with ``None`` when the read failed), or a place to wait (:meth:`wait`, :meth:`wait_async`).
    """

    future: Future[CachedRead | None]
    owner: bool
    forget: Callable[[], None]

    def settle(self, read: CachedRead | None) -> None:
        """``None`` (a failed read) is not kept for later askers."""
        if read is None:
            self.forget()
        self.future.set_result(read)

    def wait(self) -> CachedRead | None:
        """The shared summary, or ``None`` (then read the page yourself)."""
        return self.future.result()

    async def wait_async(self) -> CachedRead | None:
        # Shielded: a cancelled waiter must not cancel the read that the owner and the other waiters share.
        return await asyncio.shield(asyncio.wrap_future(self.future))


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


MAX_RECORDING_BYTES = 1 << 30
"""The largest recording file read (only a regular file is read: a FIFO or a device is refused, never opened)."""

Exchanges = dict[tuple[str, str], list[dict[str, Any]]]
_LOCKS: dict[str, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


class _Exchange(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)

    type: str
    key: str
    value: dict[str, Any]


def _exchange(path: Path, number: int, line: bytes) -> _Exchange:
    try:
        return _Exchange.model_validate(_safe_json.loads(line))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        why = f"not a JSON record ({error})"
    except ValidationError as error:
        wrong = error.errors()[0]
        why = f"field {'.'.join(str(part) for part in wrong['loc']) or 'record'!r}: {wrong['msg']}"
    raise RecordingError(f"{path} line {number} is not a recorded exchange ({why}); record the run again.")


def append_exchange(path: Path, kind: str, key: str, value: dict[str, Any]) -> None:
    """Append one exchange whole, under a lock per file. :raises OSError: If the file cannot be written."""
    line = (clean_text(json.dumps({"type": kind, "key": key, "value": value}, ensure_ascii=False)) + "\n").encode()
    with _LOCKS_GUARD:
        lock = _LOCKS.setdefault(str(path.resolve()), threading.Lock())
    with lock:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = open_appending(path)
        try:
            write_all(handle, line)
        finally:
            os.close(handle)


def read_exchanges(path: Path) -> Exchanges:
    """
    :param path: A recording's ``exchanges.jsonl``.
    :returns: The recorded values by ``(type, key)``, each list in the recorded order.
    :raises RecordingError: If a line other than a torn last one is not a recorded exchange.
    :raises OSError: If the file cannot be read.
    """
    lines = read_regular_file(path, root=None, max_bytes=MAX_RECORDING_BYTES).split(b"\n")
    torn = lines.pop() if lines else b""  # after the last newline: empty, or a record cut off mid-write
    if torn.strip():
        logger.warning("{path} ends with a half-written exchange; it was dropped.", path=str(path))
    exchanges: Exchanges = {}
    for number, line in enumerate(lines, 1):
        if line.strip():
            exchange = _exchange(path, number, line)
            exchanges.setdefault((exchange.type, exchange.key), []).append(exchange.value)
    return exchanges


class RecordedFolder(BaseModel):
    """A ``--docs`` folder a recorded run searched."""

    model_config = ConfigDict(extra="ignore", strict=True)

    path: str = Field(min_length=1)  # absolute
    fingerprint: str = Field(pattern=r"^[0-9a-f]{64}$")  # SHA-256 of its files' names and contents when recorded


class RecordingManifest(BaseModel):
    """The content of ``recording.json``: the question and the command's options the run was recorded with."""

    model_config = ConfigDict(extra="ignore")

    question: str = Field(min_length=1)
    depth: int = Field(default=3, ge=1)  # rounds
    grounding: StrictBool = False
    search: str = "auto"  # the search engine's name
    web: StrictBool = True
    docs: list[RecordedFolder] = []
    search_url: str | None = None  # of a Tavily-compatible search
    allow_hosts: list[str] = []
    include_domains: list[str] = []
    exclude_domains: list[str] = []
    since: str | None = None  # a --since date or --time-range window
    models: dict[str, str]  # the model of each role (analysis_llm, writer_llm, ...)
    prices: dict[str, tuple[float, float]] = {}  # US dollars per million input and output tokens
    # ReportStyle.to_dict(), {} for the default: the writer's prompts hold it, so a replay needs it to find its replies
    style: dict[str, Any] = {}

    @field_validator("models")
    @classmethod
    def _main_roles(cls, value: dict[str, str]) -> dict[str, str]:
        missing = [role for role in ("analysis_llm", "writer_llm") if role not in value]
        if missing:
            raise ValueError(f"names no {' and no '.join(missing)}")
        return value


def read_manifest(path: Path) -> RecordingManifest:
    """
    :param path: A recording's ``recording.json``.
    :returns: Its validated content.
    :raises RecordingError: If the file is not JSON, or a field is missing or of the wrong type.
    :raises OSError: If the file cannot be read.
    """
    data = read_regular_file(path, root=None, max_bytes=MAX_RECORDING_BYTES)
    try:
        return RecordingManifest.model_validate(_safe_json.loads(data))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise RecordingError(f"{path} is not JSON ({error}); record the run again.") from None
    except ValidationError as error:
        wrong = error.errors()[0]
        field = ".".join(str(part) for part in wrong["loc"]) or "the whole file"
        raise RecordingError(f"{path} field {field!r} is not valid ({wrong['msg']}); record the run again.") from None


EXCHANGES_FILE = "exchanges.jsonl"
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def prompt_key(messages: list[ChatMessage]) -> str:
    """
    What a recorded reply is matched by: a hash of each message's role, text, tool calls and tool results, with dates
    masked.
    """
    parts = [
        [
            message.role.value,
            message.text or "",
            [[call.tool_name, call.arguments] for call in message.tool_calls],
            str(message.tool_call_result.result) if message.tool_call_result is not None else "",
        ]
        for message in messages
    ]
    text = _DATE.sub("<date>", json.dumps(parts, ensure_ascii=False, sort_keys=True, default=str))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Recording(InitSerialized):
    """
    A run's recording directory, written or read; also a cache store, handed to the tools as their ``cache``.

    :param directory: The directory; created when recording.
    :param mode: ``"record"`` or ``"replay"``.
    :param cache: Recording: the cache whose look-ups it passes on and records (``None``: every look-up misses, so
        the tools search and fetch). Not used when replaying.
    :raises ConfigurationError: If a parameter is invalid, or a directory to replay holds no recording.
    :raises RecordingError: If the recording to replay is damaged (see :func:`read_exchanges`).
    """

    def __init__(
        self,
        *,
        directory: str | os.PathLike[str],
        mode: Literal["record", "replay"],
        cache: CacheStore | None = None,
    ) -> None:
        self.directory = folder(directory)
        if mode not in ("record", "replay"):
            raise ConfigurationError(f"mode must be 'record' or 'replay'; got {mode!r}.")
        self.mode = mode
        self.cache = check_cache(cache)
        self._lock = threading.Lock()
        self._loaded: Exchanges | None = None
        self._served: dict[tuple[str, str], int] = {}
        if mode == "replay" and not (self.directory / EXCHANGES_FILE).is_file():
            raise ConfigurationError(
                f"{str(self.directory)!r} holds no recording ({EXCHANGES_FILE} is missing); record a run there first."
            )
        if mode == "replay":
            self._exchanges()  # a damaged recording is refused now, not at its first look-up

    def __repr__(self) -> str:
        return f"Recording(directory={str(self.directory)!r}, mode={self.mode!r})"

    @property
    def path(self) -> Path:
        """The recording's file of exchanges."""
        return self.directory / EXCHANGES_FILE

    def record(self, kind: str, key: str, value: dict[str, Any]) -> None:
        """Append one exchange (``"model"`` or a cache kind) when recording. :raises OSError: If it cannot."""
        if self.mode == "record":
            append_exchange(self.path, kind, key, value)

    def _exchanges(self) -> Exchanges:
        with self._lock:
            if self._loaded is None:
                self._loaded = read_exchanges(self.path)
            return self._loaded

    def replayed(self, kind: str, key: str) -> dict[str, Any]:
        """
        The recorded value of an exchange; an exchange recorded several times is answered in the recorded order (the
        last answer again once they are used up).

        :raises ReplayMissError: If the recording holds no such exchange.
        """
        values = self._exchanges().get((kind, key))
        if not values:
            raise ReplayMissError(
                f"the recording in {str(self.directory)!r} holds no {kind} for this request: the run asked something "
                "the recorded run did not (a changed question, option or model)."
            )
        with self._lock:
            served = self._served.get((kind, key), 0)
            self._served[(kind, key)] = served + 1
        return dict(values[min(served, len(values) - 1)])

    def get(self, kind: str, key: str) -> dict[str, Any] | None:
        """
        :returns: Replaying: the recorded value. Recording: the wrapped cache's value (recorded), or ``None``.
        :raises ReplayMissError: Replaying, if the recording holds no such entry.
        """
        check_kind(kind)
        if self.mode == "replay":
            return self.replayed(kind, key)
        found = self.cache.get(kind, key) if self.cache is not None else None
        if found is not None:
            self.record(kind, key, found)
        return found

    def put(self, kind: str, key: str, value: dict[str, Any]) -> None:
        """Recording: record the entry and store it in the wrapped cache. Replaying: nothing."""
        if self.mode == "record":
            self.record(kind, key, value)
            if self.cache is not None:
                self.cache.put(kind, key, value)


def _recording(value: Any) -> Recording:
    if not isinstance(value, Recording):
        raise ConfigurationError(f"recording must be a Recording; got {type(value).__name__}.")
    return value


@component
class RecordingChatGenerator(InitSerialized):
    """
    A chat generator that records every reply of the generator it wraps.

    :param chat_generator: The generator that answers.
    :param recording: Where the replies are recorded (a ``Recording`` in ``"record"`` mode).
    :raises ConfigurationError: If a parameter is invalid.
    """

    def __init__(self, *, chat_generator: Any, recording: Recording) -> None:
        self.chat_generator = _checks.chat_generator("chat_generator", chat_generator, needs_tools=False)
        self.recording = _recording(recording)
        self.model = model_name(chat_generator)

    def warm_up(self) -> None:
        """Warm up the wrapped generator."""
        if hasattr(self.chat_generator, "warm_up"):
            self.chat_generator.warm_up()

    def _kept(self, messages: list[ChatMessage], result: dict[str, Any]) -> dict[str, Any]:
        replies = list(result.get("replies") or [])
        if replies:
            self.recording.record("model", prompt_key(messages), {"reply": replies[0].to_dict()})
        return {"replies": replies}

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], **kwargs: Any) -> dict[str, list[ChatMessage]]:
        """
        :param messages: The prompt.
        :param kwargs: Passed on to the wrapped generator (``streaming_callback``, ``generation_kwargs``, ...).
        :returns: The wrapped generator's ``replies``.
        """
        return self._kept(messages, self.chat_generator.run(messages=messages, **kwargs))

    @component.output_types(replies=list[ChatMessage])
    async def run_async(self, messages: list[ChatMessage], **kwargs: Any) -> dict[str, list[ChatMessage]]:
        """Async variant of :meth:`run`."""
        if hasattr(self.chat_generator, "run_async"):
            return self._kept(messages, await self.chat_generator.run_async(messages=messages, **kwargs))
        return self.run(messages, **kwargs)


@component
class ReplayChatGenerator(InitSerialized):
    """
    A chat generator that answers every prompt with the reply a recording holds for it, and calls no model.

    :param recording: The recording (a ``Recording`` in ``"replay"`` mode).
    :param model: The name of the recorded model (cache keys of page summaries carry it).
    :raises ConfigurationError: If a parameter is invalid.
    """

    def __init__(self, *, recording: Recording, model: str = "") -> None:
        self.recording = _recording(recording)
        if not isinstance(model, str):
            raise ConfigurationError(f"model must be a string; got {type(model).__name__}.")
        self.model = model

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], **kwargs: Any) -> dict[str, list[ChatMessage]]:
        """
        :param messages: The prompt.
        :param kwargs: Ignored (nothing is generated).
        :returns: ``{"replies": [the recorded reply]}``.
        :raises ReplayMissError: If the recording holds no reply for this prompt.
        """
        return {"replies": [ChatMessage.from_dict(self.recording.replayed("model", prompt_key(messages))["reply"])]}
