"""The deep-research command's iterative mode: --mode iterative, --depth, --cache, --record, replay and update."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from haystack_deep_research import Sources, UrlPolicy, WebSearchTool, cli, create_iterative_research_agent
from haystack_deep_research.agents import IterativeResearchAgent
from haystack_deep_research.settings import Price
from haystack_deep_research.testing import (
    LoopbackSearchServer,
    LoopbackWebServer,
    ScriptedChatGenerator,
    kit_commands,
    serve_kit,
)

LOOPBACK = UrlPolicy(allow_hosts=("127.0.0.1",))


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch, make_search_tool: Callable[..., WebSearchTool]) -> list[dict[str, Any]]:
    """The command builds its iterative agents with scripted models and the loopback servers; what it asked for."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-x")
    asked: list[dict[str, Any]] = []

    def factory(**options: Any) -> IterativeResearchAgent:
        asked.append(options)
        scripted = {
            "analysis_llm": ScriptedChatGenerator(role="analysis", steps=["solar capacity", "battery storage"]),
            "writer_llm": ScriptedChatGenerator(role="writer"),
            "summarizer_llm": ScriptedChatGenerator(role="summarizer"),
        }
        if options.get("replay_from") is not None:  # the recording's models, as the command made them
            scripted = {role: options[role] for role in scripted if role in options}
        tool = make_search_tool(max_results=2)
        given = options.get("sources") or Sources()  # the command's sources, searched on the loopback servers
        sources = dataclasses.replace(given, search=tool, url_policy=LOOPBACK) if given.web else given
        return create_iterative_research_agent(**{**options, **scripted, "sources": sources})

    monkeypatch.setattr("haystack_deep_research.cli.research.create_iterative_research_agent", factory)
    return asked


def test_iterative_mode_shows_the_rounds_and_prints_the_report(
    built: list[dict[str, Any]], capsys: pytest.CaptureFixture[str], web: LoopbackWebServer
) -> None:
    assert cli.main(["--mode", "iterative", "--depth", "2", "How fast is solar growing?"]) == 0

    out, err = capsys.readouterr()
    assert built[0]["depth"] == 2
    assert "[search] search round 1 of 2 done (1 topic)" in err
    assert "[search] search round 2 of 2 done (1 topic)" in err
    assert out.startswith("# How fast is solar growing?")
    assert web.url("/solar.html") in out


def test_cache_makes_the_second_run_search_nothing(
    built: list[dict[str, Any]], search: LoopbackSearchServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--mode", "iterative", "--depth", "2", "--cache", str(tmp_path), "How fast is solar growing?"]
    assert cli.main(argv) == 0
    searched = len(search.requests.wait_for(2))

    assert cli.main(argv) == 0

    assert built[1]["cache"].directory == tmp_path
    assert len(search.requests) == searched  # the command has returned: any search it made is in the log
    assert "(cached)" in capsys.readouterr().err


def test_a_recorded_run_replays_with_no_network(
    built: list[dict[str, Any]],
    search: LoopbackSearchServer,
    web: LoopbackWebServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    tape = tmp_path / "tape"
    assert cli.main(["--mode", "iterative", "--depth", "2", "--record", str(tape), "-q", "Solar growth?"]) == 0
    recorded = capsys.readouterr().out
    manifest = json.loads((tape / "recording.json").read_text(encoding="utf-8"))
    requests = len(search.requests.wait_for(2)) + len(web.requests.wait_for(2))
    search_url = search.base_url  # the replay is built with the recorded search engine, which it never calls
    web.stop()

    assert cli.main(["replay", str(tape), "-q"]) == 0

    assert capsys.readouterr().out == recorded
    assert manifest["question"] == "Solar growth?"
    assert manifest["depth"] == 2
    assert built[-1]["replay_from"] == tape
    assert search.base_url == search_url
    assert requests == len(search.requests) + len(web.requests)


def test_a_grounded_recording_replays_with_its_recorded_judge(
    built: list[dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tape = tmp_path / "tape"
    argv = ["--mode", "iterative", "--depth", "1", "--grounding", "--record", str(tape), "-q", "Solar growth?"]
    assert cli.main(argv) == 0
    recorded = capsys.readouterr().out

    assert cli.main(["replay", str(tape), "-q"]) == 0

    assert capsys.readouterr().out == recorded
    assert json.loads((tape / "recording.json").read_text(encoding="utf-8"))["models"]["judge_llm"]
    assert built[-1]["grounding"].judge_llm is not None  # the recorded judge, replayed


def test_update_researches_a_finished_run_again(
    built: list[dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "run"
    assert cli.main(["--mode", "iterative", "--depth", "1", "--run-dir", str(run_dir), "-q", "Solar growth?"]) == 0
    capsys.readouterr()

    assert cli.main(["update", str(run_dir), "--depth", "2"]) == 0

    out, err = capsys.readouterr()
    assert "## What changed since the last run" in out
    assert (run_dir / "report.md").read_text(encoding="utf-8").strip() == out.strip()
    assert re.search(r"claims since the last run: \d+ new, \d+ changed, \d+ no longer supported", err)


def test_update_and_replay_of_a_directory_without_a_run_are_usage_errors(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert cli.main(["update", str(tmp_path)]) == 2
    assert "holds no journal of a run" in capsys.readouterr().err
    assert cli.main(["replay", str(tmp_path)]) == 2
    assert "holds no recording made with --record" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("manifest", "field"),
    [
        ([], "'the whole file'"),
        ({"question": "Solar growth?", "depth": "three", "models": {"analysis_llm": "a"}}, "'depth'"),
        ({"question": "Solar growth?", "models": ["analysis_llm", "writer_llm"]}, "'models'"),
        ({"question": "Solar growth?", "models": {"writer_llm": "w"}}, "'models'"),
        ({"models": {"analysis_llm": "a", "writer_llm": "w"}}, "'question'"),
        ("[" * 1200, "is not JSON"),
    ],
)
def test_replay_of_a_damaged_recording_json_is_a_usage_error_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], manifest: Any, field: str
) -> None:
    (tmp_path / "exchanges.jsonl").write_text("", encoding="utf-8")
    text = manifest if isinstance(manifest, str) else json.dumps(manifest)
    (tmp_path / "recording.json").write_text(text, encoding="utf-8")

    assert cli.main(["replay", str(tmp_path)]) == 2

    err = capsys.readouterr().err
    assert "recording.json" in err
    assert field in err
    assert "Traceback" not in err


def test_iterative_mode_takes_the_shared_model_options(
    built: list[dict[str, Any]], capsys: pytest.CaptureFixture[str], web: LoopbackWebServer, model_server: str
) -> None:
    server = model_server
    argv = ["--mode", "iterative", "--depth", "1", "--base-url", server, "--model", "m", "--price", "m=0,0"]
    assert cli.main([*argv, "--timeout", "5", "--retries", "0", "--max-tokens", "300", "Solar?"]) == 0

    analysis = built[0]["analysis_llm"]
    assert (analysis.model, analysis.api_base_url, analysis.timeout, analysis.max_retries) == ("m", server, 5.0, 0)
    assert analysis.generation_kwargs == {"max_tokens": 300}
    assert built[0]["budgets"].prices == {"m": Price(input_per_mtok=0, output_per_mtok=0)}


def test_a_replay_keeps_the_recordings_prices_and_a_price_given_to_it_wins(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tape = str(tmp_path / "tape")
    with serve_kit() as kit:
        argv = [*kit_commands(kit)["iterative"][1:], "--depth", "1"]
        assert cli.main([*argv, "--record", tape, "--price", "kit=1,2", "--json", "-q"]) == 0
    recorded = json.loads(capsys.readouterr().out)

    assert cli.main(["replay", tape, "--json", "-q"]) == 0  # the kit is gone: no network, no model
    replayed = json.loads(capsys.readouterr().out)
    assert cli.main(["replay", tape, "--price", "kit=10,20", "--json", "-q"]) == 0
    repriced = json.loads(capsys.readouterr().out)

    write = recorded["usage_by_phase"]["write"]["cost"]
    assert write > 0
    assert replayed["usage_by_phase"]["write"]["cost"] == write
    assert not [warning for warning in replayed["warnings"] if "cost is unknown" in warning]
    assert repriced["usage_by_phase"]["write"]["cost"] == pytest.approx(10 * write)


def _headings(report: str) -> list[str]:
    return [line[3:] for line in report.split("\n") if line.startswith("## ")]


def test_a_recording_keeps_its_outline_and_instructions_and_replays_them(
    built: list[dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outline = tmp_path / "outline.txt"
    outline.write_text("Wachstum\nSpeicher und Netz\n", encoding="utf-8")
    tape = tmp_path / "tape"
    argv = ["--mode", "iterative", "--depth", "1", "--outline", str(outline), "--instructions", "Kurz, bitte."]
    assert cli.main([*argv, "--record", str(tape), "-q", "Solar growth?"]) == 0
    recorded = capsys.readouterr().out
    outline.unlink()  # the recording holds the style itself

    assert cli.main(["replay", str(tape), "-q"]) == 0

    assert capsys.readouterr().out == recorded
    assert _headings(recorded) == ["Wachstum", "Speicher und Netz", "Sources"]
    assert built[-1]["style"].outline == ("Wachstum", "Speicher und Netz")
    assert built[-1]["style"].instructions == "Kurz, bitte."


def test_update_keeps_the_runs_outline_and_instructions(
    built: list[dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outline = tmp_path / "outline.md"
    outline.write_text("# Growth\n\n# Storage\n", encoding="utf-8")
    run_dir = tmp_path / "run"
    argv = ["--mode", "iterative", "--depth", "1", "--outline", str(outline), "--instructions", "Be brief."]
    assert cli.main([*argv, "--run-dir", str(run_dir), "-q", "Solar growth?"]) == 0
    capsys.readouterr()

    assert cli.main(["update", str(run_dir), "--depth", "2", "-q"]) == 0

    out = capsys.readouterr().out
    changed, *headings = _headings(out)
    assert changed.startswith("What changed since the last run")
    assert headings == ["Growth", "Storage", "Sources"]
    assert built[-1]["style"].instructions == "Be brief."
