"""
The indexing progress bar of ``deep-research --docs``: a ``rich`` bar when rich is installed (the ``cli`` extra) and
stderr is a terminal, one line per file otherwise; and the files left out, each with its reason.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from haystack_deep_research.sources import IndexProgress

__all__ = ["index_progress", "print_skipped"]


def _lines(done: int, total: int, file: str) -> None:
    if file:
        print(f"[index] {done + 1}/{total} {file}", file=sys.stderr, flush=True)


@contextmanager
def index_progress(label: str, *, quiet: bool = False) -> Iterator[IndexProgress | None]:
    """
    A progress callback for :func:`~haystack_deep_research.sources.index_folder`.

    :param label: What is being indexed (the folder).
    :param quiet: No progress at all.
    :returns: A context manager giving the callback (``None`` when quiet).
    """
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

    with Progress(console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(f"indexing {label}", total=None)

        def update(done: int, total: int, file: str) -> Any:
            bar.update(task, completed=done, total=total, description=f"indexing {label}: {file}" if file else label)

        yield update


def print_skipped(label: str, skipped: Iterable[str], *, quiet: bool = False) -> None:
    """
    Say on stderr which files of a folder were not indexed, and why (``FolderIndex.warnings``).

    :param label: The folder.
    :param skipped: One line per file left out.
    :param quiet: Say nothing.
    """
    if quiet:
        return
    for line in skipped:
        print(f"[index] {label}: skipped {line}", file=sys.stderr, flush=True)
