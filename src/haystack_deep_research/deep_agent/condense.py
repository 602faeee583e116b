"""
Conversation summarization: a long deep-agent conversation keeps its beginning and its latest turns, and the rest
becomes a summary, so the context (and the tokens each step costs) stays bounded over a long run.

Before a model call, once the conversation (system messages aside) holds more than ``after_messages`` messages,
one model call (role ``summarizer``) condenses the older ones. What is never lost: the system prompt, the task
(the first user message), the todo list (re-stated under the summary) and the latest ``keep_recent`` messages, kept
verbatim. A tool call and its results are never split: the kept part never starts with a result whose call it
lacks. A summary from an earlier round is condensed again with the turns after it. A failed summary call changes
nothing, with a warning. Every summary emits ``ConversationCondensed``.

Haystack's own ``CompactionHook`` sizes by the model's context window and calls its summarizer outside the run; this
layer counts messages, as the deep agent's settings do, and its call is the run's (usage, budget, streaming, events).
"""

from __future__ import annotations

import json
from typing import Any

from haystack.components.agents.state import State
from haystack.components.agents.state.state_utils import replace_values
from haystack.dataclasses import ChatMessage, ChatRole

from haystack_deep_research import _checks
from haystack_deep_research._prompts import CONDENSE, CONDENSED, fence, render_chat, render_user
from haystack_deep_research._serialization import InitSerialized
from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.events import ConversationCondensed
from haystack_deep_research.run import RunView
from haystack_deep_research.run._phases import Phase, UsesModels, ask, failure
from haystack_deep_research.state import MESSAGES, PHASE_CONDENSE
from haystack_deep_research.tools.todos import TODOS_RESOURCE, TodoState

__all__ = ["Condenser"]

LINE_CHARS = 2_000
"""The most characters of one message the summarizer reads."""


def _line(message: ChatMessage) -> str:
    if message.tool_call_result is not None:
        result = message.tool_call_result
        text = f"tool result of {result.origin.tool_name}{' (error)' if result.error else ''}: {result.result}"
    elif message.tool_calls:
        calls = "; ".join(
            f"{call.tool_name}({json.dumps(call.arguments, ensure_ascii=False, default=str)})"
            for call in message.tool_calls
        )
        text = f"{message.role.value} called: {calls}" + (f" — {message.text}" if message.text else "")
    else:
        text = f"{message.role.value}: {message.text or ''}"
    return fence(" ".join(text.split())[:LINE_CHARS])


class Condenser(UsesModels, InitSerialized):
    """
    Condense the older turns of a long conversation (see the module docstring).

    :param after_messages: Condense once the conversation holds more than this many messages (system messages
        aside), 4 to 10,000.
    :param keep_recent: The latest messages kept verbatim, 1 to fewer than ``after_messages``.
    :param chat_generator: The summarizing model; ``None`` uses the agent's own.
    :raises ConfigurationError: If a parameter is out of range.
    """

    def __init__(self, *, after_messages: int, keep_recent: int = 10, chat_generator: Any = None) -> None:
        self.after_messages = _checks.int_in_range("summarize_after_messages", after_messages, 4, 10_000)
        self.keep_recent = _checks.int_in_range("summarize_keep_recent", keep_recent, 1, 10_000)
        if self.keep_recent >= self.after_messages:
            raise ConfigurationError(
                f"summarize_keep_recent ({keep_recent}) must be smaller than summarize_after_messages "
                f"({after_messages}), or nothing would ever be condensed."
            )
        if chat_generator is not None:
            _checks.chat_generator("condense_llm", chat_generator, needs_tools=False)
        self.chat_generator = chat_generator

    def _used_models(self) -> list[Any]:
        return [self.chat_generator] if self.chat_generator is not None else []

    def condense(self, state: State, view: RunView, model: Any) -> Phase[None]:
        """Condense when the conversation is long; ``model`` (the agent's own) serves when this layer has none."""
        messages: list[ChatMessage] = state.data.get(MESSAGES) or []
        system_end = 0
        while system_end < len(messages) and messages[system_end].is_from(ChatRole.SYSTEM):
            system_end += 1
        if len(messages) - system_end <= self.after_messages:
            return
        head = system_end + (1 if messages[system_end].is_from(ChatRole.USER) else 0)  # the task stays
        cut = len(messages) - self.keep_recent
        while cut > head and messages[cut].tool_call_result is not None:
            cut -= 1  # keep each kept result's call with it
        older = messages[head:cut]
        if len(older) < 2:
            return
        prompt = render_chat(CONDENSE, transcript=[_line(message) for message in older])
        streaming = view.run.streaming_callback
        model = self.chat_generator or model
        [outcome] = yield [ask(model, prompt, role="summarizer", streaming_callback=streaming, budget=view.run.budget)]
        if outcome.reply is not None:
            view.record_usage(PHASE_CONDENSE, outcome.reply.meta.get("usage"))
        if not outcome.text:
            view.warn(
                PHASE_CONDENSE, f"condensing the conversation failed ({failure(outcome.error)}); it is kept whole"
            )
            return
        todos = view.run.resource(TODOS_RESOURCE, TodoState)
        summary = render_user(
            CONDENSED, count=len(older), summary=outcome.text, todos=todos.render() if todos.snapshot() else ""
        )
        condensed = [*messages[:head], summary, *messages[cut:]]
        state.set(MESSAGES, condensed, handler_override=replace_values)
        view.emit(ConversationCondensed(phase=PHASE_CONDENSE, condensed=len(older), kept=len(messages) - cut))
