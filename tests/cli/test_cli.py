"""The deep-research command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from haystack.components.agents import Agent

from haystack_deep_research import Budgets, Price, cli
from haystack_deep_research.options.exit_codes import ExitCode, in_words
from haystack_deep_research.testing import LoopbackWebServer


def test_missing_keys_are_one_line_saying_what_to_set() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "haystack_deep_research.cli", "What is new in solar?"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": os.pathsep.join(sys.path)},  # the code under test, no keys
        check=False,
    )
    assert completed.returncode == 2
    assert completed.stdout == ""
    assert completed.stderr.strip().splitlines() == [
        "deep-research: error: set OPENAI_API_KEY in the environment (for example: export OPENAI_API_KEY=...) "
        "or pass --base-url for an OpenAI-compatible server; with no key at all, `python -m "
        "haystack_deep_research.testing serve` serves the testing kit and prints a run to try."
    ]


def test_tavily_asked_for_by_name_needs_its_key(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    assert cli.main(["question", "--search", "tavily"]) == 2
    assert "set TAVILY_API_KEY in the environment" in capsys.readouterr().err


@pytest.fixture
def scripted_cli(monkeypatch: pytest.MonkeyPatch, make_agent: Callable[..., Agent]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-x")
    monkeypatch.setattr("haystack_deep_research.cli.research.create_deep_research_agent", make_agent)


@pytest.mark.usefixtures("scripted_cli")
def test_report_to_stdout_and_progress_to_stderr(capsys: pytest.CaptureFixture[str], web: LoopbackWebServer) -> None:
    assert cli.main(["How fast is solar growing?", "--max-subtopics", "2"]) == 0

    out, err = capsys.readouterr()
    assert out.startswith("# Research report")
    assert web.url("/solar.html") in out
    assert "[scope] writing the research brief" in err
    assert "[write] report ready" in err


@pytest.mark.usefixtures("scripted_cli")
def test_report_and_sources_to_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], web: LoopbackWebServer
) -> None:
    report, sources = tmp_path / "report.md", tmp_path / "sources.json"

    assert cli.main(["How fast is solar growing?", "-o", str(report), "--sources", str(sources), "-q"]) == 0

    out, err = capsys.readouterr()
    assert out == ""
    assert err == ""
    assert "## Sources" in report.read_text(encoding="utf-8")
    urls = {entry["url"] for entry in json.loads(sources.read_text(encoding="utf-8"))}
    assert web.url("/storage.pdf") in urls
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.md", "sources.json"]


def test_a_failing_run_is_one_line_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-x")

    class Broken:
        async def run_async(self, **kwargs: object) -> dict:
            raise ConnectionError("network unreachable")

    monkeypatch.setattr("haystack_deep_research.cli.research.create_deep_research_agent", lambda **options: Broken())
    assert cli.main(["question"]) == 1
    assert capsys.readouterr().err.strip() == (
        "deep-research: error: the run failed: ConnectionError: network unreachable"
    )


def test_a_cache_ttl_without_a_cache_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-x")
    assert cli.main(["question", "--cache-ttl", "60"]) == 2
    assert "--cache-ttl is how long the entries of --cache DIR are used" in capsys.readouterr().err


def test_a_bad_option_value_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-x")
    assert cli.main(["question", "--max-subtopics", "0"]) == 2
    assert capsys.readouterr().err == (
        "deep-research: error: argument --max-subtopics: must be an integer from 1 to 50; got '0' "
        "(see deep-research --help)\n"
    )


@pytest.mark.usefixtures("scripted_cli")
def test_run_dir_and_budgets_reach_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = tmp_path / "run"

    code = cli.main(["How fast is solar growing?", "--run-dir", str(run_dir), "--token-budget", "1000000", "-q"])

    assert code == 0
    assert (run_dir / "journal.jsonl").exists()
    assert capsys.readouterr().out.startswith("# Research report")


@pytest.mark.usefixtures("scripted_cli")
def test_a_spent_token_budget_still_prints_a_report(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["How fast is solar growing?", "--token-budget", "1"]) == 6  # nothing researched; report kept

    out, err = capsys.readouterr()
    assert out.startswith("# Research report")
    assert "[warning] orchestrator: the token budget of 1 tokens" in err


@pytest.mark.usefixtures("scripted_cli")
def test_a_spent_cost_budget_still_prints_a_report(
    monkeypatch: pytest.MonkeyPatch, make_agent: Callable[..., Agent], capsys: pytest.CaptureFixture[str]
) -> None:
    def priced_agent(**options: Any) -> Agent:  # scripted models cost nothing; these are priced like a real model
        priced = Budgets(prices={"ScriptedChatGenerator": Price(input_per_mtok=1e4, output_per_mtok=1e4)})
        return make_agent(**{**options, "budgets": priced.over(options["budgets"])})

    monkeypatch.setattr("haystack_deep_research.cli.research.create_deep_research_agent", priced_agent)

    assert cli.main(["How fast is solar growing?", "--max-cost", "0.5"]) == 6  # nothing researched; report kept

    out, err = capsys.readouterr()
    assert out.startswith("# Research report")
    assert "[warning] orchestrator: the cost budget of $0.5 ($" in err


@pytest.mark.parametrize(
    ("command", "takes"),
    [
        ([], ["QUESTION", "--mode {deep,iterative}", "--price MODEL=INPUT,OUTPUT", "--docs FOLDER"]),
        (["replay"], ["DIR", "-o FILE", "--json", "--price MODEL=INPUT,OUTPUT", "--progress"]),
        (["update"], ["RUN_DIR", "-o FILE", "--model NAME", "--depth DEPTH", "--price MODEL=INPUT,OUTPUT"]),
        (["check"], ["report", "--sources", "--judge"]),
        (["scan"], ["items", "--out", "--schema", "--price MODEL=INPUT,OUTPUT"]),
        (["mcp"], ["--transport", "--port"]),
    ],
    ids=["main", "replay", "update", "check", "scan", "mcp"],
)
def test_every_help_lists_what_it_takes_the_commands_and_the_exit_codes(
    command: list[str], takes: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main([*command, "--help"]) == ExitCode.OK

    shown = " ".join(capsys.readouterr().out.split())
    for option in takes:
        assert option.lower() in shown.lower(), option
    for named in ("deep-research replay DIR", "deep-research update RUN_DIR", "deep-research check REPORT.md"):
        assert named in shown
    assert "deep-research scan ITEMS --out rows.jsonl" in shown
    for code in ExitCode:
        assert f" {code.value} " in shown.split("Exit status:", 1)[1], code
    assert "5 partial" in shown
    assert "143 terminated (SIGTERM)" in shown


def test_errors_name_options_not_python_settings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    long_question = "¿Por qué? " * 2_100  # over the question's limit, in any alphabet

    assert cli.main([long_question, "--base-url", "http://127.0.0.1:9/v1"]) == ExitCode.USAGE

    [line] = capsys.readouterr().err.splitlines()
    assert line.endswith("give long material as documents instead (--docs FOLDER).")
    assert "Sources(" not in line


@pytest.mark.parametrize(
    ("message", "said"),
    [
        ("Pass Budgets(prices={'qwen3:8b': Price(input_per_mtok=..., output_per_mtok=...)}) too.", "--price qwen3:8b="),
        ("use budgets=Budgets(tokens=...) for a whole run", "use --token-budget N for a whole run"),
        ("set TAVILY_API_KEY, or pass search='tavily', for Tavily", "pass --search tavily, for Tavily"),
        ("pass messages=[ChatMessage.from_user('your question')].", 'pass the question: deep-research "your'),
    ],
)
def test_the_command_line_words_of_the_library_settings(message: str, said: str) -> None:
    assert said in in_words(message)
    assert "Budgets(" not in in_words(message)
