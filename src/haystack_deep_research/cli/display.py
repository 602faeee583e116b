"""
What the command shows on stderr while a run goes on, built on the run's typed events.

- :class:`Display` follows the run with a :class:`~haystack_deep_research.cli.tracker.RunTracker` and shows nothing
  (``--progress none``, ``-q``);
- :class:`PlainDisplay` writes one line per step (``--progress plain``, and the default when stderr is not a
  terminal), each line tagged with its phase and, for a researcher's steps, the researcher's number;
- :class:`~haystack_deep_research.cli.live.RichDisplay` keeps a live view (``--progress rich``, and the default when
  rich is installed and stderr is a terminal; ``TTY_COMPATIBLE=1`` makes rich treat stderr as a terminal).

Every display is an event subscriber: pass it as ``inputs=RunInputs(on_event=display)``.
:func:`~haystack_deep_research.cli.live.make_display` picks one for a ``--progress`` mode.

Text that models, pages, files or servers wrote (a sub-topic, a query, a title, a file name, an error a server sent)
reaches a terminal only through :func:`terminal_text`, the one door of the command's output: it removes escape
sequences (OSC clipboard writes and window titles, CSI cursor moves and erasures), every other control character and
the bidirectional overrides that reorder what a line shows, and escapes Rich markup where the text goes to rich as
markup. :func:`say` prints through it; every line the commands print goes through one of the two.
"""

from __future__ import annotations

import logging
import re
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

from haystack_deep_research.cli.exit_codes import in_words
from haystack_deep_research.cli.summary import RunSummary
from haystack_deep_research.cli.tracker import RunTracker
from haystack_deep_research.events import (
    Event,
    PhaseEnded,
    RunEnded,
    RunStarted,
    SubagentCompleted,
    SubagentFailed,
    SubagentSpawned,
    ToolCalled,
    ToolReturned,
    UsageRecorded,
    WarningRaised,
)
from haystack_deep_research.evidence.text import clean_text

__all__ = ["Display", "PlainDisplay", "logged_lines", "say", "terminal_text"]

_UNSHOWN = (ToolCalled, ToolReturned, UsageRecorded, RunEnded)
"""Events with no line of their own: per-call detail, and the run's end (the summary follows)."""
_MAX_LINE = 240
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
    The one door of text to a terminal (see the module docstring): what was written outside the library, shown as
    it was written and nothing more.

    :param text: The text (anything else is shown as its ``str``).
    :param one_line: Make it one line: line breaks and tabs become spaces, runs of spaces one.
    :param markup: Escape Rich markup, for text that rich reads as markup (a progress bar's description).
    :returns: The text without escape sequences, control characters (but tab and line feed) or bidirectional
        overrides; a carriage return ends a line.
    """
    shown = _BIDI.sub("", clean_text(_SEQUENCES.sub("", _BREAKS.sub("\n", str(text)))))
    if one_line:
        shown = " ".join(shown.split())
    if markup:
        from rich.markup import escape  # only text bound for rich is escaped for it

        shown = escape(shown)
    return shown


def say(text: object, *, file: TextIO | None = None, end: str = "\n") -> None:
    """
    Print text on the terminal through :func:`terminal_text` (line breaks kept), flushed.

    :param text: What to print.
    :param file: Where; stderr by default.
    :param end: What ends it (``""`` for a prompt).
    """
    print(terminal_text(text), end=end, file=file or sys.stderr, flush=True)


class Display:
    """
    Follow a run and show nothing; the base of the displays.

    :param tracker: Where the run stands; a new tracker by default.
    """

    def __init__(self, tracker: RunTracker | None = None) -> None:
        self.tracker = tracker or RunTracker()
        self._logs = _LogLines(self.log)

    def log(self, line: str) -> None:
        """
        Show one log record of the run (a warning a library logged), as one line; the base shows nothing.

        :param line: The record's message, on one line.
        """

    def __call__(self, event: Event) -> None:
        """
        Take one event of the run: track it, then show it.

        :param event: The event.
        """
        self.tracker(event)
        self.show(event)

    def show(self, event: Event) -> None:
        """
        Show one event (the tracker has taken it).

        :param event: The event.
        """

    def start(self) -> None:
        """The run is about to start: start the clock (and a live view); log records go through :meth:`log`."""
        self.tracker.start()
        self._logs.attach()

    def stop(self) -> None:
        """The run is over: stop updating (a live view leaves its last frame); log records go back to logging."""
        self._logs.detach()

    def summarize(self, summary: RunSummary) -> None:
        """
        Show how the run ended.

        :param summary: The summary.
        """


class _LogLines(logging.Handler):
    """
    While a display shows a run (or a folder is indexed), the warnings that libraries log (a search error with its
    whole query, a retry, a file left out of an index) go through the display as one line each, never raw over its
    lines or its live view. Records are shown, not dropped: only their form changes. A program that logs to the
    console with handlers of its own keeps them.
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
    """
    While the block runs, the warnings libraries log go to ``show`` as one line each, not raw to stderr.

    :param show: Takes each record as one line (``warning: ...``).
    :returns: A context manager.
    """
    handler = _LogLines(show)
    handler.attach()
    try:
        yield
    finally:
        handler.detach()


class PlainDisplay(Display):
    """
    One line per step on a text stream, and the summary as ``[done]`` and ``[warning]`` lines.

    :param tracker: Where the run stands; a new tracker by default.
    :param stream: Where the lines go; stderr by default.
    """

    def __init__(self, tracker: RunTracker | None = None, *, stream: TextIO | None = None) -> None:
        super().__init__(tracker)
        self._stream = stream
        self._lock = threading.Lock()

    def _print(self, line: str) -> None:
        flat = terminal_text(line, one_line=True)  # one step, one line: model-written text may hold line breaks
        with self._lock:
            say(flat if len(flat) <= _MAX_LINE else flat[: _MAX_LINE - 1] + "…", file=self._stream)

    def log(self, line: str) -> None:
        """
        Write a log record as a ``[log]`` line.

        :param line: The record, on one line.
        """
        self._print(f"[log] {line}")

    def show(self, event: Event) -> None:
        """
        Write the event's line, if it has one.

        :param event: The event.
        """
        line = self.line(event)
        if line is not None:
            self._print(line)

    def line(self, event: Event) -> str | None:
        """
        :param event: An event the tracker has taken.
        :returns: Its line, or ``None`` for an event shown only in the summary (tool calls, usage, the run's end).
        """
        if isinstance(event, _UNSHOWN):
            return None
        if isinstance(event, RunStarted):
            return f"[{event.phase}] researching: {event.question}"
        text = in_words(event.describe()) if isinstance(event, WarningRaised) else event.describe()
        if isinstance(event, SubagentSpawned):
            return f"[{event.phase}] {text}"
        subtopic = event.subtopic if isinstance(event, SubagentCompleted | SubagentFailed) else event.researcher
        who = self.tracker.researcher(subtopic) if subtopic else None
        tag = f"{event.phase} #{who.slot}" if who is not None and who.slot else event.phase
        if isinstance(event, SubagentCompleted) and who is not None and not event.restored:
            searches = f"{who.searches} search{'' if who.searches == 1 else 'es'}"
            searches += f" ({who.cached} cached)" if who.cached else ""
            pages = f"{who.pages} page{'' if who.pages == 1 else 's'} read"
            text += f" ({searches}, {pages}, {who.tokens:,} tokens, {who.seconds:.1f}s)"
        if isinstance(event, PhaseEnded) and (seconds := self.tracker.stage_seconds(event.phase)) is not None:
            text += f" ({seconds:.1f}s)"
        return f"[{tag}] {text}"

    def summarize(self, summary: RunSummary) -> None:
        """
        Write the summary: one ``[done]`` line per fact, one ``[warning]`` line per warning.

        :param summary: The summary.
        """
        for line in summary.lines():
            self._print(f"[done] {line}")
        for warning in summary.warnings:
            self._print(f"[warning] {warning}")
