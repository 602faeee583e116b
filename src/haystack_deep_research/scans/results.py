"""
Where a scan's rows go: an append-only JSONL file, read back when a scan starts so finished items are not researched
again, and exported to CSV.

Each finished item is one line ``{"item": {...}, "id": ..., "data": {...}}``, appended (and flushed to disk) the
moment the item is done, in the order items finish. Items whose every attempt failed go, one line each with the
error, to a second file next to it (``rows.failures.jsonl`` beside ``rows.jsonl``); they are not finished, so the
next scan tries them again; a failed item's line keeps its ``exit_reason`` and what its run did gather (``partial``),
so paid research is not thrown away. A crash can cut the last line short: reading back drops such a line (and cuts it
off the file before anything is appended), so its item is researched again.

One scan at a time writes a results file: :meth:`ResultsFile.lock` takes a lock file beside it (``rows.jsonl.lock``)
for the whole scan, and a second scan of the same file is refused with :class:`ScanInUseError` at once, before it
researches anything.
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


def _whole_lines(path: Path) -> list[str]:
    """
    The file's complete lines; a last line cut short by a crash is cut off the file. A line that is not UTF-8 or is
    nested deeper than any record (a damaged line) is skipped with a warning, so its item is researched again.
    """
    try:
        raw = cut_torn_line(path, max_bytes=MAX_RESULTS_BYTES)
    except FileNotFoundError:
        return []
    except LocalFileRefusedError as error:  # a link, a FIFO, a device: refused before anything is read or cut
        raise _refused(path, error) from error
    lines = []
    for number, line in enumerate(raw.split(b"\n")[:-1], 1):
        try:
            text = line.decode("utf-8")
            if text.strip():
                _safe_json.loads(text)
        except (UnicodeDecodeError, _safe_json.JSONTooDeepError) as error:
            logger.warning(
                "{path} line {number} is damaged ({error}); it was skipped, so its item is researched again.",
                path=str(path),
                number=number,
                error=str(error),
            )
            continue
        except ValueError:
            pass  # not JSON: the reader says so
        lines.append(text)
    return lines


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
        """
        :returns: The finished items and their rows, in the order they were written.
        :raises ConfigurationError: If a line is not a record of this file.
        """
        found = []
        for number, line in enumerate(_whole_lines(self.path), 1):
            if not line.strip():
                continue
            try:
                record = _safe_json.loads(line)
                found.append((ItemRef.from_dict(record["item"]), KnowledgeRow.from_dict(record)))
            except (ValueError, KeyError, TypeError) as error:
                raise ConfigurationError(
                    f"{self.path} line {number} is not a row of a scan ({error}); name a new results file."
                ) from error
        return found

    def add_row(self, ref: ItemRef, row: KnowledgeRow) -> None:
        """
        Append one finished item's row and flush it to disk.

        :param ref: The item.
        :param row: Its row.
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
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
        """
        Append one failed item to the failures file.

        :param ref: The item.
        :param error: Its last error.
        :param attempts: How many attempts were made.
        :param exit_reason: The failing ``exit_reason`` of its last run, when the run returned one.
        :param partial: What the last run gathered (JSON-ready), when it returned.
        """
        self.failures_path.parent.mkdir(parents=True, exist_ok=True)
        record: dict[str, Any] = {"item": ref.to_dict(), "error": error, "attempts": attempts}
        if exit_reason is not None:
            record["exit_reason"] = exit_reason
        if partial is not None:
            record["partial"] = partial
        _append(self.failures_path, record)

    def failures(self) -> list[dict[str, Any]]:
        """:returns: Every failure recorded so far (``item``, ``error``, ``attempts``), oldest first."""
        found = []
        for line in _whole_lines(self.failures_path):
            if line.strip():
                try:
                    found.append(_safe_json.loads(line))
                except ValueError:
                    logger.warning(
                        "{path} holds a line that is not a failure record; it was skipped.",
                        path=str(self.failures_path),
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
    :param path: The CSV file, written as a path the user named (see
        :func:`~haystack_deep_research._untrusted.files.write_file`).
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
