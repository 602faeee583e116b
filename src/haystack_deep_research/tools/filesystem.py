"""
The deep agent's scratch space: its six tools (``write_file``, ``read_file``, ``ls``, ``edit_file``, ``glob``,
``grep``) and where they keep files, in memory (one space per run) or on disk under a root (docs/deep-agent.md).
What a backend refuses, and how ``grep`` is bounded, is in docs/safety.md.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
import threading
import time
from pathlib import Path, PurePosixPath
from typing import Any, Protocol, runtime_checkable

import regex

from haystack_deep_research import _checks
from haystack_deep_research._prompts import (
    EDIT_FILE,
    EDIT_FILE_DESCRIPTION,
    GLOB,
    GLOB_DESCRIPTION,
    GREP,
    GREP_DESCRIPTION,
    LS,
    LS_DESCRIPTION,
    READ_FILE,
    READ_FILE_DESCRIPTION,
    SCRATCH_ABSOLUTE,
    SCRATCH_AMBIGUOUS_EDIT,
    SCRATCH_BAD_PATTERN,
    SCRATCH_BIG_PATTERN,
    SCRATCH_BINARY,
    SCRATCH_EMPTY,
    SCRATCH_ESCAPE,
    SCRATCH_HARD_LINK,
    SCRATCH_LINK,
    SCRATCH_NO_MATCH,
    SCRATCH_NOT_FOUND,
    SCRATCH_SLOW_PATTERN,
    SCRATCH_TOO_LARGE,
    SCRATCH_TOO_MANY,
    SCRATCH_UNREADABLE,
    SCRATCH_WRITTEN,
    WRITE_FILE,
    WRITE_FILE_DESCRIPTION,
    render_text,
)
from haystack_deep_research._serialization import Tagged
from haystack_deep_research._tooling.base import ResearchTool
from haystack_deep_research._untrusted.files import read_regular_file, write_file
from haystack_deep_research.errors import ConfigurationError, ScratchSpaceError, ToolArgumentsError
from haystack_deep_research.events import FileRead, FileWritten
from haystack_deep_research.run import RunView
from haystack_deep_research.run._phases import Phase, blocking

__all__ = [
    "WRITTEN_FILES",
    "DiskBackend",
    "FilesystemTool",
    "MemoryBackend",
    "ScratchBackend",
    "create_filesystem_tools",
    "expanded_size",
    "scratch_path",
]

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
            why = "it is not a regular file (a FIFO, a device or a socket)"
            raise ScratchSpaceError(render_text(SCRATCH_UNREADABLE, path=path, why=why))
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


SCRATCH_RESOURCE = "scratch"
WRITTEN_FILES = "written_files"
"""The run resource listing the files the run wrote or edited, by path, with the space they are in."""
MAX_LINES = 2_000
MAX_MATCHES = 200
GREP_SECONDS = 2.0
"""The most time one ``grep`` may spend compiling and matching, all files together; a slower pattern is a tool error."""
MAX_PATTERN_SIZE = 100_000
"""The largest pattern ``grep`` compiles, counted by :func:`expanded_size` (``regex`` compiles ``a{100000}`` in about
a tenth of a second)."""
_COUNT = re.compile(r"\{(\d*)(?:,(\d*))?\}")

_STRING = {"type": "string"}
_INTEGER = {"type": "integer"}
_OPERATIONS: dict[str, tuple[str, dict[str, Any], list[str]]] = {  # description, properties, required
    WRITE_FILE: (WRITE_FILE_DESCRIPTION, {"path": _STRING, "content": _STRING}, ["path", "content"]),
    READ_FILE: (READ_FILE_DESCRIPTION, {"path": _STRING, "offset": _INTEGER, "limit": _INTEGER}, ["path"]),
    LS: (LS_DESCRIPTION, {"path": _STRING}, []),
    EDIT_FILE: (
        EDIT_FILE_DESCRIPTION,
        {"path": _STRING, "old": _STRING, "new": _STRING, "replace_all": {"type": "boolean"}},
        ["path", "old", "new"],
    ),
    GLOB: (GLOB_DESCRIPTION, {"pattern": _STRING}, ["pattern"]),
    GREP: (GREP_DESCRIPTION, {"pattern": _STRING, "glob": _STRING}, ["pattern"]),
}


_Done = tuple[str, str, int | None]


def _text(name: str, value: Any, *, allow_empty: bool = False) -> str:
    if not isinstance(value, str) or (not allow_empty and not value):
        raise ToolArgumentsError(render_text(SCRATCH_EMPTY, name=name, got=repr(value)))
    return value


def _class_end(pattern: str, start: int) -> int:
    """The index after the character class opening at ``start`` (a ``]`` right after ``[`` or ``[^`` is literal)."""
    at = start + 1
    at += pattern[at] == "^" if at < len(pattern) else 0
    at += pattern[at] == "]" if at < len(pattern) else 0
    while at < len(pattern) and pattern[at] != "]":
        at += 2 if pattern[at] == "\\" else 1
    return min(at + 1, len(pattern))


def expanded_size(pattern: str) -> int:
    """
    How many items a pattern holds with its counted repetitions written out, as ``regex`` compiles it (an upper bound):
    a count repeats the item or group before it by its larger bound, nested counts multiplying.
    """
    open_groups = [0]  # the size of each open group so far; the first is the whole pattern
    last = at = 0  # the size of the item or group a count would repeat
    while at < len(pattern):
        char, item, after = pattern[at], 1, at + 1
        if char == "\\":
            after = at + 2
        elif char == "[":
            after = _class_end(pattern, at)
        elif char == "(":
            open_groups.append(0)
            last, at = 0, after
            continue
        elif char == ")" and len(open_groups) > 1:
            item = open_groups.pop()
        elif char == "{" and (count := _COUNT.match(pattern, at)) and any(count.groups()):
            times = max(int(bound) for bound in count.groups() if bound)
            open_groups[-1] += last * (times - 1) if times else -last
            last, at = last * times, count.end()
            continue
        open_groups[-1] += item
        last, at = item, after
    return sum(open_groups)


class FilesystemTool(ResearchTool):
    """One scratch-space operation as a tool; with no ``backend`` each run gets its own in-memory space."""

    def __init__(self, *, operation: str, backend: ScratchBackend | None = None) -> None:
        if operation not in _OPERATIONS:
            raise ConfigurationError(f"operation must be one of {', '.join(_OPERATIONS)}; got {operation!r}.")
        self.operation = operation
        self.backend = backend
        self._alone = MemoryBackend()  # used only outside a run, when no backend is given
        description, properties, required = _OPERATIONS[operation]
        parameters = {"type": "object", "properties": properties, "required": required}
        super().__init__(name=operation, description=description, parameters=parameters)

    def phase(self, view: RunView | None, **arguments: Any) -> Phase[str]:
        if self.backend is not None:
            space = self.backend
        else:
            space = view.run.resource(SCRATCH_RESOURCE, MemoryBackend) if view is not None else self._alone
        [done] = yield [blocking(getattr(self, f"_{self.operation}"), space, **arguments)]
        if done.error is not None:
            raise done.error
        text, path, written = done.value
        if view is not None and written is not None:  # a file the run wrote: checked like a report when the run closes
            written_files: dict[str, ScratchBackend] = view.run.resource(WRITTEN_FILES, dict)
            written_files[path] = space
            view.emit(FileWritten(phase=view.phase, path=path, chars=written))
        elif view is not None:
            view.emit(FileRead(phase=view.phase, path=path))
        return str(text)

    # Each operation returns (what the model reads, the path it touched, the size written or None for a read).

    def _write_file(self, space: ScratchBackend, path: Any = None, content: Any = None, **_: Any) -> _Done:
        where, text = scratch_path(_text("path", path)), _text("content", content, allow_empty=True)
        space.write(where, text)
        return render_text(SCRATCH_WRITTEN, path=where, chars=len(text)), where, len(text)

    def _read_file(
        self, space: ScratchBackend, path: Any = None, offset: Any = 0, limit: Any = MAX_LINES, **_: Any
    ) -> _Done:
        where = scratch_path(_text("path", path))
        lines = space.read(where).splitlines()
        start = max(offset if isinstance(offset, int) else 0, 0)
        count = min(max(limit if isinstance(limit, int) else MAX_LINES, 1), MAX_LINES)
        shown = [f"{number:6d}\t{line}" for number, line in enumerate(lines[start : start + count], start + 1)]
        return "\n".join(shown) or render_text(SCRATCH_NO_MATCH, what=f"lines in {where}"), where, None

    def _ls(self, space: ScratchBackend, path: Any = "", **_: Any) -> _Done:
        where = scratch_path(path)
        prefix = f"{where}/" if where else ""
        entries = set()
        for file in space.files():
            if file.startswith(prefix):
                first, _sep, rest = file[len(prefix) :].partition("/")
                entries.add(f"{first}/" if rest else first)
        return "\n".join(sorted(entries)) or render_text(SCRATCH_NO_MATCH, what="files"), where or ".", None

    def _edit_file(
        self,
        space: ScratchBackend,
        path: Any = None,
        old: Any = None,
        new: Any = None,
        replace_all: Any = False,
        **_: Any,
    ) -> _Done:
        where, before, after = scratch_path(_text("path", path)), _text("old", old), _text("new", new, allow_empty=True)
        text = space.read(where)
        found = text.count(before)
        if found == 0:
            raise ScratchSpaceError(render_text(SCRATCH_NO_MATCH, what=f"'{before}' in {where}"))
        if found > 1 and replace_all is not True:
            raise ScratchSpaceError(render_text(SCRATCH_AMBIGUOUS_EDIT, path=where, count=found))
        edited = text.replace(before, after) if replace_all is True else text.replace(before, after, 1)
        space.write(where, edited)
        return render_text(SCRATCH_WRITTEN, path=where, chars=len(edited)), where, len(edited)

    def _glob(self, space: ScratchBackend, pattern: Any = None, **_: Any) -> _Done:
        wanted = _text("pattern", pattern).strip().removeprefix("./")
        matched = [path for path in space.files() if fnmatch.fnmatchcase(path, wanted)]
        return "\n".join(matched) or render_text(SCRATCH_NO_MATCH, what=f"files matching {wanted}"), wanted, None

    def _grep(self, space: ScratchBackend, pattern: Any = None, glob: Any = None, **_: Any) -> _Done:
        wanted = _text("pattern", pattern)
        deadline = time.monotonic() + GREP_SECONDS
        if (size := expanded_size(wanted)) > MAX_PATTERN_SIZE:
            big = render_text(SCRATCH_BIG_PATTERN, pattern=wanted[:200], size=size, limit=MAX_PATTERN_SIZE)
            raise ScratchSpaceError(big)
        try:
            expression = regex.compile(wanted)
        except regex.error as error:
            raise ScratchSpaceError(render_text(SCRATCH_BAD_PATTERN, pattern=wanted, error=str(error))) from error
        among = glob.strip().removeprefix("./") if isinstance(glob, str) and glob.strip() else "*"
        found: list[str] = []
        for path in space.files():
            if not fnmatch.fnmatchcase(path, among) or len(found) >= MAX_MATCHES:
                continue
            try:
                lines = space.read(path).splitlines()
            except ScratchSpaceError:  # a binary file or a hard link: not searched, as grep skips binary files
                continue
            for number, line in enumerate(lines, 1):
                try:  # a pattern may backtrack for hours: regex stops it, and lets other threads run meanwhile
                    hit = expression.search(line, concurrent=True, timeout=max(deadline - time.monotonic(), 0.001))
                except TimeoutError as error:
                    slow = render_text(SCRATCH_SLOW_PATTERN, pattern=wanted, seconds=f"{GREP_SECONDS:g}")
                    raise ScratchSpaceError(slow) from error
                if hit and len(found) < MAX_MATCHES:
                    found.append(f"{path}:{number}: {line}")
        return "\n".join(found) or render_text(SCRATCH_NO_MATCH, what=f"lines matching {wanted}"), among, None

    def to_dict(self) -> dict[str, Any]:
        """:returns: The serialized tool (a memory backend's files are not kept)."""
        backend = self.backend.to_dict() if self.backend is not None else None
        return self._serialized({"operation": self.operation, "backend": backend})

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FilesystemTool:
        """Rebuild the tool from what ``to_dict`` returned."""
        params = data["data"]
        return cls(operation=params["operation"], backend=backend_from_dict(params.get("backend")))


def create_filesystem_tools(backend: ScratchBackend | None = None) -> list[FilesystemTool]:
    """The six scratch-space tools over one backend (``None``: each run gets its own in-memory space)."""
    if backend is not None and not isinstance(backend, ScratchBackend):
        raise ConfigurationError(
            f"backend must be a MemoryBackend or DiskBackend(root=...); got {type(backend).__name__}."
        )
    return [FilesystemTool(operation=operation, backend=backend) for operation in _OPERATIONS]
