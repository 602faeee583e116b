"""
``ResearchAgent``: Haystack's ``Agent`` with two guarantees its hooks cannot give.

- **Bad input gets a typed error.** Haystack's ``Agent.run`` handles ``messages`` before any hook runs, and a
  ``messages`` that is not a list of ``ChatMessage`` (a string, a bare message, a list of strings or dicts) fails
  there with a ``TypeError`` or an ``AttributeError``. ``ResearchAgent`` checks ``messages`` and ``hook_context``
  first and raises :class:`~haystack_deep_research.errors.InvalidQuestionError` /
  :class:`~haystack_deep_research.errors.ConfigurationError` naming the fix.
- **A failed run releases what it opened.** Haystack runs no ``after_run`` hook after an exception, so a run that
  fails (its model raises before any research, it is cancelled) would keep its run directory locked until garbage
  collection. ``ResearchAgent`` hands the run a :class:`~haystack_deep_research.run.RunGuard` and closes it when
  ``run`` / ``run_async`` returns or raises.

Everything else is Haystack's. A ``ResearchAgent`` serializes as the plain ``Agent`` it is configured as, so
``Agent.from_dict`` and Pipeline YAML keep working; what they restore is a plain ``Agent``, which runs the same and
keeps every check its hooks make, but not these two.
"""

from __future__ import annotations

from typing import Any

from haystack.components.agents import Agent
from haystack.core.serialization import generate_qualified_class_name
from haystack.dataclasses import ChatMessage, StreamingCallbackT
from haystack.tools import ToolsType

from haystack_deep_research.run.door import RunGuard, check_hook_context, check_messages
from haystack_deep_research.state import RUN_GUARD_KEY, STREAMING_KEY

__all__ = ["ResearchAgent"]


class ResearchAgent(Agent):
    """
    A Haystack ``Agent`` that refuses malformed run input with typed errors and closes a failed run (see the module
    docstring). Constructed exactly like ``Agent``.
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
        Check the input, then run the Agent; what the run opened is closed however it ends.

        :param messages: A list of ``ChatMessage``.
        :param streaming_callback: As for ``Agent.run``; without one, the ``STREAMING_KEY`` callback of
            ``hook_context`` (if any), so the agent's own model streams like every other model of the run.
        :param generation_kwargs: As for ``Agent.run``.
        :param tools: As for ``Agent.run``.
        :param hook_context: A dict of run-time inputs for the hooks, or ``None``.
        :param kwargs: Every other input of ``Agent.run``.
        :returns: What ``Agent.run`` returns.
        :raises InvalidQuestionError: If ``messages`` is not a list of ``ChatMessage``.
        :raises ConfigurationError: If ``hook_context`` is not a dict.
        """
        guard, context = _guarded(messages, hook_context)
        try:
            return super().run(
                messages,
                streaming_callback or context.get(STREAMING_KEY),
                generation_kwargs=generation_kwargs,
                tools=tools,
                hook_context=context,
                **kwargs,
            )
        finally:
            guard.close()

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
        Check the input, then run the Agent on the event loop; what the run opened is closed however it ends.

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
        guard, context = _guarded(messages, hook_context)
        try:
            return await super().run_async(
                messages,
                streaming_callback or context.get(STREAMING_KEY),
                generation_kwargs=generation_kwargs,
                tools=tools,
                hook_context=context,
                **kwargs,
            )
        finally:
            guard.close()

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


def _guarded(messages: Any, hook_context: Any) -> tuple[RunGuard, dict[str, Any]]:
    check_messages(messages)
    guard = RunGuard()
    return guard, {**check_hook_context(hook_context), RUN_GUARD_KEY: guard}
