"""A run's streaming callback reaches every role's model, each chunk tagged with its role."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx
import respx
from haystack.components.agents import Agent
from haystack.components.generators.chat import MockChatGenerator, OpenAIChatGenerator
from haystack.dataclasses import ChatMessage, StreamingChunk
from haystack.tools import tool
from haystack.utils import Secret
from tests.support import SUMMARIZE_EVERY_PAGE

from haystack_deep_research import EventStream, Grounding, RunInputs, create_deep_agent
from haystack_deep_research._prompts import prompt_of
from haystack_deep_research.report import ResearchSummary
from haystack_deep_research.run._phases import AGENT_META, ROLE_META
from haystack_deep_research.testing import ScriptedChatGenerator
from haystack_deep_research.tools import SubAgentDef

QUESTION = [ChatMessage.from_user("How fast is solar power growing?")]


def _roles(chunks: list[StreamingChunk]) -> set[str]:
    return {chunk.meta[ROLE_META] for chunk in chunks if ROLE_META in chunk.meta and chunk.content}


def _writer(messages: list[ChatMessage]) -> ChatMessage:
    """The scripted writer; for the structured-output prompt, a valid ResearchSummary."""
    found = prompt_of(messages[-1])
    if found is not None and found[0] == "structured":
        summary = {"summary": "Solar grew.", "key_findings": ["Solar grew."], "sources": [], "confidence": 0.7}
        return ChatMessage.from_assistant(json.dumps(summary))
    return ScriptedChatGenerator(role="writer").run(messages)["replies"][0]


def _grounded(make_agent: Callable[..., Agent]) -> Agent:
    return make_agent(
        writer_llm=MockChatGenerator(response_fn=_writer),
        grounding=Grounding(judge_llm=ScriptedChatGenerator(role="judge")),
        output_schema=ResearchSummary,
    )


def test_the_callback_in_hook_context_reaches_every_role_including_scope(make_agent: Callable[..., Agent]) -> None:
    chunks: list[StreamingChunk] = []
    agent = make_agent(sources=SUMMARIZE_EVERY_PAGE, writer_llm=ScriptedChatGenerator(role="writer"))

    agent.run(messages=QUESTION, inputs=RunInputs(streaming_callback=chunks.append))

    assert _roles(chunks) == {"scope", "orchestrator", "researcher", "summarizer", "writer"}
    researchers = {chunk.meta.get(AGENT_META) for chunk in chunks if chunk.meta.get(ROLE_META) == "researcher"}
    assert researchers == {"solar capacity", "battery storage"}  # each researcher's chunks name its sub-topic


def test_the_callback_passed_to_run_reaches_every_role_the_brief_too(make_agent: Callable[..., Agent]) -> None:
    chunks: list[StreamingChunk] = []

    make_agent(sources=SUMMARIZE_EVERY_PAGE).run(messages=QUESTION, streaming_callback=chunks.append)

    assert _roles(chunks) == {"scope", "orchestrator", "researcher", "summarizer", "writer"}


def test_the_judge_and_the_structured_output_stream_too(make_agent: Callable[..., Agent]) -> None:
    chunks: list[StreamingChunk] = []

    result = _grounded(make_agent).run(messages=QUESTION, inputs=RunInputs(streaming_callback=chunks.append))

    assert result["structured"].summary == "Solar grew."
    assert {"judge", "writer", "structure"} <= _roles(chunks)


async def test_a_coroutine_callback_streams_an_async_run(make_agent: Callable[..., Agent]) -> None:
    chunks: list[StreamingChunk] = []

    async def collect(chunk: StreamingChunk) -> None:
        chunks.append(chunk)

    await make_agent(sources=SUMMARIZE_EVERY_PAGE).run_async(messages=QUESTION, streaming_callback=collect)

    assert _roles(chunks) == {"scope", "orchestrator", "researcher", "summarizer", "writer"}


def test_a_tagged_chunk_is_a_copy_and_stays_a_streaming_chunk(make_agent: Callable[..., Agent]) -> None:
    chunks: list[StreamingChunk] = []

    make_agent().run(messages=QUESTION, streaming_callback=chunks.append)

    assert all(isinstance(chunk, StreamingChunk) for chunk in chunks)
    assert all(chunk.meta.get("model", "").startswith("scripted-") for chunk in chunks if chunk.content)


API = "https://api.openai.test/v1"


def _chat_stream(request: httpx.Request) -> httpx.Response:
    """A Chat Completions event stream: the text, then, when the request asks for it, a chunk with the usage."""
    asked = json.loads(request.content)
    base = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "writer-model"}
    text = "# Solar\n\n## Executive summary\n\nSolar grew."
    chunks = [
        {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]
    if asked.get("stream_options", {}).get("include_usage"):
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        chunks.append({**base, "choices": [], "usage": usage})
    body = "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks) + "data: [DONE]\n\n"
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, text=body)


def test_a_streamed_openai_reply_still_counts_its_tokens(make_agent: Callable[..., Agent]) -> None:
    chunks: list[StreamingChunk] = []

    with respx.mock(assert_all_called=False) as mock:
        route = mock.post(f"{API}/chat/completions").mock(side_effect=_chat_stream)
        mock.route(host="127.0.0.1").pass_through()
        writer = OpenAIChatGenerator(
            api_key=Secret.from_token("sk-test"),
            model="writer-model",
            api_base_url=API,
            http_client_kwargs={"timeout": 5},
        )
        result = make_agent(writer_llm=writer).run(messages=QUESTION, streaming_callback=chunks.append)

    assert route.calls  # the writer's parts
    assert all(json.loads(call.request.content)["stream"] for call in route.calls)
    assert result["usage_by_phase"]["write"]["total_tokens"] == 15 * len(route.calls)
    assert "writer" in _roles(chunks)


def _deep_agent() -> Agent:
    search = {"tool_name": "search_kb", "arguments": {"query": "CRM"}}
    task = {"tool_name": "task", "arguments": {"subagent_type": "analyst", "task": "Research Acme."}}
    analyst = SubAgentDef(
        name="analyst",
        description="Researches one competitor.",
        system_prompt="Research the competitor.",
        tools=[search_kb],
        chat_generator=ScriptedChatGenerator(role="agent", steps=[search, "Acme leads the mid-market segment."]),
    )
    return create_deep_agent(
        chat_generator=ScriptedChatGenerator(role="agent", steps=[search, task, "Acme leads the mid-market segment."]),
        tools=[search_kb],
        system_prompt="Research.",
        subagents=[analyst],
        summarize_after_messages=4,
        summarize_keep_recent=2,
    )


@tool
def search_kb(query: str) -> str:
    """Search the knowledge base."""
    return f"{query}: Acme leads the mid-market segment."


def test_every_model_of_a_deep_agent_streams_tagged_with_its_role() -> None:
    chunks: list[StreamingChunk] = []

    result = _deep_agent().run(messages=QUESTION, streaming_callback=chunks.append)

    assert (result["exit_reason"], result["step_count"]) == ("text", 3)
    assert {"reflexion", "judge", "subagent", "summarizer"} <= _roles(chunks)
    assert {chunk.meta.get(AGENT_META) for chunk in chunks if chunk.meta.get(ROLE_META) == "subagent"} == {"analyst"}
    assert any(ROLE_META not in chunk.meta and chunk.content for chunk in chunks)  # the agent's own model, as Haystack


def test_a_deep_agent_adopts_the_runs_callback_once_a_library_tool_runs() -> None:
    chunks: list[StreamingChunk] = []

    _deep_agent().run(messages=QUESTION, streaming_callback=chunks.append)

    assert "subagent" in _roles(chunks)  # the task tool handed the callback to the run


async def test_an_event_stream_hands_the_callback_to_the_run_from_its_start(make_agent: Callable[..., Agent]) -> None:
    chunks: list[StreamingChunk] = []

    async def collect(chunk: StreamingChunk) -> None:
        chunks.append(chunk)

    stream = EventStream(make_agent(sources=SUMMARIZE_EVERY_PAGE), messages=QUESTION, streaming_callback=collect)
    kinds = [event.kind async for event in stream]

    assert kinds[-1] == "run_ended"
    assert _roles(chunks) == {"scope", "orchestrator", "researcher", "summarizer", "writer"}
