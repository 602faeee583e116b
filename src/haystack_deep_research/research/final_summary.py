"""
Nothing gathered is lost when a model stops early or fails (see docs/safety.md): :class:`FinalSummaryHook` ends a
sub-researcher's run with a summary of what it gathered (assembled from its tool results when even that call fails),
and :class:`PreservingChatGenerator` turns a failing call of an agent's own model into a final reply marked in its
``meta``. Haystack's Agent lets a chat generator's exception end ``run`` before the ``after_run`` hooks, which would
lose the brief and the notes; with the stand-in the run closes from what it has (``orchestrator_failed``, ``failed``
for the deep agent), and the stand-in text never becomes report content.
"""

from __future__ import annotations

from typing import Any

from haystack import component
from haystack.components.agents.state import State
from haystack.components.generators.chat.types import ChatGenerator
from haystack.dataclasses import ChatMessage, ChatRole

from haystack_deep_research import _checks
from haystack_deep_research._prompts import (
    ORCHESTRATOR_STAND_IN,
    PARTIAL_REASONS,
    RESEARCHER_FINAL,
    RESEARCHER_STOPPED,
    STOPPED_BY_COST_BUDGET,
    STOPPED_BY_LOOP,
    STOPPED_BY_TIME_BUDGET,
    STOPPED_BY_TOKEN_BUDGET,
    render_text,
    render_user,
)
from haystack_deep_research._serialization import InitSerialized
from haystack_deep_research.errors import DeadlineExceededError
from haystack_deep_research.run._budget import (
    add_usage,
    bound_budget,
    call_sync_within_async,
    call_within,
    call_within_async,
)
from haystack_deep_research.run._lifecycle import view_of
from haystack_deep_research.run._phases import (
    Call,
    Phase,
    PhaseHook,
    UsesModels,
    ask,
    deadline_reply,
    drive,
    drive_async,
    failure,
    for_async,
    for_sync,
)
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

__all__ = ["FAILURE_META", "FinalSummaryHook", "PreservingChatGenerator", "model_failure"]

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
    """``after_run`` of a sub-researcher: end its run with a summary of what it gathered, count its token usage."""

    allowed_hook_points = ("after_run",)
    _model_attributes = ("chat_generator",)

    def __init__(self, *, chat_generator: ChatGenerator) -> None:
        self.chat_generator = _checks.chat_generator("chat_generator", chat_generator, needs_tools=False)

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


FAILURE_META = "haystack_deep_research.model_failure"
"""The ``meta`` key of the stand-in reply; its value says what failed."""


@component
class PreservingChatGenerator(UsesModels, InitSerialized):
    """
    Wrap an agent's chat generator (it must support tools) so that its failure ends the run instead of discarding it;
    its streamed chunks are tagged with ``role`` (``None``: passed on as Haystack streams them).
    """

    _model_attributes = ("chat_generator",)

    def __init__(self, *, chat_generator: ChatGenerator, role: str | None = "orchestrator") -> None:
        # Any: Haystack's ChatGenerator protocol declares run(messages) only; this one is checked to take tools.
        self.chat_generator: Any = _checks.chat_generator("chat_generator", chat_generator, needs_tools=True)
        self.role = role

    def _phase(self, messages: list[ChatMessage], tools: Any, kwargs: dict[str, Any]) -> Phase[dict[str, Any]]:
        generator = self.chat_generator
        if self.role is not None and kwargs.get("streaming_callback") is not None:  # tagged like every other role's
            given = kwargs["streaming_callback"]
            tagged = for_sync(given, self.role) or for_async(given, self.role)
            kwargs = {**kwargs, "streaming_callback": tagged}

        budget = bound_budget()

        def run() -> Any:
            return call_within(lambda: generator.run(messages=messages, tools=tools, **kwargs), budget)

        async def run_async() -> Any:
            if hasattr(generator, "run_async"):
                return await call_within_async(
                    lambda: generator.run_async(messages=messages, tools=tools, **kwargs), budget
                )
            return await call_sync_within_async(lambda: generator.run(messages=messages, tools=tools, **kwargs), budget)

        [called] = yield [Call(run, run_async)]
        if called.error is None:
            return called.value
        if isinstance(called.error, DeadlineExceededError):  # the Agent's next budget check ends the run
            return deadline_reply(called.error)
        why = f"{type(called.error).__name__}: {called.error}"
        reply = ChatMessage.from_assistant(
            render_text(ORCHESTRATOR_STAND_IN, why=why), meta={"finish_reason": "stop", FAILURE_META: why}
        )
        return {"replies": [reply]}

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        """:returns: The wrapped generator's replies, or a stand-in final reply when it failed."""
        return drive(self._phase(messages, tools, kwargs))

    @component.output_types(replies=list[ChatMessage])
    async def run_async(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        """As :meth:`run`; a wrapped generator without ``run_async`` runs in a worker thread."""
        return await drive_async(self._phase(messages, tools, kwargs))


def model_failure(messages: list[ChatMessage] | None) -> str | None:
    """Why the run ended on a stand-in reply, or ``None`` when the last reply is a real one."""
    last = messages[-1] if messages else None
    return last.meta.get(FAILURE_META) if last is not None else None
