"""
The run journal: what a research run has completed, written to disk as it completes, so a crashed run can resume.
docs/safety.md ("Resuming a run", "Sources restored from a run directory") says what the run directory holds and
promises: ``journal.jsonl`` appended all or nothing (:class:`JournalFile`), read back by :func:`restore_records`, each
read source sealed with an HMAC under a key kept outside the directory (:func:`seal`), and ``run.lock``.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import hmac
import json
import os
import secrets
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from haystack import logging

import haystack_deep_research._untrusted.json_text as _safe_json
from haystack_deep_research._untrusted.files import (
    cut_torn_line,
    open_appending,
    read_regular_file,
    sync_directory,
    write_all,
    write_file,
)
from haystack_deep_research.errors import ConfigurationError, RunDirError, RunDirInUseError
from haystack_deep_research.evidence import EvidenceLedger
from haystack_deep_research.evidence.text import clean_text

logger = logging.getLogger(__name__)

MAX_JOURNAL_BYTES = 1 << 30
"""The largest journal read back; a larger one is refused (pass a new run directory)."""

_RECORD_START = b'{"type": '
"""How every record line starts (``json.dumps`` of a dict whose first key is ``type``)."""


def shown(path: str) -> str:
    """``path`` quoted, shortened in the middle when it is long."""
    return repr(path if len(path) <= 120 else f"{path[:60]}...{path[-40:]}")


def check_run_dir(run_dir: Any) -> Path:
    """
    Check a run directory's path, looking at the file system but changing nothing.

    :returns: The path.
    :raises RunDirError: If it is not a non-empty ``str`` or ``os.PathLike``, holds a NUL character, is too long for
        the file system, names a file, or cannot be looked at.
    """
    path = os.fspath(run_dir) if isinstance(run_dir, str | os.PathLike) and not isinstance(run_dir, bool) else None
    if not isinstance(path, str) or not path.strip():
        raise RunDirError(
            "run_dir must be a directory path (a non-empty str or os.PathLike), "
            f"got {type(run_dir).__name__}: {run_dir!r}."
        )
    if "\x00" in path:
        raise RunDirError(f"run_dir {shown(path)} contains a NUL character, which no file system accepts; remove it.")
    directory = Path(path).expanduser()
    try:
        is_file = directory.exists() and not directory.is_dir()
    except OSError as error:
        raise unusable(directory, error) from error
    if is_file:
        raise RunDirError(f"run_dir {shown(str(directory))} is a file; pass the path of a directory.")
    return directory


def unusable(directory: Path, error: OSError) -> RunDirError:
    """The error to raise, saying what to change."""
    if error.errno == errno.ENAMETOOLONG:
        return RunDirError(
            f"run_dir {shown(str(directory))} is too long for the file system ({error.strerror}); pass a shorter path."
        )
    return RunDirError(
        f"run_dir {shown(str(directory))} cannot be used ({error.strerror or error}); pass a writable directory."
    )


class JournalFile:
    """
    An append-only file of JSON records, one per line, each append all or nothing (docs/safety.md). Not thread-safe and
    for one writer: the caller serializes appends and holds the run directory's lock.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._size: int | None = None  # the length of the complete records, once known

    def __repr__(self) -> str:
        return f"JournalFile({str(self.path)!r})"

    def read(self) -> list[dict[str, Any]]:
        """
        Every complete record, in order, cutting a torn last line off the file.

        :raises RunDirError: If a line is not a record this library wrote.
        :raises OSError: If the file cannot be read or cut.
        """
        try:  # a crash in the middle of an append: only whole records are kept
            complete = cut_torn_line(self.path, max_bytes=MAX_JOURNAL_BYTES)[:-1]
        except FileNotFoundError:
            complete = b""
        self._size = len(complete) + 1 if complete else 0
        records: list[dict[str, Any]] = []
        for number, line in enumerate(complete.split(b"\n") if complete else [], 1):
            if line.strip():
                records.extend(self._parse(number, line))
        return records

    def _parse(self, number: int, line: bytes) -> list[dict[str, Any]]:
        try:
            record = _safe_json.loads(line)
        except _safe_json.JSONTooDeepError:
            logger.warning(
                "{path} line {number} is nested deeper than {depth} levels, which no journal record is; it was "
                "skipped.",
                path=str(self.path),
                number=number,
                depth=_safe_json.MAX_JSON_DEPTH,
            )
            return []
        except ValueError as error:
            if not line.startswith(_RECORD_START):
                raise RunDirError(
                    f"{self.path} line {number} is not a journal record ({error}); pass a new run_dir."
                ) from error
            return self._glued(number, line)
        if not isinstance(record, dict):
            raise RunDirError(f"{self.path} line {number} is not a journal record; pass a new run_dir.")
        return [record]

    def _glued(self, number: int, line: bytes) -> list[dict[str, Any]]:
        """A torn record, possibly with a complete one glued on: keep the complete one."""
        start = line.find(_RECORD_START, 1)
        while start != -1:
            with contextlib.suppress(ValueError):
                record = _safe_json.loads(line[start:])
                if isinstance(record, dict):
                    logger.warning(
                        "{path} line {number} starts with a half-written record; it was dropped and the record "
                        "after it kept.",
                        path=str(self.path),
                        number=number,
                    )
                    return [record]
            start = line.find(_RECORD_START, start + 1)
        logger.warning(
            "{path} line {number} is a half-written record; it was dropped.", path=str(self.path), number=number
        )
        return []

    def append(self, record: dict[str, Any]) -> None:
        """Append one record as one line, durably. :raises OSError: If it cannot (earlier records are kept)."""
        data = (clean_text(json.dumps(record, ensure_ascii=False)) + "\n").encode("utf-8")
        created = not self.path.exists()
        handle = open_appending(self.path)
        try:
            start = os.fstat(handle).st_size
            if self._size is not None and start > self._size:  # an earlier failed append could not be cut back
                os.ftruncate(handle, self._size)
                start = self._size
            try:
                write_all(handle, data)
                os.fsync(handle)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.ftruncate(handle, start)
                raise
            self._size = start + len(data)
        finally:
            os.close(handle)
        if created:
            sync_directory(self.path.parent)


def subtopic_key(subtopic: str) -> str:
    """The key a sub-topic is matched by on resuming: case-folded, whitespace collapsed, end punctuation dropped."""
    return " ".join(subtopic.casefold().split()).rstrip(" .;:!?")


@dataclass(frozen=True)
class JournaledNote:
    """A completed sub-topic as the journal holds it."""

    subtopic: str  # as delegated
    note: str  # what the writer received
    summary: str  # the researcher's, inside the note
    partial: bool  # the researcher stopped early
    position: int | None = None  # its place in the delegated order (None from an older version: the completed order)


@dataclass(frozen=True)
class JournaledDecision:
    """A person's review of one planned sub-topic, as the journal holds it (the fields of ``events.PlanReviewed``)."""

    subtopic: str
    decision: str
    edited_to: str | None = None
    feedback: str | None = None


KEY_ENV = "DEEP_RESEARCH_JOURNAL_KEY_FILE"
"""An environment variable naming another file for the key (tests, or a key shared by the machines of one team)."""

_SEALED_KINDS = ("page", "document", "snippet")
_MAX_KEY_BYTES = 4096
_SEAL = "seal"


def _key() -> bytes:
    if given := os.environ.get(KEY_ENV):
        path = Path(given)
    else:
        path = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "haystack-deep-research/journal.key"
    try:
        with contextlib.suppress(FileNotFoundError):
            return _read_key(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_file(path, secrets.token_bytes(32), exclusive=True)  # made once: a second process reads the first's
        return _read_key(path)
    except OSError as error:  # LocalFileRefusedError included: a FIFO, a device, a file far larger than a key
        raise RunDirError(
            f"the key that seals journaled sources cannot be kept at {path} ({error}); set {KEY_ENV} to a file in a "
            "writable folder."
        ) from error


def _read_key(path: Path) -> bytes:
    """The key, read as a regular file of at most :data:`_MAX_KEY_BYTES` (a link is followed to what it leads to)."""
    key = read_regular_file(path, root=None, max_bytes=_MAX_KEY_BYTES)
    if len(key) < 32:
        raise RunDirError(
            f"the journal key {path} is damaged (shorter than 32 bytes); delete it (sources journaled under it "
            f"are then read again) or set {KEY_ENV} to another file."
        )
    return key


def _mac(entry: dict[str, Any]) -> str:
    body = json.dumps({k: v for k, v in entry.items() if k != _SEAL}, sort_keys=True, ensure_ascii=False)
    return hmac.new(_key(), body.encode("utf-8", "replace"), hashlib.sha256).hexdigest()


def seal(entry: dict[str, Any]) -> dict[str, Any]:
    """The entry, with its seal when it counts as read."""
    return {**entry, _SEAL: _mac(entry)} if entry.get("kind") in _SEALED_KINDS else dict(entry)


def unseal(entry: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """
    The entry without its seal, and whether it was trusted (``False``: its seal does not verify, so it is restored as a
    bare search result, without a snippet: an unsealed text could otherwise become citable when a search names its URL).
    """
    given = entry.get(_SEAL)
    plain = {k: v for k, v in entry.items() if k != _SEAL}
    if plain.get("kind") not in _SEALED_KINDS:
        return {**plain, "snippet": ""} if "snippet" in plain else plain, True
    if isinstance(given, str) and hmac.compare_digest(given, _mac(plain)):
        return plain, True
    bare = {"kind": "search_result", "text": "", "content_hash": "", "summary": "", "snippet": ""}
    return {**plain, **bare}, False


JOURNAL_VERSION = 2


@dataclass
class Restored:
    """What the journal of earlier attempts holds: notes and decisions by :func:`subtopic_key`, sources by id."""

    brief: str | None = None
    notes: dict[str, JournaledNote] = field(default_factory=dict)
    decisions: dict[str, JournaledDecision] = field(default_factory=dict)
    sources: dict[str, dict[str, Any]] = field(default_factory=dict)  # as journaled, in the order first seen


def restore_records(records: list[dict[str, Any]], *, path: Path, directory: Path, question: str) -> Restored:
    """
    :raises RunDirError: If the journal is not one this library wrote, is of another version or another question, or
        holds sources this library did not write.
    """
    first = records[0]
    if first.get("type") != "start" or "version" not in first:
        raise RunDirError(f"{path} is not a journal of this library; pass a new run_dir.")
    if first.get("version") != JOURNAL_VERSION:
        raise RunDirError(
            f"{path} was written by another version of this library (journal version {first.get('version')!r}; "
            f"this one reads version {JOURNAL_VERSION}); pass a new run_dir."
        )
    started = str(first.get("question") or "")
    if " ".join(started.split()) != " ".join(question.split()):
        raise RunDirError(
            f"run_dir {str(directory)!r} holds a run of another question ({started!r}); pass the same "
            "question to resume it, or a new run_dir to start a new run."
        )
    restored, untrusted = Restored(), 0
    for number, record in enumerate(records, 1):
        sources = record.get("sources") or []
        if not isinstance(sources, list) or not all(isinstance(entry, dict) for entry in sources):
            logger.warning(
                "{path} record {number} ({kind}) holds sources that are not a list of entries; it was skipped, "
                "so what it recorded is researched again.",
                path=str(path),
                number=number,
                kind=str(record.get("type")),
            )
            continue
        if record.get("type") == "brief" and isinstance(record.get("brief"), str):
            restored.brief = record["brief"]
        elif record.get("type") == "note" and isinstance(record.get("note"), str):
            subtopic = str(record.get("subtopic") or "")
            restored.notes[subtopic_key(subtopic)] = JournaledNote(
                subtopic=subtopic,
                note=record["note"],
                summary=str(record.get("summary") or ""),
                partial=bool(record.get("partial")),
                position=record["position"] if type(record.get("position")) is int else None,
            )
        elif record.get("type") == "decision" and isinstance(record.get("decision"), str):
            # a field that is not a string is read as missing
            given = ("subtopic", "edited_to", "feedback")
            texts = {name: text for name in given if isinstance(text := record.get(name), str)}
            decided = JournaledDecision(**{"subtopic": "", **texts}, decision=record["decision"])
            restored.decisions[subtopic_key(decided.subtopic)] = decided
        for entry in sources:
            unsealed, trusted = unseal(entry)
            untrusted += not trusted
            restored.sources[str(unsealed.get("id"))] = unsealed
    if untrusted:
        logger.warning(
            "{path} holds {count} read source(s) this library did not journal (their seal does not verify); "
            "they are restored as search results only, so nothing cites them as read.",
            path=str(path),
            count=untrusted,
        )
    try:
        EvidenceLedger.from_list(restored.sources.values())
    except ConfigurationError as error:
        raise RunDirError(f"{path} holds sources this library did not write ({error}); pass a new run_dir.") from error
    return restored


JOURNAL_FILE = "journal.jsonl"
LEDGER_FILE = "ledger.json"
REPORT_FILE = "report.md"
LOCK_FILE = "run.lock"


class RunJournal:
    """
    The open journal of one run directory, made by :meth:`open`; the run that opened it owns it (and the directory's
    lock) until :meth:`close`. Thread-safe: parallel sub-researchers record their notes at once.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._file = JournalFile(directory / JOURNAL_FILE)
        from filelock import FileLock  # imported when a run directory is first used

        self._dir_lock = FileLock(directory / LOCK_FILE, thread_local=False)
        self._lock = threading.Lock()
        self._closed = False
        self._held = Restored()  # what earlier attempts journaled, and what this one journals

    def __repr__(self) -> str:
        return f"RunJournal({str(self.directory)!r}, notes={len(self._held.notes)})"

    @classmethod
    def open(cls, run_dir: Any, question: str) -> RunJournal:
        """
        Open (or start) the journal in ``run_dir`` for ``question``, locking the directory.

        :raises RunDirInUseError: If another run (in this process or another) is using the directory.
        :raises RunDirError: If ``run_dir`` is not a usable directory, holds a run of another question, or its
            journal is not one this library wrote.
        """
        directory = check_run_dir(run_dir)
        journal = cls(directory)
        from filelock import Timeout

        try:
            directory.mkdir(parents=True, exist_ok=True)
            journal._dir_lock.acquire(timeout=0)
        except Timeout:
            raise RunDirInUseError(
                f"run_dir {shown(str(directory))} is in use by another run (its {LOCK_FILE} is locked); wait for "
                "that run to end, or pass another run_dir."
            ) from None
        except OSError as error:
            raise unusable(directory, error) from error
        try:
            resumed = journal._load(question)
            journal._append(
                {"type": "resume"} if resumed else {"type": "start", "version": JOURNAL_VERSION, "question": question}
            )
        except BaseException as error:
            journal.close()
            if isinstance(error, OSError):
                raise unusable(directory, error) from error
            raise
        return journal

    def _load(self, question: str) -> bool:
        """``False`` when the journal holds no whole record (a fresh start)."""
        records = self._file.read()
        if not records:
            return False
        self._held = restore_records(records, path=self._file.path, directory=self.directory, question=question)
        return True

    def _append(self, record: dict[str, Any], ledger: EvidenceLedger | None = None) -> None:
        """Append a record; with a ledger, with the entries not journaled yet or changed since."""
        with self._lock:
            if self._closed:
                raise RunDirError(f"the journal of run_dir {str(self.directory)!r} is closed; its run has ended.")
            if ledger is None:
                self._file.append(record)
                return
            sources = [entry for entry in ledger.to_list() if self._held.sources.get(entry["id"]) != entry]
            self._file.append({**record, "sources": [seal(entry) for entry in sources]})
            self._held.sources.update((entry["id"], entry) for entry in sources)

    @property
    def brief(self) -> str | None:
        """The brief an earlier attempt wrote, or ``None``."""
        with self._lock:
            return self._held.brief

    def notes(self) -> list[JournaledNote]:
        """The completed sub-topics, in the order they were delegated (whatever order they completed in)."""
        with self._lock:
            notes = list(self._held.notes.values())
        return sorted(notes, key=lambda n: (n.position is None, n.position or 0))

    def find_note(self, subtopic: str) -> JournaledNote | None:
        """Its journaled note when one with the same key completed before, else ``None``."""
        with self._lock:
            return self._held.notes.get(subtopic_key(subtopic))

    def find_decision(self, subtopic: str) -> JournaledDecision | None:
        """The person's journaled review of a sub-topic with the same key, else ``None``."""
        with self._lock:
            return self._held.decisions.get(subtopic_key(subtopic))

    def record_decision(self, decision: JournaledDecision) -> None:
        """:raises OSError: If the journal cannot be written (a resumed run then asks about the sub-topic again)."""
        self._append({"type": "decision", **asdict(decision)})
        with self._lock:
            self._held.decisions[subtopic_key(decision.subtopic)] = decision

    def ledger(self) -> EvidenceLedger:
        """A new evidence ledger holding every source the journal's records hold."""
        with self._lock:
            return EvidenceLedger.from_list(self._held.sources.values())

    def record_brief(self, brief: str) -> None:
        """Journal the brief, unless it is the one already journaled. :raises OSError: If it cannot."""
        if brief == self.brief:
            return
        self._append({"type": "brief", "brief": brief})
        with self._lock:
            self._held.brief = brief

    def record_note(self, note: JournaledNote, ledger: EvidenceLedger) -> None:
        """
        Journal a completed sub-topic together with its evidence, as one record.

        :raises OSError: If the journal cannot be written (a resumed run then researches the sub-topic again).
        """
        record = {"type": "note", **asdict(note)}
        if note.position is None:
            del record["position"]
        self._append(record, ledger)
        with self._lock:
            self._held.notes[subtopic_key(note.subtopic)] = note

    def record_end(self, *, exit_reason: str | None, ledger: EvidenceLedger) -> None:
        """Journal the end of the attempt, with the ledger entries not journaled yet (``OSError`` if it cannot)."""
        self._append({"type": "end", "exit_reason": exit_reason}, ledger)

    def write_ledger(self, ledger: EvidenceLedger) -> None:
        """Replace ``ledger.json`` atomically with the ledger's entries (``OSError`` if it cannot)."""
        write_file(self.directory / LEDGER_FILE, json.dumps(ledger.to_list(), ensure_ascii=False))

    def write_report(self, report: str) -> None:
        """Replace ``report.md`` atomically (``OSError`` if it cannot)."""
        write_file(self.directory / REPORT_FILE, report)

    def close(self) -> None:
        """Release the run directory's lock; nothing more is journaled. Closing again does nothing."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._dir_lock.release(force=True)
