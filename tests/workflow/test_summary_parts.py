"""
The research workflow's grounding rewrite writes again only the part of the summary that holds the unsupported claim,
with plain Haystack fakes (no scripted role of the testing kit) and the real read_url tool on a loopback web server.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from haystack import component
from haystack.components.generators.chat import MockChatGenerator
from haystack.dataclasses import ChatMessage, ToolCall

from haystack_deep_research import Grounding, ReadUrlTool, UrlPolicy, create_research_workflow
from haystack_deep_research.testing import LoopbackWebServer
from haystack_deep_research.workflow.summary import RegenerateStep, SummarizeStep

QUESTION = "How fast is solar capacity growing?"
TRUE_OPENING = "Solar capacity keeps growing fast"
TRUE_SECTION = "Global solar capacity grew by 450 gigawatts in 2025"
FALSE = "Global solar capacity fell by 90 percent in 2025"
USAGE = {"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19}
_CLAIM = re.compile(r"^(\d+)\. (.*)$", re.MULTILINE)


def _reply(text: str | None = None, tool_calls: list[ToolCall] | None = None) -> dict[str, Any]:
    message = ChatMessage.from_assistant(text, tool_calls=tool_calls, meta={"model": "mock-model", "usage": USAGE})
    return {"replies": [message]}


@component
class Reader:
    """The Execute agent's model: reads the page once, then reports what it says, citing it."""

    def __init__(self, url: str) -> None:
        self.url = url

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        if not any(message.tool_call_result is not None for message in messages):
            return _reply(tool_calls=[ToolCall(tool_name="read_url", arguments={"urls": [self.url], "question": "q"})])
        return _reply(f"- {TRUE_SECTION} [Solar]({self.url}).")


@component
class Summarizer:
    """Summarizes any page in one sentence."""

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        return _reply(f"{TRUE_SECTION}.")


@component
class Judge:
    """A claim is unsupported when it says solar capacity fell."""

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        claims = _CLAIM.findall(messages[-1].text or "")
        verdicts = [
            {"id": int(number), "verdict": "unsupported" if "fell" in claim else "supported", "reason": "r"}
            for number, claim in claims
        ]
        return _reply(json.dumps({"verdicts": verdicts}))


@component
class Writer:
    """
    Writes the opening or a section, told apart by its system message; the first draft of the part named ``wrong``
    states the false claim, and a rewrite (told by the fact-checker's note in its prompt) the true one.
    """

    def __init__(self, url: str, wrong: str) -> None:
        self.url, self.wrong = url, wrong
        self.calls: list[tuple[str, str]] = []

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        system, user = messages[0].text or "", messages[-1].text or ""
        kind = "opening" if system.startswith("You write the opening") else "section"
        draft = "rewrite" if "A fact-checker compared the report" in user else "draft"
        self.calls.append((kind, draft))
        true = TRUE_OPENING if kind == "opening" else TRUE_SECTION
        claim = FALSE if kind == self.wrong and draft == "draft" else true
        cited = f"{claim} [Solar]({self.url})."
        if kind == "opening":
            return _reply(f"# Solar\n\n## Executive summary\n\n{cited}")
        return _reply(f"## Solar growth\n\n{cited}")


@pytest.mark.parametrize("wrong", ["section", "opening"])
def test_a_grounding_rewrite_writes_again_only_the_part_with_the_unsupported_claim(
    web: LoopbackWebServer, wrong: str
) -> None:
    url = web.url("/solar.html")
    writer = Writer(url, wrong)
    read_url = ReadUrlTool(summarizer_llm=Summarizer(), url_policy=UrlPolicy(allow_hosts=("127.0.0.1",)))
    workflow = create_research_workflow(
        chat_generator=Reader(url),
        tools=[read_url],
        output_schema=None,
        causal_inference=False,
        summary_llm=writer,
        grounding=Grounding(judge_llm=Judge(), threshold=0.9, max_regenerations=1, max_replans=0),
    )

    result = workflow.run(messages=[ChatMessage.from_user(QUESTION)])

    assert sorted(writer.calls[:2]) == [("opening", "draft"), ("section", "draft")]  # the first draft, side by side
    assert writer.calls[2:] == [(wrong, "rewrite")]  # the other part was kept as it was written
    assert (result["regeneration_count"], result["replan_count"]) == (1, 0)
    assert result["exit_reason"] == "grounded"
    assert result["grounding_score"] == 1.0
    report = result["report"]
    assert FALSE not in report
    assert f"{TRUE_OPENING} [Solar]({url})" in report
    assert f"## Solar growth\n\n{TRUE_SECTION} [Solar]({url})" in report


@pytest.mark.parametrize("step", [SummarizeStep, RegenerateStep])
def test_the_summary_steps_keep_their_concurrency_when_serialized(step: Any) -> None:
    written = step(chat_generator=MockChatGenerator(responses="A summary."), max_concurrency=3)

    loaded = step.from_dict(written.to_dict())

    assert loaded.max_concurrency == 3
    assert loaded.to_dict() == written.to_dict()
