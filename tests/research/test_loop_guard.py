"""
The loop guard tells progress from a loop by the arguments. The loop that persists until the researcher is stopped
is a fault case in tests/test_faults.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from haystack.components.agents import Agent
from haystack.components.generators.chat import MockChatGenerator
from haystack.dataclasses import ChatMessage, ToolCall

from haystack_deep_research.testing import LoopbackSearchServer, ScriptedChatGenerator

QUESTION = "How fast is solar power growing?"


def _search(*queries: str) -> ChatMessage:
    return ChatMessage.from_assistant(
        tool_calls=[ToolCall(tool_name="web_search", arguments={"query": query}) for query in queries]
    )


def _scripted_researcher(turns: list[ChatMessage], seen: list[str]) -> MockChatGenerator:
    """A researcher that plays ``turns`` in order, records every tool result it sees, then summarizes."""

    def reply(messages: list[ChatMessage], tools: Any) -> ChatMessage | str:
        made = sum(1 for m in messages if m.tool_calls)
        if tools and made < len(turns):
            return turns[made]
        seen.extend(str(m.tool_call_result.result) for m in messages if m.tool_call_result is not None)
        return "Solar capacity grew in 2025."

    return MockChatGenerator(response_fn=reply)


def _run(make_agent: Callable[..., Agent], researcher: MockChatGenerator, **options: Any) -> dict[str, Any]:
    agent = make_agent(
        researcher_llm=researcher,
        orchestrator_llm=ScriptedChatGenerator(role="orchestrator", subtopics=["solar capacity"]),
        **options,
    )
    return agent.run(messages=[ChatMessage.from_user(QUESTION)])


def _loop_warnings(result: dict) -> list[str]:
    # These researchers only search, so every run also warns that nothing was read.
    return [w for w in result["warnings"] if "no evidence" not in w]


def _posts(search: LoopbackSearchServer) -> list[str]:
    return [r.json_body["query"] for r in search.requests if r.method == "POST"]


def test_the_same_tool_with_different_arguments_is_progress(
    make_agent: Callable[..., Agent], search: LoopbackSearchServer
) -> None:
    seen: list[str] = []
    turns = [_search(f"solar {year}") for year in (2022, 2023, 2024, 2025, 2026)]

    result = _run(make_agent, _scripted_researcher(turns, seen))

    assert _posts(search) == ["solar 2022", "solar 2023", "solar 2024", "solar 2025", "solar 2026"]
    assert not any("Not run" in text for text in seen)
    assert "[Partial" not in result["notes"][0]
    assert _loop_warnings(result) == []


def test_a_repeated_call_is_answered_with_a_warning_and_the_researcher_can_change_course(
    make_agent: Callable[..., Agent], search: LoopbackSearchServer
) -> None:
    seen: list[str] = []
    turns = [_search("solar"), _search("solar"), _search(" solar "), _search("solar growth 2025")]

    result = _run(make_agent, _scripted_researcher(turns, seen))

    assert _posts(search) == ["solar", "solar", "solar growth 2025"]  # the third, identical one did not run
    warning = "Not run: you called web_search with the same arguments 3 times in a row"
    assert sum(warning in text for text in seen) == 1
    assert "[Partial" not in result["notes"][0]  # it recovered, so its note is complete
    assert _loop_warnings(result) == []
    assert result["exit_reason"] == "no_evidence"  # it only searched: nothing was read


def test_identical_calls_in_one_turn_count_and_the_threshold_is_configurable(
    make_agent: Callable[..., Agent], search: LoopbackSearchServer
) -> None:
    seen: list[str] = []
    turns = [_search("solar", "solar"), _search("battery storage")]

    result = _run(make_agent, _scripted_researcher(turns, seen), loop_threshold=2)

    assert _posts(search) == ["battery storage"]  # both calls of the looping turn were answered, none ran
    assert sum("same arguments 2 times in a row" in text for text in seen) == 2
    assert result["exit_reason"] == "no_evidence"  # not loop_detected: it only searched, and nothing was read


def test_a_first_burst_of_identical_calls_is_warned_before_anything_is_stopped(
    make_agent: Callable[..., Agent], search: LoopbackSearchServer
) -> None:
    seen: list[str] = []
    turns = [_search("solar", "solar", "solar", "solar"), _search("battery storage")]

    result = _run(make_agent, _scripted_researcher(turns, seen))

    assert _posts(search) == ["battery storage"]
    assert sum("Change course" in text for text in seen) == 4
    assert "[Partial" not in result["notes"][0]
