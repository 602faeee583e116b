"""Every URL of a structured output is verified against the run's ledger, in every shape that returns one."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from haystack import Pipeline
from haystack.components.agents import Agent
from haystack.components.generators.chat import MockChatGenerator
from haystack.dataclasses import ChatMessage
from pydantic import BaseModel

from haystack_deep_research import Grounding, ResearchSummary
from haystack_deep_research.testing import LoopbackWebServer, ScriptedChatGenerator

QUESTION = "How fast is solar power growing?"
INVENTED = "https://invented.example/solar-study"


class Pointer(BaseModel):
    """A schema whose one URL field cannot be left empty."""

    answer: str
    evidence_url: str


def _writer(role: str, structured: Callable[[], str]) -> MockChatGenerator:
    """The scripted model of ``role``, answering the structured-output prompt with ``structured()``."""
    scripted = ScriptedChatGenerator(role=role)

    def reply(messages: list[ChatMessage]) -> ChatMessage | str:
        if (messages[-1].text or "").startswith("JSON schema:"):
            return structured()
        return scripted.run(messages)["replies"][0]

    return MockChatGenerator(response_fn=reply)


def _summary(*sources: str) -> str:
    return json.dumps(
        {
            "summary": "Solar grew.",
            "key_findings": ["Solar grew by 450 GW"],
            "sources": list(sources),
            "confidence": 0.7,
        }
    )


def test_an_invented_url_leaves_the_main_agents_structured_output_with_a_warning(
    make_agent: Callable[..., Agent], web: LoopbackWebServer
) -> None:
    writer = _writer("writer", lambda: _summary(web.url("/solar.html"), INVENTED))
    result = make_agent(writer_llm=writer, output_schema=ResearchSummary).run(
        messages=[ChatMessage.from_user(QUESTION)]
    )

    assert result["structured"].sources == [web.url("/solar.html")]
    assert any(INVENTED in warning and "never read" in warning for warning in result["warnings"])


def test_an_invented_url_leaves_the_workflows_structured_output(
    make_workflow: Callable[..., Pipeline], web: LoopbackWebServer
) -> None:
    writer = _writer("summarize", lambda: _summary(INVENTED, web.url("/solar.html")))
    result = make_workflow(summary_llm=writer, grounding=Grounding(threshold=0.0)).run(
        messages=[ChatMessage.from_user(QUESTION)]
    )

    assert result["structured"].sources == [web.url("/solar.html")]
    assert any(INVENTED in warning for warning in result["warnings"])


def test_a_schema_that_cannot_hold_the_output_without_the_url_gets_none(
    make_workflow: Callable[..., Pipeline], web: LoopbackWebServer
) -> None:
    writer = _writer("summarize", lambda: json.dumps({"answer": "Solar grew.", "evidence_url": INVENTED}))
    result: dict[str, Any] = make_workflow(
        summary_llm=writer, output_schema=Pointer, grounding=Grounding(threshold=0.0)
    ).run(messages=[ChatMessage.from_user(QUESTION)])

    assert result["structured"] is None  # never an unverified URL, and the report is still returned
    assert result["exit_reason"] == "structured_output_failed"
    assert result["report"]
    assert any(INVENTED in warning for warning in result["warnings"])


def test_urls_inside_text_in_any_form_and_in_keys_leave_with_a_warning(
    make_workflow: Callable[..., Pipeline], web: LoopbackWebServer
) -> None:
    read = web.url("/solar.html")
    summary = f"Solar grew ([source]({read})); see https://evil.example/phish and [this](http://bad.example)."
    reply = json.dumps(
        {
            "summary": summary,
            "key_findings": ["Solar grew, www.evil.example/more"],
            "sources": [read, "<https://evil.example/b>", "ftp://evil.example/e"],
            "confidence": 0.7,
        }
    )
    writer = _writer("summarize", lambda: reply)
    result = make_workflow(summary_llm=writer, grounding=Grounding(threshold=0.0)).run(
        messages=[ChatMessage.from_user(QUESTION)]
    )

    structured = result["structured"]
    assert structured.sources == [read]
    assert read in structured.summary  # the verified link stays
    assert "evil.example" not in structured.summary + " ".join(structured.key_findings)
    assert "bad.example" not in structured.summary
    assert any("evil.example/phish" in warning for warning in result["warnings"])
