"""
The run journal: what a research run has completed, written to disk as it completes, so a crashed run can resume.

A run directory holds:

``journal.jsonl``
    Append-only, one JSON record per line, each written, flushed and fsynced before the run goes on, all or nothing
    (see :mod:`.run_dir`): ``start`` (the question), ``resume`` (each later attempt), ``brief``, one ``decision``
    per sub-topic a person reviewed (``approve_plan``), one ``note`` per completed sub-topic and ``end`` (the exit
    reason). A ``note`` record holds the note **and its evidence**: the
    ledger entries added or changed since the previous record, so a note is never journaled without the sources it
    was written from. Resuming restores the ledger from these records alone.
``ledger.json``, ``report.md``
    The evidence ledger and the report at the end of an attempt, each replaced atomically: copies for reading.
``run.lock``
    Locked (an OS file lock) by the run using the directory, from the moment it opens the journal until it closes
    it, also when the run fails; a second run on the same directory is refused with :class:`RunDirInUseError`.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from haystack_deep_research._untrusted.files import write_file
from haystack_deep_research.errors import RunDirError, RunDirInUseError
from haystack_deep_research.evidence import EvidenceLedger
from haystack_deep_research.run.journal_records import (
    DECISION_FIELDS,
    JournaledDecision,
    JournaledNote,
    subtopic_key,
)
from haystack_deep_research.run.journal_restore import JOURNAL_VERSION, restore_records
from haystack_deep_research.run.journal_seal import seal
from haystack_deep_research.run.run_dir import JournalFile, check_run_dir, shown, unusable

__all__ = [
    "JOURNAL_FILE",
    "LEDGER_FILE",
    "LOCK_FILE",
    "REPORT_FILE",
    "JournaledDecision",
    "JournaledNote",
    "RunJournal",
    "subtopic_key",
]

JOURNAL_FILE = "journal.jsonl"
LEDGER_FILE = "ledger.json"
REPORT_FILE = "report.md"
LOCK_FILE = "run.lock"


class RunJournal:
    """
    The open journal of one run directory. Thread-safe: parallel sub-researchers record their notes at once.

    Create it with :meth:`open`; the run that opened it owns it (and the directory's lock) until :meth:`close`.

    :param directory: The run directory.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._file = JournalFile(directory / JOURNAL_FILE)
        from filelock import FileLock  # imported when a run directory is first used

        self._dir_lock = FileLock(directory / LOCK_FILE, thread_local=False)
        self._lock = threading.Lock()
        self._closed = False
        self._brief: str | None = None
        self._notes: dict[str, JournaledNote] = {}
        self._decisions: dict[str, JournaledDecision] = {}
        self._journaled: dict[str, dict[str, Any]] = {}  # ledger entries as journaled, by id, in order first seen

    def __repr__(self) -> str:
        return f"RunJournal({str(self.directory)!r}, notes={len(self._notes)})"

    @classmethod
    def open(cls, run_dir: Any, question: str) -> RunJournal:
        """
        Open (or start) the journal in ``run_dir`` for ``question``, locking the directory.

        :param run_dir: The run directory, a ``str`` or ``os.PathLike``; created if missing.
        :param question: The run's research question; a journal of another question is refused.
        :returns: The journal, holding what earlier attempts completed.
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
            if journal._load(question):
                journal._append({"type": "resume"})
            else:
                journal._append({"type": "start", "version": JOURNAL_VERSION, "question": question})
        except OSError as error:
            journal.close()
            raise unusable(directory, error) from error
        except BaseException:
            journal.close()
            raise
        return journal

    def _load(self, question: str) -> bool:
        """Read the journal of an earlier attempt; ``False`` when it holds no whole record (a fresh start)."""
        records = self._file.read()
        if not records:
            return False
        restored = restore_records(records, path=self._file.path, directory=self.directory, question=question)
        self._brief, self._notes, self._decisions = restored.brief, restored.notes, restored.decisions
        self._journaled = restored.sources
        return True

    def _append(self, record: dict[str, Any]) -> None:
        with self._lock:
            self._append_locked(record)

    def _append_locked(self, record: dict[str, Any]) -> None:
        if self._closed:
            raise RunDirError(f"the journal of run_dir {str(self.directory)!r} is closed; its run has ended.")
        self._file.append(record)

    def _changed_sources(self, ledger: EvidenceLedger) -> list[dict[str, Any]]:
        """The ledger entries not journaled yet, or changed since (call with the lock held)."""
        return [entry for entry in ledger.to_list() if self._journaled.get(entry["id"]) != entry]

    def _append_with_sources(self, record: dict[str, Any], ledger: EvidenceLedger) -> None:
        with self._lock:
            sources = self._changed_sources(ledger)
            self._append_locked({**record, "sources": [seal(entry) for entry in sources]})
            self._journaled.update((entry["id"], entry) for entry in sources)

    @property
    def brief(self) -> str | None:
        """The brief an earlier attempt wrote, or ``None``."""
        with self._lock:
            return self._brief

    def notes(self) -> list[JournaledNote]:
        """
        :returns: The completed sub-topics, in the order they were delegated (whatever order they completed in).
        """
        with self._lock:
            notes = list(self._notes.values())
        return sorted(notes, key=lambda n: (n.position is None, n.position or 0))

    def find_note(self, subtopic: str) -> JournaledNote | None:
        """
        :param subtopic: A sub-topic the orchestrator delegates.
        :returns: Its journaled note when one with the same key completed before, else ``None``.
        """
        with self._lock:
            return self._notes.get(subtopic_key(subtopic))

    def find_decision(self, subtopic: str) -> JournaledDecision | None:
        """
        :param subtopic: A sub-topic the orchestrator plans.
        :returns: The person's journaled review of a sub-topic with the same key, else ``None``.
        """
        with self._lock:
            return self._decisions.get(subtopic_key(subtopic))

    def record_decision(self, decision: JournaledDecision) -> None:
        """
        Journal a person's review of a planned sub-topic.

        :param decision: The review.
        :raises OSError: If the journal cannot be written; nothing of the record is then on disk, so a resumed run
            asks about the sub-topic again.
        """
        record = {"type": "decision", **{name: getattr(decision, name) for name in DECISION_FIELDS}}
        self._append(record)
        with self._lock:
            self._decisions[subtopic_key(decision.subtopic)] = decision

    def ledger(self) -> EvidenceLedger:
        """
        :returns: A new evidence ledger holding every source the journal's records hold.
        """
        with self._lock:
            return EvidenceLedger.from_list(self._journaled.values())

    def record_brief(self, brief: str) -> None:
        """
        Journal the brief, unless it is the one already journaled.

        :param brief: The brief.
        :raises OSError: If the journal cannot be written; nothing of the record is then on disk.
        """
        if brief == self.brief:
            return
        self._append({"type": "brief", "brief": brief})
        with self._lock:
            self._brief = brief

    def record_note(
        self,
        *,
        subtopic: str,
        note: str,
        summary: str,
        partial: bool,
        ledger: EvidenceLedger,
        position: int | None = None,
    ) -> None:
        """
        Journal a completed sub-topic together with its evidence, as one record.

        :param subtopic: The sub-topic as delegated.
        :param note: Its note.
        :param summary: The researcher's summary.
        :param partial: Whether the researcher stopped early.
        :param ledger: The run's ledger; its entries not journaled yet go into the record.
        :param position: Its place among the run's notes (the order of delegation), or ``None``.
        :raises OSError: If the journal cannot be written; nothing of the record is then on disk, so a resumed run
            researches the sub-topic again.
        """
        record = {"type": "note", "subtopic": subtopic, "note": note, "summary": summary, "partial": partial}
        if position is not None:
            record["position"] = position
        self._append_with_sources(record, ledger)
        with self._lock:
            self._notes[subtopic_key(subtopic)] = JournaledNote(subtopic, note, summary, partial, position)

    def record_end(self, *, exit_reason: str | None, ledger: EvidenceLedger) -> None:
        """
        Journal the end of the attempt, with the ledger entries not journaled yet.

        :param exit_reason: The run's exit reason.
        :param ledger: The run's ledger.
        :raises OSError: If the journal cannot be written.
        """
        self._append_with_sources({"type": "end", "exit_reason": exit_reason}, ledger)

    def write_ledger(self, ledger: EvidenceLedger) -> None:
        """
        Replace ``ledger.json`` atomically with the ledger's entries.

        :param ledger: The run's ledger.
        :raises OSError: If the file cannot be written.
        """
        write_file(self.directory / LEDGER_FILE, json.dumps(ledger.to_list(), ensure_ascii=False))

    def write_report(self, report: str) -> None:
        """
        Replace ``report.md`` atomically.

        :param report: The report.
        :raises OSError: If the file cannot be written.
        """
        write_file(self.directory / REPORT_FILE, report)

    @property
    def closed(self) -> bool:
        """Whether the journal is closed (and the directory's lock released)."""
        with self._lock:
            return self._closed

    def close(self) -> None:
        """Release the run directory's lock; nothing more is journaled. Closing again does nothing."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._dir_lock.release(force=True)
