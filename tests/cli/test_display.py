"""The command's displays, fed a run's typed events: exact plain lines, the rich view as rendered text, the summary."""

from __future__ import annotations

import ast
import io
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

import haystack_deep_research
from haystack_deep_research._untrusted.terminal import terminal_text
from haystack_deep_research.cli.display import PlainDisplay, RichDisplay, make_display, render_progress, render_summary
from haystack_deep_research.errors import MissingExtraError
from haystack_deep_research.events import (
    Event,
    PageRead,
    PhaseEnded,
    PhaseStarted,
    ReportReady,
    RunEnded,
    RunStarted,
    SearchDecided,
    SearchDone,
    SearchRoundDone,
    SubagentCompleted,
    SubagentFailed,
    SubagentSpawned,
    ToolCalled,
    UsageRecorded,
    WarningRaised,
)
from haystack_deep_research.options.progress import RunSummary, RunTracker

QUESTION = "How fast is solar growing?"


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _story() -> list[tuple[float, Event]]:
    """A run's events, each after so many seconds: two researchers, one of which fails."""
    return [
        (0.0, RunStarted(phase="run", question=QUESTION)),
        (0.0, PhaseStarted(phase="scope", detail="writing the research brief")),
        (2.0, UsageRecorded(phase="scope", tokens=300, run_tokens=300, cost=0.001)),
        (0.0, PhaseEnded(phase="scope", detail="brief ready")),
        (0.5, ToolCalled(phase="orchestrator", tool="research_subtopic", arguments={"subtopic": "solar capacity"})),
        (0.0, SubagentSpawned(phase="research", subtopic="solar capacity", slot=1, planned=2, limit=5)),
        (0.0, SubagentSpawned(phase="research", subtopic="battery storage", slot=2, planned=2, limit=5)),
        (1.0, SearchDone(phase="research", researcher="solar capacity", query="solar 2025", results=3)),
        (0.5, PageRead(phase="research", researcher="solar capacity", url="https://example.org/solar")),
        (0.0, UsageRecorded(phase="summarize", researcher="solar capacity", tokens=700, run_tokens=1000, cost=0.004)),
        (0.5, WarningRaised(phase="research", researcher="battery storage", text="the researcher for 'x' failed")),
        (0.0, SubagentFailed(phase="research", subtopic="battery storage", error="ConnectionError: reset")),
        (2.0, UsageRecorded(phase="research", researcher="solar capacity", tokens=800, run_tokens=1800, cost=0.006)),
        (0.0, SubagentCompleted(phase="research", subtopic="solar capacity", note="## solar capacity\n\n...")),
        (1.0, PhaseStarted(phase="write", detail="writing the report from 1 notes and 1 sources")),
        (3.0, ReportReady(phase="write", verified=3, removed=1)),
        (0.0, RunEnded(phase="run", exit_reason="text", notes=1, sources=1, warnings=1)),
    ]


def _play(display: Any, clock: Clock) -> None:
    for seconds, event in _story():
        clock.now += seconds
        display(event)


def _result() -> dict[str, Any]:
    return {
        "report": "# Report\n",
        "exit_reason": "text",
        "sources": [{"kind": "page", "url": "https://example.org/solar"}, {"kind": "search_result", "url": "x"}],
        "citations": {"verified": [{}, {}, {}], "unverified": [{}]},
        "warnings": ["research: the researcher for 'x' failed"],
        "usage_by_phase": {"scope": {"total_tokens": 300}, "research": {"total_tokens": 1500}},
        "cost": 0.006,
    }


def test_plain_lines_tag_each_step_with_its_phase_and_researcher() -> None:
    clock, stream = Clock(), io.StringIO()
    display = PlainDisplay(RunTracker(clock=clock), stream=stream)
    display.start()

    _play(display, clock)

    assert stream.getvalue().splitlines() == [
        f"[run] researching: {QUESTION}",
        "[scope] writing the research brief",
        "[scope] brief ready (2.0s)",
        "[research] [1/2] researching: solar capacity",
        "[research] [2/2] researching: battery storage",
        "[research #1] searched 'solar 2025': 3 result(s)",
        "[research #1] read https://example.org/solar",
        "[research #2] warning: the researcher for 'x' failed",
        "[research #2] failed: battery storage (ConnectionError: reset)",
        "[research #1] done: solar capacity (1 search, 1 page read, 1,500 tokens, 4.0s)",
        "[write] writing the report from 1 notes and 1 sources",
        "[write] report ready (3 citations verified)",
    ]


def test_plain_summary_lines() -> None:
    clock, stream = Clock(), io.StringIO()
    display = PlainDisplay(RunTracker(clock=clock), stream=stream)
    display.start()
    _play(display, clock)
    stream.truncate(0)
    stream.seek(0)

    display.summarize(RunSummary.of(_result(), display.tracker.progress(), saved=("report written to report.md",)))

    assert stream.getvalue().splitlines() == [
        "[done] finished in 10.5s (exit reason: text)",
        "[done] sub-topics: 1 done of 2 planned (1 failed)",
        "[done] sources: 1 read, 2 found; citations: 3 verified, 1 removed",
        "[done] tokens: 1,800; cost: $0.0060 (estimated)",
        "[done] report written to report.md",
        "[warning] research: the researcher for 'x' failed",
    ]


def test_a_line_of_model_written_text_stays_one_line() -> None:
    stream = io.StringIO()
    display = PlainDisplay(stream=stream)

    display(SubagentSpawned(phase="research", subtopic="solar\n\ncapacity " + "x" * 400, slot=1, planned=1))

    [line] = stream.getvalue().splitlines()
    assert line.startswith("[research] [1/1] researching: solar capacity xxx")
    assert len(line) == 240
    assert line.endswith("…")


def test_the_tracker_knows_stages_researchers_tokens_and_cost() -> None:
    clock = Clock()
    tracker = RunTracker(clock=clock)
    tracker.start()

    _play(tracker, clock)
    progress = tracker.progress()

    assert [(stage.name, stage.seconds, stage.active) for stage in progress.stages] == [
        ("scope", 2.0, False),
        ("research", 5.0, False),
        ("write", 3.0, False),
    ]
    solar, battery = progress.researchers
    assert (solar.slot, solar.state, solar.searches, solar.pages, solar.tokens, solar.seconds) == (
        1,
        "done",
        1,
        1,
        1500,
        4.0,
    )
    assert (battery.state, battery.error) == ("failed", "ConnectionError: reset")
    assert (progress.planned, progress.limit, progress.done, progress.failed) == (2, 5, 1, 1)
    assert (progress.tokens, progress.cost, progress.pages_read) == (1800, 0.006, 1)
    assert (progress.verified, progress.removed, progress.exit_reason, progress.seconds) == (3, 1, "text", 10.5)


def test_ctrl_c_stops_the_researchers_still_running() -> None:
    clock = Clock()
    tracker = RunTracker(clock=clock)
    tracker(SubagentSpawned(phase="research", subtopic="solar capacity", slot=1, planned=1))
    clock.now += 3

    tracker.interrupt()
    clock.now += 60

    [solar] = tracker.progress().researchers
    assert (solar.state, solar.seconds) == ("stopped", 3.0)
    assert tracker.progress().seconds == 3.0


def test_usage_events_arriving_out_of_order_never_lower_the_count() -> None:
    tracker = RunTracker()
    tracker(UsageRecorded(phase="research", tokens=10, run_tokens=500, cost=0.5))
    tracker(UsageRecorded(phase="research", tokens=10, run_tokens=490, cost=0.4))

    assert (tracker.progress().tokens, tracker.progress().cost) == (500, 0.5)


def _rendered(renderable: Any, width: int = 100) -> str:
    console = Console(file=io.StringIO(), width=width, force_terminal=False)
    console.print(renderable)
    return console.file.getvalue()  # type: ignore[attr-defined]


def test_the_live_view_shows_stages_researchers_and_totals() -> None:
    clock = Clock()
    tracker = RunTracker(clock=clock)
    _play(tracker, clock)

    lines = [line.rstrip() for line in _rendered(render_progress(tracker.progress())).splitlines()]

    assert lines[0] == f"deep-research {QUESTION}"
    assert lines[1] == "✓ scope 2.0s → ✓ research 5.0s → ✓ write 3.0s"
    assert lines[2] == (
        "sub-topics 1/2 done (limit 5) · 1 pages read · 1,800 tokens · cost $0.0060 · 1 warning · 10.5s"
    )
    assert lines[3].split() == ["#", "sub-topic", "searches", "pages", "tokens", "time", "state"]
    assert lines[4].split() == ["1", "solar", "capacity", "1", "1", "1,500", "4.0s", "✓", "done"]
    assert lines[5].split() == ["2", "battery", "storage", "0", "0", "0", "2.0s", "✗", "failed"]
    assert lines[6] == "warning: research: the researcher for 'x' failed"


def test_the_live_view_while_researching() -> None:
    clock = Clock()
    tracker = RunTracker(clock=clock)
    for seconds, event in _story()[:9]:
        clock.now += seconds
        tracker(event)
    clock.now += 1.0

    text = _rendered(render_progress(tracker.progress()))

    assert "✓ scope 2.0s → ● research 2.5s" in text
    assert "sub-topics 0/2 done (limit 5)" in text
    assert "● running" in text
    assert "cost $0.0010" in text


def test_a_rich_display_off_a_terminal_prints_its_last_frame_once_without_escape_codes() -> None:
    clock = Clock()
    console = Console(file=io.StringIO(), width=100, force_terminal=False)
    display = RichDisplay(RunTracker(clock=clock), console=console, refresh_per_second=100)

    display.start()
    _play(display, clock)
    display.stop()
    display.summarize(RunSummary.of(_result(), display.tracker.progress()))

    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert "\x1b[" not in text
    assert text.count(f"deep-research {QUESTION}") == 1
    assert "✓ scope 2.0s → ✓ research 5.0s → ✓ write 3.0s\n" in text
    assert "│ finished in 10.5s (exit reason: text)" in text
    assert "│ warning: research: the researcher for 'x' failed" in text


def test_a_rich_display_on_a_terminal_draws_live_and_leaves_the_last_frame() -> None:
    clock = Clock()
    console = Console(file=io.StringIO(), width=100, force_terminal=True, color_system=None)
    display = RichDisplay(RunTracker(clock=clock), console=console)

    display.start()
    _play(display, clock)
    display.stop()

    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert text.startswith("\x1b[?25l")  # a live view hides the cursor while it draws, and shows it again
    assert text.endswith("warning: research: the researcher for 'x' failed\n\x1b[?25h")


def test_the_summary_of_an_interrupted_run() -> None:
    result = {**_result(), "exit_reason": "interrupted", "citations": {}, "usage_by_phase": {}, "cost": None}
    tracker = RunTracker()

    text = _rendered(render_summary(RunSummary.of(result, tracker.progress())))

    assert "interrupted (Ctrl-C) after" in text
    assert "citations: no report was checked" in text
    assert "tokens: 0; cost: unknown" in text


@pytest.mark.parametrize(("mode", "kind"), [("plain", PlainDisplay), ("rich", RichDisplay)])
def test_a_progress_mode_chooses_its_display(mode: str, kind: type) -> None:
    assert type(make_display(mode)) is kind


def test_auto_is_plain_off_a_terminal_and_rich_on_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    assert type(make_display("auto")) is PlainDisplay  # pytest captures stderr: not a terminal
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    assert type(make_display("auto")) is RichDisplay


def test_nothing_is_shown_with_none(capsys: pytest.CaptureFixture[str]) -> None:
    display = make_display("none")
    display.start()
    _play(display, Clock())
    display.stop()
    display.summarize(RunSummary.of(_result(), display.tracker.progress()))

    assert capsys.readouterr() == ("", "")
    assert display.tracker.progress().exit_reason == "text"


def test_rich_asked_for_without_rich_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(__import__("sys").modules, "rich.live", None)  # as if rich were not installed

    with pytest.raises(MissingExtraError, match=r"haystack-deep-research\[cli\]"):
        make_display("rich")


HOSTILE = "[bold]hidden[/bold] costs [/cyan] \x1b]52;c;ZXZpbA==\x07of\x1b[2K storage \u202eevil"
"""A sub-topic as a model may write it: Rich markup, a stray closing tag, a clipboard write, an erase-line, a
right-to-left override."""
SHOWN = "[bold]hidden[/bold] costs [/cyan] of storage evil"


def _hostile_story() -> list[Event]:
    return [
        RunStarted(phase="run", question=f"Why {HOSTILE}?"),
        SubagentSpawned(phase="research", subtopic=HOSTILE, slot=1, planned=1, limit=5),
        SearchDone(phase="research", researcher=HOSTILE, query=f"{HOSTILE} 2025", results=2),
        WarningRaised(phase="research", researcher=HOSTILE, text=f"the page of {HOSTILE} failed"),
        SubagentCompleted(phase="research", subtopic=HOSTILE, note="## note"),
    ]


def test_the_door_removes_escape_sequences_and_controls_and_keeps_what_was_written() -> None:
    assert terminal_text(HOSTILE) == SHOWN
    assert terminal_text("a\x1b[31mred\x1b[0m\x9b2Jb\x07\x00c\r\nd\re") == "ared2Jbc\nd\ne"
    assert terminal_text("title\x1bP1$r\x1b\\ and \x1b]0;owned\x1b\\ end") == "title and  end"
    assert terminal_text("línea\n\tdos", one_line=True) == "línea dos"
    assert terminal_text("[/cyan] [b]x[/b]", markup=True) == "\\[/cyan] \\[b]x\\[/b]"
    assert terminal_text("中文 résumé 🙂 [1]") == "中文 résumé 🙂 [1]"


def test_model_written_text_reaches_the_plain_lines_as_written_without_escape_sequences() -> None:
    stream = io.StringIO()
    display = PlainDisplay(stream=stream)
    for event in _hostile_story():
        display(event)
    display.summarize(RunSummary.of({"warnings": [f"research: {HOSTILE}"]}, display.tracker.progress()))

    text = stream.getvalue()
    assert "\x1b" not in text
    assert "\x07" not in text
    assert "\u202e" not in text
    lines = text.splitlines()
    assert lines[0] == f"[run] researching: Why {SHOWN}?"
    assert lines[1] == f"[research] [1/1] researching: {SHOWN}"
    assert lines[2] == f"[research #1] searched '{SHOWN} 2025': 2 result(s)"
    assert lines[-1] == f"[warning] research: {SHOWN}"


def test_model_written_text_in_the_live_view_and_its_summary_is_text_not_markup() -> None:
    tracker = RunTracker()
    for event in _hostile_story():
        tracker(event)
    summary = RunSummary.of({"warnings": [f"research: {HOSTILE}"]}, tracker.progress())
    console = Console(file=io.StringIO(), width=200, force_terminal=True, color_system=None)

    console.print(render_progress(tracker.progress()))  # a stray [/cyan] raised MarkupError here
    console.print(render_summary(summary))
    display = RichDisplay(tracker, console=console)
    display.log(f"warning: {HOSTILE}")

    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert "\x1b" not in text
    assert f"deep-research Why {SHOWN}?" in text
    assert SHOWN in text.split("sub-topic", 1)[1]  # the researcher's row shows the brackets
    assert f"warning: research: the page of {SHOWN} failed" in text
    assert f"warning: research: {SHOWN}" in text
    assert f"[log] warning: {SHOWN}" in text


def test_searches_the_cache_served_are_marked_in_the_done_line_and_the_live_view() -> None:
    stream = io.StringIO()
    display = PlainDisplay(stream=stream)
    display(SubagentSpawned(phase="research", subtopic="solar", slot=1, planned=1))
    display(SearchDone(phase="research", researcher="solar", query="solar 2025", results=2, cached=True))
    display(SearchDone(phase="research", researcher="solar", query="solar 2026", results=1))
    display(SubagentCompleted(phase="research", subtopic="solar", note="## solar"))

    lines = stream.getvalue().splitlines()
    assert lines[1] == "[research #1] searched 'solar 2025': 2 result(s) (cached)"
    assert lines[3].startswith("[research #1] done: solar (2 searches (1 cached), 0 pages read, 0 tokens, ")
    assert "2 (1 cached)" in _rendered(render_progress(display.tracker.progress()))


def test_the_iterative_rounds_count_their_topics_and_say_which_round_of_how_many() -> None:
    stream = io.StringIO()
    display = PlainDisplay(stream=stream)
    display.start()
    events: list[Event] = [
        RunStarted(phase="run", question=QUESTION),
        SearchDecided(phase="analyze", topics=("solar capacity",), should_continue=True, round=1),
        SearchDone(phase="research", researcher="solar capacity", query="solar capacity", results=1, cached=True),
        SearchRoundDone(phase="search", round=1, depth=2, topics=("solar capacity",)),
        SearchDecided(phase="analyze", topics=("battery storage", "grid"), should_continue=True, round=2),
        SearchRoundDone(phase="search", round=2, depth=2, topics=("battery storage", "grid")),
        RunEnded(phase="run", exit_reason="depth_reached"),
    ]
    for event in events:
        display(event)
    progress = display.tracker.progress()
    display.summarize(RunSummary.of({"exit_reason": "depth_reached"}, progress))

    lines = stream.getvalue().splitlines()
    assert "[research #1] searched 'solar capacity': 1 result(s) (cached)" in lines
    assert "[search] search round 1 of 2 done (1 topic)" in lines
    assert "[search] search round 2 of 2 done (2 topics)" in lines
    assert "[done] topics: 3 searched of 3 chosen, in 2 rounds of at most 2" in lines
    assert not [line for line in lines if "0 planned" in line or "th search" in line]
    assert [(r.slot, r.subtopic, r.state) for r in progress.researchers] == [
        (1, "solar capacity", "done"),
        (2, "battery storage", "done"),
        (3, "grid", "done"),
    ]
    assert "round 2 of 2 · sub-topics 3/3 done" in _rendered(render_progress(progress))


def test_the_summary_of_a_terminated_run_names_sigterm() -> None:
    result = {**_result(), "exit_reason": "interrupted", "citations": {}, "usage_by_phase": {}, "cost": None}

    summary = RunSummary.of(result, RunTracker().progress(), terminated=True)

    assert summary.lines()[0].startswith("terminated (SIGTERM) after ")
    assert "Ctrl-C" not in _rendered(render_summary(summary))


# What prints to a terminal, by module and function: each call goes through terminal_text (say prints through it;
# the rich views are Text made through it), or prints only the library's own words.
TERMINAL_CALLS = {
    "_untrusted/terminal.py::say": "print",  # the door's printer: every line of the commands
    "cli/display.py::RichDisplay.log": ".print",
    "cli/display.py::RichDisplay.summarize": ".print",
    "cli/display.py::ConsolePlanReview.get_user_confirmation": ".print, Prompt.ask",
    "testing/_kit.py::main": "print",  # the kit's own addresses and commands, no text from outside
}


def _terminal_calls() -> dict[str, set[str]]:
    """Every call that writes to a terminal: print(), a console's .print(), sys.stdout/stderr.write, Prompt.ask."""
    package = Path(haystack_deep_research.__file__).parent
    found: dict[str, set[str]] = {}
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        scopes: list[tuple[ast.AST, str]] = [(tree, "")]
        while scopes:
            node, scope = scopes.pop()
            for child in ast.iter_child_nodes(node):
                inner = scope
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    inner = f"{scope}.{child.name}" if scope else child.name
                scopes.append((child, inner))
                if not isinstance(child, ast.Call):
                    continue
                func, kind = child.func, None
                if isinstance(func, ast.Name) and func.id in ("print", "input"):
                    kind = func.id
                elif isinstance(func, ast.Attribute) and func.attr == "print":
                    kind = ".print"
                elif isinstance(func, ast.Attribute) and ast.unparse(func) in ("sys.stderr.write", "sys.stdout.write"):
                    kind = ast.unparse(func)
                elif isinstance(func, ast.Attribute) and ast.unparse(func) == "Prompt.ask":
                    kind = "Prompt.ask"
                if kind is not None:
                    found.setdefault(f"{path.relative_to(package).as_posix()}::{scope}", set()).add(kind)
    return found


def test_every_print_to_a_terminal_is_a_known_call_through_the_door() -> None:
    found = _terminal_calls()

    assert {site: ", ".join(sorted(kinds)) for site, kinds in found.items()} == TERMINAL_CALLS
    for site in TERMINAL_CALLS:
        module = site.split("::")[0]
        source = (Path(haystack_deep_research.__file__).parent / module).read_text(encoding="utf-8")
        assert "terminal_text" in source or module.startswith("testing/"), f"{module} prints without the door"


def test_a_warning_of_the_library_names_options_on_the_command_line() -> None:
    from haystack_deep_research.sources.selection import KEYLESS_NOTICE

    stream = io.StringIO()
    display = PlainDisplay(stream=stream)
    display.start()
    display.show(WarningRaised(phase="research", text=KEYLESS_NOTICE))
    cost = "the run's cost is unknown: no price is known for model 'm'; pass budgets=Budgets(prices={'m': Price(...)})"
    display.summarize(RunSummary.of({"warnings": [cost]}, display.tracker.progress()))

    out = stream.getvalue()
    assert "pass --search tavily, for Tavily" in out
    assert "pass --price m=INPUT,OUTPUT" in out
    assert "search='tavily'" not in out
    assert "Budgets(" not in out
