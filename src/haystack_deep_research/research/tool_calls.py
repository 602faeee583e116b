"""
A step's tool calls, as the library's ``before_tool`` and ``after_tool`` hooks handle them in every agent shape:
coerced to each tool's schema, answered without running, announced (``ToolCalled``, ``ToolReturned``).
"""

from __future__ import annotations

import dataclasses

from haystack.components.agents.state import State
from haystack.components.agents.state.state_utils import replace_values
from haystack.dataclasses import ChatMessage, ChatRole, ToolCall, ToolCallResult

from haystack_deep_research._serialization import InitSerialized
from haystack_deep_research._tooling.base import coerce_arguments
from haystack_deep_research.events import ToolCalled, ToolReturned
from haystack_deep_research.run import RunView
from haystack_deep_research.run._lifecycle import view_of
from haystack_deep_research.state import MESSAGES, TOOLS

__all__ = [
    "ToolResultsHook",
    "announce_calls",
    "announce_results",
    "answer_without_running",
    "coerce_pending_calls",
    "step_results",
    "with_tool_calls",
]

RESULT_LIMIT = 2_000
"""The most characters of a tool result a ``ToolReturned`` event carries."""


def step_results(messages: list[ChatMessage]) -> list[ToolCallResult]:
    """The results of the step just run (``after_tool``), in order: the tool messages after the last assistant one."""
    step = []
    for message in reversed(messages):
        if message.is_from(ChatRole.ASSISTANT):
            break
        if message.tool_call_result is not None:
            step.append(message.tool_call_result)
    return step[::-1]


def with_tool_calls(message: ChatMessage, tool_calls: list[ToolCall]) -> ChatMessage:
    """The same assistant message (text, reasoning, name, meta) asking for these calls instead."""
    return ChatMessage.from_assistant(
        text=message.text, meta=message.meta, name=message.name, tool_calls=tool_calls, reasoning=message.reasoning
    )


def coerce_pending_calls(state: State) -> list[ToolCall]:
    """The step's tool calls (``before_tool``), their arguments coerced to each tool's schema (see
    :func:`~haystack_deep_research._tooling.base.coerce_arguments`); the message is replaced only when a value
    changed."""
    messages: list[ChatMessage] = state.data.get(MESSAGES) or []
    if not messages or not messages[-1].tool_calls:
        return []
    schemas = {getattr(tool, "name", None): getattr(tool, "parameters", None) for tool in state.data.get(TOOLS) or []}
    last = messages[-1]
    calls: list[ToolCall] = []
    for call in last.tool_calls:
        arguments = coerce_arguments(schemas.get(call.tool_name), call.arguments)
        changed = arguments is not None and arguments != call.arguments
        calls.append(dataclasses.replace(call, arguments=arguments) if changed else call)
    if calls == last.tool_calls:
        return list(last.tool_calls)
    rewritten = with_tool_calls(last, calls)
    state.set(MESSAGES, [*messages[:-1], rewritten], handler_override=replace_values)
    return list(rewritten.tool_calls)


def answer_without_running(state: State, answers: list[tuple[ToolCall, str]]) -> None:
    """Answer each pending call with its error text: the Agent then runs no tool in this step, and the conversation
    stays well formed for the model to react."""
    state.set(MESSAGES, [ChatMessage.from_tool(tool_result=text, origin=call, error=True) for call, text in answers])


def announce_calls(view: RunView | None, calls: list[ToolCall]) -> None:
    """Emit ``ToolCalled`` for each call about to run (nothing outside a run)."""
    if view is None:
        return
    for call in calls:
        view.emit(ToolCalled(phase=view.phase, tool=call.tool_name, arguments=dict(call.arguments)))


def announce_results(view: RunView | None, messages: list[ChatMessage]) -> None:
    """Emit ``ToolReturned`` for each result of the step just run (nothing outside a run)."""
    if view is None:
        return
    for result in step_results(messages):
        text = str(result.result)
        view.emit(
            ToolReturned(
                phase=view.phase, tool=result.origin.tool_name, result=text[:RESULT_LIMIT], error=bool(result.error)
            )
        )


class ToolResultsHook(InitSerialized):
    """``after_tool`` of the deep research agent's orchestrator and sub-researchers: announce the step's results."""

    allowed_hook_points = ("after_tool",)

    def run(self, state: State) -> None:
        announce_results(view_of(state), state.data.get(MESSAGES) or [])
