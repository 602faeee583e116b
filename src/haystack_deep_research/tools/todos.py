"""
The deep agent's todo list: ``write_todos`` replaces it, ``read_todos`` shows it, :class:`TodoState` holds it (one per
run, unless the caller passes one to ``create_deep_agent(todo_state=...)``; see docs/deep-agent.md).
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass
from typing import Any, Literal, cast

from haystack_deep_research._prompts import (
    READ_TODOS,
    READ_TODOS_DESCRIPTION,
    TODO_LIST,
    TODOS_INVALID,
    WRITE_TODOS,
    WRITE_TODOS_DESCRIPTION,
    render_text,
)
from haystack_deep_research._tooling.base import ResearchTool
from haystack_deep_research.errors import ConfigurationError, ToolArgumentsError
from haystack_deep_research.events import Event, TodoAdded, TodoCompleted
from haystack_deep_research.run import RunView
from haystack_deep_research.run._phases import Phase

__all__ = ["TODOS_RESOURCE", "Todo", "TodoState", "TodoTool", "create_todo_tools"]

TODOS_RESOURCE = "todos"
"""The name of a run's :class:`TodoState` among its resources."""

TodoStatus = Literal["pending", "in_progress", "completed"]
_STATUSES = ("pending", "in_progress", "completed")
MAX_TODOS = 100


@dataclass(frozen=True)
class Todo:
    """One item. :param content: What is to be done. :param status: ``pending``, ``in_progress`` or ``completed``."""

    content: str
    status: TodoStatus = "pending"


class TodoState:
    """A todo list that several threads may write and read at once."""

    def __init__(self) -> None:
        self._items: list[Todo] = []
        self._lock = threading.Lock()

    def snapshot(self) -> list[Todo]:
        """:returns: A copy of the list."""
        with self._lock:
            return list(self._items)

    def replace(self, items: list[Todo]) -> tuple[list[Todo], list[Todo]]:
        """
        Replace the list.

        :param items: The new list.
        :returns: ``(added, completed)``: items whose content is new, and items that became completed.
        """
        with self._lock:
            before = {item.content: item.status for item in self._items}
            self._items = list(items)
        added = [item for item in items if item.content not in before]
        completed = [item for item in items if item.status == "completed" and before.get(item.content) != "completed"]
        return added, completed

    def to_list(self) -> list[dict[str, Any]]:
        """:returns: The list as JSON-ready dicts (``content``, ``status``)."""
        return [asdict(item) for item in self.snapshot()]

    def render(self) -> str:
        """:returns: The list as the model reads it."""
        return render_text(TODO_LIST, todos=self.to_list())

    def __repr__(self) -> str:
        return f"TodoState({self.snapshot()!r})"


def _todos(value: Any) -> list[Todo]:
    if not isinstance(value, list) or len(value) > MAX_TODOS:
        raise ToolArgumentsError(render_text(TODOS_INVALID, got=repr(value)[:200], limit=MAX_TODOS))
    items = []
    for entry in value:
        content = entry.get("content") if isinstance(entry, dict) else entry
        status = entry.get("status", "pending") if isinstance(entry, dict) else "pending"
        if not isinstance(content, str) or not content.strip() or status not in _STATUSES:
            raise ToolArgumentsError(render_text(TODOS_INVALID, got=repr(entry)[:200], limit=MAX_TODOS))
        items.append(Todo(content=" ".join(content.split()), status=cast(TodoStatus, status)))
    return items


class TodoTool(ResearchTool):
    """``write_todos`` (replace the list) or ``read_todos`` (show it), on the run's :class:`TodoState`."""

    def __init__(self, *, operation: str = WRITE_TODOS) -> None:
        if operation == WRITE_TODOS:
            item = {
                "type": "object",
                "properties": {"content": {"type": "string"}, "status": {"type": "string", "enum": list(_STATUSES)}},
                "required": ["content", "status"],
            }
            parameters = {"type": "object", "properties": {"todos": {"type": "array", "items": item}}}
            parameters["required"] = ["todos"]
            description = WRITE_TODOS_DESCRIPTION
        elif operation == READ_TODOS:
            parameters, description = {"type": "object", "properties": {}}, READ_TODOS_DESCRIPTION
        else:
            raise ConfigurationError(f"operation must be {WRITE_TODOS} or {READ_TODOS}; got {operation!r}.")
        self.operation = operation
        self._alone = TodoState()  # used only outside a run
        super().__init__(name=operation, description=description, parameters=parameters)

    def phase(self, view: RunView | None, todos: Any = None, **_: Any) -> Phase[str]:
        """For ``write_todos``, ``todos`` is the whole new list; the phase returns the list as the model reads it."""
        state = view.run.resource(TODOS_RESOURCE, TodoState) if view is not None else self._alone
        if self.operation == WRITE_TODOS:
            added, completed = state.replace(_todos(todos))
            if view is not None:
                events: list[Event] = [TodoAdded(phase=view.phase, content=item.content) for item in added]
                events += [TodoCompleted(phase=view.phase, content=item.content) for item in completed]
                for event in events:
                    view.emit(event)
        yield from ()
        return state.render()


def create_todo_tools() -> list[TodoTool]:
    """:returns: ``write_todos`` and ``read_todos``."""
    return [TodoTool(operation=WRITE_TODOS), TodoTool(operation=READ_TODOS)]
