"""
The live view of ``deep-research`` (rich, the ``cli`` extra): the stages, one row per researcher, the counts and cost
so far, the latest warning; then the summary as a panel. It is redrawn from the tracker on rich's own refresh thread,
so drawing never slows events down. Every text is a rich ``Text`` made through
:func:`~haystack_deep_research._untrusted.terminal.terminal_text`: a sub-topic or warning is never read as markup, and
no escape sequence reaches the terminal. Without rich, :class:`RichDisplay` raises ``MissingExtraError``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from haystack_deep_research._untrusted.terminal import terminal_text
from haystack_deep_research.cli.display import Display, PlainDisplay
from haystack_deep_research.errors import MissingExtraError
from haystack_deep_research.options.progress import STATE_MARKS, RunProgress, RunSummary, RunTracker, money

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

__all__ = ["RichDisplay", "make_display", "render_progress", "render_summary"]


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
    """
    A live view on a rich console, and the summary as a panel.

    :param tracker: Where the run stands; a new tracker by default.
    :param console: The console; stderr by default.
    :param refresh_per_second: How often the view is redrawn.
    """

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
    """
    The display (not started) a ``--progress`` mode asks for.

    :raises MissingExtraError: If ``rich`` is asked for and rich is not installed.
    """
    if mode == "none":
        return Display(tracker)
    if mode == "plain" or (mode == "auto" and not _rich_terminal()):
        return PlainDisplay(tracker)
    return RichDisplay(tracker)
