"""The OpenAI generator path at the HTTP layer (respx): real request bodies, tool calls, a 429 then success."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import respx
from haystack.components.agents import Agent
from haystack.components.generators.chat import OpenAIResponsesChatGenerator
from haystack.dataclasses import ChatMessage
from haystack.utils import Secret

from haystack_deep_research.testing import LoopbackWebServer

API = "https://api.openai.test/v1"


def _generator(model: str) -> OpenAIResponsesChatGenerator:
    # http_client_kwargs makes the generator use an httpx client, which respx intercepts.
    return OpenAIResponsesChatGenerator(
        api_key=Secret.from_token("sk-test"),
        model=model,
        api_base_url=API,
        max_retries=2,
        http_client_kwargs={"timeout": 5},
    )


def _response(model: str, output: list[dict[str, Any]]) -> httpx.Response:
    usage = {
        "input_tokens": 100,
        "output_tokens": 20,
        "total_tokens": 120,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens_details": {"reasoning_tokens": 0},
    }
    body = {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "model": model,
        "status": "completed",
        "output": output,
        "usage": usage,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    }
    return httpx.Response(200, json=body)


def _text(model: str, text: str) -> httpx.Response:
    content = [{"type": "output_text", "text": text, "annotations": []}]
    message = {"type": "message", "id": "msg_1", "status": "completed", "role": "assistant", "content": content}
    return _response(model, [message])


def test_a_run_through_openai_generators_with_a_429_then_success(
    make_agent: Callable[..., Agent], web: LoopbackWebServer
) -> None:
    requests: list[dict[str, Any]] = []
    scope_attempts = {"n": 0}

    def openai(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        requests.append(body)
        model = body["model"]
        if model == "scope-model":
            scope_attempts["n"] += 1
            if scope_attempts["n"] == 1:
                return httpx.Response(429, headers={"retry-after-ms": "10"}, json={"error": {"message": "slow down"}})
            return _text(model, "Brief: measure the growth of solar capacity.")
        if model == "orchestrator-model":
            if any(item.get("type") == "function_call_output" for item in body["input"]):
                return _text(model, "Research is complete.")
            call = {
                "type": "function_call",
                "id": "fc_1",
                "call_id": "call_1",
                "name": "research_subtopic",
                "arguments": json.dumps({"subtopic": "solar capacity"}),
                "status": "completed",
            }
            return _response(model, [call])
        solar = web.url("/solar.html")
        return _text(
            model, f"# Solar\n\n## Executive summary\n\nSolar grew [Solar]({solar}).\n\n## Sources\n\n- {solar}"
        )

    with respx.mock(assert_all_called=False) as mock:
        mock.post(f"{API}/responses").mock(side_effect=openai)
        mock.route(host="127.0.0.1").pass_through()  # read_url's fetches go to the loopback web server
        agent = make_agent(
            scope_llm=_generator("scope-model"),
            orchestrator_llm=_generator("orchestrator-model"),
            writer_llm=_generator("writer-model"),
        )
        result = agent.run(messages=[ChatMessage.from_user("How fast is solar growing?")])

    assert scope_attempts["n"] == 2  # the 429 was retried
    assert result["brief"] == "Brief: measure the growth of solar capacity."
    orchestrator_first = next(r for r in requests if r["model"] == "orchestrator-model")
    assert {tool["name"] for tool in orchestrator_first["tools"]} == {"research_subtopic", "think_tool"}
    user_inputs = [i for i in orchestrator_first["input"] if i.get("role") == "user"]
    assert json.dumps(user_inputs).count("How fast is solar growing?") == 0  # it sees the brief, not the question
    assert len(result["notes"]) == 1
    assert "450 gigawatts" in result["notes"][0]
    assert result["report"].startswith("# Solar")
    assert f"[Solar]({web.url('/solar.html')})" in result["report"]
    assert result["usage_by_phase"]["scope"]["input_tokens"] == 100
    assert result["exit_reason"] == "text"
