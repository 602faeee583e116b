"""
The loop guard: stop an agent that keeps making the same tool call with the same arguments (the same tool with other
arguments is progress). See docs/safety.md for the warning, the stop and ``loop_detected``.

:class:`LoopGuard` is the one implementation, used by every agent shape; the streak lives in the agent's own State, so
one guard serves every run at once. :class:`LoopGuardHook`, a sub-researcher's ``before_tool`` hook, also condenses the
search results the model has acted on (:func:`condense_seen_results`, see docs/how-it-works.md).
"""

from __future__ import annotations

import json
import re
from typing import Any

from haystack.components.agents.state import State
from haystack.components.agents.state.state_utils import replace_values
from haystack.dataclasses import ChatMessage, ChatRole, ToolCall

from haystack_deep_research import _checks
from haystack_deep_research._prompts import (
    LOOP_STOPPED,
    LOOP_WARNING,
    SEARCH_RESULTS_END,
    SNIPPET_LABEL,
    SNIPPETS_LEFT_OUT,
    WEB_SEARCH,
    render_text,
)
from haystack_deep_research._serialization import InitSerialized
from haystack_deep_research.events import Notice
from haystack_deep_research.research.tool_calls import (
    announce_calls,
    answer_without_running,
    coerce_pending_calls,
)
from haystack_deep_research.run import RunView
from haystack_deep_research.run._lifecycle import view_of
from haystack_deep_research.state import EXIT_LOOP_DETECTED, LOOP_STREAK, MESSAGES, PHASE_RESEARCH, STOP_RUN

__all__ = ["DEFAULT_LOOP_THRESHOLD", "LoopGuard", "LoopGuardHook", "call_signature"]

DEFAULT_LOOP_THRESHOLD = 3
MIN_LOOP_THRESHOLD = 2
MAX_LOOP_THRESHOLD = 20


def _canonical(value: Any) -> Any:
    """Arguments with whitespace runs in strings collapsed, so trivially different spellings compare equal."""
    if isinstance(value, str):
        return " ".join(value.split())
    if isinstance(value, dict):
        return {str(key): _canonical(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_canonical(item) for item in value]
    return value


def call_signature(call: ToolCall) -> str:
    """A tool call's identity for loop detection: equal exactly for the same tool with the same canonical arguments."""
    arguments = json.dumps(_canonical(call.arguments), sort_keys=True, ensure_ascii=False, default=str)
    return f"{call.tool_name}:{arguments}"


def _who(view: RunView) -> str:
    if view.phase == PHASE_RESEARCH:
        return "a researcher"
    return f"the {view.phase} '{view.researcher}'" if view.researcher else f"the {view.phase}"


class LoopGuard(InitSerialized):
    """
    Tell a loop from progress by tool name and arguments: the call that makes ``threshold`` (2 to 20) identical calls
    in a row is answered with an error telling the model to change course; the next identical call stops the agent.
    """

    def __init__(self, *, threshold: int = DEFAULT_LOOP_THRESHOLD) -> None:
        self.threshold = _checks.int_in_range("threshold", threshold, MIN_LOOP_THRESHOLD, MAX_LOOP_THRESHOLD)

    def check(self, state: State, calls: list[ToolCall]) -> bool:
        """Whether the step's pending calls repeat, and so were answered without running (the agent maybe stopped)."""
        if not calls:
            return False
        streak = state.data.get(LOOP_STREAK) or {}
        signature, count = streak.get("signature"), int(streak.get("count") or 0)
        warned = streak.get("warned")  # the call the model was told, in an earlier step, to stop repeating
        looping: ToolCall | None = None
        longest, stop = 0, False
        for call in calls:
            current = call_signature(call)
            if current == signature:
                count += 1
            else:
                count, warned = 1, None
            signature = current
            if count >= self.threshold and count > longest:
                longest, looping = count, call
                stop = stop or warned == current  # told to change course during this very streak: it is stuck
        if looping is not None and call_signature(looping) == signature:
            warned = signature
        state.set(LOOP_STREAK, {"signature": signature, "count": count, "warned": warned})
        if looping is None:
            return False
        text = render_text(LOOP_STOPPED if stop else LOOP_WARNING, tool=looping.tool_name, count=longest)
        answer_without_running(state, [(call, text) for call in calls])
        view = view_of(state)
        if stop:
            state.set(STOP_RUN, EXIT_LOOP_DETECTED)
            if view is not None:
                view.warn(
                    view.phase,
                    f"{_who(view)} kept calling {looping.tool_name} with the same arguments ({longest} times in a "
                    "row) and was stopped; what it gathered before is kept",
                )
        elif view is not None:
            view.emit(
                Notice(phase=view.phase, text=f"{_who(view)} repeated {looping.tool_name}; told to change course")
            )
        return True


class LoopGuardHook(LoopGuard):
    """
    ``before_tool`` of a sub-researcher: condense the search results the model has acted on, coerce the step's
    arguments, guard against loops and announce the calls that run (``ToolCalled``).
    """

    allowed_hook_points = ("before_tool",)

    def run(self, state: State) -> None:
        condensed = condense_seen_results(state.data.get(MESSAGES) or [])
        if condensed is not None:
            state.set(MESSAGES, condensed, handler_override=replace_values)
        calls = coerce_pending_calls(state)
        if not self.check(state, calls):
            announce_calls(view_of(state), calls)


_SNIPPET = re.compile(
    r"\n" + re.escape(SNIPPET_LABEL) + r".*?(?=\n\n(?:\[\d+\] |" + re.escape(SEARCH_RESULTS_END) + "))", re.DOTALL
)


def _condensed(text: str) -> str | None:
    if SNIPPETS_LEFT_OUT in text or not text.rstrip().endswith(SEARCH_RESULTS_END):
        return None
    shorter = _SNIPPET.sub("", text)
    return f"{shorter}\n{SNIPPETS_LEFT_OUT}" if shorter != text else None


def condense_seen_results(messages: list[ChatMessage]) -> list[ChatMessage] | None:
    """The conversation with the library's ``web_search`` results before the last assistant turn condensed (another
    search tool's are left as they are), or ``None`` if unchanged."""
    last_turn = max((i for i, m in enumerate(messages) if m.is_from(ChatRole.ASSISTANT)), default=-1)
    changed = False
    out = list(messages)
    for index in range(last_turn):
        result = messages[index].tool_call_result
        if result is None or result.error or result.origin.tool_name != WEB_SEARCH:
            continue
        shorter = _condensed(str(result.result))
        if shorter is not None:
            out[index] = ChatMessage.from_tool(shorter, origin=result.origin, meta=dict(messages[index].meta))
            changed = True
    return out if changed else None
