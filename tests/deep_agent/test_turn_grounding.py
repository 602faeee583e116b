"""Per-turn grounding: an answer is judged against the tool evidence; unsupported claims go back, then are dropped."""

from __future__ import annotations

from typing import Any

from haystack.components.generators.chat import MockChatGenerator
from haystack.dataclasses import ChatMessage, ToolCall
from haystack.tools import tool
from pydantic import BaseModel
from tests.support import truth_judge

from haystack_deep_research import Grounding, create_deep_agent
from haystack_deep_research.deep_agent.turn_grounding import answer_claims
from haystack_deep_research.testing import ScriptedChatGenerator

SUPPORTED = "Acme leads the mid-market CRM segment with a 30 percent share."
INVENTED = "Zenith doubled its revenue in 2025 across Europe."
QUESTION = [ChatMessage.from_user("Which CRM leads the mid-market?")]


class Answer(BaseModel):
    summary: str
    confidence: float


@tool
def search_kb(query: str) -> str:
    """Search the knowledge base."""
    return f"Knowledge base on {query}: {SUPPORTED}"


@tool
def submit(summary: str, confidence: float) -> str:
    """Submit the answer."""
    return "submitted"


def _search(query: str) -> dict[str, Any]:
    return {"tool_name": "search_kb", "arguments": {"query": query}}


def _submit() -> dict[str, Any]:
    return {"tool_name": "submit", "arguments": {"summary": f"{SUPPORTED} {INVENTED}", "confidence": 0.9}}


def _agent(steps: list[Any], **options: Any) -> Any:
    settings: dict[str, Any] = {
        "chat_generator": ScriptedChatGenerator(role="agent", steps=steps),
        "tools": [search_kb, submit],
        "system_prompt": "Answer from the knowledge base.",
        "submit_tool": "submit",
        "reflexion": False,
    }
    rounds = options.pop("rounds", 2)
    settings["grounding"] = Grounding(judge_llm=ScriptedChatGenerator(role="judge"), max_replans=rounds)
    settings.update(options)
    return create_deep_agent(**settings)


def test_an_unsupported_claim_is_sent_back_then_dropped_from_the_accepted_answer() -> None:
    agent = _agent([_search("CRM"), _submit(), _search("Zenith revenue"), _submit()], rounds=1)

    result = agent.run(messages=QUESTION)

    assert result["exit_reason"] == "submit"
    assert result["grounding_rounds"] == 1
    sent_back = [m.text for m in result["messages"] if m.text and "not supported by that evidence" in m.text]
    assert len(sent_back) == 1
    assert INVENTED in sent_back[0]
    assert result["submission"] == {"summary": SUPPORTED, "confidence": 0.9}
    assert result["report"] == SUPPORTED
    assert result["grounding_score"] == 0.5
    assert [(g["claim"], g["verdict"], g["dropped"]) for g in result["grounding"]] == [
        (SUPPORTED, "supported", False),
        (INVENTED, "unsupported", True),
    ]
    assert any("1 claim(s) unsupported by the tool evidence were dropped" in w for w in result["warnings"])


def test_the_structured_output_is_built_from_the_grounded_submission() -> None:
    result = _agent([_search("CRM"), _submit()], rounds=0, output_schema=Answer).run(messages=QUESTION)

    assert result["structured"] == Answer(summary=SUPPORTED, confidence=0.9)


def test_a_plain_answer_is_grounded_too() -> None:
    agent = _agent([_search("CRM"), f"{SUPPORTED} {INVENTED}"], tools=[search_kb], submit_tool=None, rounds=0)

    result = agent.run(messages=QUESTION)

    assert result["exit_reason"] == "text"
    assert result["report"] == SUPPORTED


def test_grounding_off_keeps_the_answer_as_given() -> None:
    result = _agent([_search("CRM"), _submit()], grounding=False).run(messages=QUESTION)

    assert result["report"] == f"{SUPPORTED} {INVENTED}"  # the answer's text: its strings, not its numbers
    assert result["grounding_score"] is None


def test_an_answer_without_tool_evidence_has_nothing_to_be_judged_against() -> None:
    result = _agent([_submit()]).run(messages=QUESTION)

    assert result["exit_reason"] == "submit"
    assert result["submission"]["summary"] == f"{SUPPORTED} {INVENTED}"
    assert result["grounding_score"] == 1.0


def test_claims_are_sentences_of_four_words_or_more() -> None:
    claims = answer_claims("Acme leads the segment. Done.\n- Zenith grew 20 percent in 2025!\n42")

    assert [claim.text for claim in claims] == ["Acme leads the segment.", "Zenith grew 20 percent in 2025!"]


VATICAN = "The Vatican discovered tides in 1850."


def _plain_agent(answer: str, judge: MockChatGenerator) -> Any:
    """A deep agent whose model is a plain mock: one search, then ``answer``."""
    model = MockChatGenerator(
        responses=[
            ChatMessage.from_assistant(tool_calls=[ToolCall(tool_name="search_kb", arguments={"query": "CRM"})]),
            answer,
        ]
    )
    return create_deep_agent(
        chat_generator=model,
        tools=[search_kb],
        system_prompt="Answer from the knowledge base.",
        reflexion=False,
        grounding=Grounding(judge_llm=judge, max_replans=0),
    )


ANSWER = f"## Findings\n\nThis answer draws on the knowledge base.\n\n{SUPPORTED} {VATICAN}\n"


def test_an_invented_sentence_is_judged_and_dropped_while_headings_and_signposts_are_not_judged() -> None:
    result = _plain_agent(ANSWER, truth_judge("Vatican")).run(messages=QUESTION)

    assert [(g["sentence"], g["verdict"], g["dropped"]) for g in result["grounding"]] == [
        (SUPPORTED, "supported", False),
        (VATICAN, "unsupported", True),
    ]
    assert result["grounding_score"] == 0.5
    assert "Vatican" not in result["report"]
    assert SUPPORTED in result["report"]
    assert result["grounding_unjudged"] == []


def test_claims_no_judge_decided_are_listed_as_written() -> None:
    result = _plain_agent(ANSWER, MockChatGenerator(responses="I cannot tell.")).run(messages=QUESTION)

    assert result["grounding_unjudged"] == [SUPPORTED, VATICAN]
    assert result["grounding_score"] == 1.0  # nothing decided
    assert any("was not the JSON asked for" in w for w in result["warnings"])
