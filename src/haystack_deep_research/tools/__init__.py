"""
The tools of the library: ``read_url`` (guarded fetch, extraction, summary) and ``think_tool``; the deep agent's
scratch-space files, todo list and ``task`` (subagents); all on the :class:`ResearchTool` base that works inside a
run, and the :class:`RunToolset` that gives each run its own copies. The search tools (``web_search``,
``search_<store>``) live in :mod:`haystack_deep_research.sources`, below this package.
"""

from haystack_deep_research._tooling.base import ResearchTool, RunToolset, coerce_arguments
from haystack_deep_research.tools.filesystem import DiskBackend, MemoryBackend, ScratchBackend
from haystack_deep_research.tools.read_url import ReadUrlTool
from haystack_deep_research.tools.task import SubAgentDef
from haystack_deep_research.tools.todos import TodoState

__all__ = [
    "DiskBackend",
    "MemoryBackend",
    "ReadUrlTool",
    "ResearchTool",
    "RunToolset",
    "ScratchBackend",
    "SubAgentDef",
    "TodoState",
    "coerce_arguments",
]
