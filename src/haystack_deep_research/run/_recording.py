"""
Record and replay (docs/caching.md), and the files of a recording directory: ``exchanges.jsonl``
(:func:`append_exchange`, :func:`read_exchanges`) and ``recording.json`` (:class:`RecordingManifest`), both validated
before anything is replayed (docs/safety.md). :class:`RecordingChatGenerator` and :class:`ReplayChatGenerator` wrap the
models; a :class:`Recording` is a cache store handed to the tools. A look-up the recording cannot answer raises
:class:`~haystack_deep_research.errors.ReplayMissError`, never a network request.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from pathlib import Path
from typing import Any, Literal

from haystack import component, logging
from haystack.dataclasses import ChatMessage
from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError, field_validator

import haystack_deep_research._untrusted.json_text as _safe_json
from haystack_deep_research import _checks
from haystack_deep_research._serialization import InitSerialized
from haystack_deep_research._untrusted.files import open_appending, read_regular_file, write_all
from haystack_deep_research.errors import ConfigurationError, RecordingError, ReplayMissError
from haystack_deep_research.evidence.text import clean_text
from haystack_deep_research.run._cache import CacheStore, check_cache, check_kind, folder
from haystack_deep_research.run._phases import model_name

__all__ = [
    "Recording",
    "RecordingChatGenerator",
    "RecordingManifest",
    "ReplayChatGenerator",
    "prompt_key",
    "read_manifest",
]


logger = logging.getLogger(__name__)

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
        :param kind: One of the cache kinds.
        :param key: The entry's key.
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
        """
        Recording: record the entry and store it in the wrapped cache. Replaying: nothing.

        :param kind: One of the cache kinds.
        :param key: The entry's key.
        :param value: A JSON-ready value.
        """
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

    def _reply(self, messages: list[ChatMessage]) -> dict[str, Any]:
        reply = ChatMessage.from_dict(self.recording.replayed("model", prompt_key(messages))["reply"])
        return {"replies": [reply]}

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], **kwargs: Any) -> dict[str, list[ChatMessage]]:
        """
        :param messages: The prompt.
        :param kwargs: Ignored (nothing is generated).
        :returns: ``{"replies": [the recorded reply]}``.
        :raises ReplayMissError: If the recording holds no reply for this prompt.
        """
        return self._reply(messages)
