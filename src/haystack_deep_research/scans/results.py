"""
Where a scan's rows go: an append-only JSONL file, one line per finished item flushed at once, read back when a scan
starts (a line a crash cut short is cut off, and its item researched again), locked for one scan at a time, and
exported to CSV. Items whose every attempt failed go to ``<stem>.failures.jsonl`` beside it, with their
``exit_reason`` and what their run gathered (``partial``). See docs/scans.md.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout
from haystack import logging

import haystack_deep_research._untrusted.json_text as _safe_json
from haystack_deep_research._untrusted.files import cut_torn_line, open_appending, spreadsheet_cell, write_file
from haystack_deep_research.errors import ConfigurationError, LocalFileRefusedError, ScanInUseError
from haystack_deep_research.evidence.text import clean_text
from haystack_deep_research.scans.items import ItemRef, KnowledgeRow

__all__ = ["MAX_RESULTS_BYTES", "ResultsFile", "write_csv"]

logger = logging.getLogger(__name__)

MAX_RESULTS_BYTES = 1 << 30
"""The largest results (or failures) file read back; a larger one is refused."""


def _append(path: Path, record: dict[str, Any]) -> None:
    line = clean_text(json.dumps(record, ensure_ascii=False, allow_nan=False)) + "\n"  # always encodable as UTF-8
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        handle = open_appending(path)
    except LocalFileRefusedError as error:
        raise _refused(path, error) from error
    try:
        view = memoryview(line.encode("utf-8"))
        while view:
            view = view[os.write(handle, view) :]
        os.fsync(handle)
    finally:
        os.close(handle)


def _refused(path: Path, error: LocalFileRefusedError) -> ConfigurationError:
    why = str(error).partition(" was not ")[2] or str(error)
    return ConfigurationError(f"the results file {path} cannot be used (not {why}); name a regular file.")


def _records(path: Path) -> list[tuple[int, Any]]:
    """
    Each complete, non-blank line's number and its JSON value (the ``ValueError`` when it is not JSON); a torn last
    line is cut off the file, a line not UTF-8 or too deeply nested is skipped with a warning.
    """
    try:
        raw = cut_torn_line(path, max_bytes=MAX_RESULTS_BYTES)
    except FileNotFoundError:
        return []
    except LocalFileRefusedError as error:  # a link, a FIFO, a device: refused before anything is read or cut
        raise _refused(path, error) from error
    records: list[tuple[int, Any]] = []
    for number, line in enumerate(raw.split(b"\n")[:-1], 1):
        try:
            text = line.decode("utf-8")
            if text.strip():
                records.append((number, _safe_json.loads(text)))
        except (UnicodeDecodeError, _safe_json.JSONTooDeepError) as error:
            logger.warning(
                "{path} line {number} is damaged ({error}); it was skipped, so its item is researched again.",
                path=str(path),
                number=number,
                error=str(error),
            )
        except ValueError as error:  # not JSON: the reader says so
            records.append((number, error))
    return records


class ResultsFile:
    """
    The results of a scan on disk (see the module docstring).

    :param path: The JSONL file of rows; created with its folder when the first row is written.
    :raises ConfigurationError: If the path is a folder or its lines are not this file's records.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if self.path.is_dir():
            raise ConfigurationError(f"the results file {self.path} is a folder; name a file such as rows.jsonl.")
        self.failures_path = self.path.with_name(f"{self.path.stem}.failures{self.path.suffix or '.jsonl'}")
        self.lock_path = self.path.with_name(f"{self.path.name}.lock")
        self._lock = FileLock(self.lock_path, thread_local=False)

    def lock(self) -> None:
        """
        Take the results file's lock for one scan (released by :meth:`unlock`).

        :raises ScanInUseError: If another scan, in this process or another, holds it.
        :raises ConfigurationError: If the lock file cannot be created.
        """
        in_use = ScanInUseError(
            f"the results file {self.path} is in use by another scan (its {self.lock_path.name} is locked); "
            "wait for that scan to end, or pass another results file."
        )
        if self._lock.is_locked:  # a second scan given this same ResultsFile: the lock itself is re-entrant
            raise in_use
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._lock.acquire(timeout=0)
        except Timeout:
            raise in_use from None
        except OSError as error:
            raise ConfigurationError(f"cannot lock the results file {self.path}: {error}") from error

    def unlock(self) -> None:
        """Release the lock :meth:`lock` took."""
        self._lock.release()

    def rows(self) -> list[tuple[ItemRef, KnowledgeRow]]:
        """The finished items and their rows, in the order written; a line of no record is a ``ConfigurationError``."""
        found = []
        for number, record in _records(self.path):
            try:
                if isinstance(record, ValueError):
                    raise record
                found.append((ItemRef.from_dict(record["item"]), KnowledgeRow.from_dict(record)))
            except (ValueError, KeyError, TypeError) as error:
                raise ConfigurationError(
                    f"{self.path} line {number} is not a row of a scan ({error}); name a new results file."
                ) from error
        return found

    def add_row(self, ref: ItemRef, row: KnowledgeRow) -> None:
        """Append one finished item's row and flush it to disk."""
        _append(self.path, {"item": ref.to_dict(), **row.to_dict()})

    def add_failure(
        self,
        ref: ItemRef,
        error: str,
        attempts: int,
        *,
        exit_reason: str | None = None,
        partial: dict[str, Any] | None = None,
    ) -> None:
        """Append one failed item (its last error, the attempts made, its run's ``exit_reason`` and ``partial``)."""
        known = {
            key: value for key, value in {"exit_reason": exit_reason, "partial": partial}.items() if value is not None
        }
        _append(self.failures_path, {"item": ref.to_dict(), "error": error, "attempts": attempts, **known})

    def failures(self) -> list[dict[str, Any]]:
        """:returns: Every failure recorded so far (``item``, ``error``, ``attempts``), oldest first."""
        found = []
        for _, record in _records(self.failures_path):
            if isinstance(record, dict):
                found.append(record)
            else:
                logger.warning(
                    "{path} holds a line that is not a failure record; it was skipped.", path=str(self.failures_path)
                )
        return found


def _cell(value: Any) -> Any:
    """:returns: A cell's value as written to CSV: a list or dict as JSON, text through :func:`spreadsheet_cell`."""
    return spreadsheet_cell(json.dumps(value, ensure_ascii=False) if isinstance(value, list | dict) else value)


def write_csv(rows: Iterable[KnowledgeRow], path: str | Path) -> Path:
    """
    Write rows as CSV: an ``id`` column, then one column per data field in first-seen order; lists and dicts as JSON,
    every cell that a spreadsheet would take for a formula neutralised (see :func:`_cell`).

    :param rows: The rows.
    :param path: The CSV file, written as a path the user named (see :func:`write_file`).
    :returns: The path.
    :raises LocalFileRefusedError: The path holds a folder, a socket or a block device.
    """
    rows = list(rows)
    columns = list(dict.fromkeys(key for row in rows for key in row.data))
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    table = io.StringIO(newline="")
    writer = csv.writer(table)
    writer.writerow([_cell(column) for column in ["id", *columns]])
    for row in rows:
        writer.writerow([_cell(row.id), *(_cell(row.data.get(column)) for column in columns)])
    write_file(target, table.getvalue(), named=True)
    return target
