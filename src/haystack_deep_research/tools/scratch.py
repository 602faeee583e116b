"""
Where the deep agent's filesystem tools keep their files: an in-memory space (the default, one per run) or a
directory on disk, confined to its root. What each refuses, always as a
:class:`~haystack_deep_research.errors.ScratchSpaceError` the model reads: docs/deep-agent.md and docs/safety.md.
"""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path, PurePosixPath
from typing import Any, Protocol, runtime_checkable

from haystack_deep_research import _checks
from haystack_deep_research._prompts import (
    SCRATCH_ABSOLUTE,
    SCRATCH_BINARY,
    SCRATCH_ESCAPE,
    SCRATCH_HARD_LINK,
    SCRATCH_LINK,
    SCRATCH_NOT_FOUND,
    SCRATCH_TOO_LARGE,
    SCRATCH_TOO_MANY,
    SCRATCH_UNREADABLE,
    render_text,
)
from haystack_deep_research._serialization import Tagged
from haystack_deep_research._untrusted.files import read_regular_file, write_file
from haystack_deep_research.errors import ConfigurationError, ScratchSpaceError

__all__ = ["DiskBackend", "MemoryBackend", "ScratchBackend", "scratch_path"]

DEFAULT_MAX_FILE_CHARS = 200_000
DEFAULT_MAX_FILES = 1_000


def scratch_path(path: Any) -> str:
    """A model's path as relative POSIX segments joined by ``/`` (``""`` for the root); absolute or ``..``: refused."""
    text = str(path if path is not None else "").strip().replace("\\", "/")
    if text.startswith("/") or (len(text) > 1 and text[1] == ":"):
        raise ScratchSpaceError(render_text(SCRATCH_ABSOLUTE, path=text))
    parts = [part for part in PurePosixPath(text).parts if part not in ("", ".")]
    if ".." in parts:
        raise ScratchSpaceError(render_text(SCRATCH_ESCAPE, path=text))
    return "/".join(parts)


@runtime_checkable
class ScratchBackend(Protocol):
    """What the filesystem tools need from a backend."""

    def read(self, path: str) -> str:
        """:returns: The text of the file at ``path``. :raises ScratchSpaceError: If there is none."""
        ...

    def write(self, path: str, text: str) -> None:
        """Write (create or replace) the file at ``path``."""
        ...

    def files(self) -> list[str]:
        """:returns: Every file's path, sorted."""
        ...

    def to_dict(self) -> dict[str, Any]:
        """:returns: The backend's serialized settings."""
        ...


class _Limits(Tagged):
    def __init__(self, max_file_chars: int, max_files: int) -> None:
        self.max_file_chars = _checks.int_in_range("max_file_chars", max_file_chars, 1, 100_000_000)
        self.max_files = _checks.int_in_range("max_files", max_files, 1, 1_000_000)

    def check(self, path: str, text: str, existing: int, exists: bool) -> None:
        if len(text) > self.max_file_chars:
            raise ScratchSpaceError(
                render_text(SCRATCH_TOO_LARGE, path=path, chars=len(text), limit=self.max_file_chars)
            )
        if not exists and existing >= self.max_files:
            raise ScratchSpaceError(render_text(SCRATCH_TOO_MANY, limit=self.max_files))


class MemoryBackend(_Limits):
    """
    Files held in memory, gone when the run ends (each run of a deep agent gets a fresh one). It serializes its
    settings, never its files.

    :param max_file_chars: The largest file, in characters.
    :param max_files: The most files.
    :raises ConfigurationError: If a limit is out of range.
    """

    tag = "memory"

    def __init__(self, *, max_file_chars: int = DEFAULT_MAX_FILE_CHARS, max_files: int = DEFAULT_MAX_FILES) -> None:
        super().__init__(max_file_chars, max_files)
        self._files: dict[str, str] = {}
        self._lock = threading.Lock()

    def read(self, path: str) -> str:
        """:returns: The file's text. :raises ScratchSpaceError: If there is no such file."""
        with self._lock:
            if path not in self._files:
                raise ScratchSpaceError(render_text(SCRATCH_NOT_FOUND, path=path))
            return self._files[path]

    def write(self, path: str, text: str) -> None:
        """Create or replace a file. :raises ScratchSpaceError: If a limit is exceeded."""
        with self._lock:
            self.check(path, text, len(self._files), path in self._files)
            self._files[path] = text

    def files(self) -> list[str]:
        """:returns: Every file's path, sorted."""
        with self._lock:
            return sorted(self._files)


class DiskBackend(_Limits):
    """
    Files in a directory on disk, confined to it.

    :param root: The directory; created on first write.
    :param max_file_chars: The largest file, in characters.
    :param max_files: The most files under the root.
    :raises ConfigurationError: If ``root`` exists and is not a directory, or a limit is out of range.
    """

    tag = "disk"

    def __init__(
        self, *, root: str | Path, max_file_chars: int = DEFAULT_MAX_FILE_CHARS, max_files: int = DEFAULT_MAX_FILES
    ) -> None:
        super().__init__(max_file_chars, max_files)
        self.root = Path(root).expanduser().absolute()
        if self.root.exists() and not self.root.is_dir():
            raise ConfigurationError(f"root must be a directory; {self.root} is a file. Pass a directory path.")
        self._lock = threading.Lock()

    def _target(self, path: str) -> Path:
        target = self.root
        for part in path.split("/") if path else []:
            target = target / part
            if target.is_symlink():
                raise ScratchSpaceError(render_text(SCRATCH_LINK, path=path))
        if self.root.is_symlink():
            raise ScratchSpaceError(render_text(SCRATCH_LINK, path=path))
        return target

    def _check_existing(self, path: str, target: Path) -> bool:
        """Whether ``target`` exists; a hard link or anything but a regular file (a FIFO would block) is refused."""
        try:
            status = os.lstat(target)
        except FileNotFoundError:
            return False
        if stat.S_ISDIR(status.st_mode):
            raise ScratchSpaceError(render_text(SCRATCH_NOT_FOUND, path=path or "/"))
        if not stat.S_ISREG(status.st_mode):
            raise ScratchSpaceError(
                render_text(
                    SCRATCH_UNREADABLE, path=path, why="it is not a regular file (a FIFO, a device or a socket)"
                )
            )
        if status.st_nlink > 1:  # writing would change the same file wherever else it lies, outside the root too
            raise ScratchSpaceError(render_text(SCRATCH_HARD_LINK, path=path))
        return True

    def read(self, path: str) -> str:
        """
        :returns: The file's text.
        :raises ScratchSpaceError: If there is no such file, it is a link (symbolic or hard), not a regular file, too
            large, or not UTF-8 text.
        """
        target = self._target(path)
        if not path or not self._check_existing(path, target):
            raise ScratchSpaceError(render_text(SCRATCH_NOT_FOUND, path=path or "/"))
        try:
            data = read_regular_file(target, root=self.root, max_bytes=4 * self.max_file_chars)
        except FileNotFoundError as error:
            raise ScratchSpaceError(render_text(SCRATCH_NOT_FOUND, path=path)) from error
        except OSError as error:  # LocalFileRefusedError included: swapped for a FIFO or a link, or too large
            why = str(error).partition(" was not read: ")[2].rstrip(".") or str(error)
            raise ScratchSpaceError(render_text(SCRATCH_UNREADABLE, path=path, why=why)) from error
        if b"\0" in data:  # a binary file: editing it as text would rewrite it lossily
            raise ScratchSpaceError(render_text(SCRATCH_BINARY, path=path))
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ScratchSpaceError(render_text(SCRATCH_BINARY, path=path)) from error

    def write(self, path: str, text: str) -> None:
        """Create or replace a file. :raises ScratchSpaceError: If a limit is exceeded or the path is a link."""
        with self._lock:
            target = self._target(path)
            if not path or target.is_dir():
                raise ScratchSpaceError(render_text(SCRATCH_NOT_FOUND, path=path or "/"))
            self.check(path, text, len(self.files()), self._check_existing(path, target))
            target.parent.mkdir(parents=True, exist_ok=True)
            self._target(path)  # the directories just made are real directories, never links
            write_file(target, text)  # a new file: whatever appeared at the path meanwhile is replaced

    def files(self) -> list[str]:
        """:returns: Every regular file under the root (links are not followed), sorted."""
        if not self.root.is_dir() or self.root.is_symlink():
            return []
        found = []
        for directory, subdirectories, names in os.walk(self.root, followlinks=False):
            subdirectories[:] = [name for name in subdirectories if not Path(directory, name).is_symlink()]
            for name in names:
                full = Path(directory, name)
                if full.is_file() and not full.is_symlink():
                    found.append(full.relative_to(self.root).as_posix())
        return sorted(found)


def backend_from_dict(data: dict[str, Any] | None) -> ScratchBackend | None:
    """The backend a backend's ``to_dict`` gave (a memory backend comes back empty), or ``None`` for ``None``."""
    if data is None:
        return None
    backend: MemoryBackend | DiskBackend = _Limits.tagged_from_dict(data, "scratch backend")  # type: ignore[assignment]
    return backend
