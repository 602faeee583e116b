"""Runs on a local OpenAI-compatible server: tools offered with tool_choice, prices, and the limits of each call."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

from haystack_deep_research import cli
from haystack_deep_research.options.exit_codes import ExitCode
from haystack_deep_research.testing import LoopbackChatServer
from haystack_deep_research.testing._server import LoopbackServer, RequestHandler
from haystack_deep_research.testing.generators import ROLES

QUESTION = "What do the notes say about tides?"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "tides.md").write_text("# Tides\n\nSpring tides reached 4.2 metres at the northern gauge in 2024.\n")
    return root


def _run(
    server: LoopbackChatServer, folder: Path, capsys: pytest.CaptureFixture[str], *extra: str
) -> tuple[int, dict[str, Any]]:
    """``deep-research`` on the server over the folder, printing one JSON object; the exit status and the object."""
    roles = [arg for role in ROLES for arg in ("--role-model", f"{role}={role}")]
    argv = [QUESTION, "--base-url", server.openai_base_url, "--model", "m", *roles]
    argv += ["--docs", str(folder), "--no-web", "--index-dir", str(folder.parent / "idx"), "-q", "--json", *extra]
    code = cli.main(argv)
    out, err = capsys.readouterr()
    assert out, err
    return code, json.loads(out)


def test_a_server_that_needs_tool_choice_is_offered_the_tools_with_it(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with LoopbackChatServer(needs_tool_choice=ROLES) as server:  # plain text unless tool_choice comes along
        code, result = _run(server, folder, capsys)
        bodies = [request.json_body for request in server.requests if request.json_body]  # not the probe

    tides = (folder / "tides.md").as_uri()
    assert code == 0, result
    assert result["exit_reason"] != "no_evidence"
    assert tides in [entry["url"] for entry in result["sources"]]
    assert f"]({tides})" in result["report"]
    assert all(body.get("tool_choice") == "auto" for body in bodies if body.get("tools"))
    assert not any("tool_choice" in body for body in bodies if not body.get("tools"))  # servers refuse it there


def test_no_tool_choice_sends_none(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with LoopbackChatServer(needs_tool_choice=ROLES) as server:
        _, result = _run(server, folder, capsys, "--no-tool-choice")
        bodies = [request.json_body for request in server.requests if request.json_body]  # not the probe

    assert not any("tool_choice" in body for body in bodies)
    assert result["exit_reason"] == "no_evidence"  # what such a server gives a run that does not send it
    assert result["sources"] == [] or all(entry["kind"] != "document" for entry in result["sources"])


def test_an_unknown_price_is_said_once_naming_the_models_and_the_option(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with LoopbackChatServer() as server:
        _, result = _run(server, folder, capsys)

    unknown = [warning for warning in result["warnings"] if "cost is unknown" in warning]
    assert len(unknown) == 1, result["warnings"]
    assert "--price" in unknown[0]
    assert all(f"'{role}'" in unknown[0] for role in ("scope", "orchestrator", "researcher", "writer"))
    assert result["cost"] is None


def test_prices_make_the_cost_known(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prices = [arg for role in ROLES for arg in ("--price", f"{role}=0,0")]
    with LoopbackChatServer() as server:
        code, result = _run(server, folder, capsys, *prices)

    assert code == 0
    assert not [warning for warning in result["warnings"] if "cost" in warning]
    assert result["cost"] == 0.0


def test_the_completion_cap_reaches_every_request(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with LoopbackChatServer() as server:
        code, _ = _run(server, folder, capsys, "--max-tokens", "700", "--timeout", "30", "--retries", "0")
        bodies = [request.json_body for request in server.requests if request.json_body]  # not the probe

    assert code == 0
    assert bodies
    assert all(body["max_tokens"] == 700 for body in bodies)  # a local server's name for the cap


class _NoChatServer(LoopbackServer):
    """A server that answers every request with one status and body (a static site's 405, a wrong path's 404)."""

    def __init__(self, status: int, body: bytes) -> None:
        super().__init__()
        self.status, self.body = status, body

    def _handle(self, handler: RequestHandler) -> None:
        handler.read_body()
        handler.send_bytes(self.status, self.body, content_type="text/html")


def _closed_port() -> int:
    with socket.socket() as bound:
        bound.bind(("127.0.0.1", 0))
        return int(bound.getsockname()[1])  # closed on leaving: nothing listens there any more


@pytest.mark.parametrize("command", [[QUESTION], ["--mode", "iterative", QUESTION], ["scan", "ITEMS", "--out", "r"]])
def test_a_dead_model_server_is_named_in_one_line_and_nothing_is_written(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ITEMS").write_text("Qué limita la energía solar?\n", encoding="utf-8")
    server = f"http://127.0.0.1:{_closed_port()}/v1"
    output = [] if command[0] == "scan" else ["-o", "report.md"]
    code = cli.main([*command, *output, "--base-url", server, "--search-url", server, "--progress", "none"])

    err = capsys.readouterr().err
    assert code == ExitCode.RUN_FAILED
    [line] = err.splitlines()
    assert line.startswith(f"deep-research{' scan' if command[0] == 'scan' else ''}: error: the model server at ")
    assert f"{server} (--base-url) could not be reached" in line
    assert sorted(path.name for path in tmp_path.iterdir()) == ["ITEMS"]  # no report, no rows, no placeholder


@pytest.mark.parametrize(
    ("status", "body"), [(405, b"<h1>405 Method Not Allowed</h1>"), (404, b'{"detail": "Not Found"}')]
)
def test_a_server_that_does_not_serve_the_api_is_named_with_its_answer(
    status: int, body: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with _NoChatServer(status, body) as server:
        url = server.base_url
        monkeypatch.setenv("OPENAI_BASE_URL", url)  # the /v1 left out, as users do
        code = cli.main([QUESTION, "-o", "report.md", "--search-url", url, "--progress", "plain"])
        asked = len(server.requests)

    err = capsys.readouterr().err
    assert code == ExitCode.RUN_FAILED
    [line] = err.splitlines()
    assert f"the model server at {url} (OPENAI_BASE_URL) answered HTTP {status}" in line
    assert f"POST {url}/chat/completions" in line
    assert "does not serve the OpenAI Chat Completions API there" in line
    assert asked == 1  # one probe, no retries
    assert not (tmp_path / "report.md").exists()


def test_a_404_in_the_apis_own_words_lets_the_run_go_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    missing = b'{"error": {"message": "model \'qwen3\' not found, try pulling it first", "type": "not_found"}}'
    with _NoChatServer(404, missing) as server:
        argv = [QUESTION, "--base-url", f"{server.base_url}/v1", "--model", "qwen3", "--retries", "0"]
        code = cli.main([*argv, "--search-url", server.base_url, "--progress", "none", "-o", "report.md"])

    err = capsys.readouterr().err
    assert "does not serve" not in err  # the server speaks the API: the run itself says what the model answered
    assert code == ExitCode.RESEARCH_FAILED
    assert (tmp_path / "report.md").exists()
