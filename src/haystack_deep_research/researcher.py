"""
The sub-researcher: an Agent of its own, exposed to the orchestrator as the ``research_subtopic`` tool.

Each call runs the researcher in a fresh State, so researchers never see each other's context. Only the
researcher's final summary comes back, as a note: it is the tool result the orchestrator sees and it is appended to
the run's ``notes`` for the writer. A researcher that reaches its step limit, is stopped by the loop guard, or runs
out of the run's budget still returns a summary of what it gathered (one last tool-free call), marked as partial.
No researcher starts once the run's budget is spent, and a sub-topic an earlier attempt of the run completed is
answered from the run directory (see :mod:`haystack_deep_research.resume`).
"""

from __future__ import annotations

import asyncio
from typing import Any

import arrow
from haystack.components.agents import Agent
from haystack.components.agents.state import State
from haystack.core.serialization import component_to_dict
from haystack.dataclasses import ChatMessage, ChatRole
from haystack.utils.deserialization import deserialize_component_inplace

from haystack_deep_research import _checks
from haystack_deep_research.budgets import refuse_when_spent, usage_delta
from haystack_deep_research.errors import ConfigurationError, DelegationLimitError, ToolArgumentsError
from haystack_deep_research.hooks import PhaseHook, failure
from haystack_deep_research.prompts import (
    NOTE,
    RESEARCHER_FINAL,
    RESEARCHER_STOPPED,
    RESEARCHER_TASK,
    STOPPED_BY_LOOP,
    STOPPED_BY_TIME_BUDGET,
    STOPPED_BY_TOKEN_BUDGET,
    render_text,
)
from haystack_deep_research.resume import journal_note, resumed_note
from haystack_deep_research.state import (
    BUDGET_KEY,
    EXIT_LOOP_DETECTED,
    EXIT_REASON,
    EXIT_TIME_BUDGET,
    EXIT_TOKEN_BUDGET,
    HOOK_CONTEXT,
    MESSAGES,
    NOTES,
    PHASE_RESEARCH,
    RUN_KEY,
    STOP_RUN,
    TOKEN_USAGE,
    USAGE_RECORDED,
    ResearchRun,
    SharedContext,
    add_usage,
    append_new,
    run_from_context,
)
from haystack_deep_research.tools.base import ResearchTool

RESEARCH_SUBTOPIC_TOOL_NAME = "research_subtopic"

_SUMMARY_FAILED = "summary_failed"
_PARTIAL_REASONS = {
    _SUMMARY_FAILED: "the researcher could not write a summary; these are the raw results it gathered",
    "max_agent_steps": "the researcher reached its step limit; this summary covers only what it gathered",
    "length": "the researcher's reply hit the model's output limit and may be cut off",
    "content_filter": "the researcher's reply was stopped by a content filter and may be incomplete",
    EXIT_LOOP_DETECTED: "the researcher kept repeating the same tool call and was stopped; this summary covers only "
    "what it gathered",
    EXIT_TOKEN_BUDGET: "the run's token budget was spent; this summary covers only what the researcher gathered",
    EXIT_TIME_BUDGET: "the run's time budget was spent; this summary covers only what the researcher gathered",
}
# Why a hook stopped the researcher, as the final-summary request tells the model.
_STOPPED_BY = {
    EXIT_LOOP_DETECTED: STOPPED_BY_LOOP,
    EXIT_TOKEN_BUDGET: STOPPED_BY_TOKEN_BUDGET,
    EXIT_TIME_BUDGET: STOPPED_BY_TIME_BUDGET,
}


def _needs_final_summary(state: State) -> bool:
    if state.data.get(EXIT_REASON) in _PARTIAL_REASONS:
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


def _subtopic_text(subtopic: Any) -> str:
    if not isinstance(subtopic, str) or not subtopic.strip():
        raise ToolArgumentsError(
            f"research_subtopic needs 'subtopic': a non-empty string describing the sub-topic; got {subtopic!r}."
        )
    return subtopic.strip()


class FinalSummaryHook(PhaseHook):
    """
    ``after_run`` hook of a sub-researcher: make sure the run ends with a summary of what was gathered.

    When the researcher stopped at its step limit (or without a text reply), the hook makes one last call to the
    researcher's model, without tools, asking for the summary. If that call fails too, the summary is assembled from
    the tool results the researcher collected, so nothing it gathered is lost.

    :param chat_generator: The researcher's chat generator.
    """

    def _begin(self, state: State) -> tuple[Any, list[ChatMessage]] | None:
        stopped_by = state.data.get(STOP_RUN)
        if stopped_by in _STOPPED_BY and state.data.get(EXIT_REASON) != stopped_by:
            # A hook stopped the researcher in its last step: the stop, not the step limit, is why it ended.
            state.set(EXIT_REASON, stopped_by)
        if not _needs_final_summary(state):
            return None
        why = _STOPPED_BY.get(str(state.data.get(EXIT_REASON)))
        request = ChatMessage.from_user(render_text(RESEARCHER_STOPPED, why=why) if why else RESEARCHER_FINAL)
        return request, [*(state.data.get(MESSAGES) or []), request]

    def _finish(self, state: State, context: Any, reply: ChatMessage | None, error: Exception | None) -> None:
        if reply is None or not (reply.text or "").strip():
            run = run_from_context(state.data.get(HOOK_CONTEXT))
            if run is not None:
                run.warn(
                    PHASE_RESEARCH,
                    f"a researcher could not write its final summary ({failure(error)}); its raw results are kept",
                )
            reply = ChatMessage.from_assistant(_gathered_so_far(state.data.get(MESSAGES) or []))
            state.set(EXIT_REASON, _SUMMARY_FAILED)
        else:
            usage = reply.meta.get("usage")
            if isinstance(usage, dict):
                state.set(TOKEN_USAGE, add_usage(state.data.get(TOKEN_USAGE), usage))
        state.set(MESSAGES, [context, reply])


class ResearchSubtopicTool(ResearchTool):
    """
    The orchestrator's ``research_subtopic`` tool: run one sub-researcher on one sub-topic in its own State.

    The tool result, and the note appended to the orchestrator's ``notes``, is the researcher's final summary under
    the sub-topic as a heading, marked as partial when the researcher stopped early. The run's ``max_subtopics``
    is enforced here: a delegation beyond it is refused with a tool error and not run.

    :param researcher: The sub-researcher Agent.
    :param max_subtopics: How many sub-topics one run may delegate, 1 to 50.
    :raises ConfigurationError: If a parameter is invalid.
    """

    def __init__(self, *, researcher: Agent, max_subtopics: int = 5) -> None:
        if not isinstance(researcher, Agent):
            raise ConfigurationError(f"researcher must be a Haystack Agent; got {type(researcher).__name__}.")
        self.researcher = researcher
        self.max_subtopics = _checks.int_in_range("max_subtopics", max_subtopics, 1, 50)
        super().__init__(
            name=RESEARCH_SUBTOPIC_TOOL_NAME,
            description=(
                "Delegate one self-contained sub-topic to a researcher who searches and reads the web; returns a "
                "summary of the findings with exact source URLs. Calls in one turn run in parallel."
            ),
            parameters={
                "type": "object",
                "properties": {
                    "subtopic": {
                        "type": "string",
                        "description": "The sub-topic with all the context a researcher needs; it sees nothing else.",
                    }
                },
                "required": ["subtopic"],
            },
            function=self._research,
            async_function=self._research_async,
            inputs_from_state={HOOK_CONTEXT: HOOK_CONTEXT},
            outputs_to_state={NOTES: {"source": "note", "handler": append_new}},
            outputs_to_string={"source": "note"},
        )

    def warm_up(self) -> None:
        """Warm up the researcher agent."""
        self.researcher.warm_up()

    def _start(self, text: str, hook_context: dict[str, Any] | None) -> tuple[ResearchRun | None, dict]:
        refuse_when_spent(hook_context, text)
        run = run_from_context(hook_context)
        inputs: dict[str, Any] = {
            "messages": [
                ChatMessage.from_user(
                    render_text(RESEARCHER_TASK, today=arrow.utcnow().format("YYYY-MM-DD"), subtopic=text)
                )
            ],
        }
        if run is not None:
            slot = run.claim_subtopic(self.max_subtopics)
            if slot is None:
                raise DelegationLimitError(
                    f"the limit of {self.max_subtopics} sub-topics for this run is reached, so '{text}' was not "
                    "researched. Work with the findings you have and finish."
                )
            run.report(PHASE_RESEARCH, f"[{slot}/{self.max_subtopics}] researching: {text}")
            shared = {RUN_KEY: run}
            if hook_context and BUDGET_KEY in hook_context:
                shared[BUDGET_KEY] = hook_context[BUDGET_KEY]
            inputs["hook_context"] = SharedContext(shared)
        return run, inputs

    def _note(self, subtopic: str, run: ResearchRun | None, result: dict[str, Any]) -> dict[str, Any]:
        last = result.get("last_message")
        summary = (last.text if isinstance(last, ChatMessage) else None) or "The researcher returned no summary."
        reason = _PARTIAL_REASONS.get(str(result.get(EXIT_REASON)))
        note = render_text(NOTE, subtopic=subtopic, summary=summary.strip(), partial=reason is not None, reason=reason)
        outcome = {"note": note, "summary": summary, "partial": reason is not None}
        if run is not None:
            # Usage the researcher's budget hook already counted as it happened is not added twice.
            run.record_usage(PHASE_RESEARCH, usage_delta(result.get(TOKEN_USAGE), result.get(USAGE_RECORDED)))
            run.report(PHASE_RESEARCH, f"done{' (partial)' if reason else ''}: {subtopic}")
        return outcome

    def _failed(self, subtopic: str, run: ResearchRun | None, error: Exception) -> None:
        if run is not None:
            run.warn(PHASE_RESEARCH, f"the researcher for '{subtopic}' failed: {type(error).__name__}: {error}")

    def _research(self, subtopic: Any = None, hook_context: dict[str, Any] | None = None, **_: Any) -> dict[str, Any]:
        text = _subtopic_text(subtopic)
        if (resumed := resumed_note(hook_context, text)) is not None:
            return resumed
        run, inputs = self._start(text, hook_context)
        try:
            result = self.researcher.run(**inputs)
        except Exception as error:
            self._failed(text, run, error)
            raise
        outcome = self._note(text, run, result)
        journal_note(hook_context, text, outcome)
        return outcome

    async def _research_async(
        self, subtopic: Any = None, hook_context: dict[str, Any] | None = None, **_: Any
    ) -> dict[str, Any]:
        text = _subtopic_text(subtopic)
        if (resumed := resumed_note(hook_context, text)) is not None:
            return resumed
        run, inputs = self._start(text, hook_context)
        try:
            result = await self.researcher.run_async(**inputs)
        except Exception as error:
            self._failed(text, run, error)
            raise
        outcome = self._note(text, run, result)
        await asyncio.to_thread(journal_note, hook_context, text, outcome)  # fsync off the event loop
        return outcome

    def to_dict(self) -> dict[str, Any]:
        """
        :returns: The serialized tool, with the researcher agent nested.
        """
        return self._serialized(
            {
                "researcher": component_to_dict(obj=self.researcher, name="researcher"),
                "max_subtopics": self.max_subtopics,
            }
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ResearchSubtopicTool:
        """
        :param data: What ``to_dict`` returned.
        :returns: The tool.
        """
        params = dict(data["data"])
        deserialize_component_inplace(params, key="researcher")
        return cls(**params)
