"""
The sub-researcher: an Agent of its own, exposed to the orchestrator as the ``research_subtopic`` tool.

Each call runs the researcher in a fresh State with its own view of the run, so researchers never see each other's
context while their tools record into the one run. Only the researcher's final summary comes back, as a note: it is
the tool result the orchestrator sees and it joins the run's notes for the writer. A researcher that reaches its
step limit, is stopped by the loop guard, or runs out of the run's budget still returns a summary of what it
gathered, marked as partial. No researcher starts once the run's budget is spent, and a sub-topic an earlier attempt
of the run completed is answered from the run directory (see :mod:`haystack_deep_research.run._lifecycle`).
"""

from __future__ import annotations

from typing import Any

from haystack.components.agents import Agent
from haystack.dataclasses import ChatMessage

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
    render_text,
    render_user,
)
from haystack_deep_research._tooling.base import bind_tools
from haystack_deep_research.errors import (
    BudgetExceededError,
    ConfigurationError,
    DelegationLimitError,
    ToolArgumentsError,
)
from haystack_deep_research.events import SubagentCompleted, SubagentFailed, SubagentSpawned
from haystack_deep_research.evidence.clock import today
from haystack_deep_research.run import RunView
from haystack_deep_research.run._journal import JournaledNote
from haystack_deep_research.run._lifecycle import journal_note, resumed_note
from haystack_deep_research.run._phases import Call, Phase, for_async, for_sync
from haystack_deep_research.state import EXIT_REASON, PHASE_RESEARCH, RUN_KEY
from haystack_deep_research.tools import ResearchTool

__all__ = ["ResearchSubtopicTool"]


def _subtopic_text(subtopic: Any) -> str:
    if not isinstance(subtopic, str) or not subtopic.strip():
        raise ToolArgumentsError(render_text(SUBTOPIC_MISSING, got=repr(subtopic)))
    return subtopic.strip()


class ResearchSubtopicTool(ResearchTool):
    """
    The orchestrator's ``research_subtopic`` tool: run one sub-researcher on one sub-topic in its own State.

    The tool result, and the note added to the run's ``notes``, is the researcher's final summary under the sub-topic
    as a heading, marked as partial when the researcher stopped early. The run's ``max_subtopics`` is enforced here:
    a delegation beyond it is refused with a tool error and not run.

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
            name=RESEARCH_SUBTOPIC,
            description=RESEARCH_SUBTOPIC_DESCRIPTION,
            parameters={
                "type": "object",
                "properties": {"subtopic": {"type": "string", "description": SUBTOPIC_PARAMETER}},
                "required": ["subtopic"],
            },
            outputs_to_string={"source": "note"},
        )

    def _used_models(self) -> list[Any]:
        return [self.researcher]

    def phase(self, view: RunView | None, subtopic: Any = None, **_: Any) -> Phase[dict[str, Any]]:
        """
        Research one sub-topic (or answer it from the run directory) and return its note.

        :param view: The orchestrator's view of the run, or ``None`` outside a run.
        :param subtopic: The model's sub-topic.
        :returns: The phase; it returns ``note``, ``summary`` and ``partial``.
        :raises ToolArgumentsError: (from the phase) If the sub-topic is missing or blank, or is an error message.
        :raises BudgetExceededError: (from the phase) If the run's budget is spent.
        :raises DelegationLimitError: (from the phase) If ``max_subtopics`` sub-topics were delegated already.
        """
        text = _subtopic_text(subtopic)
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
        note = _note(text, ran.value)
        if view is not None:
            view.run.add_notes([note.note], position=position)
            yield from journal_note(view, text, note)
            view.emit(SubagentCompleted(phase=PHASE_RESEARCH, subtopic=text, note=note.note, partial=note.partial))
        return _result(note)


def _note(subtopic: str, result: dict[str, Any]) -> JournaledNote:
    last = result.get("last_message")
    summary = (last.text if isinstance(last, ChatMessage) else None) or "The researcher returned no summary."
    reason = PARTIAL_REASONS.get(str(result.get(EXIT_REASON)))
    note = render_text(NOTE, subtopic=subtopic, summary=summary.strip(), partial=reason is not None, reason=reason)
    return JournaledNote(subtopic=subtopic, note=note, summary=summary, partial=reason is not None)


def _result(note: JournaledNote) -> dict[str, Any]:
    return {"note": note.note, "summary": note.summary, "partial": note.partial}
