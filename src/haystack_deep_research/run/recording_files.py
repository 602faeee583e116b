"""
The files of a recording directory, appended to while recording, read and validated before anything is replayed
from them.

- ``exchanges.jsonl`` (:func:`append_exchange`, :func:`read_exchanges`): one record per line, ``{"type": str, "key":
  str, "value": {...}}``, each appended whole under a lock per file.
  A torn last line (a recording cut off mid-write) is dropped with a warning; any other line that is not such a
  record (not UTF-8, not JSON, JSON nested too deeply, another shape) refuses the whole recording, since every
  replayed look-up would rest on it.
- ``recording.json`` (:class:`RecordingManifest`): what the ``deep-research`` command recorded besides the
  exchanges: the question and the options the run was made with.

Both refuse a damaged file with :class:`~haystack_deep_research.errors.RecordingError` naming the file and the line
or field.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from haystack import logging
from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError, field_validator

import haystack_deep_research._untrusted.json_text as _safe_json
from haystack_deep_research._untrusted.files import open_appending, read_regular_file
from haystack_deep_research.errors import RecordingError
from haystack_deep_research.evidence.text import clean_text

__all__ = ["RecordedFolder", "RecordingManifest", "append_exchange", "read_exchanges", "read_manifest"]

logger = logging.getLogger(__name__)

MAX_RECORDING_BYTES = 1 << 30
"""The largest recording file read; like every file of a recording it is read only when it is a regular file
(a FIFO or a device there is refused, never opened)."""

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


def _file_lock(path: Path) -> threading.Lock:
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(str(path.resolve()), threading.Lock())


def append_exchange(path: Path, kind: str, key: str, value: dict[str, Any]) -> None:
    """
    Append one exchange to a recording's ``exchanges.jsonl``, creating its directory if needed.

    :param path: The file.
    :param kind: ``"model"`` or one of the cache kinds.
    :param key: What it is matched by.
    :param value: A JSON-ready value.
    :raises OSError: If the file cannot be written.
    """
    line = (clean_text(json.dumps({"type": kind, "key": key, "value": value}, ensure_ascii=False)) + "\n").encode()
    with _file_lock(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = open_appending(path)
        try:
            view = memoryview(line)
            while view:
                view = view[os.write(handle, view) :]
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

    path: str = Field(min_length=1)
    """Its absolute path."""
    fingerprint: str = Field(pattern=r"^[0-9a-f]{64}$")
    """The SHA-256 of its files' names and contents when the run was recorded."""


class RecordingManifest(BaseModel):
    """The content of ``recording.json``."""

    model_config = ConfigDict(extra="ignore")

    question: str = Field(min_length=1)
    """The recorded question."""
    depth: int = Field(default=3, ge=1)
    """The number of rounds the run was allowed."""
    grounding: StrictBool = False
    """Whether the run judged its claims."""
    search: str = "auto"
    """The search engine's name."""
    web: StrictBool = True
    """Whether the run read web pages."""
    docs: list[RecordedFolder] = []
    """The ``--docs`` folders the run searched."""
    search_url: str | None = None
    """The ``--search-url`` of its Tavily-compatible search, if any."""
    allow_hosts: list[str] = []
    """Its ``--allow-host`` entries."""
    include_domains: list[str] = []
    """Its ``--include-domain`` entries."""
    exclude_domains: list[str] = []
    """Its ``--exclude-domain`` entries."""
    since: str | None = None
    """Its ``--since`` date or ``--time-range`` window."""
    models: dict[str, str]
    """The model of each role (``analysis_llm``, ``writer_llm``, ...), by name."""
    prices: dict[str, tuple[float, float]] = {}
    """The ``--price`` of each model the run was given: US dollars per million input and output tokens."""
    style: dict[str, Any] = {}
    """The report's style (``ReportStyle.to_dict()``: type, tone, length, outline, instructions), ``{}`` for the
    default: the writer's prompts hold it, so a replay needs it to find the recorded replies."""

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
