"""
Subagents: the deep agent hands a self-contained task to a named subagent through the ``task`` tool. Each call runs
the subagent once on its own view of the parent's run, and only its final answer comes back (docs/deep-agent.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from haystack.components.agents import Agent
from haystack.core.serialization import component_to_dict
from haystack.dataclasses import ChatMessage
from haystack.tools import Tool, Toolset
from haystack.utils.deserialization import deserialize_component_inplace

from haystack_deep_research import _checks
from haystack_deep_research._prompts import SUBAGENT_EMPTY, TASK, TASK_DESCRIPTION, TASK_INVALID, render_text
from haystack_deep_research._tooling.base import ResearchTool, bind_tools
from haystack_deep_research.errors import ConfigurationError, ToolArgumentsError
from haystack_deep_research.events import SubagentCompleted, SubagentFailed, SubagentSpawned
from haystack_deep_research.run import RunView
from haystack_deep_research.run._phases import Call, Phase, for_async, for_sync
from haystack_deep_research.state import EXIT_REASON, EXIT_TEXT, PHASE_SUBAGENT, RUN_KEY

__all__ = ["SubAgentDef", "TaskTool"]

_NAME_LIMIT = 64


@dataclass(frozen=True)
class SubAgentDef:
    """
    One subagent the deep agent can hand tasks to.

    :param name: Its name, how the parent picks it (letters, digits, ``_`` and ``-``).
    :param description: What it is good for; the parent reads it to choose.
    :param system_prompt: Its instructions.
    :param tools: Its tools (Haystack Tools or Toolsets).
    :param max_iterations: Its step limit, 1 to 200.
    :param chat_generator: Its model; ``None`` uses the parent's.
    :raises ConfigurationError: If a field is invalid.
    """

    name: str
    description: str
    system_prompt: str
    tools: Sequence[Tool | Toolset] = field(default_factory=list)
    max_iterations: int = 10
    chat_generator: Any = None

    def __post_init__(self) -> None:
        valid = isinstance(self.name, str) and 0 < len(self.name) <= _NAME_LIMIT
        if not valid or not all(c.isalnum() or c in "_-" for c in self.name):
            raise ConfigurationError(
                f"SubAgentDef.name must be 1 to {_NAME_LIMIT} letters, digits, '_' or '-'; got {self.name!r}."
            )
        for label in ("description", "system_prompt"):
            if not isinstance(getattr(self, label), str) or not getattr(self, label).strip():
                raise ConfigurationError(f"SubAgentDef.{label} must be a non-empty string (subagent {self.name!r}).")
        _checks.int_in_range("max_iterations", self.max_iterations, 1, 200)
        if self.chat_generator is not None:
            _checks.chat_generator(f"subagent {self.name!r} chat_generator", self.chat_generator, needs_tools=True)


class TaskTool(ResearchTool):
    """The ``task`` tool: run one subagent (by name: its description and its Agent) on one task, return its answer."""

    def __init__(self, *, subagents: Mapping[str, tuple[str, Agent]]) -> None:
        if not subagents:
            raise ConfigurationError("TaskTool needs at least one subagent.")
        for name, entry in subagents.items():
            if not (isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[1], Agent)):
                raise ConfigurationError(f"subagent {name!r} must be (description, Agent); got {entry!r}.")
        self.subagents = dict(subagents)
        names = sorted(self.subagents)
        super().__init__(
            name=TASK,
            description=render_text(TASK_DESCRIPTION, subagents=[(name, self.subagents[name][0]) for name in names]),
            parameters={
                "type": "object",
                "properties": {"subagent_type": {"type": "string", "enum": names}, "task": {"type": "string"}},
                "required": ["subagent_type", "task"],
            },
        )

    def _used_models(self) -> list[Any]:
        return [agent for _, agent in self.subagents.values()]

    def phase(self, view: RunView | None, subagent_type: Any = None, task: Any = None, **_: Any) -> Phase[str]:
        """The phase runs the subagent on ``task`` (all it sees) and returns its final answer."""
        if subagent_type not in self.subagents or not isinstance(task, str) or not task.strip():
            raise ToolArgumentsError(
                render_text(TASK_INVALID, names=sorted(self.subagents), got=repr(subagent_type), task=repr(task)[:80])
            )
        name, text = str(subagent_type), task.strip()
        agent = self.subagents[name][1]
        inputs: dict[str, Any] = {"messages": [ChatMessage.from_user(text)]}
        streaming = None
        if view is not None:
            child = RunView(view.run, researcher=name, phase=PHASE_SUBAGENT)
            inputs.update(hook_context={RUN_KEY: child}, tools=bind_tools(agent.tools, child))
            streaming = view.run.streaming_callback
            view.emit(SubagentSpawned(phase=PHASE_SUBAGENT, subtopic=text, agent=name))
        sync_stream, async_stream = for_sync(streaming, "subagent", name), for_async(streaming, "subagent", name)
        [ran] = yield [
            Call(
                lambda: agent.run(**inputs, streaming_callback=sync_stream),
                lambda: agent.run_async(**inputs, streaming_callback=async_stream),
            )
        ]
        if ran.error is not None:
            if view is not None:
                why = f"{type(ran.error).__name__}: {ran.error}"
                view.warn(PHASE_SUBAGENT, f"subagent {name} failed: {why}")
                view.emit(SubagentFailed(phase=PHASE_SUBAGENT, subtopic=text, error=why, agent=name))
            raise ran.error
        last = ran.value.get("last_message")
        answer = ((last.text if isinstance(last, ChatMessage) else None) or "").strip()
        answer = answer or render_text(SUBAGENT_EMPTY, name=name)
        if view is not None:
            partial = ran.value.get(EXIT_REASON) != EXIT_TEXT
            view.emit(SubagentCompleted(phase=PHASE_SUBAGENT, subtopic=text, note=answer, partial=partial, agent=name))
        return answer

    def to_dict(self) -> dict[str, Any]:
        """:returns: The serialized tool, with each subagent's Agent nested."""
        subagents = {
            name: {"description": description, "agent": component_to_dict(obj=agent, name=name)}
            for name, (description, agent) in self.subagents.items()
        }
        return self._serialized({"subagents": subagents})

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TaskTool:
        """Rebuild the tool from what ``to_dict`` returned."""
        subagents = {}
        for name, entry in data["data"]["subagents"].items():
            holder = dict(entry)
            deserialize_component_inplace(holder, key="agent")
            subagents[name] = (holder["description"], holder["agent"])
        return cls(subagents=subagents)
