"""One option set for every command: the model, call, price and source options parse and mean the same on each."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest
from haystack.components.generators.chat import MockChatGenerator, OpenAIChatGenerator

from haystack_deep_research import Budgets, cli
from haystack_deep_research.agents import compatible
from haystack_deep_research.cli import scan
from haystack_deep_research.evidence import EvidenceLedger
from haystack_deep_research.options import arguments, parsers
from haystack_deep_research.options.parsers import research_parser
from haystack_deep_research.report import ResearchSummary
from haystack_deep_research.serving.agents import default_agent
from haystack_deep_research.settings import Price
from haystack_deep_research.testing import LoopbackChatServer

SERVER = "http://127.0.0.1:9/v1"
MODELS = ["--model", "big", "--small-model", "small", "--role-model", "writer=prose", "--base-url", SERVER]
CALLS = ["--api", "chat", "--price", "big=1,2", "--price", "small=0.5,1.5", "--timeout", "7", "--retries", "1"]
CALLS += ["--max-tokens", "64", "--no-tool-choice"]
SOURCES = ["--search", "ddgs", "--docs", "notes", "--no-web", "--index-dir", "idx"]
PARSED = {
    "model": "big",
    "small_model": "small",
    "role_model": ["writer=prose"],
    "base_url": SERVER,
    "api": "chat",
    "prices": [
        ("big", Price(input_per_mtok=1, output_per_mtok=2)),
        ("small", Price(input_per_mtok=0.5, output_per_mtok=1.5)),
    ],
    "timeout": 7.0,
    "retries": 1,
    "max_tokens": 64,
    "no_tool_choice": True,
}
SOURCES_PARSED = {"search": "ddgs", "docs": [Path("notes")], "no_web": True, "index_dir": Path("idx")}

PARSERS = {
    "research": (research_parser, ["q"]),
    "iterative": (research_parser, ["q", "--mode", "iterative"]),
    "scan": (parsers.scan_parser, ["items.txt", "--out", "rows.jsonl"]),
    "mcp": (parsers.mcp_parser, []),
}


@pytest.mark.parametrize("surface", sorted(PARSERS))
def test_each_command_takes_the_shared_options(surface: str) -> None:
    parser, positional = PARSERS[surface]
    args = parser().parse_args([*positional, *MODELS, *CALLS, *SOURCES])
    assert {name: getattr(args, name) for name in PARSED} == PARSED
    assert {name: getattr(args, name) for name in SOURCES_PARSED} == SOURCES_PARSED


def test_check_takes_the_model_options() -> None:  # it searches nothing, so it has no source options
    args = parsers.check_parser().parse_args(["report.md", "--judge", *MODELS, *CALLS])
    assert {name: getattr(args, name) for name in PARSED} == PARSED


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--price", "m=1"], "argument --price: takes MODEL=INPUT,OUTPUT in US dollars per million tokens"),
        (["--price", "m=-1,2"], "argument --price: takes MODEL=INPUT,OUTPUT"),
        (["--timeout", "0"], "argument --timeout: must be a number above 0 and at most 3600"),
        (["--retries", "21"], "argument --retries: must be an integer from 0 to 20"),
        (["--max-tokens", "0"], "argument --max-tokens: must be an integer from 1 to 1000000"),
    ],
)
def test_bad_values_are_one_line_usage_errors(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for command in (["q"], ["scan", "items.txt", "--out", "rows.jsonl"], ["mcp"]):
        assert cli.main([*command, *argv]) == 2
        err = capsys.readouterr().err
        assert message in err
        assert len(err.splitlines()) == 1


def _limits(generator: Any) -> tuple[Any, ...]:
    return (type(generator), generator.model, generator.api_base_url, generator.timeout, generator.max_retries)


def test_the_options_become_the_same_models_on_every_surface(monkeypatch: pytest.MonkeyPatch) -> None:
    argv = ["--model", "m", "--base-url", SERVER, "--timeout", "7", "--retries", "1", "--max-tokens", "64"]
    main = arguments.factory_arguments(research_parser().parse_args(["q", *argv]))
    workflow = scan.scan_workflow(ResearchSummary, parsers.scan_parser().parse_args(["items", "--out", "rows", *argv]))

    researcher = main["researcher_llm"]
    assert _limits(researcher) == (compatible.CompatibleChatGenerator, "m", SERVER, 7.0, 1)
    assert researcher.tool_choice == "auto"
    assert researcher.generation_kwargs == {"max_tokens": 64}
    execute = workflow.pipeline.get_component("execute").agent.chat_generator.chat_generator  # under its deadline
    assert _limits(execute) == _limits(researcher)
    assert (execute.tool_choice, execute.generation_kwargs) == ("auto", {"max_tokens": 64})


def test_without_a_server_the_cap_has_openais_name(monkeypatch: pytest.MonkeyPatch) -> None:
    args = research_parser().parse_args(["q", "--model", "gpt-5.4", "--api", "chat", "--max-tokens", "64"])
    writer = arguments.factory_arguments(args)["writer_llm"]
    assert type(writer) is OpenAIChatGenerator  # no tool_choice is sent to OpenAI
    assert writer.generation_kwargs == {"max_completion_tokens": 64}


def test_a_server_is_set_up_by_the_same_environment_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    built: dict[str, Any] = {}
    monkeypatch.setattr("haystack_deep_research.agents.create_deep_research_agent", lambda **kw: built.update(kw))
    for name, value in {
        "DEEP_RESEARCH_MODEL": "qwen3:8b",
        "DEEP_RESEARCH_BASE_URL": SERVER,
        "DEEP_RESEARCH_PRICES": "qwen3:8b=0,0; other=1,2",
        "DEEP_RESEARCH_TIMEOUT": "9",
        "DEEP_RESEARCH_NO_TOOL_CHOICE": "1",
    }.items():
        monkeypatch.setenv(name, value)

    default_agent(max_subtopics=2)  # no OPENAI_API_KEY is needed: the models are on the server

    assert (built["scope_llm"].model, built["scope_llm"].api_base_url, built["scope_llm"].timeout) == (
        "qwen3:8b",
        SERVER,
        9.0,
    )
    assert built["scope_llm"].tool_choice is None
    assert built["budgets"].prices == {
        "qwen3:8b": Price(input_per_mtok=0, output_per_mtok=0),
        "other": Price(input_per_mtok=1, output_per_mtok=2),
    }
    assert built["max_subtopics"] == 2


def test_a_bad_environment_value_names_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEP_RESEARCH_TIMEOUT", "soon")
    with pytest.raises(Exception, match="environment variable DEEP_RESEARCH_TIMEOUT: must be a number above 0"):
        arguments.factory_arguments(argparse.Namespace())


def test_mcp_serves_on_the_chosen_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    served: dict[str, Any] = {}
    monkeypatch.setattr("haystack_deep_research.mcp_server.server.serve", lambda **kw: served.update(kw))
    built: dict[str, Any] = {}
    monkeypatch.setattr("haystack_deep_research.agents.create_deep_research_agent", lambda **kw: built.update(kw))

    assert cli.main(["mcp", "--base-url", SERVER, "--model", "m", "--price", "m=0,0", "--retries", "0"]) == 0
    served["agent_factory"](max_subtopics=3, budgets=Budgets(tokens=900))  # what deep_research does per request

    assert (built["writer_llm"].model, built["writer_llm"].api_base_url, built["writer_llm"].max_retries) == (
        "m",
        SERVER,
        0,
    )
    assert built["budgets"] == Budgets(tokens=900, prices={"m": Price(input_per_mtok=0, output_per_mtok=0)})
    assert (served["judge_llm"].model, served["judge_llm"].api_base_url) == ("m", SERVER)


@pytest.mark.parametrize("grounding", [True, False])
def test_an_mcp_request_is_grounded_by_the_judge_the_server_was_given(
    monkeypatch: pytest.MonkeyPatch, grounding: bool
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    served: dict[str, Any] = {}
    monkeypatch.setattr("haystack_deep_research.mcp_server.server.serve", lambda **kw: served.update(kw))
    built: dict[str, Any] = {}
    monkeypatch.setattr("haystack_deep_research.agents.create_deep_research_agent", lambda **kw: built.update(kw))

    assert cli.main(["mcp", "--base-url", SERVER, "--model", "m", "--role-model", "judge=small-judge"]) == 0
    served["agent_factory"](max_subtopics=3, grounding=grounding)

    assert "judge_llm" not in built
    assert (built["grounding"].judge_llm.model if grounding else built["grounding"]) == (
        "small-judge" if grounding else False
    )


def test_check_judges_on_a_local_server_without_an_openai_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    url = "https://data.example/sales"
    report = tmp_path / "report.md"
    report.write_text(f"# Sales\n\nHeat pump sales fell by 5 percent in 2024 [1].\n\n## References\n\n1. {url}\n")
    ledger = EvidenceLedger()
    ledger.record_page(url=url, title="", text="Heat pump sales fell by 5 percent in 2024 after two record years.")
    sources = tmp_path / "sources.json"
    sources.write_text(ledger.to_json(), encoding="utf-8")

    verdict = '{"verdicts": [{"id": 1, "verdict": "supported", "reason": "the source states it"}]}'
    with LoopbackChatServer({"judge": MockChatGenerator(responses=[verdict])}) as server:
        argv = ["check", str(report), "--sources", str(sources), "--judge", "--base-url", server.openai_base_url]
        status = cli.main([*argv, "--model", "judge"])
        asked = {request.json_body["model"] for request in server.requests}

    out = capsys.readouterr().out
    assert status == 0, out
    assert asked == {"judge"}
    assert "grounding (judge judge): score 1.00 over 1 of 1 claim(s)" in out
