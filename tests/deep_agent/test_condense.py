"""Conversation summarization: older turns become a summary; the prompt stays bounded and nothing essential is lost."""

from __future__ import annotations

from typing import Any

from haystack.components.generators.chat import MockChatGenerator
from haystack.dataclasses import ChatMessage, ChatRole, ToolCall
from haystack.tools import tool

from haystack_deep_research import RunInputs, create_deep_agent
from haystack_deep_research._prompts import prompt_of
from haystack_deep_research.events import ConversationCondensed, Event

STEPS = 40
TASK = "Survey every CRM vendor in the knowledge base."


@tool
def search_kb(query: str) -> str:
    """Search the knowledge base."""
    return f"Results for {query}: " + " ".join(f"fact-{n}" for n in range(40))


class Model:
    """The agent's model: a todo list first, then one search per step (each with new arguments), then an answer.

    It records every prompt the agent's loop sends it, and answers summary requests with a short summary.
    """

    def __init__(self) -> None:
        self.prompts: list[list[ChatMessage]] = []
        self.turn = 0

    def __call__(self, messages: list[ChatMessage], tools: Any) -> ChatMessage | str:
        found = prompt_of(messages[-1])
        if found is not None and found[0] == "condense":
            return f"Searched {len(found[1]['transcript'])} times; facts noted."
        self.prompts.append(list(messages))
        self.turn += 1
        if self.turn == 1:
            todos = [{"content": "search every vendor", "status": "in_progress"}]
            return ChatMessage.from_assistant(
                tool_calls=[ToolCall(tool_name="write_todos", arguments={"todos": todos})]
            )
        if self.turn <= STEPS:
            call = ToolCall(tool_name="search_kb", arguments={"query": f"vendor {self.turn}"})
            return ChatMessage.from_assistant(tool_calls=[call])
        return "Surveyed all vendors."


def _run(**options: Any) -> tuple[Model, dict[str, Any], list[Event]]:
    model, events = Model(), []
    agent = create_deep_agent(
        chat_generator=MockChatGenerator(response_fn=model),
        tools=[search_kb],
        system_prompt="Survey vendors.",
        enable_todos=True,
        max_iterations=STEPS + 5,
        grounding=False,
        reflexion=False,
        **options,
    )
    result = agent.run(messages=[ChatMessage.from_user(TASK)], inputs=RunInputs(on_event=events.append))
    return model, result, events


def _words(messages: list[ChatMessage]) -> int:
    return sum(len((m.text or str(m.tool_call_result.result if m.tool_call_result else "")).split()) for m in messages)


def test_token_use_stays_bounded_over_a_long_run() -> None:
    plain, _, _ = _run()
    condensed, result, events = _run(summarize_after_messages=12, summarize_keep_recent=4)

    assert result["exit_reason"] == "text"
    assert max(len(p) for p in condensed.prompts) <= 1 + 12  # the system prompt and at most 12 more messages
    middle, late = [_words(p) for p in condensed.prompts[10:20]], [_words(p) for p in condensed.prompts[-10:]]
    assert max(late) <= max(middle)  # no growth: the end of the run costs what its middle did
    assert max(late) < _words(plain.prompts[-1]) / 5  # against a prompt that kept growing
    assert sum(map(_words, condensed.prompts)) < sum(map(_words, plain.prompts)) / 3
    assert any(isinstance(e, ConversationCondensed) for e in events)
    assert "condense" in result["usage_by_phase"]


def test_the_system_prompt_the_task_and_the_todos_are_never_lost() -> None:
    model, _, _ = _run(summarize_after_messages=12, summarize_keep_recent=4)

    for prompt in model.prompts:
        assert prompt[0].is_from(ChatRole.SYSTEM)
        assert "Survey vendors." in (prompt[0].text or "")
        assert prompt[1].text == TASK
    summaries = [m.text or "" for p in model.prompts for m in p if prompt_of(m) and prompt_of(m)[0] == "condensed"]
    assert summaries
    assert all("[in_progress] search every vendor" in text for text in summaries)


def test_a_tool_call_and_its_results_are_never_split() -> None:
    model, _, _ = _run(summarize_after_messages=9, summarize_keep_recent=3)

    for prompt in model.prompts:
        called: set[str | None] = set()
        for message in prompt:
            called |= {call.id or call.tool_name + str(call.arguments) for call in message.tool_calls}
            result = message.tool_call_result
            if result is not None:
                key = result.origin.id or result.origin.tool_name + str(result.origin.arguments)
                assert key in called, "a tool result reached the model without its call"
