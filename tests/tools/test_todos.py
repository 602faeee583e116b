"""The todo list: the agent writes it, the caller watches it live and reads it after the run."""

from __future__ import annotations

from typing import Any

import pytest
from haystack.dataclasses import ChatMessage
from haystack.tools.errors import ToolInvocationError

from haystack_deep_research import RunInputs, create_deep_agent
from haystack_deep_research.events import Event
from haystack_deep_research.testing import ScriptedChatGenerator
from haystack_deep_research.tools import TodoState
from haystack_deep_research.tools.todos import Todo, TodoTool, create_todo_tools


def _write(*items: tuple[str, str]) -> dict[str, Any]:
    return {"tool_name": "write_todos", "arguments": {"todos": [{"content": c, "status": s} for c, s in items]}}


STEPS = [
    _write(("size the market", "in_progress"), ("compare pricing", "pending")),
    _write(("size the market", "completed"), ("compare pricing", "in_progress")),
    {"tool_name": "read_todos", "arguments": {}},
    "Done.",
]


def _agent(**options: Any) -> Any:
    return create_deep_agent(
        chat_generator=ScriptedChatGenerator(role="agent", steps=STEPS),
        tools=[],
        system_prompt="Plan with todos.",
        enable_todos=True,
        grounding=False,
        reflexion=False,
        **options,
    )


def test_the_callers_todo_state_holds_the_list_after_the_run_and_events_mark_changes() -> None:
    todo_state = TodoState()
    events: list[Event] = []

    result = _agent(todo_state=todo_state).run(
        messages=[ChatMessage.from_user("Research CRM.")], inputs=RunInputs(on_event=events.append)
    )

    assert todo_state.snapshot() == [Todo("size the market", "completed"), Todo("compare pricing", "in_progress")]
    assert result["todos"] == [
        {"content": "size the market", "status": "completed"},
        {"content": "compare pricing", "status": "in_progress"},
    ]
    changes = [(e.kind, getattr(e, "content", "")) for e in events if e.kind.startswith("todo_")]
    assert changes == [
        ("todo_added", "size the market"),
        ("todo_added", "compare pricing"),
        ("todo_completed", "size the market"),
    ]
    shown = [m.tool_call_result.result for m in result["messages"] if m.tool_call_result is not None][-1]
    assert shown == "- [completed] size the market\n- [in_progress] compare pricing\n"


def test_without_a_todo_state_each_run_has_its_own_list() -> None:
    agent = _agent()

    first = agent.run(messages=[ChatMessage.from_user("Research CRM.")])
    second = agent.run(messages=[ChatMessage.from_user("Research CRM.")])

    assert first["todos"] == second["todos"]
    assert len(second["todos"]) == 2  # not four: the second run started from an empty list


@pytest.mark.parametrize(
    "todos", [None, "buy milk", [{"content": "", "status": "pending"}], [{"content": "x", "status": "done"}]]
)
def test_a_malformed_list_is_a_tool_error_that_says_the_shape(todos: Any) -> None:
    write, _ = create_todo_tools()

    with pytest.raises(ToolInvocationError, match="write_todos needs 'todos'"):
        write.invoke(todos=todos)


def test_the_tools_round_trip_through_dicts() -> None:
    for tool in create_todo_tools():
        assert TodoTool.from_dict(tool.to_dict()).to_dict() == tool.to_dict()
