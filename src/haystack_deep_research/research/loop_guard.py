"""
The loop guard: stop a sub-researcher that keeps making the same tool call with the same arguments.

A model that repeats a call it already made gets the same result again and spends a step and tokens on it. The
guard is a ``before_tool`` hook of the sub-researcher. It compares each pending call with the ones before it, by
tool name *and* arguments: the same tool with other arguments is progress, the same call again extends a streak.

- When a streak reaches ``threshold``, none of the step's calls run. Each gets an error tool result telling the
  model to change course, so the conversation stays well formed and the model can recover.
- When the model makes the same call again after that, the calls are answered the same way and the researcher is
  stopped (``stop_run`` = ``"loop_detected"``); its final-summary hook then writes a summary of what it gathered,
  marked as partial because of the loop.

The streak lives in the researcher's own State (one State per ``research_subtopic`` call), never on the hook, so
one hook object serves every researcher of every run at once.

Being the researcher's one ``before_tool`` hook, it also keeps the researcher's context small before each tool step
(:mod:`.condense`): search results the model has already acted on keep only their titles and URLs.
"""

from __future__ import annotations

import json
from typing import Any

from haystack.components.agents.state import State
from haystack.components.agents.state.state_utils import replace_values
from haystack.core.serialization import default_from_dict, default_to_dict
from haystack.dataclasses import ChatMessage, ToolCall

from haystack_deep_research import _checks
from haystack_deep_research.events import Notice
from haystack_deep_research.prompts import LOOP_STOPPED, LOOP_WARNING, render_text
from haystack_deep_research.research.condense import condense_seen_results
from haystack_deep_research.run import view_of
from haystack_deep_research.state import EXIT_LOOP_DETECTED, LOOP_STREAK, MESSAGES, PHASE_RESEARCH, STOP_RUN

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
    """
    The identity of a tool call for loop detection: its tool name and its canonical arguments.

    :param call: A tool call the model made.
    :returns: A string that is equal for two calls exactly when they name the same tool with the same arguments.
    """
    arguments = json.dumps(_canonical(call.arguments), sort_keys=True, ensure_ascii=False, default=str)
    return f"{call.tool_name}:{arguments}"


class LoopGuardHook:
    """
    ``before_tool`` hook of a sub-researcher: answer a repeated call with an error, then stop a persisting loop;
    condense the search results the model has acted on (see the module docstring).

    :param threshold: How many identical calls in a row make a loop, 2 to 20. The call that reaches it is answered
        with an error telling the model to change course; the next identical call stops the researcher.
    :raises ConfigurationError: If ``threshold`` is out of range.
    """

    allowed_hook_points = ("before_tool",)

    def __init__(self, *, threshold: int = DEFAULT_LOOP_THRESHOLD) -> None:
        self.threshold = _checks.int_in_range("threshold", threshold, MIN_LOOP_THRESHOLD, MAX_LOOP_THRESHOLD)

    def run(self, state: State) -> None:
        """
        Check the pending tool calls; block them (and maybe stop the researcher) when they repeat.

        :param state: The researcher's live State.
        """
        messages: list[ChatMessage] = state.data.get(MESSAGES) or []
        pending = messages[-1] if messages else None
        if pending is None or not pending.tool_calls:
            return
        condensed = condense_seen_results(messages)
        if condensed is not None:
            state.set(MESSAGES, condensed, handler_override=replace_values)
        streak = state.data.get(LOOP_STREAK) or {}
        signature, count = streak.get("signature"), int(streak.get("count") or 0)
        warned = streak.get("warned")  # the call the model was told, in an earlier step, to stop repeating
        looping: ToolCall | None = None
        longest, stop = 0, False
        for call in pending.tool_calls:
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
            return
        self._answer_without_running(state, pending.tool_calls, looping.tool_name, longest, stop=stop)
        view = view_of(state)
        if stop:
            state.set(STOP_RUN, EXIT_LOOP_DETECTED)
            if view is not None:
                view.warn(
                    PHASE_RESEARCH,
                    f"a researcher kept calling {looping.tool_name} with the same arguments ({longest} times in a "
                    "row) and was stopped; its note covers what it gathered before",
                )
        elif view is not None:
            text = f"a researcher repeated {looping.tool_name}; it was told to change course"
            view.emit(Notice(phase=PHASE_RESEARCH, text=text))

    @staticmethod
    def _answer_without_running(state: State, calls: list[ToolCall], tool: str, count: int, *, stop: bool) -> None:
        """Append an error result for every pending call: the Agent then runs no tool in this step."""
        text = render_text(LOOP_STOPPED if stop else LOOP_WARNING, tool=tool, count=count)
        state.set(MESSAGES, [ChatMessage.from_tool(tool_result=text, origin=call, error=True) for call in calls])

    def to_dict(self) -> dict[str, Any]:
        """
        :returns: The serialized hook.
        """
        return default_to_dict(self, threshold=self.threshold)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LoopGuardHook:
        """
        :param data: What ``to_dict`` returned.
        :returns: The hook.
        """
        return default_from_dict(cls, data)
