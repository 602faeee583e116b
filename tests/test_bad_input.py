"""Every public entry point refuses bad input with a typed error that says what to change, before anything runs."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from haystack.components.agents import Agent
from haystack.components.generators.chat import MockChatGenerator
from haystack.dataclasses import ChatMessage

from haystack_deep_research import (
    ConfigurationError,
    Event,
    FetchLimits,
    InvalidQuestionError,
    ReadUrlTool,
    RunDirError,
    RunInputs,
    Sources,
    UrlPolicy,
    WebSearchTool,
    create_deep_research_agent,
)
from haystack_deep_research.events import progress_view
from haystack_deep_research.report.writer import WriteHook
from haystack_deep_research.research.final_summary import FinalSummaryHook
from haystack_deep_research.research.loop_guard import LoopGuardHook
from haystack_deep_research.research.scope import ScopeHook
from haystack_deep_research.research.subtopic import ResearchSubtopicTool
from haystack_deep_research.run._lifecycle import OpenRunHook
from haystack_deep_research.testing import ScriptedChatGenerator

SUMMARIZER = ScriptedChatGenerator(role="summarizer")


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (
            lambda: create_deep_research_agent(sources=Sources(url_policy={"allow_hosts": []})),
            "Sources(url_policy=...) must be a UrlPolicy; got dict",
        ),
        (
            lambda: create_deep_research_agent(sources=Sources(fetch_limits=30)),
            "Sources(fetch_limits=...) must be a FetchLimits; got int",
        ),
        (lambda: ReadUrlTool(summarizer_llm=SUMMARIZER, url_policy="public"), "url_policy must be a UrlPolicy"),
        (lambda: ReadUrlTool(summarizer_llm=SUMMARIZER, fetch_limits={}), "fetch_limits must be a FetchLimits"),
        (lambda: WebSearchTool(api_key="tvly-123"), "api_key must be a haystack Secret"),
        (lambda: WebSearchTool(api_base_url="localhost:8080"), "api_base_url must be an http(s) URL or None"),
        (lambda: WebSearchTool(client=object()), "client must have Tavily's search"),
        (lambda: WebSearchTool(max_retries=11), "max_retries must be an integer from 0 to 10"),
        (lambda: ResearchSubtopicTool(researcher="agent"), "researcher must be a Haystack Agent; got str"),
        (lambda: ScopeHook(chat_generator="gpt-5.4"), "chat_generator must be a Haystack chat generator"),
        (lambda: WriteHook(chat_generator=None), "chat_generator must be a Haystack chat generator"),
        (lambda: FinalSummaryHook(chat_generator=42), "chat_generator must be a Haystack chat generator"),
        (lambda: LoopGuardHook(threshold=0), "threshold must be an integer from 2 to 20"),
        (lambda: OpenRunHook(token_budget=-1), "token_budget must be an integer from 1 to 1000000000"),
        (lambda: OpenRunHook(time_budget=0.0), "time_budget must be a number greater than 0"),
        (lambda: UrlPolicy(allow_hosts=("not a host!",)), "allow_hosts"),
        (lambda: UrlPolicy.from_dict("127.0.0.1"), "UrlPolicy.from_dict needs a mapping such as"),
        (lambda: UrlPolicy.from_dict(None), "as to_dict returns; got NoneType"),
        (lambda: UrlPolicy.from_dict([["allow_hosts", ["127.0.0.1"]]]), "UrlPolicy.from_dict needs a mapping"),
        (lambda: FetchLimits(total_timeout=-1), "FetchLimits.total_timeout must be a number greater than 0"),
    ],
)
def test_a_bad_argument_raises_a_configuration_error_naming_the_fix(build: Callable[[], Any], message: str) -> None:
    with pytest.raises(ConfigurationError, match=re.escape(message)):
        build()


def test_a_progress_callback_that_cannot_be_called_is_refused_before_any_model_is_called(
    make_agent: Callable[..., Agent],
) -> None:
    calls: list[str] = []
    scope = MockChatGenerator(response_fn=lambda messages: calls.append("scope") or "brief")
    agent = make_agent(scope_llm=scope)

    with pytest.raises(ConfigurationError, match=r"RunInputs\(on_event=...\) must be a callable"):
        agent.run(messages=[ChatMessage.from_user("How fast is solar growing?")], inputs=RunInputs(on_event="log"))
    assert calls == []


QUESTION = "How fast is solar growing?"


class _Counted:
    """Scripted models that count every call, so a test can say that nothing ran."""

    def __init__(self) -> None:
        self.calls = 0

    def models(self) -> dict[str, Any]:
        def model(role: str, **options: Any) -> MockChatGenerator:
            scripted = ScriptedChatGenerator(role=role, **options)  # type: ignore[arg-type]

            def reply(messages: list[ChatMessage], tools: Any = None) -> ChatMessage:
                self.calls += 1
                return scripted.run(messages, tools)["replies"][0]

            return MockChatGenerator(response_fn=reply)

        return {
            "scope_llm": model("scope"),
            "orchestrator_llm": model("orchestrator", subtopics=["solar capacity"]),
            "researcher_llm": model("researcher"),
            "summarizer_llm": model("summarizer"),
            "writer_llm": model("writer"),
        }


def _run(agent: Agent, how: str, **inputs: Any) -> dict[str, Any]:
    if how == "run_async":
        return asyncio.run(agent.run_async(**inputs))
    return agent.run(**inputs)


@pytest.mark.parametrize("how", ["run", "run_async"])
@pytest.mark.parametrize(
    ("messages", "message"),
    [
        (QUESTION, "messages must be a list of ChatMessage, not a string; pass messages=[ChatMessage.from_user("),
        ([QUESTION], "messages[0] is a str, not a ChatMessage; build each message with ChatMessage.from_user(...)"),
        (
            [{"role": "user", "content": QUESTION}],
            "messages[0] is a dict, not a ChatMessage; build each message with ChatMessage.from_dict(...)",
        ),
        (
            [ChatMessage.from_user(QUESTION), "and another"],
            "messages[1] is a str, not a ChatMessage",
        ),
        (
            ChatMessage.from_user(QUESTION),
            "messages must be a list of ChatMessage; wrap the message: messages=[message]",
        ),
        ((ChatMessage.from_user(QUESTION),), "messages must be a list of ChatMessage, for example"),
        (None, "got NoneType"),
    ],
)
def test_malformed_messages_raise_an_invalid_question_error_before_anything_runs(
    make_agent: Callable[..., Agent], how: str, messages: Any, message: str
) -> None:
    counted = _Counted()
    agent = make_agent(**counted.models())

    with pytest.raises(InvalidQuestionError, match=re.escape(message)):
        _run(agent, how, messages=messages)
    assert counted.calls == 0


@pytest.mark.parametrize("how", ["run", "run_async"])
@pytest.mark.parametrize("hook_context", [[], "runs/one", 42, [("run_dir", "runs/one")]])
def test_a_hook_context_that_is_not_a_dict_raises_a_configuration_error(
    make_agent: Callable[..., Agent], how: str, hook_context: Any
) -> None:
    counted = _Counted()
    agent = make_agent(**counted.models())

    with pytest.raises(
        ConfigurationError, match=rf"hook_context must be a dict, .*; got {type(hook_context).__name__}"
    ):
        _run(agent, how, messages=[ChatMessage.from_user(QUESTION)], hook_context=hook_context)
    assert counted.calls == 0


@pytest.mark.parametrize(
    ("run_dir", "message"),
    [
        ("runs/a\x00b", "contains a NUL character, which no file system accepts; remove it"),
        ("x" * 300, "is too long for the file system (File name too long); pass a shorter path"),
        ("/".join(["y" * 200] * 40), "is too long for the file system (File name too long); pass a shorter path"),
        (b"runs/one", "run_dir must be a directory path (a non-empty str or os.PathLike), got bytes"),
    ],
)
def test_a_run_dir_no_file_system_accepts_raises_a_run_dir_error(
    make_agent: Callable[..., Agent], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_dir: Any, message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    counted = _Counted()
    agent = make_agent(**counted.models())

    with pytest.raises(RunDirError, match=re.escape(message)):
        agent.run(messages=[ChatMessage.from_user(QUESTION)], inputs=RunInputs(run_dir=run_dir))
    assert counted.calls == 0


def test_a_progress_callback_and_an_event_subscriber_that_raise_never_stop_research(
    make_agent: Callable[..., Agent],
) -> None:
    seen = {"progress": 0, "events": 0}

    def progress(phase: str, line: str) -> None:
        seen["progress"] += 1
        raise RuntimeError("the display went away")

    def on_event(event: Event) -> None:
        seen["events"] += 1
        raise ValueError("the queue is closed")

    result = make_agent().run(
        messages=[ChatMessage.from_user(QUESTION)],
        inputs=RunInputs(on_event=lambda event: (progress_view(progress)(event), on_event(event))),
    )

    assert seen["progress"] > 1  # they were called, raised, and called again
    assert seen["events"] > seen["progress"]
    assert result["exit_reason"] == "text"
    assert len(result["notes"]) == 2
    assert "## Sources" in result["report"]
