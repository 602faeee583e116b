"""
The events of an agent's own loop and of the deep agent's capability layers: both agent shapes emit the tool events,
the deep research agent emits ``PlanReviewed`` (with ``approve_plan``), the deep agent the others.
"""

from __future__ import annotations

from typing import Any

from haystack_deep_research.events.types import Event

_PREVIEW = 120


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _PREVIEW else flat[: _PREVIEW - 1] + "…"


class ToolCalled(Event, kind="tool_called", line="calling {tool}"):
    """A tool call is about to run. :param tool: The tool's name. :param arguments: The arguments it runs with."""

    tool: str
    arguments: dict[str, Any]


class ToolReturned(Event, kind="tool_returned"):
    """
    A tool call returned.

    :param tool: The tool's name.
    :param result: Its result as the model reads it (shortened in :meth:`describe` only).
    :param error: Whether it failed (the result is then the error the model reads).
    """

    tool: str
    result: str
    error: bool = False

    def describe(self) -> str:
        return f"{self.tool} {'failed' if self.error else 'returned'}: {_preview(self.result)}"


class PlanReviewed(Event, kind="plan_reviewed"):
    """
    A person reviewed a sub-topic the orchestrator planned, before any researcher started on it.

    :param subtopic: The sub-topic as planned.
    :param decision: ``"accept"``, ``"edit"`` (researched as ``edited_to``) or ``"drop"`` (not researched; the
        orchestrator reads ``feedback``).
    :param edited_to: The sub-topic researched instead, for an edit; else ``None``.
    :param feedback: What the orchestrator was told, or ``None``.
    :param restored: Whether the decision came from the run directory instead of the person.
    """

    subtopic: str
    decision: str
    edited_to: str | None = None
    feedback: str | None = None
    restored: bool = False

    def describe(self) -> str:
        said = {"accept": "accepted", "edit": f"edited to '{self.edited_to}'", "drop": "dropped"}
        verb = said.get(self.decision, self.decision)
        return f"plan: {verb}{' (from the run directory)' if self.restored else ''}: {self.subtopic}"


class Reflected(Event, kind="reflected"):
    """
    Reflexion judged the last step.

    :param step_ok: Whether the step moved the task forward.
    :param critique: What was wrong with it, or why it was right.
    :param plan: The plan after the reflection.
    :param plan_rewritten: Whether the plan was rewritten.
    """

    step_ok: bool
    critique: str = ""
    plan: str = ""
    plan_rewritten: bool = False

    def describe(self) -> str:
        if self.plan_rewritten:
            return f"the last step was wrong, plan rewritten: {_preview(self.critique)}"
        return f"the last step was {'fine' if self.step_ok else 'wrong'}"


class ConversationCondensed(
    Event, kind="condensed", line="condensed {condensed} older message(s); {kept} kept verbatim"
):
    """Older turns became a summary. :param condensed: Messages replaced. :param kept: Messages kept verbatim."""

    condensed: int
    kept: int


class FileRead(Event, kind="fs_read", line="read {path}"):
    """A scratch-space file was read. :param path: Its path (a directory or pattern for ``ls``, ``glob``, ``grep``)."""

    path: str


class FileWritten(Event, kind="fs_write", line="wrote {path} ({chars} characters)"):
    """A scratch-space file was written. :param path: Its path. :param chars: Its size afterwards, in characters."""

    path: str
    chars: int = 0


class TodoAdded(Event, kind="todo_added", line="todo: {content}"):
    """An item joined the todo list. :param content: What is to be done."""

    content: str


class TodoCompleted(Event, kind="todo_completed", line="done: {content}"):
    """An item of the todo list was completed. :param content: What was done."""

    content: str


class ExitReached(Event, kind="exit_reached"):
    """
    An exit condition fired and the agent's loop ends.

    :param reason: The condition's reason, also the run's ``exit_reason``.
    :param detail: The condition in words.
    :param final_message_preview: The beginning of the final answer.
    """

    reason: str
    detail: str = ""
    final_message_preview: str = ""

    def describe(self) -> str:
        return f"exit: {self.detail or self.reason}"
