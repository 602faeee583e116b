"""
What the command shows on stderr while a run goes on, from the run's typed events: :class:`Display` only tracks
(``--progress none``), :class:`PlainDisplay` writes one line per step, tagged with its phase and researcher, and
:class:`~haystack_deep_research.cli.live.RichDisplay` keeps a live view (``TTY_COMPATIBLE=1`` makes rich treat stderr
as a terminal); :func:`~haystack_deep_research.cli.live.make_display` picks one. Every line goes through the one door
to the terminal (:mod:`haystack_deep_research._untrusted.terminal`).
"""

from __future__ import annotations

import threading
from typing import TextIO

from haystack_deep_research._untrusted.terminal import LogLines, say, terminal_text
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
from haystack_deep_research.options.exit_codes import in_words
from haystack_deep_research.options.progress import RunSummary, RunTracker

__all__ = ["Display", "PlainDisplay"]

_UNSHOWN = (ToolCalled, ToolReturned, UsageRecorded, RunEnded)
"""Events with no line of their own: per-call detail, and the run's end (the summary follows)."""
_MAX_LINE = 240


class Display:
    """
    Follow a run and show nothing; the base of the displays.

    :param tracker: Where the run stands; a new tracker by default.
    """

    def __init__(self, tracker: RunTracker | None = None) -> None:
        self.tracker = tracker or RunTracker()
        self._logs = LogLines(self.log)

    def log(self, line: str) -> None:
        """Show one log record of the run (a warning a library logged) as one line; the base shows nothing."""

    def __call__(self, event: Event) -> None:
        """Track one event of the run, then show it."""
        self.tracker(event)
        self.show(event)

    def show(self, event: Event) -> None:
        """Show one event the tracker has taken."""

    def start(self) -> None:
        """The run is about to start: start the clock (and a live view); log records go through :meth:`log`."""
        self.tracker.start()
        self._logs.attach()

    def stop(self) -> None:
        """The run is over: stop updating (a live view leaves its last frame); log records go back to logging."""
        self._logs.detach()

    def summarize(self, summary: RunSummary) -> None:
        """Show how the run ended."""


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
        """Write the record as a ``[log]`` line."""
        self._print(f"[log] {line}")

    def show(self, event: Event) -> None:
        """Write the event's :meth:`line`, if it has one."""
        line = self.line(event)
        if line is not None:
            self._print(line)

    def line(self, event: Event) -> str | None:
        """The event's line, or ``None`` for one shown only in the summary (tool calls, usage, the run's end)."""
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
        """Write one ``[done]`` line per fact of the summary, one ``[warning]`` line per warning."""
        for line in summary.lines():
            self._print(f"[done] {line}")
        for warning in summary.warnings:
            self._print(f"[warning] {warning}")
