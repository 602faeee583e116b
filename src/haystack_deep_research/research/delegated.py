"""
Ending the orchestrator's loop once there is nothing left for it to decide.

The orchestrator's tools are ``research_subtopic`` and ``think_tool``. Once the run has delegated every sub-topic it
may (``max_subtopics``) and the researchers' notes are back, a further orchestrator turn can only reflect or say that
research is complete: a new delegation would be refused. :class:`DelegationsDoneHook`, the orchestrator's
``before_llm`` hook (the run's :class:`~haystack_deep_research.run._lifecycle.BudgetHook`, which it extends, first),
stops the loop there, before that turn is sent, with ``exit_reason`` ``"subtopics_done"``; the writer then writes the
report from the notes as after any other end of the loop. The turn it saves is the orchestrator's longest (it reads
every note) and it sits on the run's critical path, between the last researcher and the writer.

The loop is not ended while the orchestrator has any other tool (a caller's own agent built with more tools), while
slots are left (a sub-topic a person dropped at plan review, a refused call, a sub-topic answered from a resumed
run's directory), or before the orchestrator has run a tool in this run.
"""

from __future__ import annotations

from typing import Any

from haystack.components.agents.state import State
from haystack.dataclasses import ChatMessage, ChatRole

from haystack_deep_research._prompts import RESEARCH_SUBTOPIC, THINK
from haystack_deep_research.research.subtopic import ResearchSubtopicTool
from haystack_deep_research.run._lifecycle import BudgetHook, view_of
from haystack_deep_research.state import EXIT_SUBTOPICS_DONE, MESSAGES, STOP_RUN, TOOLS

__all__ = ["DelegationsDoneHook"]

_OWN_TOOLS = frozenset({RESEARCH_SUBTOPIC, THINK})


def _subtopic_tool(tools: Any) -> ResearchSubtopicTool | None:
    """The orchestrator's ``research_subtopic`` tool when its tools are the library's own two, else ``None``."""
    if not isinstance(tools, list) or any(getattr(tool, "name", None) not in _OWN_TOOLS for tool in tools):
        return None
    return next((tool for tool in tools if isinstance(tool, ResearchSubtopicTool)), None)


class DelegationsDoneHook(BudgetHook):
    """
    ``before_llm`` of the orchestrator: the run's budget check, then stop the loop once every sub-topic slot is used
    (see the module docstring).
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
