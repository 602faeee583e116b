"""deep-research --approve-plan: the person at the terminal reviews the plan; without a terminal it is a usage error."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import pytest
from haystack.components.agents import Agent

from haystack_deep_research import cli
from haystack_deep_research.testing import ScriptedChatGenerator

HOSTILE = "[bold]hidden[/bold] storage [/cyan] \x1b]52;c;ZXZpbA==\x07costs\x1b[2K"


class Terminal(io.StringIO):
    """Typed answers on a stdin that says it is a terminal."""

    def isatty(self) -> bool:
        return True


@pytest.fixture
def scripted_cli(monkeypatch: pytest.MonkeyPatch, make_agent: Callable[..., Agent]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-x")
    monkeypatch.setattr("haystack_deep_research.cli.research.create_deep_research_agent", make_agent)


@pytest.mark.usefixtures("scripted_cli")
@pytest.mark.parametrize(
    ("options", "message"),
    [
        ([], "--approve-plan asks at the terminal, but stdin is not one; run it in a terminal, or drop --approve-plan"),
        (["--mode", "iterative"], "--approve-plan reviews the sub-topics of --mode deep; drop it or --mode iterative"),
    ],
)
def test_approve_plan_without_a_terminal_is_a_one_line_usage_error(
    options: list[str], message: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))

    code = cli.main(["How fast is solar growing?", "--approve-plan", *options])

    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    assert err.splitlines() == [f"deep-research: error: {message}."]


@pytest.mark.usefixtures("scripted_cli")
def test_a_live_view_is_refused_with_approve_plan(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", Terminal("y\n"))

    assert cli.main(["How fast is solar growing?", "--approve-plan", "--progress", "rich"]) == 2
    assert "use --progress plain" in capsys.readouterr().err


@pytest.mark.usefixtures("scripted_cli")
def test_the_person_at_the_terminal_accepts_one_subtopic_and_drops_the_other(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", Terminal("y\nn\nnot needed\n"))  # accept, then reject with feedback

    code = cli.main(["How fast is solar growing?", "--approve-plan"])

    out, err = capsys.readouterr()
    assert code == 0
    assert out.startswith("# Research report")
    assert "Planned step" in err  # the console review asked, on stderr
    assert "plan: accepted: solar capacity" in err
    assert "plan: dropped: battery storage" in err
    assert "researching: battery storage" not in err


def test_a_subtopic_written_as_markup_and_escape_sequences_is_shown_literally_and_researched_as_shown(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], make_agent: Callable[..., Agent]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-x")
    orchestrator = ScriptedChatGenerator(role="orchestrator", subtopics=[HOSTILE])

    def build(**options: Any) -> Agent:
        return make_agent(orchestrator_llm=orchestrator, **options)

    monkeypatch.setattr("haystack_deep_research.cli.research.create_deep_research_agent", build)
    monkeypatch.setattr("sys.stdin", Terminal("y\n"))

    code = cli.main(["How fast is solar growing?", "--approve-plan"])

    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.startswith("# Research report")
    assert "\x1b" not in err
    assert "\x07" not in err
    assert "[bold]hidden[/bold] storage [/cyan] costs" in err  # in the question, brackets and all
    assert "plan: accepted: [bold]hidden[/bold] storage [/cyan] costs" in err


def test_the_plan_review_edits_a_subtopic_shown_as_text_and_serializes_without_its_console(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from haystack.hooks.human_in_the_loop import BlockingConfirmationStrategy
    from rich.console import Console

    from haystack_deep_research.cli.display import ConsolePlanReview, console_plan_review

    screen = io.StringIO()
    review = ConsolePlanReview(console=Console(file=screen, width=200, force_terminal=False))
    monkeypatch.setattr("sys.stdin", Terminal("m\nsolar in Spain\nm\n\n"))

    edited = review.get_user_confirmation("research_subtopic", "Research one sub-topic.", {"subtopic": HOSTILE})
    kept = review.get_user_confirmation("research_subtopic", "Research one sub-topic.", {"subtopic": HOSTILE})

    assert (edited.action, edited.new_tool_params) == ("modify", {"subtopic": "solar in Spain"})
    assert kept.new_tool_params == {"subtopic": HOSTILE}  # the default taken as shown: the sub-topic as planned
    assert "\x1b" not in screen.getvalue()
    assert "subtopic: [bold]hidden[/bold] storage [/cyan] costs" in screen.getvalue()
    restored = BlockingConfirmationStrategy.from_dict(console_plan_review().to_dict())
    assert type(restored.confirmation_ui) is ConsolePlanReview
