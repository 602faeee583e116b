"""
Memory files: AGENTS.md-style Markdown files whose text is prepended to the deep agent's system prompt.

The files are read when each run opens (so an edited file counts from the next run), in the order given, ``~``
expanded. A path with no file behind it is skipped without a word, so defaults such as ``["~/AGENTS.md",
"./AGENTS.md"]`` need no checking first; a file that exists but cannot be read is skipped with a warning, and so is
one that is not a regular file (a FIFO would block the run, ``/dev/zero`` never ends), one that leads out of its folder
through a symbolic link (a cloned repository's ``AGENTS.md`` linked to a key file would send the key to the model), or
one larger than ``MAX_MEMORY_BYTES``. Each file is cut at ``MAX_MEMORY_CHARS`` characters, with a warning. Memory
files are the caller's own instructions: their text is not fenced as untrusted data.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from haystack_deep_research._untrusted.files import read_regular_file
from haystack_deep_research.errors import ConfigurationError

__all__ = ["MAX_MEMORY_BYTES", "MAX_MEMORY_CHARS", "MemoryFile", "check_memory_paths", "read_memory_files"]

MAX_MEMORY_CHARS = 50_000
MAX_MEMORY_BYTES = 1024 * 1024
"""The largest memory file read; a larger one is skipped with a warning (it would be cut far below this anyway)."""


@dataclass(frozen=True)
class MemoryFile:
    """
    One memory file as read.

    :param path: Its path, as given.
    :param text: Its text (cut at ``MAX_MEMORY_CHARS``).
    """

    path: str
    text: str


def check_memory_paths(paths: object) -> list[str]:
    """
    :param paths: What the caller passed as ``memory_files``.
    :returns: The paths as strings.
    :raises ConfigurationError: If it is not a list of paths.
    """
    if paths is None:
        return []
    if isinstance(paths, str | Path) or not isinstance(paths, list | tuple):
        raise ConfigurationError(
            f"memory_files must be a list of paths, for example ['~/AGENTS.md', './AGENTS.md']; got {paths!r}."
        )
    if not all(isinstance(path, str | Path) and str(path).strip() for path in paths):
        raise ConfigurationError(f"memory_files must hold only non-empty paths; got {paths!r}.")
    return [str(path) for path in paths]


def read_memory_files(paths: list[str]) -> tuple[list[MemoryFile], list[str]]:
    """
    Read the memory files (blocking; run it with ``blocking`` on the async path).

    :param paths: The paths, in order.
    :returns: ``(files, warnings)``: the files read, and what went wrong with the others.
    """
    files: list[MemoryFile] = []
    warnings: list[str] = []
    for given in paths:
        path = Path(given).expanduser()
        if not path.exists():
            continue
        try:
            data = read_regular_file(path, root=path.parent, max_bytes=MAX_MEMORY_BYTES)
        except FileNotFoundError:
            continue
        except OSError as error:  # LocalFileRefusedError included: not a regular file, a link out, too large
            warnings.append(f"the memory file {given} could not be read ({type(error).__name__}: {error}); skipped")
            continue
        text = data.decode("utf-8", errors="replace")
        if len(text) > MAX_MEMORY_CHARS:
            warnings.append(f"the memory file {given} was cut at {MAX_MEMORY_CHARS:,} characters")
            text = text[:MAX_MEMORY_CHARS]
        if text.strip():
            files.append(MemoryFile(path=given, text=text.strip()))
    return files, warnings
