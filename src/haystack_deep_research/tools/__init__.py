"""
The tools of the library: ``read_url`` (guarded fetch, extraction, summary) and ``think_tool``; the deep agent's
scratch-space files, todo list and ``task`` (subagents); all on the :class:`ResearchTool` base that works inside a
run, and the :class:`RunToolset` that gives each run its own copies. The search tools (``web_search``,
``search_<store>``) live in :mod:`haystack_deep_research.sources`, below this package.
"""

from haystack_deep_research._tooling.base import ResearchTool, RunToolset, bind_tools
from haystack_deep_research._tooling.coercion import coerce_arguments
from haystack_deep_research.tools.filesystem import FilesystemTool, create_filesystem_tools
from haystack_deep_research.tools.read_url import ReadUrlTool
from haystack_deep_research.tools.scratch import DiskBackend, MemoryBackend, ScratchBackend
from haystack_deep_research.tools.task import SubAgentDef, TaskTool
from haystack_deep_research.tools.think import create_think_tool
from haystack_deep_research.tools.todos import Todo, TodoState, TodoTool, create_todo_tools

__all__ = [
    "DiskBackend",
    "FilesystemTool",
    "MemoryBackend",
    "ReadUrlTool",
    "ResearchTool",
    "RunToolset",
    "ScratchBackend",
    "SubAgentDef",
    "TaskTool",
    "Todo",
    "TodoState",
    "TodoTool",
    "bind_tools",
    "coerce_arguments",
    "create_filesystem_tools",
    "create_think_tool",
    "create_todo_tools",
]
