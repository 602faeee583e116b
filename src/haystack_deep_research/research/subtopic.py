"""
The sub-researcher, exposed to the orchestrator as the ``research_subtopic`` tool, and the orchestrator's hooks
(:class:`PlanHook`, :class:`DelegationsDoneHook`); see docs/how-it-works.md. Each call runs the researcher in a fresh
State with its own view of the run; only its final summary comes back, as a note.

:func:`researcher_agent` builds the researcher Agent of every shape that runs one (the deep research agent's
sub-researchers, the workflow's Execute agent, the deep agent's subagents), with the library's hooks.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from haystack import component
from haystack.components.agents import Agent
from haystack.components.agents.state import State
from haystack.dataclasses import ChatMessage, ChatRole, StreamingCallbackT
from haystack.tools import Tool, Toolset, ToolsType

from haystack_deep_research import _checks
from haystack_deep_research._prompts import (
    NOTE,
    PARTIAL_REASONS,
    RESEARCH_SUBTOPIC,
    RESEARCH_SUBTOPIC_DESCRIPTION,
    RESEARCHER_TASK,
    SUBTOPIC_IS_ERROR,
    SUBTOPIC_MISSING,
    SUBTOPIC_PARAMETER,
    THINK,
    render_text,
    render_user,
)
from haystack_deep_research._serialization import InitSerialized
from haystack_deep_research._tooling.base import RunToolset, bind_tools
from haystack_deep_research.errors import (
    BudgetExceededError,
    ConfigurationError,
    DelegationLimitError,
    ToolArgumentsError,
)
from haystack_deep_research.events import SubagentCompleted, SubagentFailed, SubagentSpawned
from haystack_deep_research.evidence.clock import today
from haystack_deep_research.research.final_summary import FinalSummaryHook
from haystack_deep_research.research.loop_guard import LoopGuardHook
from haystack_deep_research.research.tool_calls import ToolResultsHook, announce_calls
from haystack_deep_research.run import RunView
from haystack_deep_research.run._journal import JournaledNote
from haystack_deep_research.run._lifecycle import BudgetHook, journal_note, resumed_note, view_of
from haystack_deep_research.run._phases import Call, DeadlineChatGenerator, Phase, for_async, for_sync
from haystack_deep_research.state import (
    EXIT_REASON,
    EXIT_SUBTOPICS_DONE,
    MESSAGES,
    PHASE_RESEARCH,
    RUN_KEY,
    STOP_RUN,
    TOOLS,
    researcher_state_schema,
)
from haystack_deep_research.tools import ResearchTool

__all__ = [
    "DelegationsDoneHook",
    "InstructedAgent",
    "PlanHook",
    "ResearchSubtopicTool",
    "agent_note",
    "researcher_agent",
]


@component
class InstructedAgent(Agent):
    """
    Haystack's ``Agent`` whose ``system_prompt`` is its instructions as written, not a Jinja template: each run sends
    it, when it has text, as the first message. So braces in a caller's instructions or a store's description reach
    the model as given (``Agent`` reads ``{{ x }}`` as an input to fill and fails on a stray ``{%``), and the prompt
    is not compiled again on every run. Constructed, run and serialized exactly like ``Agent``.
    """

    @functools.wraps(Agent.__init__)  # type: ignore[misc]  # Agent's signature, which clone() reads
    def __init__(self, *, system_prompt: str | None = None, **kwargs: Any) -> None:
        Agent.__init__(self, **kwargs)  # named, not super(): @component builds the class anew
        self.system_prompt = system_prompt

    def run(
        self,
        messages: list[ChatMessage],
        streaming_callback: StreamingCallbackT | None = None,
        *,
        generation_kwargs: dict[str, Any] | None = None,
        tools: ToolsType | list[str] | None = None,
        hook_context: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        """As ``Agent.run``, with the instructions first."""
        return Agent.run(
            self,
            self._instructed(messages),
            streaming_callback,
            generation_kwargs=generation_kwargs,
            tools=tools,
            hook_context=hook_context,
            **kwargs,
        )

    async def run_async(
        self,
        messages: list[ChatMessage],
        streaming_callback: StreamingCallbackT | None = None,
        *,
        generation_kwargs: dict[str, Any] | None = None,
        tools: ToolsType | list[str] | None = None,
        hook_context: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        """As ``Agent.run_async``, with the instructions first."""
        return await Agent.run_async(
            self,
            self._instructed(messages),
            streaming_callback,
            generation_kwargs=generation_kwargs,
            tools=tools,
            hook_context=hook_context,
            **kwargs,
        )

    def _instructed(self, messages: list[ChatMessage]) -> list[ChatMessage]:
        if not self.system_prompt or not isinstance(messages, list):  # a malformed list is refused where it is run
            return messages
        return [ChatMessage.from_system(self.system_prompt), *messages]


class ResearchSubtopicTool(ResearchTool):
    """
    The orchestrator's ``research_subtopic`` tool: run the ``researcher`` Agent on one sub-topic in its own State; the
    result, and the run's note, is its final summary under the sub-topic as a heading (marked partial when it stopped
    early). The run's ``max_subtopics`` (1 to 50) is enforced here: a delegation beyond it is a tool error, not run.
    """

    _model_attributes = ("researcher",)

    def __init__(self, *, researcher: Agent, max_subtopics: int = 5) -> None:
        if not isinstance(researcher, Agent):
            raise ConfigurationError(f"researcher must be a Haystack Agent; got {type(researcher).__name__}.")
        self.researcher = researcher
        self.max_subtopics = _checks.int_in_range("max_subtopics", max_subtopics, 1, 50)
        super().__init__(
            name=RESEARCH_SUBTOPIC,
            description=RESEARCH_SUBTOPIC_DESCRIPTION,
            parameters={
                "type": "object",
                "properties": {"subtopic": {"type": "string", "description": SUBTOPIC_PARAMETER}},
                "required": ["subtopic"],
            },
            outputs_to_string={"source": "note"},
        )

    def phase(self, view: RunView | None, subtopic: Any = None, **_: Any) -> Phase[dict[str, Any]]:
        """
        Research one sub-topic (or answer it from the run directory); the phase returns ``note``, ``summary`` and
        ``partial``, and raises ``ToolArgumentsError`` (a missing sub-topic, or an error message),
        ``BudgetExceededError`` or ``DelegationLimitError``.
        """
        if not isinstance(subtopic, str) or not subtopic.strip():
            raise ToolArgumentsError(render_text(SUBTOPIC_MISSING, got=repr(subtopic)))
        text = subtopic.strip()
        position: int | None = None
        inputs: dict[str, Any] = {"messages": [render_user(RESEARCHER_TASK, today=today(), subtopic=text)]}
        if view is not None:
            if view.run.searches.echoes_error(text):  # a tool's or model's error text is never a sub-topic
                raise ToolArgumentsError(render_text(SUBTOPIC_IS_ERROR))
            restored = resumed_note(view, text)
            if restored is not None:
                view.run.add_notes([restored.note])
                view.emit(SubagentCompleted(phase=PHASE_RESEARCH, subtopic=text, note=restored.note, restored=True))
                return _result(restored)
            if (reason := view.spent()) is not None:
                budget = view.run.budget.describe(reason)
                raise BudgetExceededError(f"the {budget} for this run is spent, so '{text}' was not researched.")
            slot = view.run.claim_subtopic(self.max_subtopics)
            if slot is None:
                raise DelegationLimitError(
                    f"the limit of {self.max_subtopics} sub-topics for this run is reached, so '{text}' was not "
                    "researched."
                )
            position = view.run.position(text)
            planned = max(view.run.planned(), slot)
            spawned = SubagentSpawned(
                phase=PHASE_RESEARCH, subtopic=text, slot=slot, planned=planned, limit=self.max_subtopics
            )
            view.emit(spawned)
            child = view.run.researcher(text)
            inputs.update(hook_context={RUN_KEY: child}, tools=bind_tools(self.researcher.tools, child))
        streaming = view.run.streaming_callback if view is not None else None
        [ran] = yield [
            Call(
                lambda: self.researcher.run(**inputs, streaming_callback=for_sync(streaming, "researcher", text)),
                lambda: self.researcher.run_async(
                    **inputs, streaming_callback=for_async(streaming, "researcher", text)
                ),
            )
        ]
        if ran.error is not None:
            if view is not None:
                why = f"{type(ran.error).__name__}: {ran.error}"
                view.warn(PHASE_RESEARCH, f"the researcher for '{text}' failed: {why}")
                view.emit(SubagentFailed(phase=PHASE_RESEARCH, subtopic=text, error=why))
            raise ran.error
        note = agent_note(text, ran.value)
        if view is not None:
            view.run.add_notes([note.note], position=position)
            yield from journal_note(view, text, note)
            view.emit(SubagentCompleted(phase=PHASE_RESEARCH, subtopic=text, note=note.note, partial=note.partial))
        return _result(note)


def agent_note(
    subtopic: str, result: dict[str, Any], missing: str = "The researcher returned no summary."
) -> JournaledNote:
    """The note of an Agent's run on ``subtopic``: its final reply (``missing`` without one), partial if it stopped."""
    last = result.get("last_message")
    summary = (last.text if isinstance(last, ChatMessage) else None) or missing
    reason = PARTIAL_REASONS.get(str(result.get(EXIT_REASON)))
    note = render_text(NOTE, subtopic=subtopic, summary=summary.strip(), partial=reason is not None, reason=reason)
    return JournaledNote(subtopic=subtopic, note=note, summary=summary, partial=reason is not None)


def _result(note: JournaledNote) -> dict[str, Any]:
    return {"note": note.note, "summary": note.summary, "partial": note.partial}


class PlanHook(InitSerialized):
    """
    ``before_tool`` of the orchestrator: plan this step's ``research_subtopic`` calls, in the model's order, and
    announce the step's calls (``ToolCalled``).
    """

    allowed_hook_points = ("before_tool",)

    def run(self, state: State) -> None:
        view = view_of(state)
        messages: list[ChatMessage] = state.data.get(MESSAGES) or []
        if view is None or not messages:
            return
        subtopics = [
            call.arguments["subtopic"]
            for call in messages[-1].tool_calls
            if call.tool_name == RESEARCH_SUBTOPIC
            and isinstance(call.arguments.get("subtopic"), str)
            and call.arguments["subtopic"].strip()
            and not view.run.searches.echoes_error(call.arguments["subtopic"])  # refused by the tool: never planned
        ]
        view.run.plan(subtopics)
        announce_calls(view, list(messages[-1].tool_calls))


_OWN_TOOLS = frozenset({RESEARCH_SUBTOPIC, THINK})


def _subtopic_tool(tools: Any) -> ResearchSubtopicTool | None:
    """The orchestrator's ``research_subtopic`` tool when its tools are the library's own two, else ``None``."""
    if not isinstance(tools, list) or any(getattr(tool, "name", None) not in _OWN_TOOLS for tool in tools):
        return None
    return next((tool for tool in tools if isinstance(tool, ResearchSubtopicTool)), None)


class DelegationsDoneHook(BudgetHook):
    """
    ``before_llm`` of the orchestrator: the run's budget check, then stop the loop (``subtopics_done``) once every
    sub-topic slot is used and the notes are back. Not while the orchestrator has another tool (a caller's own agent),
    while slots are left (a drop at plan review, a refused call, a note restored), or before it has run a tool.
    """

    def run(self, state: State) -> None:
        super().run(state)
        view = view_of(state)
        messages: list[ChatMessage] = state.data.get(MESSAGES) or []
        if view is None or state.data.get(STOP_RUN) is not None or not messages:
            return
        if messages[-1].role is not ChatRole.TOOL:  # only right after the tools of a step ran
            return
        tool = _subtopic_tool(state.data.get(TOOLS))
        if tool is not None and view.run.delegations_left(tool.max_subtopics) == 0:
            state.set(STOP_RUN, EXIT_SUBTOPICS_DONE)


def researcher_agent(
    *,
    chat_generator: Any,
    tools: Sequence[Tool | Toolset],
    system_prompt: str,
    max_steps: int,
    loop_threshold: int,
) -> InstructedAgent:
    """The researcher Agent: the model (it must support tools), its tools (plain ones bound to each run), its
    instructions, its steps (at the limit it still summarizes) and the loop guard's threshold."""
    plain = [tool for tool in tools if isinstance(tool, Tool)]
    toolsets = [tool for tool in tools if isinstance(tool, Toolset)]
    return InstructedAgent(
        chat_generator=DeadlineChatGenerator(chat_generator=chat_generator),
        tools=[RunToolset(tools=plain), *toolsets] if plain else toolsets,
        system_prompt=system_prompt,
        state_schema=researcher_state_schema(),
        max_agent_steps=max_steps,
        tool_streaming_callback_passthrough=True,
        hooks={
            "before_llm": [BudgetHook()],
            "before_tool": [LoopGuardHook(threshold=loop_threshold)],
            "after_tool": [ToolResultsHook()],
            "after_run": [FinalSummaryHook(chat_generator=chat_generator)],
        },
    )
