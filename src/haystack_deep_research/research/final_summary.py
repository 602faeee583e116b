"""
The end of a sub-researcher's run: make sure it ends with a summary of what it gathered, and count its usage.

When the researcher stopped at its step limit, was stopped by the loop guard or the run's budget, or ended without a
text reply, :class:`FinalSummaryHook` makes one last call to the researcher's model, without tools, asking for the
summary. If that call fails too, the summary is assembled from the tool results the researcher collected, so
nothing it gathered is lost.
"""

from __future__ import annotations

from typing import Any

from haystack.components.agents.state import State
from haystack.components.generators.chat.types import ChatGenerator
from haystack.dataclasses import ChatMessage, ChatRole

from haystack_deep_research import _checks
from haystack_deep_research._prompts import (
    PARTIAL_REASONS,
    RESEARCHER_FINAL,
    RESEARCHER_STOPPED,
    STOPPED_BY_COST_BUDGET,
    STOPPED_BY_LOOP,
    STOPPED_BY_TIME_BUDGET,
    STOPPED_BY_TOKEN_BUDGET,
    render_user,
)
from haystack_deep_research._serialization import InitSerialized
from haystack_deep_research.errors import DeadlineExceededError
from haystack_deep_research.run._budget import add_usage
from haystack_deep_research.run._lifecycle import view_of
from haystack_deep_research.run._phases import Phase, PhaseHook, ask, failure
from haystack_deep_research.state import (
    EXIT_COST_BUDGET,
    EXIT_LOOP_DETECTED,
    EXIT_REASON,
    EXIT_SUMMARY_FAILED,
    EXIT_TIME_BUDGET,
    EXIT_TOKEN_BUDGET,
    MESSAGES,
    PHASE_RESEARCH,
    STOP_RUN,
    TOKEN_USAGE,
)

__all__ = ["FinalSummaryHook"]

# Why a hook stopped the researcher, as the final-summary request tells the model.
_STOPPED_BY = {
    EXIT_LOOP_DETECTED: STOPPED_BY_LOOP,
    EXIT_TOKEN_BUDGET: STOPPED_BY_TOKEN_BUDGET,
    EXIT_TIME_BUDGET: STOPPED_BY_TIME_BUDGET,
    EXIT_COST_BUDGET: STOPPED_BY_COST_BUDGET,
}


def _needs_final_summary(state: State) -> bool:
    if state.data.get(EXIT_REASON) in PARTIAL_REASONS:
        return True
    messages: list[ChatMessage] = state.data.get(MESSAGES) or []
    last = messages[-1] if messages else None
    return last is None or not last.is_from(ChatRole.ASSISTANT) or not (last.text or "").strip()


def _gathered_so_far(messages: list[ChatMessage]) -> str:
    """The tool results a researcher collected, used when even the final summary call fails."""
    results = [
        message.tool_call_result.result
        for message in messages
        if message.tool_call_result is not None and not message.tool_call_result.error
    ]
    if not results:
        return "The researcher gathered nothing before it stopped."
    return "The researcher could not write its summary; these are the results it gathered:\n\n" + "\n\n".join(
        str(result) for result in results
    )


class FinalSummaryHook(PhaseHook, InitSerialized):
    """
    ``after_run`` hook of a sub-researcher: make sure the run ends with a summary of what was gathered (see the module
    docstring), then count the researcher's token usage into the run.

    :param chat_generator: The researcher's chat generator.
    :raises ConfigurationError: If it is not a chat generator.
    """

    allowed_hook_points = ("after_run",)

    def __init__(self, *, chat_generator: ChatGenerator) -> None:
        self.chat_generator = _checks.chat_generator("chat_generator", chat_generator, needs_tools=False)

    def _used_models(self) -> list[Any]:
        return [self.chat_generator]

    def phase(self, state: State) -> Phase[None]:
        stopped_by = state.data.get(STOP_RUN)
        if stopped_by in _STOPPED_BY and state.data.get(EXIT_REASON) != stopped_by:
            # A hook stopped the researcher in its last step: the stop, not the step limit, is why it ended.
            state.set(EXIT_REASON, stopped_by)
        view = view_of(state)
        if _needs_final_summary(state):
            why = _STOPPED_BY.get(str(state.data.get(EXIT_REASON)))
            request = render_user(RESEARCHER_STOPPED, why=why) if why else render_user(RESEARCHER_FINAL)
            messages = [*(state.data.get(MESSAGES) or []), request]
            streaming = view.run.streaming_callback if view is not None else None
            agent = view.researcher if view is not None else ""
            budget = view.run.budget if view is not None else None
            model = self.chat_generator
            call = ask(model, messages, role="researcher", streaming_callback=streaming, agent=agent, budget=budget)
            [summary] = yield [call]
            reply = summary.reply
            if reply is None or not summary.text:
                if view is not None:
                    view.warn(
                        PHASE_RESEARCH,
                        f"a researcher could not write its final summary ({failure(summary.error)}); its raw results "
                        "are kept",
                    )
                reply = ChatMessage.from_assistant(_gathered_so_far(state.data.get(MESSAGES) or []))
                cut = isinstance(summary.error, DeadlineExceededError)  # the raw results are kept as time ran out
                state.set(EXIT_REASON, EXIT_TIME_BUDGET if cut else EXIT_SUMMARY_FAILED)
            else:
                usage = reply.meta.get("usage")
                if isinstance(usage, dict):
                    state.set(TOKEN_USAGE, add_usage(state.data.get(TOKEN_USAGE), usage))
            state.set(MESSAGES, [request, reply])
        if view is not None:
            view.count_usage(state.data.get(TOKEN_USAGE))
