"""
A run's progress in a notebook: one Markdown block, updated in place as the run's typed events arrive (elsewhere, one
line per event through the door to the terminal); docs/notebooks.md.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any, TextIO, cast

from haystack.dataclasses import ChatMessage

from haystack_deep_research import _checks
from haystack_deep_research._untrusted.terminal import say, terminal_text
from haystack_deep_research.events import Event, RunEnded, RunStarted, UsageRecorded
from haystack_deep_research.evidence.text import inert_text
from haystack_deep_research.notebook.result import ResearchResult, in_notebook, ipython_display
from haystack_deep_research.options.progress import RUNNING, STATE_MARKS, RunTracker
from haystack_deep_research.run import EventStream

__all__ = ["LiveProgress", "run_with_progress"]

_RECENT = 5
_MARKS = {state: mark for state, (mark, _) in STATE_MARKS.items()} | {RUNNING: "…"}


class LiveProgress:
    """
    Show a run's progress as it happens.

    ::

        progress = LiveProgress()
        result = await agent.run_async(messages=[...], inputs=RunInputs(on_event=progress))

    :param show: Where the progress block goes: called with the block's Markdown each time it changes. Default: an
        IPython display updated in place when running in a notebook, else one line per event on ``stream``.
    :param stream: Where lines go outside a notebook (default: stderr).
    :param min_interval: Seconds between two updates of the block (0 to 10); the final state is always shown.
    :raises ConfigurationError: If ``min_interval`` is out of range.
    """

    def __init__(
        self,
        *,
        show: Callable[[str], Any] | None = None,
        stream: TextIO | None = None,
        min_interval: float = 0.2,
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
            self._take(event)
            final = isinstance(event, RunEnded)
            now = time.monotonic()
            due = final or now - self._last_shown >= self.min_interval or isinstance(event, RunStarted)
            if due:
                self._last_shown = now
            block = self.to_markdown() if due else None
        if self._show is not None:
            if block is not None:
                self._show(block)
        elif in_notebook():
            if block is not None:
                self._update_display(block)
        else:
            say(terminal_text(f"[{event.phase}] {event.describe()}", one_line=True), file=self._stream or sys.stderr)

    def _take(self, event: Event) -> None:
        self.tracker(event)
        self.phase = event.phase
        if not isinstance(event, RunStarted | RunEnded):
            self.recent.append(event.describe())

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
    agent: Any,
    question: str | list[ChatMessage],
    *,
    progress: LiveProgress | None = None,
    **run_kwargs: Any,
) -> ResearchResult:
    """
    Run an agent with live progress and return its result ready for display: ``await run_with_progress(agent, "...")``.

    The events come through :class:`~haystack_deep_research.run.EventStream`, so the progress block is updated on
    the notebook's event loop. Interrupting the cell cancels the run.

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
