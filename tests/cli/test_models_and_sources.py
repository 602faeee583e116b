"""The command's model, server, search and document options, and their environment equivalents."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from haystack.components.generators.chat import OpenAIChatGenerator, OpenAIResponsesChatGenerator
from haystack.tools import flatten_tools_or_toolsets

from haystack_deep_research import cli, create_deep_research_agent
from haystack_deep_research.sources import DdgsSearch
from haystack_deep_research.testing import LoopbackChatServer, make_pdf

ROLES = ("scope", "orchestrator", "researcher", "summarizer", "writer")


class _Captured:
    """Stands in for the factory: builds the real agent, keeps it and its options, and never runs it."""

    def __init__(self) -> None:
        self.options: dict[str, Any] = {}
        self.agent: Any = None

    def __call__(self, **options: Any) -> Any:
        self.options = options
        self.agent = create_deep_research_agent(**options)
        return self

    async def run_async(self, **kwargs: Any) -> dict[str, Any]:
        return {"report": "# Report\n", "exit_reason": "text", "warnings": [], "sources": []}

    def researcher_tools(self) -> dict[str, Any]:
        delegate = next(t for t in flatten_tools_or_toolsets(self.agent.tools) if t.name == "research_subtopic")
        return {t.name: t for t in flatten_tools_or_toolsets(delegate.researcher.tools)}


@pytest.fixture
def captured(monkeypatch: pytest.MonkeyPatch) -> _Captured:
    factory = _Captured()
    monkeypatch.setattr("haystack_deep_research.cli.research.create_deep_research_agent", factory)
    return factory


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "library"
    root.mkdir()
    (root / "tides.md").write_text("# Tides\n\nSpring tides reached 4.2 metres at the northern gauge in 2024.\n")
    (root / "storage.pdf").write_bytes(make_pdf(["Grid battery storage doubled in 2025 to 300 gigawatt hours."]))
    return root


def test_without_tavily_the_keyless_search_is_used(monkeypatch: pytest.MonkeyPatch, captured: _Captured) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    assert cli.main(["question", "-q"]) == 0
    assert "search" not in captured.options
    assert isinstance(captured.researcher_tools()["web_search"].backend, DdgsSearch)


def test_model_options_reach_each_role(monkeypatch: pytest.MonkeyPatch, captured: _Captured) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    argv = ["q", "-q", "--model", "big", "--small-model", "small", "--role-model", "writer=prose", "--api", "chat"]
    assert cli.main(argv) == 0

    names = {role: captured.options[f"{role}_llm"].model for role in ROLES}
    assert names == {
        "scope": "big",
        "orchestrator": "big",
        "writer": "prose",
        "researcher": "small",
        "summarizer": "small",
    }
    assert all(type(captured.options[f"{role}_llm"]) is OpenAIChatGenerator for role in ROLES)


def test_environment_equivalents(monkeypatch: pytest.MonkeyPatch, captured: _Captured, model_server: str) -> None:
    monkeypatch.setenv("DEEP_RESEARCH_MODEL", "env-big")
    monkeypatch.setenv("DEEP_RESEARCH_SMALL_MODEL", "env-small")
    monkeypatch.setenv("OPENAI_BASE_URL", model_server)
    monkeypatch.setenv("DEEP_RESEARCH_SEARCH", "ddgs")

    assert cli.main(["q", "-q"]) == 0  # no OPENAI_API_KEY needed: the models run on another server

    writer, researcher = captured.options["writer_llm"], captured.options["researcher_llm"]
    assert (writer.model, researcher.model) == ("env-big", "env-small")
    assert writer.api_base_url == model_server
    assert isinstance(writer, OpenAIChatGenerator)  # chat is the default API on another server
    assert captured.options["sources"].search == "ddgs"


@pytest.mark.parametrize("grounding", [True, False])
def test_a_judge_named_by_role_model_judges_only_a_grounded_run(
    captured: _Captured, grounding: bool, model_server: str
) -> None:
    argv = ["q", "-q", "--base-url", model_server, "--role-model", "judge=small-judge"]
    assert cli.main([*argv, *(["--grounding"] if grounding else [])]) == 0

    assert "judge_llm" not in captured.options
    if grounding:
        assert captured.options["grounding"].judge_llm.model == "small-judge"
    else:
        assert captured.options["grounding"] is False


def test_the_responses_api_on_a_server_is_a_choice(captured: _Captured, model_server: str) -> None:
    assert cli.main(["q", "-q", "--base-url", model_server, "--api", "responses"]) == 0
    assert isinstance(captured.options["scope_llm"], OpenAIResponsesChatGenerator)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--role-model", "writer"], "--role-model takes ROLE=NAME"),
        (["--role-model", "critic=x"], "unknown role(s) ['critic']"),
        (["--no-web"], "--no-web leaves the researchers nothing to search; add --docs FOLDER."),
    ],
)
def test_bad_options_are_usage_errors(
    argv: list[str], message: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    assert cli.main(["q", *argv]) == 2
    assert message in capsys.readouterr().err


def test_docs_are_indexed_with_progress_and_searched(
    monkeypatch: pytest.MonkeyPatch,
    captured: _Captured,
    folder: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    assert cli.main(["q", "--docs", str(folder), "--no-web", "--index-dir", str(tmp_path / "idx")]) == 0

    assert sorted(captured.researcher_tools()) == ["search_library", "think_tool"]
    err = capsys.readouterr().err
    assert "[index] 1/2 storage.pdf" in err
    assert "[index] 2/2 tides.md" in err
    assert any((tmp_path / "idx").iterdir())


def test_docs_name_each_file_left_out_and_why(
    monkeypatch: pytest.MonkeyPatch,
    captured: _Captured,
    folder: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    (tmp_path / "id_rsa.txt").write_text("-----BEGIN PRIVATE KEY-----\n")
    (folder / "key.txt").symlink_to(tmp_path / "id_rsa.txt")
    assert cli.main(["q", "--docs", str(folder), "--no-web", "--index-dir", str(tmp_path / "idx")]) == 0

    err = capsys.readouterr().err
    left_out = f"key.txt: it leads outside {folder} (through a symbolic link)"
    assert f"[index] {folder}: warning: Not indexed: {left_out}" in err


def test_a_run_on_a_loopback_server_over_a_folder_cites_its_files(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    roles = [arg for role in ROLES for arg in ("--role-model", f"{role}={role}")]
    with LoopbackChatServer() as server:
        argv = ["What do the notes say about tides and storage?", "--base-url", server.openai_base_url, *roles]
        argv += ["--docs", str(folder), "--no-web", "--index-dir", str(tmp_path / "idx"), "-q"]
        argv += ["--sources", str(tmp_path / "sources.json")]
        code = cli.main(argv)
        models = {request.json_body["model"] for request in server.requests if request.json_body}  # not the probe

    out, err = capsys.readouterr()
    assert code == 0, err
    assert models == set(ROLES) - {"summarizer"}  # every role went over HTTP; no web page to summarize
    tides, storage = (folder / "tides.md").as_uri(), (folder / "storage.pdf").as_uri()
    assert f"]({tides})" in out
    assert f"]({storage})" in out
    sources = (tmp_path / "sources.json").read_text(encoding="utf-8")
    assert tides in sources
    assert '"kind": "document"' in sources
