"""LoopbackChatServer: the OpenAI Chat Completions API on loopback, answered by chat generators."""

from __future__ import annotations

import json

import httpx
import pytest
from haystack.components.generators.chat import MockChatGenerator
from haystack.dataclasses import ChatMessage
from haystack.tools import Tool

from haystack_deep_research import ConfigurationError, Sources, create_deep_research_agent
from haystack_deep_research._prompts import ANALYSIS, JUDGE, SCOPE, render_chat
from haystack_deep_research.agents import chat_generator, role_models
from haystack_deep_research.testing import LoopbackChatServer

SEARCH = Tool(
    name="web_search",
    description="Search the web.",
    parameters={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    function=lambda query: query,
)


def test_tool_calls_and_tool_results_make_the_round_trip() -> None:
    with LoopbackChatServer() as server:
        researcher = chat_generator("researcher", base_url=server.openai_base_url)
        task = [ChatMessage.from_user("solar capacity")]
        first = researcher.run(messages=task, tools=[SEARCH])["replies"][0]
        [call] = first.tool_calls
        result = ChatMessage.from_tool(tool_result="No results.", origin=call)
        second = researcher.run(messages=[*task, first, result], tools=[SEARCH])["replies"][0]
        tools_sent = server.requests.wait_for(2)[0].json_body["tools"]

    assert (call.tool_name, call.arguments) == ("web_search", {"query": "solar capacity"})
    assert [tool["function"]["name"] for tool in tools_sent] == ["web_search"]
    assert second.text == "Findings on solar capacity: no readable sources were found."


def test_models_are_chosen_by_name_and_unknown_ones_are_404() -> None:
    with LoopbackChatServer({"fixed": MockChatGenerator(responses=["hello"])}) as server:
        ok = httpx.post(
            f"{server.openai_base_url}/chat/completions",
            json={"model": "fixed", "messages": [{"role": "user", "content": "hi"}]},
        )
        missing = httpx.post(
            f"{server.openai_base_url}/chat/completions",
            json={"model": "other", "messages": [{"role": "user", "content": "hi"}]},
        )
    assert ok.json()["choices"][0]["message"]["content"] == "hello"
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "model_not_found"


def test_a_streamed_request_gets_the_reply_as_events() -> None:
    chunks: list[str] = []
    with LoopbackChatServer() as server:
        researcher = chat_generator("researcher", base_url=server.openai_base_url)
        streamed = researcher.run(
            messages=[ChatMessage.from_user("Solarenergie in Österreich")],
            tools=[SEARCH],
            streaming_callback=lambda chunk: chunks.append(chunk.content),
        )["replies"][0]
        writer = chat_generator("writer", base_url=server.openai_base_url)
        text = writer.run(
            messages=[ChatMessage.from_user("Schreibe.")],
            streaming_callback=lambda chunk: None,
            generation_kwargs={"stream_options": {"include_usage": True}},
        )
        [request, _] = server.requests.wait_for(2)

    [call] = streamed.tool_calls
    assert (call.tool_name, call.arguments) == ("web_search", {"query": "Solarenergie in Österreich"})
    assert request.json_body["stream"] is True
    assert text["replies"][0].text
    assert text["replies"][0].meta["usage"]["total_tokens"] >= 0  # the usage chunk it asked for


def test_a_model_without_tool_support_fails_the_run_clearly() -> None:
    with LoopbackChatServer(no_tools={"researcher"}) as server:
        roles = {role: role for role in ("scope", "orchestrator", "researcher", "summarizer", "writer")}
        models = role_models(base_url=server.openai_base_url, roles=roles)
        for generator in models.values():
            generator.max_retries = 0
        agent = create_deep_research_agent(**models, sources=Sources(search="ddgs"), max_subtopics=1)
        result = agent.run(messages=[ChatMessage.from_user("Why do tides happen?")])

    assert any("does not support tools" in warning for warning in result["warnings"])
    assert result["exit_reason"] == "no_evidence"


def test_a_non_generator_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="must be a chat generator"):
        LoopbackChatServer({"x": object()})


def _ask(server: LoopbackChatServer, model: str, system: str, user: str = "Why do tides happen?") -> httpx.Response:
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    return httpx.post(f"{server.openai_base_url}/chat/completions", json={"model": model, "messages": messages})


def test_the_kit_model_answers_each_request_in_its_own_role() -> None:
    scope = render_chat(SCOPE, question="Why do tides happen?", today="2026-01-01")[0].text or ""
    with LoopbackChatServer() as server:
        answered = _ask(server, "kit", scope).json()["choices"][0]["message"]["content"]
        unknown = _ask(server, "kit", "You are a pirate.")

    assert answered.startswith("Research brief:")
    assert unknown.status_code == 400
    assert "cannot tell which role" in unknown.json()["error"]["message"]


def test_a_role_model_refuses_a_request_for_another_role() -> None:
    scope = render_chat(SCOPE, question="Why do tides happen?", today="2026-01-01")[0].text or ""
    with LoopbackChatServer() as server:
        refused = _ask(server, "writer", scope)

    assert refused.status_code == 400
    assert "this request is for the scope role" in refused.json()["error"]["message"]


def test_the_analysis_role_reads_its_round_from_the_prompt_over_http() -> None:
    variables = {"question": "Why do tides happen?", "round": 3, "depth": 3, "topics": [], "findings": []}
    system, user = render_chat(ANALYSIS, max_topics=1, since=None, refused=[], **variables)
    with LoopbackChatServer() as server:
        reply = _ask(server, "kit", system.text or "", user.text or "").json()["choices"][0]["message"]["content"]
        last = _ask(server, "analysis", system.text or "", (user.text or "").replace("round 3 of", "round 4 of"))

    assert json.loads(reply) == {"nextSearchTopic": "Why do tides happen? (open questions)", "shouldContinue": True}
    assert json.loads(last.json()["choices"][0]["message"]["content"])["shouldContinue"] is False


def test_the_judge_reads_source_and_claims_from_the_prompt_over_http() -> None:
    source = "The moon's pull raises two tides a day on most coasts."
    claims = ["The moon raises two tides a day on most coasts.", "Tides are caused by 17 whales."]
    system, user = render_chat(JUDGE, url="https://example.org/tides", title="Tides", source=source, claims=claims)
    with LoopbackChatServer() as server:
        reply = _ask(server, "kit", system.text or "", user.text or "").json()["choices"][0]["message"]["content"]

    assert [v["verdict"] for v in json.loads(reply)["verdicts"]] == ["supported", "unsupported"]
