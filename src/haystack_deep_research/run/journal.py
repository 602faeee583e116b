"""
The run journal: what a research run has completed, written to disk as it completes, so a crashed run can resume.

A run directory holds three files:

``journal.jsonl``
    Append-only, one JSON record per line, each flushed and fsynced before the run goes on: ``start`` (the
    question), ``resume`` (each later attempt), ``brief``, one ``note`` per completed sub-topic, and ``end``
    (the exit reason). A crash can at worst leave a torn last line, which is cut off when the journal is opened.
``ledger.json``
    The evidence ledger, replaced atomically (temporary file, fsync, ``os.replace``) after each note.
``report.md``
    The final report, replaced atomically when the run ends.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import arrow

from haystack_deep_research.errors import ConfigurationError, RunDirError
from haystack_deep_research.evidence import EvidenceLedger

JOURNAL_FILE = "journal.jsonl"
LEDGER_FILE = "ledger.json"
REPORT_FILE = "report.md"
JOURNAL_VERSION = 1


def subtopic_key(subtopic: str) -> str:
    """
    The key a sub-topic is matched by when a run resumes: case-folded, whitespace collapsed, end punctuation dropped.

    :param subtopic: The sub-topic text.
    :returns: Its key.
    """
    return " ".join(subtopic.casefold().split()).rstrip(" .;:!?")


def _same_question(a: str, b: str) -> bool:
    return " ".join(a.split()) == " ".join(b.split())


def atomic_write_text(path: Path, text: str) -> None:
    """
    Replace a file's content atomically: a reader sees the old file or the new one, never a mix.

    :param path: The file to write.
    :param text: Its new content.
    :raises OSError: If the file cannot be written.
    """
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
    if os.name == "posix":  # make the rename itself durable
        directory = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)


@dataclass(frozen=True)
class JournaledNote:
    """
    A completed sub-topic as the journal holds it.

    :param subtopic: The sub-topic as it was delegated.
    :param note: The note the writer received.
    :param summary: The researcher's summary inside the note.
    :param partial: Whether the researcher stopped early.
    """

    subtopic: str
    note: str
    summary: str
    partial: bool


class RunJournal:
    """
    The open journal of one run directory. Thread-safe: parallel sub-researchers record their notes at once.

    Create it with :meth:`open`; the run that opened it owns it.

    :param directory: The run directory.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._lock = threading.Lock()
        self._brief: str | None = None
        self._notes: dict[str, JournaledNote] = {}
        self._ledger: list[dict[str, Any]] = []

    def __repr__(self) -> str:
        return f"RunJournal({str(self.directory)!r}, notes={len(self._notes)})"

    @classmethod
    def open(cls, run_dir: Any, question: str) -> RunJournal:
        """
        Open (or start) the journal in ``run_dir`` for ``question``.

        :param run_dir: The run directory, a ``str`` or ``os.PathLike``; created if missing.
        :param question: The run's research question; a journal of another question is refused.
        :returns: The journal, holding what earlier attempts completed.
        :raises RunDirError: If ``run_dir`` is not a usable directory, holds a run of another question, or its
            journal or ledger is not one this library wrote.
        """
        if isinstance(run_dir, bool) or not isinstance(run_dir, str | os.PathLike) or not str(run_dir).strip():
            raise RunDirError(
                "run_dir must be a directory path (a non-empty str or os.PathLike), "
                f"got {type(run_dir).__name__}: {run_dir!r}."
            )
        directory = Path(run_dir).expanduser()
        if directory.exists() and not directory.is_dir():
            raise RunDirError(f"run_dir {str(directory)!r} is a file; pass the path of a directory.")
        journal = cls(directory)
        try:
            directory.mkdir(parents=True, exist_ok=True)
            path = directory / JOURNAL_FILE
            if path.exists() and journal._load(path, question):
                journal._append({"type": "resume"})
            else:
                journal._append({"type": "start", "version": JOURNAL_VERSION, "question": question})
        except OSError as error:
            raise RunDirError(
                f"run_dir {str(directory)!r} cannot be used ({error.strerror or error}); pass a writable directory."
            ) from error
        return journal

    def _load(self, path: Path, question: str) -> bool:
        """Read the journal of an earlier attempt; ``False`` when it holds no whole record (a fresh start)."""
        data = path.read_bytes()
        complete, _, torn = data.rpartition(b"\n")
        if torn:  # a crash in the middle of an append: keep only whole records
            os.truncate(path, len(complete) + 1 if complete else 0)
        lines = complete.split(b"\n") if complete else []
        records = [self._record(path, number, line) for number, line in enumerate(lines, 1)]
        if not records:
            return False
        if records[0].get("type") != "start" or records[0].get("version") != JOURNAL_VERSION:
            raise RunDirError(
                f"{path} is not a journal of this library (version {JOURNAL_VERSION}); pass a new run_dir."
            )
        started = str(records[0].get("question") or "")
        if not _same_question(started, question):
            raise RunDirError(
                f"run_dir {str(self.directory)!r} holds a run of another question ({started!r}); pass the same "
                "question to resume it, or a new run_dir to start a new run."
            )
        for record in records:
            if record.get("type") == "brief" and isinstance(record.get("brief"), str):
                self._brief = record["brief"]
            elif record.get("type") == "note" and isinstance(record.get("note"), str):
                subtopic = str(record.get("subtopic") or "")
                self._notes[subtopic_key(subtopic)] = JournaledNote(
                    subtopic=subtopic,
                    note=record["note"],
                    summary=str(record.get("summary") or ""),
                    partial=bool(record.get("partial")),
                )
        self._ledger = self._read_ledger()
        return True

    @staticmethod
    def _record(path: Path, number: int, line: bytes) -> dict[str, Any]:
        try:
            record = json.loads(line)
        except ValueError as error:
            raise RunDirError(f"{path} line {number} is not a journal record ({error}); pass a new run_dir.") from error
        if not isinstance(record, dict):
            raise RunDirError(f"{path} line {number} is not a journal record; pass a new run_dir.")
        return record

    def _read_ledger(self) -> list[dict[str, Any]]:
        path = self.directory / LEDGER_FILE
        if not path.exists():
            return []
        refused = f"{path} is not an evidence ledger this library wrote"
        try:
            entries = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as error:
            raise RunDirError(f"{refused} ({error}); pass a new run_dir.") from error
        if not isinstance(entries, list) or not all(isinstance(entry, dict) for entry in entries):
            raise RunDirError(f"{refused} (not a list of entries); pass a new run_dir.")
        try:
            EvidenceLedger.from_list(entries)
        except ConfigurationError as error:
            raise RunDirError(f"{refused} ({error}); pass a new run_dir.") from error
        return entries

    def _append(self, record: dict[str, Any]) -> None:
        line = json.dumps({**record, "at": arrow.utcnow().isoformat()}, ensure_ascii=False)
        with self._lock, open(self.directory / JOURNAL_FILE, "a", encoding="utf-8") as file:
            file.write(line + "\n")
            file.flush()
            os.fsync(file.fileno())

    @property
    def brief(self) -> str | None:
        """The brief an earlier attempt wrote, or ``None``."""
        with self._lock:
            return self._brief

    def notes(self) -> list[JournaledNote]:
        """
        :returns: The completed sub-topics, in the order they completed.
        """
        with self._lock:
            return list(self._notes.values())

    def find_note(self, subtopic: str) -> JournaledNote | None:
        """
        :param subtopic: A sub-topic the orchestrator delegates.
        :returns: Its journaled note when one with the same key completed before, else ``None``.
        """
        with self._lock:
            return self._notes.get(subtopic_key(subtopic))

    def ledger(self) -> EvidenceLedger:
        """
        :returns: A new evidence ledger holding the sources the journal's last snapshot recorded.
        """
        with self._lock:
            return EvidenceLedger.from_list(self._ledger)

    def record_brief(self, brief: str) -> None:
        """
        Journal the brief, unless it is the one already journaled.

        :param brief: The brief.
        :raises OSError: If the journal cannot be written.
        """
        if brief == self.brief:
            return
        self._append({"type": "brief", "brief": brief})
        with self._lock:
            self._brief = brief

    def record_note(self, *, subtopic: str, note: str, summary: str, partial: bool, ledger: EvidenceLedger) -> None:
        """
        Journal a completed sub-topic, then snapshot the ledger.

        :param subtopic: The sub-topic as delegated.
        :param note: Its note.
        :param summary: The researcher's summary.
        :param partial: Whether the researcher stopped early.
        :param ledger: The run's ledger, snapshotted after the note.
        :raises OSError: If the journal or the snapshot cannot be written.
        """
        record = {"type": "note", "subtopic": subtopic, "note": note, "summary": summary, "partial": partial}
        self._append(record)
        with self._lock:
            self._notes[subtopic_key(subtopic)] = JournaledNote(subtopic, note, summary, partial)
        self.snapshot_ledger(ledger)

    def snapshot_ledger(self, ledger: EvidenceLedger) -> None:
        """
        Replace ``ledger.json`` atomically with the ledger's entries.

        :param ledger: The run's ledger.
        :raises OSError: If the snapshot cannot be written.
        """
        entries = ledger.to_list()
        with self._lock:
            atomic_write_text(self.directory / LEDGER_FILE, json.dumps(entries, ensure_ascii=False))
            self._ledger = entries

    def record_end(self, *, report: str, exit_reason: str | None, ledger: EvidenceLedger) -> None:
        """
        Write the final ledger and report atomically, then journal the end of the attempt.

        :param report: The report.
        :param exit_reason: The run's exit reason.
        :param ledger: The run's ledger.
        :raises OSError: If a file cannot be written.
        """
        self.snapshot_ledger(ledger)
        atomic_write_text(self.directory / REPORT_FILE, report)
        self._append({"type": "end", "exit_reason": exit_reason})
