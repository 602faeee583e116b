"""
``ResearchAgent``: Haystack's ``Agent`` with a guarantee its hooks cannot give.

**Bad input gets a typed error.** Haystack's ``Agent.run`` handles ``messages`` before any hook runs, and a
  ``messages`` that is not a list of ``ChatMessage`` (a string, a bare message, a list of strings or dicts) fails
  there with a ``TypeError`` or an ``AttributeError``. ``ResearchAgent`` checks ``messages`` and ``hook_context``
  first and raises :class:`~haystack_deep_research.errors.InvalidQuestionError` /
  :class:`~haystack_deep_research.errors.ConfigurationError` naming the fix.

Everything else is Haystack's. A ``ResearchAgent`` serializes as the plain ``Agent`` it is configured as, so
``Agent.from_dict`` and Pipeline YAML keep working; what they restore is a plain ``Agent``, which runs the same and
keeps every check its hooks make, but not this one.
"""

from __future__ import annotations

from typing import Any

from haystack.components.agents import Agent
from haystack.core.serialization import generate_qualified_class_name
from haystack.dataclasses import ChatMessage, StreamingCallbackT
from haystack.tools import ToolsType

from haystack_deep_research.run.entry import check_hook_context, check_messages

__all__ = ["ResearchAgent"]


class ResearchAgent(Agent):
    """
    A Haystack ``Agent`` that refuses malformed run input with typed errors (see the module docstring). Constructed
    exactly like ``Agent``.
    """

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
        """
        Check the input, then run the Agent.

        :param messages: A list of ``ChatMessage``.
        :param streaming_callback: As for ``Agent.run``.
        :param generation_kwargs: As for ``Agent.run``.
        :param tools: As for ``Agent.run``.
        :param hook_context: A dict of run-time inputs for the hooks, or ``None``.
        :param kwargs: Every other input of ``Agent.run``.
        :returns: What ``Agent.run`` returns.
        :raises InvalidQuestionError: If ``messages`` is not a list of ``ChatMessage``.
        :raises ConfigurationError: If ``hook_context`` is not a dict.
        """
        check_messages(messages)
        return super().run(
            messages,
            streaming_callback,
            generation_kwargs=generation_kwargs,
            tools=tools,
            hook_context=check_hook_context(hook_context),
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
        """
        Check the input, then run the Agent on the event loop.

        :param messages: A list of ``ChatMessage``.
        :param streaming_callback: As for ``Agent.run_async``.
        :param generation_kwargs: As for ``Agent.run_async``.
        :param tools: As for ``Agent.run_async``.
        :param hook_context: A dict of run-time inputs for the hooks, or ``None``.
        :param kwargs: Every other input of ``Agent.run_async``.
        :returns: What ``Agent.run_async`` returns.
        :raises InvalidQuestionError: If ``messages`` is not a list of ``ChatMessage``.
        :raises ConfigurationError: If ``hook_context`` is not a dict.
        """
        check_messages(messages)
        return await super().run_async(
            messages,
            streaming_callback,
            generation_kwargs=generation_kwargs,
            tools=tools,
            hook_context=check_hook_context(hook_context),
            **kwargs,
        )

    def to_dict(self) -> dict[str, Any]:
        """
        :returns: The serialized agent, as the plain ``Agent`` it is configured as.
        """
        data = super().to_dict()
        data["type"] = generate_qualified_class_name(Agent)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ResearchAgent:
        """
        :param data: What ``to_dict`` (of this class or of ``Agent``) returned.
        :returns: The agent, a ``ResearchAgent``.
        """
        return super().from_dict({**data, "type": generate_qualified_class_name(cls)})  # type: ignore[return-value]
