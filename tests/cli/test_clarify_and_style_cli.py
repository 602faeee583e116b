"""``--clarify`` and the report options of the deep-research command."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from haystack import component
from haystack.components.agents import Agent
from haystack.dataclasses import ChatMessage
from tests.support import ListScope

from haystack_deep_research import cli
from haystack_deep_research.options.exit_codes import ExitCode
from haystack_deep_research.testing import ScriptedChatGenerator

ASKED = "Which country should the report cover?"


@component
class RecordingWriter:
    """The scripted writer, keeping every prompt it was sent."""

    def __init__(self) -> None:
        self.inner = ScriptedChatGenerator(role="writer")
        self.received: list[list[ChatMessage]] = []

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, list[ChatMessage]]:
        self.received.append(list(messages))
        return self.inner.run(messages=messages)


class Terminal(io.StringIO):
    """A standard input that is a terminal."""

    def isatty(self) -> bool:
        return True


@pytest.fixture
def scope() -> ListScope:
    return ListScope([json.dumps({"clarification": ASKED}), "Brief: solar capacity in Spain since 2020."])


@pytest.fixture
def writer() -> RecordingWriter:
    return RecordingWriter()


@pytest.fixture(autouse=True)
def scripted(
    monkeypatch: pytest.MonkeyPatch, make_agent: Callable[..., Agent], scope: ListScope, writer: RecordingWriter
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-x")

    def build(**options: Any) -> Agent:
        return make_agent(scope_llm=scope, writer_llm=writer, **options)

    monkeypatch.setattr("haystack_deep_research.cli.research.create_deep_research_agent", build)


def test_without_a_terminal_the_question_is_printed_and_the_exit_status_says_so(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], writer: RecordingWriter
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("Spain\n"))  # piped: not a terminal

    code = cli.main(["How much solar?", "--clarify", "-q"])

    out, err = capsys.readouterr()
    assert code == ExitCode.CLARIFICATION_NEEDED == 3
    assert out.strip() == ASKED
    assert "needs a clarification" in err
    assert writer.received == []


def test_json_carries_the_clarification(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(""))

    assert cli.main(["How much solar?", "--clarify", "--json", "-q"]) == 3

    payload = json.loads(capsys.readouterr().out)
    assert payload["clarification"] == ASKED
    assert payload["exit_reason"] == "clarification_needed"
    assert payload["report"] == ""


def test_on_a_terminal_the_answer_is_read_and_the_research_goes_on(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], scope: ListScope
) -> None:
    monkeypatch.setattr("sys.stdin", Terminal("Spain\n"))

    code = cli.main(["How much solar?", "--clarify", "-q"])

    out, err = capsys.readouterr()
    assert code == 0
    assert ASKED in err
    assert out.startswith("# ")
    second = scope.received[1][-1].text or ""
    assert "How much solar?" in second
    assert "Spain" in second


def test_clarify_is_refused_in_iterative_mode(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["How much solar?", "--clarify", "--mode", "iterative"]) == 2
    assert "--clarify" in capsys.readouterr().err


def test_report_options_reach_the_writer(capsys: pytest.CaptureFixture[str], writer: RecordingWriter) -> None:
    code = cli.main(["How much solar?", "--report-type", "outline", "--tone", "formal", "--length", "short", "-q"])

    assert code == 0
    systems = [prompt[0].text or "" for prompt in writer.received]
    assert systems
    assert all("an outline" in text for text in systems)
    assert all("formal tone" in text for text in systems)
    assert all("about 500 words" in text for text in systems)


@pytest.mark.parametrize(
    ("options", "named"),
    [
        (["--report-type", "poem"], "invalid choice"),
        (["--length", "huge"], "short, medium, long"),
        (["--length", "5"], "from 100 to 20000"),
    ],
)
def test_bad_report_options_are_usage_errors(
    options: list[str], named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["How much solar?", *options, "-q"]) == 2
    assert named in capsys.readouterr().err


def test_a_run_that_only_asked_says_so_and_no_report_is_ready(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # no terminal: the question is printed, nothing researched

    assert cli.main(["How much solar?", "--clarify", "--progress", "plain"]) == ExitCode.CLARIFICATION_NEEDED

    lines = capsys.readouterr().err.splitlines()
    assert any(line.startswith("[scope] a clarifying question for the user") for line in lines)
    assert not [line for line in lines if "report ready" in line or line.startswith("[write]")]
    assert lines[-1].startswith("deep-research: the question needs a clarification (above)")


def _headings(report: str) -> list[str]:
    return [line[3:] for line in report.split("\n") if line.startswith("## ")]


@pytest.mark.parametrize(
    "text",
    [
        "# Plan du rapport\n\nDes mots.\n\n## Croissance\n\n## Coûts «réels»\n",
        "Plan du rapport\n- Croissance\n\nCoûts «réels»\n",
    ],
    ids=["markdown", "lines"],
)
def test_an_outline_file_and_instructions_shape_the_report(
    text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], writer: RecordingWriter
) -> None:
    outline = tmp_path / "plan.md"
    outline.write_text(text, encoding="utf-8")

    code = cli.main(["How much solar?", "--outline", str(outline), "--instructions", "Pour des élus locaux.", "-q"])

    out, err = capsys.readouterr()
    assert code == 0, err
    assert _headings(out) == ["Plan du rapport", "Croissance", "Coûts «réels»", "Sources"]
    systems = [prompt[0].text or "" for prompt in writer.received]
    assert len(systems) == 4  # the title and one call per heading
    assert all("<user_instructions>\nPour des élus locaux.\n</user_instructions>" in text for text in systems)


@pytest.mark.parametrize(
    ("content", "named"),
    [
        ("Growth\ngrowth\n", "--outline {path}: outline heading 2 ('growth') repeats an earlier heading"),
        ("\n\n", "--outline {path} names no heading"),
        (b"\xff\xfe\x00G", "--outline {path} was not read: it is not UTF-8 text"),
        ("x\n" * 40_000, "larger than the 65,536 bytes allowed"),
        (None, "--outline {path} was not read: "),  # a folder, not a regular file
    ],
)
def test_a_bad_outline_file_is_a_usage_error_naming_it(
    content: str | bytes | None, named: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "plan.md"
    if content is None:
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")

    assert cli.main(["How much solar?", "--outline", str(path), "-q"]) == 2
    assert named.format(path=path) in capsys.readouterr().err


def test_too_long_instructions_are_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["How much solar?", "--instructions", "x" * 4001, "-q"]) == 2
    assert "instructions have 4001 characters; at most 4000" in capsys.readouterr().err
