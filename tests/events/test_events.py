"""Typed events for both agent shapes: order, one run id per run, runs that never mix, subscribers that cannot break
a run, and an EventStream that ends with the run."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from typing import Any

import pytest
from haystack.components.agents import Agent
from haystack.core.serialization_security import allow_deserialization_module
from haystack.dataclasses import ChatMessage
from haystack.tools import tool

from haystack_deep_research import (
    ConfigurationError,
    EventStream,
    RunInputs,
    create_deep_agent,
)
from haystack_deep_research.agents import ResearchAgent
from haystack_deep_research.events import Event, ExitReached, ToolCalled, ToolReturned, progress_view
from haystack_deep_research.testing import ScriptedChatGenerator

RECEIVED: list[Event] = []


def remember(event: Event) -> None:
    """A module-level subscriber: it serializes with the agent."""
    RECEIVED.append(event)


@tool
def search_kb(query: str) -> str:
    """Search the knowledge base."""
    return f"{query}: Acme leads the mid-market CRM segment."


def _deep(**options: Any) -> Agent:
    steps = [
        {"tool_name": "search_kb", "arguments": {"query": "CRM"}},
        {"tool_name": "write_todos", "arguments": {"todos": [{"content": "compare", "status": "completed"}]}},
        "Acme leads the mid-market CRM segment.",
    ]
    return create_deep_agent(
        chat_generator=ScriptedChatGenerator(role="agent", steps=steps),
        tools=[search_kb],
        system_prompt="Answer from the knowledge base.",
        enable_todos=True,
        **options,
    )


def _question(text: str = "Who leads mid-market CRM?") -> list[ChatMessage]:
    return [ChatMessage.from_user(text)]


def test_a_deep_agent_run_tells_its_story_in_order() -> None:
    events: list[Event] = []

    _deep().run(messages=_question(), inputs=RunInputs(on_event=events.append))

    kinds = [event.kind for event in events]
    assert kinds[0] == "run_started"
    assert kinds[-2:] == ["exit_reached", "run_ended"]
    assert kinds.index("tool_called") < kinds.index("tool_returned") < kinds.index("reflected")
    assert "todo_added" in kinds
    assert "todo_completed" in kinds
    assert {event.run_id for event in events} == {events[0].run_id}
    called = [(e.tool, e.arguments) for e in events if isinstance(e, ToolCalled)]
    assert called[0] == ("search_kb", {"query": "CRM"})
    returned = [e for e in events if isinstance(e, ToolReturned)]
    assert returned[0].result == "CRM: Acme leads the mid-market CRM segment."
    assert not returned[0].error
    [exit_event] = [e for e in events if isinstance(e, ExitReached)]
    assert (exit_event.reason, exit_event.final_message_preview) == ("text", "Acme leads the mid-market CRM segment.")


async def test_concurrent_runs_never_mix_their_events() -> None:
    agent = _deep(on_event=remember)
    RECEIVED.clear()
    first: list[Event] = []
    second: list[Event] = []

    await asyncio.gather(
        agent.run_async(messages=_question("first question"), inputs=RunInputs(on_event=first.append)),
        agent.run_async(messages=_question("second question"), inputs=RunInputs(on_event=second.append)),
    )

    assert len({e.run_id for e in first}) == len({e.run_id for e in second}) == 1
    assert first[0].run_id != second[0].run_id
    assert first[0].question == "first question"
    assert second[0].question == "second question"
    assert sorted(e.run_id for e in RECEIVED) == sorted(e.run_id for e in first + second)  # the agent's own subscriber
    switches = sum(1 for a, b in itertools.pairwise(RECEIVED) if a.run_id != b.run_id)
    assert switches > 1  # the runs really overlapped


def test_a_subscriber_that_raises_never_breaks_the_run() -> None:
    def broken(event: Event) -> None:
        raise RuntimeError("display crashed")

    seen: list[Event] = []
    result = _deep(on_event=broken).run(messages=_question(), inputs=RunInputs(on_event=seen.append))

    assert result["exit_reason"] == "text"
    assert seen[-1].kind == "run_ended"


async def test_an_event_stream_ends_when_the_run_ends() -> None:
    stream = EventStream(_deep(), messages=_question())

    kinds = [event.kind async for event in stream]

    assert kinds[-1] == "run_ended"
    assert stream.result is not None
    assert stream.result["exit_reason"] == "text"


def test_the_agents_own_subscriber_serializes_with_it() -> None:
    allow_deserialization_module(__name__)
    RECEIVED.clear()
    restored = ResearchAgent.from_dict(_deep(on_event=remember).to_dict())

    restored.run(messages=_question())

    assert RECEIVED[0].kind == "run_started"
    with pytest.raises(ConfigurationError, match="on_event cannot be serialized"):
        _deep(on_event=lambda event: None).to_dict()


def test_the_deep_research_agent_announces_every_tool_call(make_agent: Callable[..., Agent]) -> None:
    events: list[Event] = []
    lines: list[tuple[str, str]] = []
    progress = progress_view(lambda phase, line: lines.append((phase, line)))

    make_agent().run(
        messages=_question("How fast is solar growing?"),
        inputs=RunInputs(on_event=lambda event: (events.append(event), progress(event))),
    )

    called = {(e.tool, e.researcher) for e in events if isinstance(e, ToolCalled)}
    assert ("research_subtopic", "") in called
    assert {("web_search", "solar capacity"), ("read_url", "battery storage")} <= called
    returned = [e for e in events if isinstance(e, ToolReturned)]
    assert len(returned) == len([e for e in events if isinstance(e, ToolCalled)])
    assert not any(line.startswith(("calling ", "web_search returned")) for _, line in lines)  # progress unchanged


def test_every_event_is_a_frozen_keyword_only_dataclass_with_its_line() -> None:
    import dataclasses

    from haystack_deep_research import events

    classes = [getattr(events, name) for name in events.__all__]
    classes = [cls for cls in classes if isinstance(cls, type) and issubclass(cls, Event) and cls is not Event]
    assert len({cls.kind for cls in classes}) == len(classes) == 35
    for cls in classes:
        params = cls.__dataclass_params__
        assert dataclasses.is_dataclass(cls), cls
        assert params.frozen, cls
        assert params.eq, cls
        assert all(field.kw_only for field in dataclasses.fields(cls)), cls
    done = events.ItemDone(phase="scan", item="Ącmé {x}", seconds=2.345, at=1.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        done.item = "other"  # type: ignore[misc]
    assert done.describe() == "done Ącmé {x} in 2.3 s"
    assert done.to_dict() == {
        "kind": "item_done",
        "phase": "scan",
        "run_id": "",
        "researcher": "",
        "at": 1.0,
        "item": "Ącmé {x}",
        "attempt": 1,
        "seconds": 2.345,
        "message": "done Ącmé {x} in 2.3 s",
    }
    assert events.Notice(phase="write", text="{text} 100%").describe() == "{text} 100%"
    assert events.RunEnded(phase="run", exit_reason="completed", notes=2).describe() == (
        "run ended (completed): 2 notes, 0 sources, 0 warnings"
    )


def test_an_event_class_of_ones_own_describes_itself_by_its_kind() -> None:
    import dataclasses
    from typing import ClassVar

    @dataclasses.dataclass(frozen=True, kw_only=True)
    class Deployed(Event):
        kind: ClassVar[str] = "deployed"
        target: str

    seen: list[dict[str, Any]] = []
    from haystack_deep_research.events.bus import EventBus

    stamped = EventBus("run-1", [lambda event: seen.append(event.to_dict())]).emit(Deployed(phase="ops", target="eu"))
    assert stamped.describe() == "deployed"
    assert seen == [{**dataclasses.asdict(stamped), "kind": "deployed", "message": "deployed"}]
    assert seen[0]["run_id"] == "run-1"
    assert seen[0]["target"] == "eu"
