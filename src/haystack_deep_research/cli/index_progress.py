"""
The indexing progress of ``deep-research --docs``: a ``rich`` bar when rich is installed (the ``cli`` extra) and
stderr is a terminal, one ``[index]`` line per file otherwise. What the indexing logs meanwhile (a file left out,
and why) is shown as ``[index]`` lines too, never as raw log records. File names come from the disk: every line goes
through :func:`~haystack_deep_research.cli.display.terminal_text`.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from haystack_deep_research.cli.display import logged_lines, say, terminal_text
from haystack_deep_research.sources import IndexProgress

__all__ = ["index_progress"]


def _lines(done: int, total: int, file: str) -> None:
    if file:
        say(f"[index] {done + 1}/{total} {terminal_text(file, one_line=True)}")


def _unsaid(line: str) -> None:
    """``-q``: nothing is said while indexing; the files left out are in the run's warnings."""


@contextmanager
def index_progress(
    label: str, *, quiet: bool = False, quiet_notes: bool | None = None
) -> Iterator[IndexProgress | None]:
    """
    A progress callback for :func:`~haystack_deep_research.sources.index_folder`, and its notes while it runs.

    :param label: What is being indexed (the folder).
    :param quiet: No progress at all.
    :param quiet_notes: No line either for what the indexing logs (the files it left out); ``quiet`` by default.
    :returns: A context manager giving the callback (``None`` when quiet).
    """
    shown = terminal_text(label, one_line=True)
    silent = quiet if quiet_notes is None else quiet_notes
    with logged_lines(_unsaid if silent else lambda line: say(f"[index] {shown}: {line}")):
        if quiet:
            yield None
            return
        try:
            from rich.progress import Progress
        except ImportError:
            yield _lines
            return
        if not sys.stderr.isatty():
            yield _lines
            return
        from rich.console import Console

        with Progress(console=Console(stderr=True), transient=True) as bar:  # lines said meanwhile go above the bar
            task = bar.add_task(f"indexing {terminal_text(shown, markup=True)}", total=None)

            def update(done: int, total: int, file: str) -> Any:
                name = terminal_text(f"indexing {shown}: {file}" if file else shown, one_line=True, markup=True)
                bar.update(task, completed=done, total=total, description=name)

            yield update
