"""
A step's tool calls, as the library's ``before_tool`` and ``after_tool`` hooks handle them in both agent shapes.

- :func:`coerce_pending_calls`: the calls the model just asked for, with
  string-encoded numbers turned into numbers by each tool's JSON schema (any tool's, the users' own included), so a
  provider that sends ``"0.5"`` for a number works with every tool.
- :func:`answer_without_running`: answer every pending call with an error result; the Agent then runs no tool in
  this step (the loop guard and the deep agent's submission check use it).
- :func:`announce_calls` / :class:`ToolResultsHook`: ``ToolCalled`` before the calls run, ``ToolReturned`` after.
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
    """
    :param messages: An agent's messages, at ``after_tool``.
    :returns: The results of the step just run, in order: the tool messages after the last assistant message.
    """
    step = []
    for message in reversed(messages):
        if message.is_from(ChatRole.ASSISTANT):
            break
        if message.tool_call_result is not None:
            step.append(message.tool_call_result)
    return step[::-1]


def with_tool_calls(message: ChatMessage, tool_calls: list[ToolCall]) -> ChatMessage:
    """
    :param message: An assistant message that asks for tool calls.
    :param tool_calls: The calls it should ask for instead.
    :returns: The same message (text, reasoning, name, meta) with these calls, built by Haystack's public
        ``ChatMessage.from_assistant``.
    """
    return ChatMessage.from_assistant(
        text=message.text, meta=message.meta, name=message.name, tool_calls=tool_calls, reasoning=message.reasoning
    )


def coerce_pending_calls(state: State) -> list[ToolCall]:
    """
    Rewrite the step's tool calls with their arguments coerced to each tool's schema (see
    :func:`~haystack_deep_research._tooling.base.coerce_arguments`); the message is replaced only when a value
    changed.

    :param state: An agent's live State, at ``before_tool``.
    :returns: The (possibly rewritten) tool calls.
    """
    messages: list[ChatMessage] = state.data.get(MESSAGES) or []
    if not messages or not messages[-1].tool_calls:
        return []
    schemas = {getattr(tool, "name", None): getattr(tool, "parameters", None) for tool in state.data.get(TOOLS) or []}
    last = messages[-1]
    changed = False
    calls: list[ToolCall] = []
    for call in last.tool_calls:
        arguments = coerce_arguments(schemas.get(call.tool_name), call.arguments)
        if arguments is not None and arguments != call.arguments:
            calls.append(dataclasses.replace(call, arguments=arguments))
            changed = True
        else:
            calls.append(call)
    if changed:
        rewritten = with_tool_calls(last, calls)
        state.set(MESSAGES, [*messages[:-1], rewritten], handler_override=replace_values)
        return list(rewritten.tool_calls)
    return list(last.tool_calls)


def answer_without_running(state: State, answers: list[tuple[ToolCall, str]]) -> None:
    """
    Append an error tool result for every pending call: the Agent then runs no tool in this step, and the
    conversation stays well formed for the model to react.

    :param state: An agent's live State, at ``before_tool``.
    :param answers: Each pending call with the text its error result holds.
    """
    state.set(MESSAGES, [ChatMessage.from_tool(tool_result=text, origin=call, error=True) for call, text in answers])


def announce_calls(view: RunView | None, calls: list[ToolCall]) -> None:
    """
    Emit ``ToolCalled`` for each call about to run.

    :param view: The agent's view of its run, or ``None`` outside a run.
    :param calls: The calls.
    """
    if view is None:
        return
    for call in calls:
        view.emit(ToolCalled(phase=view.phase, tool=call.tool_name, arguments=dict(call.arguments)))


def announce_results(view: RunView | None, messages: list[ChatMessage]) -> None:
    """
    Emit ``ToolReturned`` for each result of the step just run: the tool messages after the last assistant message.

    :param view: The agent's view of its run, or ``None`` outside a run.
    :param messages: The agent's messages, at ``after_tool``.
    """
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
