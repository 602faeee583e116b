"""
What the command shows on stderr while a run goes on, from the run's typed events: :class:`Display` only tracks
(``--progress none``), :class:`PlainDisplay` writes one line per step, tagged with its phase and researcher, and
:class:`RichDisplay` keeps a live view (rich, the ``cli`` extra; ``TTY_COMPATIBLE=1`` makes rich treat stderr as a
terminal), redrawn from the tracker on rich's own refresh thread so drawing never slows events down;
:func:`make_display` picks one. Every text goes through the one door to the terminal, as a rich ``Text`` in the live
view, so a sub-topic or warning is never read as markup.

``--approve-plan`` asks there too: the person at the terminal reviews each planned sub-topic through Haystack's
confirmation hooks, each one shown as text, never as markup (docs/plan-approval.md, "From the command line").
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from typing import TYPE_CHECKING, Any, TextIO

from haystack.hooks.human_in_the_loop import ConfirmationUIResult
from haystack.hooks.human_in_the_loop.policies import AlwaysAskPolicy
from haystack.hooks.human_in_the_loop.strategies import BlockingConfirmationStrategy
from haystack.hooks.human_in_the_loop.types import ConfirmationUI

from haystack_deep_research._untrusted.terminal import LogLines, say, terminal_text
from haystack_deep_research.errors import MissingExtraError, UsageError
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
from haystack_deep_research.options.progress import STATE_MARKS, RunProgress, RunSummary, RunTracker, money

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

__all__ = [
    "ConsolePlanReview",
    "Display",
    "PlainDisplay",
    "RichDisplay",
    "check_approve_plan",
    "console_plan_review",
    "make_display",
    "progress_mode",
    "render_progress",
    "render_summary",
]

_UNSHOWN = (ToolCalled, ToolReturned, UsageRecorded, RunEnded)
"""Events with no line of their own: per-call detail, and the run's end (the summary follows)."""
_MAX_LINE = 240


class Display:
    """Follow a run (``tracker``: a new one by default) and show nothing; the base of the displays."""

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
    """One line per step on ``stream`` (stderr by default), and the summary as ``[done]`` and ``[warning]`` lines."""

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


def _text(text: object, style: str = "", **options: Any) -> Any:
    """Untrusted text as a rich ``Text`` on one line, through the door."""
    from rich.text import Text

    return Text(terminal_text(text, one_line=True), style=style, **options)


def render_progress(progress: RunProgress) -> RenderableType:
    """The live view of where the run stands."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    title = Text.assemble(("deep-research ", "bold"), _text(progress.question or "starting"))
    stages = Text(" → ", style="dim").join(
        Text.assemble(("● ", "yellow") if stage.active else ("✓ ", "green"), f"{stage.name} {stage.seconds:.1f}s")
        for stage in progress.stages
    )
    limit = f" (limit {progress.limit})" if progress.limit else ""
    warnings = f"{len(progress.warnings)} warning{'' if len(progress.warnings) == 1 else 's'}"
    rounds = f"round {progress.rounds} of {progress.depth} · " if progress.depth else ""
    counts = Text(
        f"{rounds}sub-topics {progress.done}/{progress.planned} done{limit} · {progress.pages_read} pages read · "
        f"{progress.tokens:,} tokens · cost {money(progress.cost)} · {warnings} · {progress.seconds:.1f}s"
    )
    parts: list[RenderableType] = [title, stages or Text("starting", style="dim"), counts]
    if progress.researchers:
        table = Table(box=None, pad_edge=False, padding=(0, 1), expand=True)
        table.add_column("#", justify="right", style="dim", no_wrap=True)
        table.add_column("sub-topic", ratio=1, no_wrap=True, overflow="ellipsis")
        for name in ("searches", "pages", "tokens", "time"):
            table.add_column(name, justify="right", no_wrap=True)
        table.add_column("state", no_wrap=True)
        for researcher in progress.researchers:
            mark, style = STATE_MARKS.get(researcher.state, ("?", ""))
            table.add_row(
                str(researcher.slot) if researcher.slot else "-",
                _text(researcher.subtopic),
                f"{researcher.searches} ({researcher.cached} cached)"
                if researcher.cached
                else str(researcher.searches),
                str(researcher.pages),
                f"{researcher.tokens:,}",
                f"{researcher.seconds:.1f}s",
                Text(f"{mark} {researcher.state}", style=style),
            )
        parts.append(table)
    if progress.warnings:
        parts.append(_text(f"warning: {progress.warnings[-1]}", "yellow", no_wrap=True, overflow="ellipsis"))
    return Group(*parts)


def render_summary(summary: RunSummary) -> RenderableType:
    """The summary as a panel: one fact per line, then the warnings."""
    from rich.console import Group
    from rich.panel import Panel

    style = "green" if summary.exit_reason not in ("interrupted", "failed") else "red"
    lines = [_text(summary.lines()[0], f"bold {style}"), *(_text(line) for line in summary.lines()[1:])]
    lines += [_text(f"warning: {warning}", "yellow") for warning in summary.warnings]
    return Panel(Group(*lines), title="deep-research", title_align="left", expand=False)


class RichDisplay(Display):
    """A live view on a rich console (stderr by default), and the summary as a panel."""

    def __init__(
        self, tracker: RunTracker | None = None, *, console: Console | None = None, refresh_per_second: float = 4.0
    ) -> None:
        try:
            from rich.console import Console
            from rich.live import Live
        except ImportError as error:
            raise MissingExtraError("The live display (--progress rich)", extra="cli", module="rich") from error
        super().__init__(tracker)
        self._started = False
        self.console: Console = console or Console(stderr=True)
        self._live: Any = Live(
            console=self.console,
            get_renderable=self._view,
            refresh_per_second=refresh_per_second,
            redirect_stdout=False,
        )

    def log(self, line: str) -> None:
        """Print the record above the live view (rich keeps the view below what is printed), dimmed, on one line."""
        self.console.print(_text(f"[log] {line}", "dim", no_wrap=True, overflow="ellipsis"))

    def _view(self) -> RenderableType:
        return render_progress(self.tracker.progress())

    def start(self) -> None:
        """Start the clock and the live view."""
        super().start()
        self._live.start()
        self._started = True

    def stop(self) -> None:
        """Stop the live view; its last frame stays on screen (printed once when the console is not a terminal)."""
        super().stop()
        if not self._started:
            return
        self._started = False
        self._live.stop()
        if not self.console.is_terminal:
            self.console.line()  # rich ends the frame with a new line only on a terminal

    def summarize(self, summary: RunSummary) -> None:
        """Print the summary panel."""
        self.console.print(render_summary(summary))


def _rich_terminal() -> bool:
    try:
        from rich.console import Console
    except ImportError:
        return False
    return Console(stderr=True).is_terminal


def make_display(mode: str, tracker: RunTracker | None = None) -> Display:
    """The display (not started) a ``--progress`` mode asks for; ``MissingExtraError`` for ``rich`` without rich."""
    if mode == "none":
        return Display(tracker)
    if mode == "plain" or (mode == "auto" and not _rich_terminal()):
        return PlainDisplay(tracker)
    return RichDisplay(tracker)


def check_approve_plan(args: argparse.Namespace) -> None:
    """:raises UsageError: If ``--approve-plan`` has no terminal, or comes with ``--mode iterative`` or a live view."""
    if not args.approve_plan:
        return
    if args.mode != "deep":
        raise UsageError("--approve-plan reviews the sub-topics of --mode deep; drop it or --mode iterative.")
    if not sys.stdin.isatty():
        raise UsageError(
            "--approve-plan asks at the terminal, but stdin is not one; run it in a terminal, or drop --approve-plan."
        )
    if args.progress == "rich":
        raise UsageError(
            "--approve-plan asks at the terminal, which a live view would draw over; use --progress plain."
        )


def progress_mode(args: argparse.Namespace) -> str:
    """:returns: The ``--progress`` mode the display uses: ``auto`` is ``plain`` with ``--approve-plan``."""
    if args.quiet:
        return "none"
    return "plain" if args.approve_plan and args.progress == "auto" else str(args.progress)


def console_plan_review() -> BlockingConfirmationStrategy:
    """The strategy ``--approve-plan`` passes as ``approve_plan``: ask about every sub-topic on stderr."""
    return BlockingConfirmationStrategy(confirmation_policy=AlwaysAskPolicy(), confirmation_ui=ConsolePlanReview())


class ConsolePlanReview(ConfirmationUI):
    """
    A Haystack confirmation UI on a rich console (stderr by default): each planned call shown as text, then ``y``
    researches it, ``n`` drops it (with an optional reason) and ``m`` edits its arguments.
    """

    def __init__(self, console: Console | None = None) -> None:
        try:
            from rich.console import Console
        except ImportError as error:
            raise MissingExtraError("--approve-plan and its console questions", extra="cli", module="rich") from error
        self.console = console or Console(stderr=True)
        self._lock = threading.Lock()  # parallel calls are asked one after the other

    def get_user_confirmation(
        self, tool_name: str, tool_description: str, tool_params: dict[str, Any]
    ) -> ConfirmationUIResult:
        """Ask about one planned call: ``confirm``, ``reject`` (the reason as feedback) or ``modify`` (new values)."""
        from rich.console import Group
        from rich.panel import Panel
        from rich.prompt import Prompt
        from rich.text import Text

        shown = {name: _shown(value) for name, value in tool_params.items()}
        lines = [Text.assemble(("Tool: ", "bold yellow"), terminal_text(tool_name, one_line=True))]
        lines += [Text.assemble((f"{terminal_text(name)}: ", "cyan"), value) for name, value in shown.items()]
        with self._lock:
            self.console.print(Panel(Group(*lines), title="Planned step", title_align="left"))
            choice = Prompt.ask(
                Text("Research it? (y = yes, n = drop it, m = edit it)"),
                choices=["y", "n", "m"],
                default="y",
                console=self.console,
            )
            if choice == "y":
                return ConfirmationUIResult(action="confirm")
            if choice == "n":
                feedback = Prompt.ask(Text("Why (optional)"), default="", console=self.console)
                return ConfirmationUIResult(action="reject", feedback=feedback or None)
            edited = {}
            for name, value in tool_params.items():
                given = Prompt.ask(Text(f"Edit {terminal_text(name)}"), default=shown[name], console=self.console)
                edited[name] = value if given == shown[name] else given if isinstance(value, str) else _parsed(given)
            return ConfirmationUIResult(action="modify", new_tool_params=edited)


def _shown(value: Any) -> str:
    """An argument as the person reads it: text through the door, anything else as JSON."""
    return terminal_text(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False), one_line=True)


def _parsed(given: str) -> Any:
    """An edited argument that was not text: JSON when it reads as JSON, else the text as typed."""
    try:
        return json.loads(given)
    except json.JSONDecodeError:
        return given
