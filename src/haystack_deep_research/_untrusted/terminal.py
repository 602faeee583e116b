"""
The one door of text to a terminal: :func:`terminal_text` removes escape sequences, control characters and
bidirectional overrides from what models, pages, files or servers wrote, and escapes Rich markup where rich reads it
(docs/safety.md); :func:`say` prints through it, and :func:`logged_lines` turns what libraries log into one line each.
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

from haystack_deep_research.evidence.text import clean_text

_SEQUENCES = re.compile(
    r"\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)?"  # OSC: a clipboard write (52), a window title, a hyperlink; to BEL or ST
    r"|\x1b[P^_X][^\x1b\n]*(?:\x1b\\)?"  # DCS, PM, APC and SOS strings, to ST
    r"|\x1b\[[0-?]*[ -/]*[@-~]?"  # CSI: cursor moves, erasing a line (2K), colours
    r"|\x1b[ -/]*[0-~]?"  # any other escape sequence
)
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")  # embeddings, overrides and isolates: they reorder a line
_BREAKS = re.compile(r"\r\n?")


def terminal_text(text: object, *, one_line: bool = False, markup: bool = False) -> str:
    """
    Text written outside the library (or the ``str`` of anything else), shown as it was written and nothing more:
    without escape sequences, control characters (but tab and line feed) or bidirectional overrides, a carriage
    return ending a line; on ``one_line`` with runs of whitespace as one space, and with Rich ``markup`` escaped.
    """
    shown = _BIDI.sub("", clean_text(_SEQUENCES.sub("", _BREAKS.sub("\n", str(text)))))
    if one_line:
        shown = " ".join(shown.split())
    if markup:
        from rich.markup import escape  # only text bound for rich is escaped for it

        shown = escape(shown)
    return shown


def say(text: object, *, file: TextIO | None = None, end: str = "\n") -> None:
    """Print text on the terminal through :func:`terminal_text` (line breaks kept), flushed."""
    print(terminal_text(text), end=end, file=file or sys.stderr, flush=True)


class LogLines(logging.Handler):
    """
    Shows the warnings libraries log as one line each through a display, never raw over its live view; a program that
    logs to the console with handlers of its own keeps them.
    """

    def __init__(self, show: Callable[[str], None]) -> None:
        super().__init__(level=logging.WARNING)
        self.show = show

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
        except (TypeError, ValueError):  # a record whose arguments do not format: its template says what happened
            message = str(record.msg)
        first = " ".join(message.split())
        self.show(f"{record.levelname.lower()}: {first}" if first else record.levelname.lower())

    def attach(self) -> None:
        root = logging.getLogger()
        consoles = (sys.stderr, sys.stdout, sys.__stderr__, sys.__stdout__)
        if not any(isinstance(h, logging.StreamHandler) and h.stream in consoles for h in root.handlers):
            root.addHandler(self)  # no console logging configured: Python would print each record raw on stderr

    def detach(self) -> None:
        logging.getLogger().removeHandler(self)


@contextmanager
def logged_lines(show: Callable[[str], None]) -> Iterator[None]:
    """While the block runs, the warnings libraries log go to ``show`` as one line each, not raw to stderr."""
    handler = LogLines(show)
    handler.attach()
    try:
        yield
    finally:
        handler.detach()
