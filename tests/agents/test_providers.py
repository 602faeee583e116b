"""
Another provider through its Haystack integration: Ollama's own API (ollama-haystack, the ``ollama`` extra), at the
HTTP layer with respx. Skips where ollama-haystack is not installed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest
import respx
from haystack.components.agents import Agent
from haystack.dataclasses import ChatMessage

from haystack_deep_research.testing import LoopbackWebServer

ollama = pytest.importorskip("haystack_integrations.components.generators.ollama")

OLLAMA = "http://ollama.test:11434"


def _reply(model: str, content: str = "", tool_calls: list[dict[str, Any]] | None = None) -> httpx.Response:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    body = {
        "model": model,
        "created_at": "2026-01-01T00:00:00Z",
        "message": message,
        "done": True,
        "done_reason": "stop",
        "prompt_eval_count": 50,
        "eval_count": 10,
    }
    return httpx.Response(200, json=body)


def test_ollama_models_run_the_orchestrator_scope_and_writer(
    make_agent: Callable[..., Agent], web: LoopbackWebServer
) -> None:
    requests: list[dict[str, Any]] = []

    def chat(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        requests.append(body)
        model = body["model"]
        if model == "scope-model":
            return _reply(model, "Brief: how fast is solar capacity growing?")
        if model == "orchestrator-model":
            if any(m["role"] == "tool" for m in body["messages"]):
                return _reply(model, "Research is complete.")
            call = {"function": {"name": "research_subtopic", "arguments": {"subtopic": "solar capacity"}}}
            return _reply(model, tool_calls=[call])
        solar = web.url("/solar.html")
        return _reply(
            model, f"# Solar\n\n## Executive summary\n\nSolar grew [Solar]({solar}).\n\n## Sources\n\n- {solar}"
        )

    with respx.mock(assert_all_called=False) as mock:
        mock.post(f"{OLLAMA}/api/chat").mock(side_effect=chat)
        mock.route(host="127.0.0.1").pass_through()  # the loopback search and web servers
        agent = make_agent(
            scope_llm=ollama.OllamaChatGenerator(model="scope-model", url=OLLAMA),
            orchestrator_llm=ollama.OllamaChatGenerator(model="orchestrator-model", url=OLLAMA),
            writer_llm=ollama.OllamaChatGenerator(model="writer-model", url=OLLAMA),
        )
        result = agent.run(messages=[ChatMessage.from_user("How fast is solar growing?")])

    orchestrator_first = next(r for r in requests if r["model"] == "orchestrator-model")
    assert {tool["function"]["name"] for tool in orchestrator_first["tools"]} == {"research_subtopic", "think_tool"}
    assert result["brief"] == "Brief: how fast is solar capacity growing?"
    assert "450 gigawatts" in result["notes"][0]
    assert f"[Solar]({web.url('/solar.html')})" in result["report"]
    assert result["exit_reason"] == "text"
