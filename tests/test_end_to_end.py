"""A whole research run: scripted models, real web_search and read_url against loopback servers."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

from haystack.components.agents import Agent
from haystack.components.generators.chat import MockChatGenerator
from haystack.dataclasses import ChatMessage
from tests.support import SUMMARIZE_EVERY_PAGE

from haystack_deep_research import RunInputs
from haystack_deep_research.events import progress_view
from haystack_deep_research.testing import LoopbackSearchServer, LoopbackWebServer, ScriptedChatGenerator

QUESTION = "How fast are solar power and battery storage growing?"


def _question() -> list[ChatMessage]:
    return [ChatMessage.from_user(QUESTION)]


def test_run_writes_a_cited_report_from_html_and_pdf_sources(
    make_agent: Callable[..., Agent], web: LoopbackWebServer
) -> None:
    result = make_agent().run(messages=_question())

    solar, storage = web.url("/solar.html"), web.url("/storage.pdf")
    assert result["exit_reason"] == "text"
    assert result["brief"].startswith("Research brief:")
    assert QUESTION in result["brief"]
    # One note per delegated sub-topic, each holding what the page and the PDF really said.
    assert len(result["notes"]) == 2
    notes = "\n".join(result["notes"])
    assert "450 gigawatts" in notes
    assert "300 gigawatt hours" in notes
    # The report cites both sources, starts with an executive summary and ends with the sources.
    report = result["report"]
    assert report.index("## Executive summary") < report.index("## Sources")
    assert f"]({solar})" in report
    assert f"]({storage})" in report
    assert report.rstrip().endswith(f"({storage})") or report.rstrip().endswith(f"({solar})")
    # The ledger holds what was searched and read.
    read = {entry["url"] for entry in result["sources"] if entry["kind"] == "page"}
    assert read == {solar, storage}
    assert result["citations"]["unverified"] == []
    assert result["warnings"] == []
    assert result["tool_call_counts"]["research_subtopic"] == 2


def test_short_pages_are_cited_without_a_summarizer_call(
    make_agent: Callable[..., Agent], web: LoopbackWebServer
) -> None:
    asked: list[list[ChatMessage]] = []

    def summarize(messages: list[ChatMessage]) -> ChatMessage:
        asked.append(messages)
        return ChatMessage.from_assistant("A summary.")

    result = make_agent(summarizer_llm=MockChatGenerator(response_fn=summarize)).run(messages=_question())

    assert asked == []  # both pages' kept passages are shorter than Sources().summarize_over
    assert "summarize" not in result["usage_by_phase"]
    assert "300 gigawatt hours" in "\n".join(result["notes"])
    assert f"]({web.url('/storage.pdf')})" in result["report"]
    assert result["citations"]["unverified"] == []


def test_the_orchestrator_sees_the_brief_instead_of_the_question(make_agent: Callable[..., Agent]) -> None:
    result = make_agent().run(messages=_question())

    user_messages = [m for m in result["messages"] if m.role.value == "user"]
    assert [m.text for m in user_messages] == [result["brief"]]


def test_token_usage_covers_every_phase(make_agent: Callable[..., Agent]) -> None:
    result = make_agent(sources=SUMMARIZE_EVERY_PAGE).run(messages=_question())

    phases = result["usage_by_phase"]
    assert set(phases) == {"scope", "orchestrator", "research", "summarize", "write"}
    total = sum(usage["total_tokens"] for usage in phases.values())
    assert result["token_usage"]["total_tokens"] == total


def test_progress_events_reach_the_callers_callback(make_agent: Callable[..., Agent]) -> None:
    events: list[tuple[str, str]] = []
    lock = threading.Lock()

    def progress(phase: str, message: str) -> None:
        with lock:
            events.append((phase, message))

    make_agent().run(messages=_question(), inputs=RunInputs(on_event=progress_view(progress)))

    phases = [phase for phase, _ in events]
    assert phases[0] == "scope"
    assert phases[-1] == "write"
    assert sum(1 for phase, message in events if phase == "research" and message.startswith("done")) == 2


async def test_run_async_gives_the_same_report(make_agent: Callable[..., Agent]) -> None:
    agent = make_agent()
    sync_result = agent.run(messages=_question())
    async_result = await agent.run_async(messages=_question())

    assert async_result["report"] == sync_result["report"]
    assert sorted(async_result["notes"]) == sorted(sync_result["notes"])


async def test_sync_run_works_inside_a_running_event_loop(make_agent: Callable[..., Agent]) -> None:
    # A notebook calls the blocking API from inside its event loop.
    assert asyncio.get_running_loop().is_running()
    result = make_agent().run(messages=_question())
    assert "## Sources" in result["report"]


def test_one_agent_serves_two_concurrent_runs_without_mixing(
    make_agent: Callable[..., Agent], search: LoopbackSearchServer, web: LoopbackWebServer
) -> None:
    agent = make_agent(
        orchestrator_llm=ScriptedChatGenerator(role="orchestrator"),  # sub-topics derived from each brief
    )
    questions = {"solar": "How much solar capacity was installed?", "storage": "How much battery storage exists?"}
    results: dict[str, dict] = {}

    def run(key: str) -> None:
        results[key] = agent.run(messages=[ChatMessage.from_user(questions[key])])

    threads = [threading.Thread(target=run, args=(key,)) for key in questions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    for key, question in questions.items():
        other = questions["storage" if key == "solar" else "solar"]
        assert question in results[key]["brief"]
        assert all(question in note for note in results[key]["notes"])
        assert not any(other in note for note in results[key]["notes"])
        assert len(results[key]["notes"]) == 2


async def test_two_concurrent_async_runs_keep_their_own_notes(make_agent: Callable[..., Agent]) -> None:
    agent = make_agent(orchestrator_llm=ScriptedChatGenerator(role="orchestrator"))
    first, second = await asyncio.gather(
        agent.run_async(messages=[ChatMessage.from_user("Question about solar capacity")]),
        agent.run_async(messages=[ChatMessage.from_user("Question about battery storage")]),
    )
    assert all("solar" in note for note in first["notes"])
    assert all("battery" in note for note in second["notes"])
    assert len(first["notes"]) == len(second["notes"]) == 2
