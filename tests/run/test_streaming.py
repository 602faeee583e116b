"""A run's streaming callback reaches every role's model, each chunk tagged with its role."""

from __future__ import annotations

import json
from collections.abc import Callable

from haystack.components.agents import Agent
from haystack.components.generators.chat import MockChatGenerator
from haystack.dataclasses import ChatMessage, StreamingChunk

from haystack_deep_research import STREAMING_KEY
from haystack_deep_research.prompts import prompt_of
from haystack_deep_research.report import ResearchSummary
from haystack_deep_research.run import AGENT_META, ROLE_META
from haystack_deep_research.testing import ScriptedChatGenerator

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
        grounding=True,
        judge_llm=ScriptedChatGenerator(role="judge"),
        output_schema=ResearchSummary,
    )


def test_the_callback_in_hook_context_reaches_every_role_including_scope(make_agent: Callable[..., Agent]) -> None:
    chunks: list[StreamingChunk] = []
    agent = make_agent(writer_llm=ScriptedChatGenerator(role="writer"))

    agent.run(messages=QUESTION, hook_context={STREAMING_KEY: chunks.append})

    assert _roles(chunks) == {"scope", "researcher", "summarizer", "writer"}
    researchers = {chunk.meta.get(AGENT_META) for chunk in chunks if chunk.meta.get(ROLE_META) == "researcher"}
    assert researchers == {"solar capacity", "battery storage"}  # each researcher's chunks name its sub-topic


def test_the_callback_passed_to_run_reaches_every_role_after_the_brief(make_agent: Callable[..., Agent]) -> None:
    chunks: list[StreamingChunk] = []

    make_agent().run(messages=QUESTION, streaming_callback=chunks.append)

    # The brief is written before the run has seen the callback: pass it in hook_context to stream scope too.
    assert _roles(chunks) == {"orchestrator", "researcher", "summarizer", "writer"}


def test_the_judge_and_the_structured_output_stream_too(make_agent: Callable[..., Agent]) -> None:
    chunks: list[StreamingChunk] = []

    result = _grounded(make_agent).run(messages=QUESTION, hook_context={STREAMING_KEY: chunks.append})

    assert result["structured"].summary == "Solar grew."
    assert {"judge", "writer", "structure"} <= _roles(chunks)


async def test_a_coroutine_callback_streams_an_async_run(make_agent: Callable[..., Agent]) -> None:
    chunks: list[StreamingChunk] = []

    async def collect(chunk: StreamingChunk) -> None:
        chunks.append(chunk)

    await make_agent().run_async(messages=QUESTION, streaming_callback=collect, hook_context={STREAMING_KEY: collect})

    assert _roles(chunks) == {"scope", "orchestrator", "researcher", "summarizer", "writer"}


def test_a_tagged_chunk_is_a_copy_and_stays_a_streaming_chunk(make_agent: Callable[..., Agent]) -> None:
    chunks: list[StreamingChunk] = []

    make_agent().run(messages=QUESTION, streaming_callback=chunks.append, hook_context={STREAMING_KEY: chunks.append})

    assert all(isinstance(chunk, StreamingChunk) for chunk in chunks)
    assert all(chunk.meta.get("model", "").startswith("scripted-") for chunk in chunks if chunk.content)
