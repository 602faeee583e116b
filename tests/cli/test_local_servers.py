"""Runs on a local OpenAI-compatible server: tools offered with tool_choice, prices, and the limits of each call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from haystack_deep_research import cli
from haystack_deep_research.testing import ROLES, LoopbackChatServer

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
        bodies = [request.json_body for request in server.requests]

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
        bodies = [request.json_body for request in server.requests]

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
        bodies = [request.json_body for request in server.requests]

    assert code == 0
    assert bodies
    assert all(body["max_tokens"] == 700 for body in bodies)  # a local server's name for the cap
