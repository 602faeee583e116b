"""Structured output: the final report becomes a validated pydantic instance, or a StructuredOutputError."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
from haystack import component
from haystack.components.agents import Agent
from haystack.components.generators.chat import MockChatGenerator
from haystack.dataclasses import ChatMessage, StreamingChunk
from pydantic import BaseModel

from haystack_deep_research import (
    ConfigurationError,
    Grounding,
    ResearchRunError,
    ResearchSummary,
    StructuredOutputError,
)
from haystack_deep_research.agents import ResearchAgent
from haystack_deep_research.report.structured import StructuredOutputStage
from haystack_deep_research.report.writer import WriteHook
from haystack_deep_research.testing import LoopbackWebServer, ScriptedChatGenerator

QUESTION = "How fast is solar power growing?"


class Writer:
    """The scripted writer for reports; for the structured-output prompt, the given replies in turn."""

    def __init__(self, structured_replies: list[str]) -> None:
        self.replies = list(structured_replies)
        self.structured_prompts: list[str] = []
        self._writer = ScriptedChatGenerator(role="writer")
        self.generator = MockChatGenerator(response_fn=self)

    def __call__(self, messages: list[ChatMessage]) -> ChatMessage | str:
        prompt = messages[-1].text or ""
        if prompt.startswith("JSON schema:"):
            self.structured_prompts.append(prompt)
            return self.replies.pop(0)
        return self._writer.run(messages)["replies"][0]


def _summary(web: LoopbackWebServer, confidence: float = 0.8) -> str:
    return json.dumps(
        {
            "summary": "Solar capacity grew by 450 GW in 2025.",
            "key_findings": ["Solar grew by 450 GW", "Storage doubled"],
            "sources": [web.url("/solar.html")],
            "confidence": confidence,
        }
    )


def _run(make_agent: Callable[..., Agent], writer: Writer, **options: Any) -> dict[str, Any]:
    agent = make_agent(writer_llm=writer.generator, output_schema=ResearchSummary, **options)
    return agent.run(messages=[ChatMessage.from_user(QUESTION)])


def test_the_report_becomes_a_validated_instance(make_agent: Callable[..., Agent], web: LoopbackWebServer) -> None:
    writer = Writer([f"```json\n{_summary(web)}\n```"])
    result = _run(make_agent, writer)

    structured = result["structured"]
    assert isinstance(structured, ResearchSummary)
    assert structured.sources == [web.url("/solar.html")]
    assert structured.confidence == 0.8
    [prompt] = writer.structured_prompts
    assert '"confidence"' in prompt
    assert '"maximum": 1.0' in prompt
    assert "<untrusted_report>\n# Research report" in prompt  # and the final report
    assert web.url("/storage.pdf") in prompt.split("Sources of the report:")[1]  # and its verified sources
    assert "structure" in result["usage_by_phase"]
    assert result["report"].startswith("# Research report")


def test_an_invalid_reply_is_retried_once_with_the_validation_errors(
    make_agent: Callable[..., Agent], web: LoopbackWebServer
) -> None:
    writer = Writer([_summary(web, confidence=1.5), _summary(web, confidence=0.6)])
    result = _run(make_agent, writer)

    assert result["structured"].confidence == 0.6
    first, retry = writer.structured_prompts
    assert "did not validate" not in first
    assert "Your previous reply did not validate against the schema" in retry
    assert '"confidence": 1.5' in retry  # the previous reply
    assert "less than or equal to 1" in retry  # pydantic's error


def test_a_second_failure_raises_with_the_raw_text_and_the_errors(
    make_agent: Callable[..., Agent], web: LoopbackWebServer
) -> None:
    writer = Writer(["Sorry, here is a summary in prose.", '{"summary": "Solar grew."}'])

    with pytest.raises(StructuredOutputError, match="did not validate after one retry") as caught:
        _run(make_agent, writer)

    error = caught.value
    assert isinstance(error, ResearchRunError)
    assert error.raw_text == '{"summary": "Solar grew."}'
    assert {e["loc"][0] for e in error.errors} == {"key_findings", "sources", "confidence"}
    assert all(e["type"] == "missing" for e in error.errors)
    assert error.report.startswith("# Research report")
    assert web.url("/solar.html") in error.report


def test_a_failing_call_is_retried_then_raises(make_agent: Callable[..., Agent]) -> None:
    scripted = ScriptedChatGenerator(role="writer")

    def writer(messages: list[ChatMessage]) -> ChatMessage:
        if (messages[-1].text or "").startswith("JSON schema:"):
            raise ConnectionError("model unavailable")
        return scripted.run(messages)["replies"][0]

    agent = make_agent(writer_llm=MockChatGenerator(response_fn=writer), output_schema=ResearchSummary)
    with pytest.raises(StructuredOutputError) as caught:
        agent.run(messages=[ChatMessage.from_user(QUESTION)])

    assert caught.value.raw_text == ""
    assert caught.value.errors[0]["type"] == "call_failed"
    assert "ConnectionError: model unavailable" in caught.value.errors[0]["msg"]


def test_the_schema_is_serialized_by_its_import_path(make_agent: Callable[..., Agent]) -> None:
    agent = make_agent(output_schema=ResearchSummary)
    data = agent.to_dict()

    restored = ResearchAgent.from_dict(copy.deepcopy(data))

    assert restored.to_dict() == data
    write = next(h for h in restored.hooks["after_run"] if isinstance(h, WriteHook))
    stage = write.stages[-1]
    assert isinstance(stage, StructuredOutputStage)
    assert stage.output_schema is ResearchSummary
    stored = next(h for h in data["init_parameters"]["hooks"]["after_run"] if h["type"].endswith("WriteHook"))
    assert stored["init_parameters"]["stages"][-1]["init_parameters"]["output_schema"] == (
        "haystack_deep_research.report.structured.ResearchSummary"
    )


def test_a_schema_defined_in_a_function_runs_but_cannot_be_serialized(
    make_agent: Callable[..., Agent], web: LoopbackWebServer
) -> None:
    class Local(BaseModel):
        summary: str

    writer = Writer(['{"summary": "Solar grew."}'])
    agent = make_agent(writer_llm=writer.generator, output_schema=Local)

    assert agent.run(messages=[ChatMessage.from_user(QUESTION)])["structured"] == Local(summary="Solar grew.")
    with pytest.raises(ConfigurationError, match="define it at module level"):
        make_agent(output_schema=Local).to_dict()


@pytest.mark.parametrize("schema", [dict, ResearchSummary(summary="", key_findings=[], sources=[], confidence=0), "X"])
def test_an_output_schema_that_is_not_a_model_class_is_refused(
    make_agent: Callable[..., Agent], schema: object
) -> None:
    with pytest.raises(ConfigurationError, match="output_schema must be a pydantic BaseModel subclass"):
        make_agent(output_schema=schema)


def test_grounding_runs_before_the_structured_output(make_agent: Callable[..., Agent], web: LoopbackWebServer) -> None:
    writer = Writer([_summary(web)])
    result = _run(make_agent, writer, grounding=Grounding(judge_llm=ScriptedChatGenerator(role="judge"), max_replans=0))

    assert result["regeneration_count"] == 1
    assert "*(unsupported by the cited source)*" in writer.structured_prompts[0]  # it saw the final, marked report
    assert isinstance(result["structured"], ResearchSummary)


@component
class StreamRecorder:
    """Delegates to a writer; records, per call, whether the caller asked for a stream."""

    def __init__(self, writer: Writer) -> None:
        self.writer = writer
        self.streamed: list[tuple[bool, bool]] = []  # (structured prompt, streamed)

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], streaming_callback: Any = None) -> dict[str, list[ChatMessage]]:
        structured = (messages[-1].text or "").startswith("JSON schema:")
        self.streamed.append((structured, streaming_callback is not None))
        reply = self.writer(messages)
        return {"replies": [reply if isinstance(reply, ChatMessage) else ChatMessage.from_assistant(reply)]}


def test_the_structured_call_is_streamed_so_a_client_timeout_applies_between_chunks(
    make_agent: Callable[..., Agent], web: LoopbackWebServer
) -> None:
    recorder = StreamRecorder(Writer([_summary(web)]))
    agent = make_agent(writer_llm=recorder, output_schema=ResearchSummary)

    result = agent.run(messages=[ChatMessage.from_user(QUESTION)])

    assert isinstance(result["structured"], ResearchSummary)
    assert (True, True) in recorder.streamed  # the JSON was asked for as a stream
    assert all(not streamed for structured, streamed in recorder.streamed if not structured)  # report parts: not


def test_a_model_that_streams_already_keeps_its_own_streaming_callback(
    make_agent: Callable[..., Agent], web: LoopbackWebServer
) -> None:
    chunks: list[StreamingChunk] = []
    writer = Writer([_summary(web)])
    generator = MockChatGenerator(response_fn=writer, streaming_callback=chunks.append)

    result = make_agent(writer_llm=generator, output_schema=ResearchSummary).run(
        messages=[ChatMessage.from_user(QUESTION)]
    )

    assert isinstance(result["structured"], ResearchSummary)
    assert '"confidence":' in "".join(chunk.content for chunk in chunks)  # the caller's callback saw the JSON
