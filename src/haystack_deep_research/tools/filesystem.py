"""
The deep agent's scratch space: ``write_file``, ``read_file``, ``ls``, ``edit_file``, ``glob`` and ``grep``.

:func:`create_filesystem_tools` makes the six tools over one backend (see :mod:`.scratch`). Without a backend each
run gets its own in-memory space, gone when the run ends; with ``DiskBackend(root=...)`` files persist under that
root and never outside it. Every read emits ``FileRead`` and every write ``FileWritten`` (see
:mod:`haystack_deep_research.events.agent`); a refused path or a file too large is a tool error the model reads.
``grep`` runs the model's pattern with the ``regex`` package under a time limit (``GREP_SECONDS``), so a pattern that
backtracks without end is a tool error, not a frozen process. Compiling comes first: ``regex`` writes counted
repetitions out, so ``(?:a{4000}){4000}`` would take seconds and gigabytes before the search starts. A pattern whose
size with its counted repetitions written out (:func:`expanded_size`) passes ``MAX_PATTERN_SIZE`` is a tool error
before it is compiled, and the compiling counts toward the search's time limit.
"""

from __future__ import annotations

import fnmatch
import re
import time
from typing import Any

import regex

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
    SCRATCH_AMBIGUOUS_EDIT,
    SCRATCH_BAD_PATTERN,
    SCRATCH_BIG_PATTERN,
    SCRATCH_EMPTY,
    SCRATCH_NO_MATCH,
    SCRATCH_SLOW_PATTERN,
    SCRATCH_WRITTEN,
    WRITE_FILE,
    WRITE_FILE_DESCRIPTION,
    render_text,
)
from haystack_deep_research._tooling.base import ResearchTool
from haystack_deep_research.errors import ConfigurationError, ScratchSpaceError, ToolArgumentsError
from haystack_deep_research.events import FileRead, FileWritten
from haystack_deep_research.run import RunView
from haystack_deep_research.run._phases import Phase, blocking
from haystack_deep_research.tools.scratch import MemoryBackend, ScratchBackend, backend_from_dict, scratch_path

__all__ = ["WRITTEN_FILES", "FilesystemTool", "create_filesystem_tools", "expanded_size"]

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
_PARAMETERS: dict[str, dict[str, Any]] = {
    WRITE_FILE: {"properties": {"path": _STRING, "content": _STRING}, "required": ["path", "content"]},
    READ_FILE: {
        "properties": {"path": _STRING, "offset": {"type": "integer"}, "limit": {"type": "integer"}},
        "required": ["path"],
    },
    LS: {"properties": {"path": _STRING}, "required": []},
    EDIT_FILE: {
        "properties": {"path": _STRING, "old": _STRING, "new": _STRING, "replace_all": {"type": "boolean"}},
        "required": ["path", "old", "new"],
    },
    GLOB: {"properties": {"pattern": _STRING}, "required": ["pattern"]},
    GREP: {"properties": {"pattern": _STRING, "glob": _STRING}, "required": ["pattern"]},
}
_DESCRIPTIONS = {
    WRITE_FILE: WRITE_FILE_DESCRIPTION,
    READ_FILE: READ_FILE_DESCRIPTION,
    LS: LS_DESCRIPTION,
    EDIT_FILE: EDIT_FILE_DESCRIPTION,
    GLOB: GLOB_DESCRIPTION,
    GREP: GREP_DESCRIPTION,
}


_Done = tuple[str, str, int | None]


def _text(name: str, value: Any, *, allow_empty: bool = False) -> str:
    if not isinstance(value, str) or (not allow_empty and not value):
        raise ToolArgumentsError(render_text(SCRATCH_EMPTY, name=name, got=repr(value)))
    return value


def _class_end(pattern: str, start: int) -> int:
    """The index just after the character class that opens at ``start`` (a ``]`` right after ``[`` or ``[^`` is
    literal; the end of the pattern when it never closes)."""
    at = start + 1
    at += pattern[at] == "^" if at < len(pattern) else 0
    at += pattern[at] == "]" if at < len(pattern) else 0
    while at < len(pattern) and pattern[at] != "]":
        at += 2 if pattern[at] == "\\" else 1
    return min(at + 1, len(pattern))


def expanded_size(pattern: str) -> int:
    """
    How many items a regular expression holds once its counted repetitions are written out, as ``regex`` compiles it:
    each character, escape or character class is one, and a count ``{m}``, ``{m,n}`` or ``{m,}`` repeats the item or
    group before it by its larger bound, nested counts multiplying (``(?:a{4000}){4000}`` is 16,000,000).

    :param pattern: The pattern.
    :returns: Its size (an upper bound: group syntax such as ``(?:`` counts too).
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
    """
    One scratch-space operation as a tool.

    :param operation: ``write_file``, ``read_file``, ``ls``, ``edit_file``, ``glob`` or ``grep``.
    :param backend: Where files live; ``None`` (default) gives each run its own in-memory space.
    :raises ToolArgumentsError: (when invoked) If an argument is missing; a refused path raises ``ScratchSpaceError``.
    """

    def __init__(self, *, operation: str, backend: ScratchBackend | None = None) -> None:
        if operation not in _PARAMETERS:
            raise ConfigurationError(f"operation must be one of {', '.join(_PARAMETERS)}; got {operation!r}.")
        self.operation = operation
        self.backend = backend
        self._alone = MemoryBackend()  # used only outside a run, when no backend is given
        super().__init__(
            name=operation,
            description=_DESCRIPTIONS[operation],
            parameters={"type": "object", **_PARAMETERS[operation]},
        )

    def _space(self, view: RunView | None) -> ScratchBackend:
        if self.backend is not None:
            return self.backend
        return view.run.resource(SCRATCH_RESOURCE, MemoryBackend) if view is not None else self._alone

    def phase(self, view: RunView | None, **arguments: Any) -> Phase[str]:
        """
        :param view: The agent's view of its run, or ``None``.
        :param arguments: The model's arguments.
        :returns: The phase; it returns what the model reads.
        """
        space = self._space(view)
        [done] = yield [blocking(getattr(self, f"_{self.operation}"), space, **arguments)]
        if done.error is not None:
            raise done.error
        text, path, written = done.value
        if view is not None:
            if written is not None:  # a file the run wrote: checked like a report when the run closes
                written_files: dict[str, ScratchBackend] = view.run.resource(WRITTEN_FILES, dict)
                written_files[path] = space
            event = FileWritten(phase=view.phase, path=path, chars=written) if written is not None else None
            view.emit(event or FileRead(phase=view.phase, path=path))
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
    """
    The six scratch-space tools over one backend.

    :param backend: ``None`` (each run gets its own in-memory space), a ``MemoryBackend`` shared by every run, or a
        ``DiskBackend(root=...)``.
    :returns: ``write_file``, ``read_file``, ``ls``, ``edit_file``, ``glob`` and ``grep``.
    :raises ConfigurationError: If ``backend`` is not a scratch backend.
    """
    if backend is not None and not isinstance(backend, ScratchBackend):
        raise ConfigurationError(
            f"backend must be a MemoryBackend or DiskBackend(root=...); got {type(backend).__name__}."
        )
    return [FilesystemTool(operation=operation, backend=backend) for operation in _PARAMETERS]
