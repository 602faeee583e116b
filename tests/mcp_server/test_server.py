"""The MCP server, driven by the official SDK's client over stdio: research with progress, checking, cancelling."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
from haystack.dataclasses import ChatMessage
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

import haystack_deep_research
from haystack_deep_research import RunInputs
from haystack_deep_research.report import NOT_ANSWERED
from haystack_deep_research.run._journal import KEY_ENV
from haystack_deep_research.serving.agents import AGENT_FACTORY_ENV
from haystack_deep_research.serving.guard import ALLOWED_ORIGINS_ENV, TOKEN_ENV
from haystack_deep_research.testing import LoopbackSearchServer, LoopbackWebServer, SearchDocument

REPO = Path(__file__).resolve().parents[2]
PACKAGE_ROOT = Path(haystack_deep_research.__file__).resolve().parents[1]  # the server imports the package from here
SEARCH_URL_ENV = "DEEP_RESEARCH_TEST_SEARCH_URL"


@asynccontextmanager
async def _session(search: LoopbackSearchServer, errlog: Path, *options: str) -> AsyncIterator[ClientSession]:
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "haystack_deep_research.cli", "mcp", *options],
        env={
            "PYTHONPATH": os.pathsep.join([str(PACKAGE_ROOT), str(REPO)]),
            "HAYSTACK_TELEMETRY_ENABLED": "False",
            AGENT_FACTORY_ENV: "tests.support:scripted_agent",  # test-only: scripted models, loopback servers
            SEARCH_URL_ENV: search.base_url,
            KEY_ENV: os.environ[KEY_ENV],  # the key the test's own runs sealed their journals with
        },
    )
    with errlog.open("w", encoding="utf-8") as errors:
        async with stdio_client(server, errlog=errors) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            yield session


async def test_deep_research_returns_the_report_and_reports_progress_from_the_runs_events(
    search: LoopbackSearchServer, web: LoopbackWebServer, tmp_path: Path
) -> None:
    progress: list[tuple[float, str]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, message or ""))

    async with _session(search, tmp_path / "server.log") as session:
        tools = {tool.name for tool in (await session.list_tools()).tools}
        result = await session.call_tool(
            "deep_research", {"question": "How fast is solar growing?"}, progress_callback=on_progress
        )

    assert tools == {"deep_research", "check_report", "ask"}
    assert not result.is_error
    report = result.content[0].text  # type: ignore[union-attr]
    assert report.startswith("# Research report")
    assert f"]({web.url('/solar.html')})" in report
    summary = dict(result.structured_content or {})
    assert sorted(summary.pop("sources")) == sorted([web.url("/solar.html"), web.url("/storage.pdf")])
    assert summary == {"exit_reason": "text", "cost": 0.0, "warnings": [], "notes": 2}
    assert result.content[1].text == "exit reason: text · 2 notes · 2 pages read · 0 warnings · cost: $0.0000"  # type: ignore[union-attr]
    messages = [message for _, message in progress]
    assert messages[0] == "run started: How fast is solar growing?"
    assert "[1/2] researching: solar capacity" in messages
    assert any(message.startswith("report ready") for message in messages)
    values = [value for value, _ in progress]
    assert values == sorted(set(values))  # progress only grows


async def test_check_report_and_a_bad_argument_are_answered_as_tool_results(
    search: LoopbackSearchServer, tmp_path: Path
) -> None:
    report = "# R\n\nRead [here](https://example.org/read); invented [there](https://example.org/invented).\n"

    async with _session(search, tmp_path / "server.log") as session:
        checked = await session.call_tool("check_report", {"report": report, "sources": ["https://example.org/read"]})
        refused = await session.call_tool("deep_research", {"question": "Solar?", "max_subtopics": 0})

    text = checked.content[0].text  # type: ignore[union-attr]
    assert checked.structured_content == {"status": 1}
    assert text.startswith("report.md: 2 cited URL(s), 1 verified, 1 unverified; citation precision 0.50")
    assert "https://example.org/invented (line 3)" in text
    assert refused.is_error
    assert refused.content[0].text.endswith(": max_subtopics must be an integer from 1 to 50; got 0.")  # type: ignore[union-attr]


async def test_an_error_names_the_tool_arguments_not_python_settings(
    search: LoopbackSearchServer, tmp_path: Path
) -> None:
    async with _session(search, tmp_path / "server.log") as session:
        refused = await session.call_tool("deep_research", {"question": "Солнце?", "token_budget": 0})

    text = refused.content[0].text  # type: ignore[union-attr]
    assert refused.is_error
    assert text.endswith("token_budget must be an integer from 1 to 1000000000; got 0.")
    assert "Budgets(" not in text


async def test_a_cancelled_request_cancels_the_run(tmp_path: Path) -> None:
    with LoopbackWebServer() as web:
        web.add_page("/fast.html", "<html><body><p>Solar capacity grew by 450 gigawatts in 2025.</p></body></html>")
        web.add_slow("/slow.html", b"<html><body>" + b"x" * 100_000, delay_per_chunk=0.05, chunk_size=10)  # ~8 min
        corpus = [
            SearchDocument(web.url("/fast.html"), "Fast", "solar capacity fast"),
            SearchDocument(web.url("/slow.html"), "Slow", "solar capacity slow"),
        ]
        with LoopbackSearchServer(corpus, require_api_key="test-key") as search:
            one_page_read = anyio.Event()

            async def on_progress(value: float, total: float | None, message: str | None) -> None:
                if (message or "").startswith("read "):  # the fast page is read: the slow one is being fetched
                    one_page_read.set()

            async with _session(search, tmp_path / "server.log") as session:
                async with anyio.create_task_group() as group:

                    async def research() -> None:
                        arguments = {"question": "Solar?", "max_subtopics": 1}
                        await session.call_tool("deep_research", arguments, progress_callback=on_progress)

                    group.start_soon(research)
                    with anyio.fail_after(60):
                        await one_page_read.wait()
                    group.cancel_scope.cancel()  # the client abandons the request; the SDK sends a cancellation

                # The server is still up, yet the slow download ends: the cancelled run dropped it.
                logged = await anyio.to_thread.run_sync(lambda: web.requests.wait_for(2, timeout=20))
                still_serving = await session.call_tool("check_report", {"report": "# R\n"})

    slow = [request for request in logged if request.path == "/slow.html"]
    assert len(slow) == 1
    assert slow[0].duration < 60  # the whole body would have taken about 8 minutes
    assert not still_serving.is_error


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _start_http_server(port: int, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "haystack_deep_research.cli", "mcp", "--transport", "http", "--port", str(port)]
    with log.open("wb") as errors:
        return subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=errors)


def _wait_until_listening(port: int, process: subprocess.Popen[bytes], *, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while True:
        assert process.poll() is None, "the server exited before listening"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            assert time.monotonic() < deadline, f"the server did not listen on port {port} within {timeout} s"
            time.sleep(0.05)


async def test_the_server_answers_over_streamable_http(
    search: LoopbackSearchServer, web: LoopbackWebServer, tmp_path: Path
) -> None:
    port = _free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(PACKAGE_ROOT), str(REPO)]),
        AGENT_FACTORY_ENV: "tests.support:scripted_agent",  # test-only: scripted models, loopback servers
        SEARCH_URL_ENV: search.base_url,
    }
    process = _start_http_server(port, env, tmp_path / "server.log")
    try:
        await anyio.to_thread.run_sync(_wait_until_listening, port, process)
        async with (
            streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            result = await session.call_tool("deep_research", {"question": "How fast is solar growing?"})
    finally:
        process.terminate()
        process.wait(timeout=10)

    assert not result.is_error
    assert result.content[0].text.startswith("# Research report")  # type: ignore[union-attr]
    assert web.url("/storage.pdf") in (result.structured_content or {})["sources"]


def test_over_http_every_request_passes_the_origin_and_token_guard(tmp_path: Path) -> None:
    """The SDK alone lets a page on any localhost port in, and asks no token; the library's guard asks both."""
    port = _free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(PACKAGE_ROOT), str(REPO)]),
        AGENT_FACTORY_ENV: "tests.support:scripted_agent",
        SEARCH_URL_ENV: "http://127.0.0.1:9",  # never searched: no run may start
        TOKEN_ENV: "s3cret-token",
        ALLOWED_ORIGINS_ENV: "http://localhost:3000",
    }
    process = _start_http_server(port, env, tmp_path / "server.log")
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    bearer = {"Authorization": "Bearer s3cret-token"}
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        _wait_until_listening(port, process)
        with httpx.Client(timeout=30) as client:
            no_token = client.post(url, headers=headers, json=initialize)
            wrong_token = client.post(url, headers={**headers, "Authorization": "Bearer s3cret"}, json=initialize)
            other_port = client.post(
                url, headers={**headers, **bearer, "Origin": "http://localhost:5173"}, json=initialize
            )
            listed = client.post(url, headers={**headers, **bearer, "Origin": "http://localhost:3000"}, json=initialize)
            plain = client.post(url, headers={**headers, **bearer}, json=initialize)
    finally:
        process.terminate()
        process.wait(timeout=10)

    assert (no_token.status_code, wrong_token.status_code) == (401, 401)
    assert TOKEN_ENV in no_token.json()["detail"]
    assert other_port.status_code == 403
    assert ALLOWED_ORIGINS_ENV in other_port.json()["detail"]
    for answered in (listed, plain):
        assert answered.status_code == 200
        assert "mcp-session-id" in answered.headers


def _wait_for_line(log: Path, text: str, *, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in log.read_text(encoding="utf-8", errors="replace"):
            return True
        time.sleep(0.05)
    return False


def test_a_run_whose_http_client_went_away_is_cancelled(tmp_path: Path) -> None:
    calls, log = tmp_path / "calls.log", tmp_path / "server.log"
    calls.touch()
    with LoopbackWebServer() as web:
        web.add_page("/fast.html", "<html><body><p>Solar capacity grew by 450 gigawatts in 2025.</p></body></html>")
        web.add_slow("/slow.html", b"<html><body>" + b"x" * 100_000, delay_per_chunk=0.05, chunk_size=10)  # ~8 min
        corpus = [
            SearchDocument(web.url("/fast.html"), "Fast", "solar capacity fast"),
            SearchDocument(web.url("/slow.html"), "Slow", "solar capacity slow"),
        ]
        with LoopbackSearchServer(corpus, require_api_key="test-key") as search:
            port = _free_port()
            env = {
                **os.environ,
                "PYTHONPATH": os.pathsep.join([str(PACKAGE_ROOT), str(REPO)]),
                AGENT_FACTORY_ENV: "tests.support:scripted_agent",
                SEARCH_URL_ENV: search.base_url,
                "DEEP_RESEARCH_TEST_CALL_LOG": str(calls),
            }
            process = _start_http_server(port, env, log)
            try:
                _wait_until_listening(port, process)
                url = f"http://127.0.0.1:{port}/mcp"
                headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
                with httpx.Client(timeout=30) as client:
                    hello = {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "t", "version": "1"},
                    }
                    opened = client.post(
                        url, headers=headers, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}
                    )
                    headers |= {
                        "mcp-session-id": opened.headers["mcp-session-id"],
                        "mcp-protocol-version": "2025-06-18",
                    }
                    client.post(url, headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
                    call = {
                        "name": "deep_research",
                        "arguments": {"question": "Solar?", "max_subtopics": 1},
                        "_meta": {"progressToken": "run"},
                    }
                    request = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}
                    with client.stream("POST", url, headers=headers, json=request) as answer:
                        for line in answer.iter_lines():
                            message = json.loads(line[5:]).get("params", {}) if line.startswith("data:") else {}
                            if str(message.get("message", "")).startswith("read "):
                                break  # the fast page is read, the slow one is being fetched: the client goes away
                made_before = calls.read_text().split()
                # No notifications/cancelled was sent: the connection just closed.
                assert _wait_for_line(log, "deep_research was cancelled", timeout=20)
                slow = [request for request in web.requests.wait_for(2, timeout=20) if request.path == "/slow.html"]
                made = calls.read_text().split()
            finally:
                process.terminate()
                process.wait(timeout=10)

    assert "researcher" in made_before
    assert made == made_before  # no model was called after the client went away: nothing more was paid for
    assert len(slow) == 1  # and the slow download was dropped


async def test_a_clarifying_question_is_the_tool_result_and_the_answer_leads_to_research(
    search: LoopbackSearchServer, web: LoopbackWebServer, tmp_path: Path
) -> None:
    question = {"question": "How fast is solar growing?", "clarify": True}
    async with _session(search, tmp_path / "server.log") as session:
        asked = await session.call_tool("deep_research", question)
        text = asked.content[0].text  # type: ignore[union-attr]
        answered = await session.call_tool(
            "deep_research", {**question, "clarifying_question": text, "answer": "Europe", "report_type": "outline"}
        )

    assert not asked.is_error
    assert text == "Which region should the research cover?"
    assert dict(asked.structured_content or {})["exit_reason"] == "clarification_needed"
    assert dict(asked.structured_content or {})["clarification"] == text
    assert not answered.is_error
    assert "clarification" not in dict(answered.structured_content or {})
    assert answered.content[0].text.startswith("# ")  # type: ignore[union-attr]


async def test_an_outline_and_instructions_shape_the_report_and_a_bad_outline_is_refused(
    search: LoopbackSearchServer, web: LoopbackWebServer, tmp_path: Path
) -> None:
    question = {"question": "How fast is solar growing?", "instructions": "Pour des élus locaux."}
    async with _session(search, tmp_path / "server.log") as session:
        written = await session.call_tool("deep_research", {**question, "outline": ["Croissance", "Marées"]})
        refused = await session.call_tool("deep_research", {**question, "outline": ["Croissance", "croissance"]})

    assert not written.is_error
    report = written.content[0].text  # type: ignore[union-attr]
    assert [line for line in report.split("\n") if line.startswith("## ")] == [
        "## Croissance",
        "## Marées",
        "## Sources",
    ]
    assert refused.is_error
    assert "outline heading 2 ('croissance') repeats an earlier heading" in refused.content[0].text  # type: ignore[union-attr]


async def test_ask_answers_from_a_run_under_the_runs_root_and_refuses_any_other_path(
    make_agent: Callable[..., Any], search: LoopbackSearchServer, web: LoopbackWebServer, tmp_path: Path
) -> None:
    runs, outside = tmp_path / "runs", tmp_path / "outside"
    for run_dir in (runs / "solar", outside):
        make_agent().run(
            messages=[ChatMessage.from_user("How fast is solar growing?")], inputs=RunInputs(run_dir=run_dir)
        )
    (runs / "linked").symlink_to(outside, target_is_directory=True)
    asked = {"question": "Wie stark wuchs die globale Solarkapazität (capacity)?"}

    async with _session(search, tmp_path / "server.log", "--runs-root", str(runs)) as session:
        answered = await session.call_tool("ask", {"run_dir": "solar", **asked})
        declined = await session.call_tool("ask", {"run_dir": "solar", "question": "Quel temps fait-il à Brest ?"})
        refused = {
            path: await session.call_tool("ask", {"run_dir": path, **asked})
            for path in ("../outside", str(outside), "linked", "missing")
        }

    assert not answered.is_error
    assert f"]({web.url('/solar.html')})" in answered.content[0].text  # type: ignore[union-attr]
    summary = dict(answered.structured_content or {})
    assert (summary["answered"], summary["researched"]) == (True, "")
    assert web.url("/solar.html") in summary["sources"]
    assert declined.content[0].text == NOT_ANSWERED  # type: ignore[union-attr]
    assert dict(declined.structured_content or {})["answered"] is False
    for path, result in refused.items():
        assert result.is_error, path
        text = result.content[0].text  # type: ignore[union-attr]
        assert ("holds no run" if path == "missing" else "under the server's runs root (outside_root)") in text, text
        assert str(outside) not in text.replace(repr(str(outside)), "")  # the real path is not disclosed
