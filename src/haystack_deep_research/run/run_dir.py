"""
The run directory on disk: its path checked, and its files written so that a crash or a failed write never leaves
them half-written.

- :func:`check_run_dir` refuses a path no file system accepts (a NUL character, too long) with a ``RunDirError``
  saying what to change, not the ``ValueError`` or ``OSError`` ``pathlib`` raises.
- :class:`JournalFile` is an append-only file of JSON records, one per line. Each append is all or nothing: the line
  is written, flushed and fsynced, and when that fails part-way (a full disk, a quota, an I/O error) the file is cut
  back to its last complete record before the error propagates, so no later record is ever glued onto half a line.
  (Should even the cut fail, the next append makes it first.) Reading cuts off a torn last line (a crash in the
  middle of an append) and survives a torn line in the middle (a half-written record with a complete one glued on,
  as an earlier version of this library could leave after a full disk): the torn part is dropped and the record
  glued onto it kept.

The journal is opened, read and cut through :mod:`haystack_deep_research._untrusted.files`: only a regular file, never
through a symbolic link, never blocking on a FIFO standing at its path. Every text written passes
:func:`~haystack_deep_research.evidence.clean_text`, so text that cannot be encoded as UTF-8 (a lone surrogate from a
web page) never makes a write fail.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
from pathlib import Path
from typing import Any

from haystack import logging

import haystack_deep_research._untrusted.json_text as _safe_json
from haystack_deep_research._untrusted.files import cut_torn_line, open_appending, sync_directory
from haystack_deep_research.errors import RunDirError
from haystack_deep_research.evidence.text import clean_text

__all__ = ["JournalFile", "check_run_dir", "shown", "unusable"]

logger = logging.getLogger(__name__)

MAX_JOURNAL_BYTES = 1 << 30
"""The largest journal read back; a larger one is refused (pass a new run directory)."""

_RECORD_START = b'{"type": '
"""How every record line starts (``json.dumps`` of a dict whose first key is ``type``)."""


def shown(path: str) -> str:
    """:returns: ``path`` quoted, shortened in the middle when it is long."""
    return repr(path if len(path) <= 120 else f"{path[:60]}...{path[-40:]}")


def check_run_dir(run_dir: Any) -> Path:
    """
    Check a run directory's path, looking at the file system but changing nothing.

    :param run_dir: The run directory as the caller gave it.
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
    """
    :param directory: A run directory.
    :param error: Why it could not be used.
    :returns: The error to raise, saying what to change.
    """
    if error.errno == errno.ENAMETOOLONG:
        return RunDirError(
            f"run_dir {shown(str(directory))} is too long for the file system ({error.strerror}); pass a shorter path."
        )
    return RunDirError(
        f"run_dir {shown(str(directory))} cannot be used ({error.strerror or error}); pass a writable directory."
    )


class JournalFile:
    """
    An append-only file of JSON records, one per line, each append all or nothing (see the module docstring).

    Not thread-safe and for one writer: the caller serializes appends and holds the run directory's lock.

    :param path: The file.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._size: int | None = None  # the length of the complete records, once known

    def __repr__(self) -> str:
        return f"JournalFile({str(self.path)!r})"

    def read(self) -> list[dict[str, Any]]:
        """
        Read every complete record, cutting a torn last line off the file.

        :returns: The records, in order; ``[]`` when the file does not exist or holds no complete record.
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
        """
        Append one record as one line, durably; on failure the file keeps exactly its earlier records.

        :param record: The record; its first key should be ``type``.
        :raises OSError: If the record cannot be written (the file is then cut back to its earlier records).
        """
        data = (clean_text(json.dumps(record, ensure_ascii=False)) + "\n").encode("utf-8")
        created = not self.path.exists()
        handle = open_appending(self.path)
        try:
            start = os.fstat(handle).st_size
            if self._size is not None and start > self._size:  # an earlier failed append could not be cut back
                os.ftruncate(handle, self._size)
                start = self._size
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(handle, view) :]
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
