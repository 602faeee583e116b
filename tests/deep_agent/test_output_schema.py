"""output_schema without a schema-shaped submission: the answer is structured by the provider's strict mode where the
model has one, by validate-and-retry otherwise; and the per-completion cap reaches the provider."""

from __future__ import annotations

import json
from typing import Any

import httpx
import respx
from haystack.components.generators.chat import MockChatGenerator, OpenAIChatGenerator, OpenAIResponsesChatGenerator
from haystack.dataclasses import ChatMessage
from haystack.utils import Secret
from pydantic import BaseModel

from haystack_deep_research import create_deep_agent
from haystack_deep_research._prompts import prompt_of
from haystack_deep_research.report.structured import strict_output_kwargs
from haystack_deep_research.testing import ScriptedChatGenerator

API = "https://api.openai.test/v1"
ANSWER = "Acme leads the mid-market CRM segment."


class Verdict(BaseModel):
    leader: str
    confidence: float


def test_strict_mode_is_known_for_openai_generators_only() -> None:
    key = Secret.from_token("sk-test")

    chat = strict_output_kwargs(OpenAIChatGenerator(api_key=key), Verdict)
    responses = strict_output_kwargs(
        OpenAIResponsesChatGenerator(api_key=key, generation_kwargs={"text": {"verbosity": "low"}}), Verdict
    )

    assert chat is not None
    assert responses is not None
    schema = chat["response_format"]["json_schema"]
    assert chat["response_format"]["type"] == "json_schema"
    assert (schema["name"], schema["strict"]) == ("Verdict", True)
    assert schema["schema"]["required"] == ["leader", "confidence"]
    assert schema["schema"]["additionalProperties"] is False
    assert responses["text"] == {"verbosity": "low", "format": {"type": "json_schema", **schema}}
    assert strict_output_kwargs(ScriptedChatGenerator(role="writer"), Verdict) is None


def test_a_plain_answer_is_structured_with_validate_and_retry() -> None:
    replies = iter(['{"leader": "Acme"}', '{"leader": "Acme", "confidence": 0.8}'])
    prompts: list[str] = []

    def reply(messages: list[ChatMessage]) -> str:
        found = prompt_of(messages[-1])
        if found is not None and found[0].startswith("structured"):
            prompts.append(found[0])
            return next(replies)
        return ANSWER

    agent = create_deep_agent(
        chat_generator=MockChatGenerator(response_fn=reply),
        tools=[],
        system_prompt="Answer.",
        output_schema=Verdict,
        grounding=False,
        reflexion=False,
    )

    result = agent.run(messages=[ChatMessage.from_user("Who leads?")])

    assert result["structured"] == Verdict(leader="Acme", confidence=0.8)
    assert prompts == ["structured", "structured_retry"]
    assert result["report"] == ANSWER


def _response_body(text: str) -> dict[str, Any]:
    content = [{"type": "output_text", "text": text, "annotations": []}]
    message = {"type": "message", "id": "msg_1", "status": "completed", "role": "assistant", "content": content}
    usage = {
        "input_tokens": 10,
        "output_tokens": 5,
        "total_tokens": 15,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens_details": {"reasoning_tokens": 0},
    }
    body: dict[str, Any] = {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "model": "gpt-test",
        "status": "completed",
        "output": [message],
        "usage": usage,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    }
    return body


def _responses(text: str) -> httpx.Response:
    return httpx.Response(200, json=_response_body(text))


def _streamed_responses(text: str) -> httpx.Response:
    """The same reply as a Responses API event stream: the text in two deltas, then the completed response."""
    half = len(text) // 2
    events: list[dict[str, Any]] = [
        {"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": part}
        for part in (text[:half], text[half:])
    ]
    events.append({"type": "response.completed", "response": _response_body(text)})
    stream = "".join(
        f"event: {event['type']}\ndata: {json.dumps({**event, 'sequence_number': n})}\n\n"
        for n, event in enumerate(events)
    )
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, text=stream)


@respx.mock
def test_openai_gets_the_output_cap_on_each_completion_and_the_schema_in_strict_mode() -> None:
    route = respx.post(f"{API}/responses").mock(
        side_effect=[_responses(ANSWER), _streamed_responses(json.dumps({"leader": "Acme", "confidence": 0.9}))]
    )
    model = OpenAIResponsesChatGenerator(
        api_key=Secret.from_token("sk-test"), model="gpt-test", api_base_url=API, http_client_kwargs={"timeout": 5}
    )
    agent = create_deep_agent(
        chat_generator=model,
        tools=[],
        system_prompt="Answer.",
        output_schema=Verdict,
        max_output_tokens=256,
        grounding=False,
        reflexion=False,
    )

    result = agent.run(messages=[ChatMessage.from_user("Who leads?")])

    loop_call, structured_call = (json.loads(call.request.content) for call in route.calls)
    assert loop_call["max_output_tokens"] == 256
    assert structured_call["text"]["format"]["type"] == "json_schema"
    assert structured_call["text"]["format"]["name"] == "Verdict"
    assert structured_call["stream"] is True  # a client's read timeout applies between chunks, not to the whole JSON
    assert result["structured"] == Verdict(leader="Acme", confidence=0.9)
    assert result["usage_by_phase"]["structure"]["total_tokens"] == 15  # the stream carried the usage


def _completion(text: str) -> httpx.Response:
    return httpx.Response(
        200,
        json={
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": "local",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
        },
    )


@respx.mock
def test_the_output_cap_has_the_name_each_server_knows() -> None:
    """OpenAI's reasoning models refuse max_tokens; a local server's Chat Completions knows only it."""
    from haystack_deep_research.agents import chat_generator
    from haystack_deep_research.testing import LoopbackChatServer

    def ask(generator: Any) -> str:
        agent = create_deep_agent(
            chat_generator=generator,
            tools=[],
            system_prompt="Answer.",
            max_output_tokens=64,
            grounding=False,
            reflexion=False,
        )
        return agent.run(messages=[ChatMessage.from_user("Warum zweimal täglich?")])["last_message"].text

    with LoopbackChatServer(models={"llama-3": MockChatGenerator("Ebbe und Flut.")}) as server:
        assert ask(chat_generator("llama-3", base_url=server.openai_base_url, api="chat")) == "Ebbe und Flut."
        [local] = [request.json_body for request in server.requests]
    route = respx.post("https://api.openai.com/v1/chat/completions").mock(return_value=_completion("Ebbe und Flut."))
    openai = OpenAIChatGenerator(
        api_key=Secret.from_token("sk-test"), model="gpt-test", http_client_kwargs={"timeout": 5}
    )
    assert ask(openai) == "Ebbe und Flut."
    sent = json.loads(route.calls.last.request.content)

    caps = [
        {key: body[key] for key in ("max_tokens", "max_completion_tokens") if key in body} for body in (local, sent)
    ]
    assert caps == [{"max_tokens": 64}, {"max_completion_tokens": 64}]
