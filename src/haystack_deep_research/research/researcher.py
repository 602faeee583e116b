"""
The researcher Agent, built in one place for every shape that runs one: the deep research agent's sub-researchers,
the research workflow's Execute agent and the deep agent's subagents.

A researcher is a Haystack ``Agent`` whose model call is bounded by the run's time budget, whose plain tools are bound
to its run (a ``RunToolset``), and whose hooks are the library's: the budget (``before_llm``), the loop guard
(``before_tool``), search snippets leaving the context once used (``after_tool``) and the final summary that keeps
what it gathered when it stops early (``after_run``). Streaming reaches its tools (Haystack's passthrough).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from haystack.components.agents import Agent
from haystack.tools import Tool, Toolset

from haystack_deep_research._tooling.base import RunToolset
from haystack_deep_research.research.final_summary import FinalSummaryHook
from haystack_deep_research.research.loop_guard import LoopGuardHook
from haystack_deep_research.research.tool_calls import ToolResultsHook
from haystack_deep_research.run._lifecycle import BudgetHook
from haystack_deep_research.run._phases import DeadlineChatGenerator
from haystack_deep_research.state import researcher_state_schema

__all__ = ["researcher_agent"]


def researcher_agent(
    *,
    chat_generator: Any,
    tools: Sequence[Tool | Toolset],
    system_prompt: str,
    max_steps: int,
    loop_threshold: int,
) -> Agent:
    """
    :param chat_generator: The researcher's model; it must support tools.
    :param tools: Its tools: plain Tools (bound to each run) and Toolsets (a datastore's, an MCP server's, ...).
    :param system_prompt: Its instructions.
    :param max_steps: Steps of its tool loop; at the limit it still summarizes what it gathered.
    :param loop_threshold: Identical tool calls in a row that make a loop (see ``LoopGuardHook``).
    :returns: The Agent.
    """
    plain = [tool for tool in tools if isinstance(tool, Tool)]
    toolsets = [tool for tool in tools if isinstance(tool, Toolset)]
    return Agent(
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
