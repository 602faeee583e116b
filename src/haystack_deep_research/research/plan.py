"""
Planning a step's delegations: the orchestrator's ``before_tool`` hook records the sub-topics of a turn in the order
the model asked for them, before they run side by side. Their notes keep that order whatever order they finish in,
and progress shows how many sub-topics are planned.
"""

from __future__ import annotations

from haystack.components.agents.state import State
from haystack.dataclasses import ChatMessage

from haystack_deep_research._prompts import RESEARCH_SUBTOPIC
from haystack_deep_research._serialization import InitSerialized
from haystack_deep_research.research.tool_calls import announce_calls
from haystack_deep_research.run._lifecycle import view_of
from haystack_deep_research.state import MESSAGES

__all__ = ["PlanHook"]


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
