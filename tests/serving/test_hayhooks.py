"""The Hayhooks pipeline wrapper in examples/: loaded by Hayhooks' own loader, and served by the library's launcher."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from hayhooks.server.pipelines.loader import load_pipeline_registry
from openai import OpenAI

import haystack_deep_research
from haystack_deep_research.serving.agents import AGENT_FACTORY_ENV
from haystack_deep_research.testing import LoopbackSearchServer, LoopbackWebServer

REPO = Path(__file__).resolve().parents[2]
PIPELINES = REPO / "examples" / "hayhooks"
PACKAGE_ROOT = Path(haystack_deep_research.__file__).resolve().parents[1]
SEARCH_URL_ENV = "DEEP_RESEARCH_TEST_SEARCH_URL"
QUESTION = "How fast is solar growing?"


@pytest.fixture
def scripted_env(search: LoopbackSearchServer, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The test-only settings that make the wrapper build scripted agents against the loopback servers."""
    env = {AGENT_FACTORY_ENV: "tests.support:scripted_agent", SEARCH_URL_ENV: search.base_url}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.syspath_prepend(str(REPO))
    return env


async def test_hayhooks_loads_the_wrapper_and_its_chat_completion_streams_progress_then_the_report(
    scripted_env: dict[str, str], web: LoopbackWebServer
) -> None:
    registry = load_pipeline_registry(PIPELINES)

    assert registry.get_names() == ["deep_research"]
    wrapper = registry.get("deep_research")
    assert wrapper is not None
    chunks = [
        chunk
        async for chunk in await wrapper.run_chat_completion_async(
            "deep_research", [{"role": "user", "content": [{"type": "text", "text": QUESTION}]}], {}
        )
    ]
    progress = [chunk.reasoning.reasoning_text for chunk in chunks if chunk.reasoning is not None]
    assert progress[0] == f"run started: {QUESTION}\n"
    assert "[1/2] researching: solar capacity\n" in progress
    report = "".join(chunk.content for chunk in chunks)
    assert report.startswith("# Research report")
    assert f"]({web.url('/storage.pdf')})" in report


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_until_listening(port: int, process: subprocess.Popen[bytes], *, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while True:
        assert process.poll() is None, "hayhooks exited before listening"
        try:
            httpx.get(f"http://127.0.0.1:{port}/status", timeout=1).raise_for_status()
            return
        except httpx.HTTPError:
            assert time.monotonic() < deadline, f"hayhooks did not answer on port {port} within {timeout} s"
            time.sleep(0.1)


def test_hayhooks_serves_the_agent_as_an_openai_compatible_chat_model(
    scripted_env: dict[str, str], web: LoopbackWebServer, tmp_path: Path
) -> None:
    port = _free_port()
    env = {
        **os.environ,
        **scripted_env,
        "PYTHONPATH": os.pathsep.join([str(PACKAGE_ROOT), str(REPO)]),
        "HAYHOOKS_DISABLE_SSL": "true",
    }
    launcher = [sys.executable, "-m", "haystack_deep_research.serving.hayhooks"]
    command = [*launcher, "--host", "127.0.0.1", "--port", str(port)]
    with (tmp_path / "hayhooks.log").open("wb") as log:
        server = subprocess.Popen([*command, "--pipelines-dir", str(PIPELINES)], env=env, stdout=log, stderr=log)
    try:
        _wait_until_listening(port, server)
        client = OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="unused", max_retries=0)
        stream = client.chat.completions.create(
            model="deep_research", messages=[{"role": "user", "content": QUESTION}], stream=True
        )
        content, reasoning = [], []
        for chunk in stream:
            delta = chunk.choices[0].delta if chunk.choices else None
            if delta is not None:
                content.append(delta.content or "")
                reasoning.append(str((delta.model_extra or {}).get("reasoning_content") or ""))
        answered = httpx.post(f"http://127.0.0.1:{port}/deep_research/run", json={"question": QUESTION}, timeout=60)
    finally:
        server.send_signal(signal.SIGTERM)
        code = server.wait(timeout=30)

    report = "".join(content)
    assert report.startswith("# Research report")
    assert f"]({web.url('/solar.html')})" in report
    assert "[2/2] researching: battery storage\n" in reasoning
    assert answered.json()["result"].startswith("# Research report")
    # SIGTERM stops it cleanly: the server shuts down, then re-raises the signal, as uvicorn does.
    assert code in {0, -signal.SIGTERM}
    assert "Application shutdown complete." in (tmp_path / "hayhooks.log").read_text(encoding="utf-8")
