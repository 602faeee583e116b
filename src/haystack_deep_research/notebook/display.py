"""
What a notebook shows of a run: its result, which renders itself (the report as Markdown, then the sources read as a
table, their titles escaped) and is still the plain dict the Agent returned, and its live progress, one Markdown block
updated in place as the run's typed events arrive (elsewhere, one line per event through the door to the terminal);
docs/notebooks.md.
"""

from __future__ import annotations

import re
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any, TextIO, cast

from haystack.dataclasses import ChatMessage

from haystack_deep_research import _checks
from haystack_deep_research._untrusted.terminal import say, terminal_text
from haystack_deep_research.errors import MissingExtraError, UsageError
from haystack_deep_research.events import Event, RunEnded, RunStarted, UsageRecorded
from haystack_deep_research.evidence.text import inert_text
from haystack_deep_research.options.progress import RUNNING, STATE_MARKS, RunTracker, outcome_line
from haystack_deep_research.run import EventStream
from haystack_deep_research.state import REPORT, SOURCES, WARNINGS

__all__ = ["LiveProgress", "ResearchResult", "display_result", "in_notebook", "ipython_display", "run_with_progress"]

_RECENT = 5
_MARKS = {state: mark for state, (mark, _) in STATE_MARKS.items()} | {RUNNING: "…"}
_MAX_TITLE = 120


def ipython_display() -> tuple[Any, Any]:
    """IPython's ``display`` function and ``Markdown`` class; ``MissingExtraError`` without the ``notebook`` extra."""
    try:
        from IPython.display import Markdown, display
    except ImportError as error:
        raise MissingExtraError("Notebook displays", extra="notebook", module="IPython") from error
    return display, Markdown


def in_notebook() -> bool:
    """:returns: Whether the code runs in an IPython kernel or shell (IPython installed and active)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    return get_ipython() is not None


def _link(url: Any) -> str:
    text = str(url or "").strip()
    if not text or any(c in text for c in "<> \n\t") or not re.match(r"^https?://", text):
        return inert_text(text)  # not a plain http(s) URL: shown as text, never as a link
    return f"<{text}>"


class ResearchResult(dict[str, Any]):
    """
    The result of a research run: the same dict the Agent returned, plus notebook display.

    :param result: What ``agent.run(...)`` or ``await agent.run_async(...)`` returned.
    :raises UsageError: If ``result`` is not a mapping with a ``report``.
    """

    def __init__(self, result: Mapping[str, Any]) -> None:
        if not isinstance(result, Mapping) or REPORT not in result:
            got = type(result).__name__ if not isinstance(result, Mapping) else f"keys {sorted(result)[:8]}"
            raise UsageError(f"ResearchResult takes the dict a research run returned (with a 'report'); got {got}.")
        super().__init__(result)

    @classmethod
    def from_run(cls, result: Mapping[str, Any]) -> ResearchResult:
        """
        :param result: What ``agent.run(...)`` or ``await agent.run_async(...)`` returned.
        :returns: The result, wrapped (a result already wrapped is returned as it is).
        :raises UsageError: If ``result`` is not a run's result.
        """
        return result if isinstance(result, ResearchResult) else cls(result)

    @property
    def report(self) -> str:
        """The Markdown report."""
        return str(self.get(REPORT) or "")

    @property
    def pages_read(self) -> list[dict[str, Any]]:
        """The ledger's entries of the pages the run read (search results left out)."""
        return [entry for entry in self.get(SOURCES) or [] if isinstance(entry, dict) and entry.get("kind") == "page"]

    def sources_table(self) -> str:
        """:returns: The pages read as a Markdown table (``#``, title, URL); ``""`` when none was read."""
        pages = self.pages_read
        if not pages:
            return ""
        rows = []
        for index, entry in enumerate(pages, 1):
            title = inert_text(entry.get("title"), limit=_MAX_TITLE) or "(untitled)"
            rows.append(f"| {inert_text(entry.get('id', index))} | {title} | {_link(entry.get('url'))} |")
        return "\n".join(["| # | title | URL |", "|---|---|---|", *rows])

    def summary_line(self) -> str:
        """:returns: One line: exit reason, notes, pages read, warnings and cost."""
        return outcome_line(self)

    def to_markdown(self) -> str:
        """
        :returns: The report, then a "Sources read" table of the pages read, then the summary line and the warnings.
        """
        parts = [self.report.rstrip()]
        table = self.sources_table()
        if table:
            parts.append(f"### Sources read\n\n{table}")
        footer = f"*{inert_text(self.summary_line())}*"
        warnings = [f"- {inert_text(warning)}" for warning in self.get(WARNINGS) or []]
        parts.append("\n".join([footer, *(["", "Warnings:", "", *warnings] if warnings else [])]))
        return "\n\n---\n\n".join(part for part in parts if part)

    def _repr_markdown_(self) -> str:
        """IPython's display hook: the result renders as :meth:`to_markdown`."""
        return self.to_markdown()


def display_result(result: Mapping[str, Any]) -> ResearchResult:
    """
    Show a run's result in the notebook (the report as Markdown, the sources as a table) and return it wrapped.

    :param result: What ``agent.run(...)`` or ``await agent.run_async(...)`` returned.
    :returns: The :class:`ResearchResult`.
    :raises MissingExtraError: If IPython is not installed (``pip install haystack-deep-research[notebook]``).
    :raises UsageError: If ``result`` is not a run's result.
    """
    wrapped = ResearchResult.from_run(result)
    display, markdown = ipython_display()
    display(markdown(wrapped.to_markdown()))
    return wrapped


class LiveProgress:
    """
    Show a run's progress as it happens.

    ::

        progress = LiveProgress()
        result = await agent.run_async(messages=[...], inputs=RunInputs(on_event=progress))

    :param show: Called with the block's Markdown each time it changes; by default an IPython display updated in
        place in a notebook, else one line per event on ``stream``.
    :param stream: Where lines go outside a notebook (default: stderr).
    :param min_interval: Seconds between two updates of the block (0 to 10); the final state is always shown.
    :raises ConfigurationError: If ``min_interval`` is out of range.
    """

    def __init__(
        self, *, show: Callable[[str], Any] | None = None, stream: TextIO | None = None, min_interval: float = 0.2
    ) -> None:
        self.min_interval = _checks.number_in_range("min_interval", min_interval, 0.0, 10.0, include_low=True)
        self._show = show
        self._stream = stream
        self._handle: Any = None
        self._lock = threading.Lock()
        self._last_shown = 0.0
        self.tracker = RunTracker()
        self.phase = ""
        self.recent: deque[str] = deque(maxlen=_RECENT)

    def __call__(self, event: Event) -> None:
        """Take one event of the run."""
        if isinstance(event, UsageRecorded):  # one per model call; the result holds the totals
            return
        with self._lock:
            self.tracker(event)
            self.phase = event.phase
            if not isinstance(event, RunStarted | RunEnded):
                self.recent.append(event.describe())
            now = time.monotonic()
            due = isinstance(event, RunStarted | RunEnded) or now - self._last_shown >= self.min_interval
            if due:
                self._last_shown = now
            block = self.to_markdown() if due else None
        if self._show is None and not in_notebook():
            say(terminal_text(f"[{event.phase}] {event.describe()}", one_line=True), file=self._stream or sys.stderr)
        elif block is not None:
            (self._show or self._update_display)(block)

    def to_markdown(self) -> str:
        """:returns: The progress block: the question, the counts, each sub-topic's state and the latest events."""
        progress = self.tracker.progress()
        done = sum(researcher.state != RUNNING for researcher in progress.researchers)
        ended = progress.exit_reason
        state = f"finished ({inert_text(ended)})" if ended is not None else f"{self.phase or 'starting'}"
        lines = [
            f"**Researching:** {inert_text(progress.question, limit=200)}",
            "",
            f"{state} · {done}/{len(progress.researchers)} sub-topics · {progress.searches} searches · "
            f"{progress.pages_read} pages read · {progress.refused} refused · {len(progress.warnings)} warnings",
        ]
        if progress.researchers:
            lines += ["", *(f"- {_MARKS[r.state]} {inert_text(r.subtopic, limit=120)}" for r in progress.researchers)]
        if self.recent and ended is None:
            lines += ["", "Latest:", "", *(f"- {inert_text(line, limit=160)}" for line in self.recent)]
        return "\n".join(lines)

    def _update_display(self, block: str) -> None:
        display, markdown = ipython_display()
        if self._handle is None:
            self._handle = display(markdown(block), display_id=True)
        else:
            self._handle.update(markdown(block))


async def run_with_progress(
    agent: Any, question: str | list[ChatMessage], *, progress: LiveProgress | None = None, **run_kwargs: Any
) -> ResearchResult:
    """
    Run an agent with live progress (on the notebook's event loop; interrupting the cell cancels the run) and return
    its result ready for display: ``await run_with_progress(agent, "...")``.

    :param agent: An agent of this library.
    :param question: The question, or the messages to run with.
    :param progress: The progress display; a new :class:`LiveProgress` by default.
    :param run_kwargs: More arguments of ``run_async`` (a subscriber in ``inputs=RunInputs(on_event=...)`` still
        receives every event).
    :returns: The result, a :class:`ResearchResult`.
    """
    messages = [ChatMessage.from_user(question)] if isinstance(question, str) else question
    progress = progress if progress is not None else LiveProgress()
    stream = EventStream(agent, messages=messages, **run_kwargs)
    async for event in stream:
        progress(event)
    return ResearchResult.from_run(cast("dict[str, Any]", stream.result))  # set once the stream has ended
