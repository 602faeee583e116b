"""The command's displays, fed a run's typed events: exact plain lines, the rich view as rendered text, the summary."""

from __future__ import annotations

import io
from typing import Any

import pytest
from rich.console import Console

from haystack_deep_research.cli import (
    PlainDisplay,
    RichDisplay,
    RunSummary,
    RunTracker,
    make_display,
    render_progress,
    render_summary,
)
from haystack_deep_research.errors import MissingExtraError
from haystack_deep_research.events import (
    Event,
    PageRead,
    PhaseEnded,
    PhaseStarted,
    ReportReady,
    RunEnded,
    RunStarted,
    SearchDone,
    SubagentCompleted,
    SubagentFailed,
    SubagentSpawned,
    ToolCalled,
    UsageRecorded,
    WarningRaised,
)

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
