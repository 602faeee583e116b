"""Token and time budgets: when one is spent, research stops, the report is still written, and exit_reason says why."""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable
from typing import Any

import pytest
from haystack.components.agents import Agent
from haystack.components.generators.chat import MockChatGenerator
from haystack.dataclasses import ChatMessage
from haystack.tools import flatten_tools_or_toolsets
from tests.support import SUMMARIZE_EVERY_PAGE

from haystack_deep_research import Budgets, ConfigurationError, FetchLimits, Sources, create_deep_research_agent
from haystack_deep_research.agents import ResearchAgent
from haystack_deep_research.research.loop_guard import LoopGuardHook
from haystack_deep_research.research.scope import ScopeHook
from haystack_deep_research.research.subtopic import ResearchSubtopicTool
from haystack_deep_research.run import ResearchRun
from haystack_deep_research.run._budget import RunBudget
from haystack_deep_research.testing import (
    LoopbackSearchServer,
    LoopbackWebServer,
    ScriptedChatGenerator,
    SearchDocument,
)

QUESTION = "How fast is solar power growing?"
TOPICS = ["solar capacity", "battery storage"]


def _run(agent: Agent) -> dict[str, Any]:
    return agent.run(messages=[ChatMessage.from_user(QUESTION)])


def _tool_errors(result: dict[str, Any]) -> list[str]:
    return [
        str(m.tool_call_result.result)
        for m in result["messages"]
        if m.tool_call_result is not None and m.tool_call_result.error
    ]


def _searched(search: LoopbackSearchServer) -> list[str]:
    return [r.json_body["query"] for r in search.requests if r.method == "POST"]


def test_a_spent_token_budget_stops_research_and_the_report_is_written_from_what_was_gathered(
    make_agent: Callable[..., Agent], search: LoopbackSearchServer
) -> None:
    # Scope and the orchestrator's first turn spend about 240 tokens; the first researcher soon passes 300.
    agent = make_agent(
        sources=SUMMARIZE_EVERY_PAGE,
        orchestrator_llm=ScriptedChatGenerator(role="orchestrator", subtopics=TOPICS),
        max_concurrent_researchers=1,
        budgets=Budgets(tokens=300),
    )
    result = _run(agent)

    assert result["exit_reason"] == "token_budget"
    assert len(result["notes"]) == 1
    assert result["notes"][0].startswith("## solar capacity")
    assert "[Partial: the run's token budget was spent" in result["notes"][0]
    assert _tool_errors(result) == [
        "research_subtopic failed: the token budget of 300 tokens for this run is spent, so 'battery storage' was "
        "not researched. Do not delegate more; reply that research is complete."
    ]
    assert _searched(search) == ["solar capacity"]  # no new research started once the budget was spent
    assert any(w.startswith("orchestrator: the token budget of 300 tokens (") for w in result["warnings"])
    assert result["report"].startswith("# Research report")
    assert "## Sources" in result["report"]
    assert set(result["usage_by_phase"]) == {"scope", "orchestrator", "research", "summarize", "write"}
    assert result["token_usage"]["total_tokens"] > 300  # the closing calls (summary, writer) still ran


def test_a_spent_time_budget_stops_research_at_the_next_step(
    make_agent: Callable[..., Agent], search: LoopbackSearchServer
) -> None:
    scripted = ScriptedChatGenerator(role="researcher")

    def slow_researcher(messages: list[ChatMessage], tools: Any) -> ChatMessage:
        time.sleep(0.5)  # two calls take 1 s: past the budget, whatever the machine's speed
        return scripted.run(messages, tools)["replies"][0]

    agent = make_agent(
        orchestrator_llm=ScriptedChatGenerator(role="orchestrator", subtopics=TOPICS),
        researcher_llm=MockChatGenerator(response_fn=slow_researcher),
        max_concurrent_researchers=1,
        budgets=Budgets(seconds=0.9),
    )
    started = time.monotonic()
    result = _run(agent)

    assert time.monotonic() - started < 5
    assert result["exit_reason"] == "time_budget"
    assert len(result["notes"]) == 1
    assert "[Partial: the run's time budget was spent" in result["notes"][0]
    assert any("time budget of 0.9 seconds for this run is spent" in e for e in _tool_errors(result))
    assert "battery storage" not in _searched(search)
    assert result["report"].startswith("# Research report")


def test_researcher_usage_is_counted_once_including_the_final_summary(make_agent: Callable[..., Agent]) -> None:
    scripted = ScriptedChatGenerator(role="researcher")
    spent: list[int] = []

    def counted(messages: list[ChatMessage], tools: Any) -> ChatMessage:
        reply = scripted.run(messages, tools)["replies"][0]
        spent.append(reply.meta["usage"]["total_tokens"])
        return reply

    # Two steps: search, read; the step limit then forces a final summary, whose usage is added at the end.
    agent = make_agent(researcher_llm=MockChatGenerator(response_fn=counted), max_researcher_steps=2)
    result = _run(agent)

    assert len(spent) == 6  # two researchers, three calls each
    assert result["usage_by_phase"]["research"]["total_tokens"] == sum(spent)


def test_without_budgets_a_run_ends_as_before(make_agent: Callable[..., Agent]) -> None:
    result = _run(make_agent())

    assert result["exit_reason"] == "text"
    assert not any("budget" in w for w in result["warnings"])


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("tokens", 0, r"Budgets\(tokens=...\) must be an integer from 1 to 1000000000; got 0"),
        ("tokens", 10.5, r"Budgets\(tokens=...\) must be an integer from 1 to 1000000000; got 10.5"),
        ("tokens", "1000", r"Budgets\(tokens=...\) must be an integer from 1 to 1000000000; got '1000'"),
        ("tokens", True, r"Budgets\(tokens=...\) must be an integer from 1 to 1000000000; got True"),
        ("seconds", 0, r"Budgets\(seconds=...\) must be a number greater than 0 and at most 604800.0; got 0"),
        ("seconds", -5, r"Budgets\(seconds=...\) must be a number greater than 0"),
        ("seconds", math.inf, r"Budgets\(seconds=...\) must be a number greater than 0"),
        ("seconds", math.nan, r"Budgets\(seconds=...\) must be a number greater than 0"),
        ("seconds", "60", r"Budgets\(seconds=...\) must be a number greater than 0"),
        ("dollars", 0, r"Budgets\(dollars=...\) must be a number greater than 0"),
        ("prices", {"m": 1.0}, r"Budgets\(prices=...\) must map model names to Price objects"),
    ],
)
def test_bad_budgets_are_refused_where_they_are_written(name: str, value: object, message: str) -> None:
    with pytest.raises(ConfigurationError, match=f"^{message}"):
        Budgets(**{name: value})  # type: ignore[arg-type]


@pytest.mark.parametrize(("value", "message"), [(1, "got 1"), (21, "got 21")])
def test_a_bad_loop_threshold_is_refused_when_the_agent_is_built(value: int, message: str) -> None:
    with pytest.raises(ConfigurationError, match=f"^loop_threshold must be an integer from 2 to 20; {message}"):
        create_deep_research_agent(loop_threshold=value)


def test_budgets_must_be_a_budgets_object() -> None:
    with pytest.raises(ConfigurationError, match=r"budgets must be a Budgets, for example Budgets\(tokens="):
        create_deep_research_agent(budgets={"tokens": 5})  # type: ignore[arg-type]


def test_an_unknown_keyword_is_a_type_error_as_in_python() -> None:
    with pytest.raises(TypeError, match="unexpected keyword argument 'max_topics'"):
        create_deep_research_agent(max_topics=3)


def test_budgets_and_threshold_survive_serialization() -> None:
    agent = create_deep_research_agent(budgets=Budgets(tokens=50_000, seconds=90), loop_threshold=4)

    restored = ResearchAgent.from_dict(copy.deepcopy(agent.to_dict()))

    start = next(h for h in restored.hooks["before_run"] if isinstance(h, ScopeHook))
    assert (start.token_budget, start.time_budget) == (50_000, 90.0)
    delegate = next(t for t in flatten_tools_or_toolsets(restored.tools) if isinstance(t, ResearchSubtopicTool))
    guard = next(h for h in delegate.researcher.hooks["before_tool"] if isinstance(h, LoopGuardHook))
    assert guard.threshold == 4


async def test_the_async_path_honours_the_token_budget(
    make_agent: Callable[..., Agent], search: LoopbackSearchServer
) -> None:
    agent = make_agent(
        orchestrator_llm=ScriptedChatGenerator(role="orchestrator", subtopics=TOPICS),
        max_concurrent_researchers=1,
        budgets=Budgets(tokens=300),
    )
    result = await agent.run_async(messages=[ChatMessage.from_user(QUESTION)])

    assert result["exit_reason"] == "token_budget"
    assert _searched(search) == ["solar capacity"]
    assert result["report"].startswith("# Research report")


@pytest.mark.parametrize("run_async", [False, True])
async def test_the_time_budget_ends_a_run_whose_researchers_are_stuck_reading(
    make_agent: Callable[..., Agent], search: LoopbackSearchServer, web: LoopbackWebServer, run_async: bool
) -> None:
    # A page that answers its headers and then stalls; every search leads to it.
    web.add_raw(
        "/stall.html",
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100000\r\n\r\n<html>",
        hold_open=True,
    )
    search.add_document(SearchDocument(web.url("/stall.html"), "Stalled", "solar capacity storage stalled"))
    agent = make_agent(
        researcher_llm=ScriptedChatGenerator(role="researcher", read_top_k=3),
        sources=Sources(
            fetch_limits=FetchLimits(total_timeout=60, read_timeout=60, min_transfer_rate=1, transfer_grace=60)
        ),
        budgets=Budgets(seconds=2),
    )
    started = time.monotonic()

    messages = [ChatMessage.from_user(QUESTION)]
    result = await agent.run_async(messages=messages) if run_async else agent.run(messages=messages)

    assert time.monotonic() - started < 30  # the stalled read was cut at the budget, not at its own 60 s
    assert result["exit_reason"] == "time_budget"
    assert result["report"]


def test_each_spent_budget_warns_in_its_own_words() -> None:
    # The time budget is found spent first (by a page read, say); then the tokens run out, which ends the run.
    run = ResearchRun(budget=RunBudget(token_budget=100, time_budget=1, started=time.monotonic() - 5))
    assert run.spent() == "time_budget"
    run.record_usage("research", {"total_tokens": 150})

    assert run.spent() == "token_budget"
    assert run.spent() == "token_budget"  # warned once
    spent = [w for w in run.warnings() if "is spent" in w]
    assert len(spent) == 2
    assert spent[1].startswith("orchestrator: the token budget of 100 tokens (150 used) is spent")
