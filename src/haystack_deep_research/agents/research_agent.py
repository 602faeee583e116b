"""
``ResearchAgent``: Haystack's ``Agent`` with what the run contract adds at its door (see
:mod:`haystack_deep_research.run._lifecycle`): the one ``run(messages, streaming_callback=None, *, hook_context=None,
inputs=None)`` of every shape, typed errors for malformed input, a ``RunGuard`` that closes what a failed run opened,
and :meth:`ResearchAgent.ask`. It serializes as itself.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from haystack import component
from haystack.dataclasses import ChatMessage, StreamingCallbackT
from haystack.tools import Toolset, ToolsType

from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.report.ask import TopicResearcher, ask_report, subtopic_researcher
from haystack_deep_research.research.subtopic import InstructedAgent, ResearchSubtopicTool
from haystack_deep_research.run import RunInputs
from haystack_deep_research.run._lifecycle import RunGuard, check_hook_context, check_messages, run_inputs
from haystack_deep_research.state import INPUTS_KEY, RUN_GUARD_KEY
from haystack_deep_research.tools.task import TaskTool

__all__ = ["ResearchAgent"]


class AskMixin:
    """:meth:`ask` for every shape, which names its writer and its researcher of sub-topics."""

    def ask(
        self, run_dir_or_result: str | os.PathLike[str] | Mapping[str, Any], question: str, *, research: bool = False
    ) -> dict[str, Any]:
        """
        Answer a question from a finished run's evidence, with this shape's writer (see
        :func:`~haystack_deep_research.report.ask.ask_report`).

        :param run_dir_or_result: The run's directory, or the result its ``run`` returned.
        :param question: The question.
        :param research: When the evidence does not answer it, research it as one sub-topic with this shape's own
            researcher and sources (the deep research agent's researcher, a deep agent's first subagent, the
            workflow's Execute agent, the iterative agent's search step), into the run directory, and answer again.
        :returns: As ``ask_report`` returns: ``answer``, ``answered``, ``citations``, ``researched``, ...
        :raises ConfigurationError: If ``research=True`` and this shape has no researcher of sub-topics (a deep
            agent without subagents), or is given a result.
        """
        writer = self._writer()
        researcher = self._researcher() if research else None
        return ask_report(run_dir_or_result, question, chat_generator=writer, research=research, researcher=researcher)

    def _writer(self) -> Any:
        raise NotImplementedError

    def _researcher(self) -> TopicResearcher:
        raise NotImplementedError


@component
class ResearchAgent(AskMixin, InstructedAgent):
    """
    A Haystack ``Agent`` that takes the run's inputs as one value, refuses malformed run input with typed errors and
    closes a failed run. Constructed exactly like ``Agent``.
    """

    def run(
        self,
        messages: list[ChatMessage],
        streaming_callback: StreamingCallbackT | None = None,
        *,
        generation_kwargs: dict[str, Any] | None = None,
        tools: ToolsType | list[str] | None = None,
        hook_context: dict[str, Any] | None = None,
        inputs: RunInputs | None = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        """
        Check the input, then run the Agent; what the run opened is closed however it ends.

        :param messages: A list of ``ChatMessage``.
        :param streaming_callback: A Haystack streaming callback every model of the run streams to (the agent's own
            and the library's); without one, ``inputs.streaming_callback``.
        :param generation_kwargs: As for ``Agent.run``.
        :param tools: As for ``Agent.run``.
        :param hook_context: A dict of request-scoped resources for the hooks (yours among them), or ``None``.
        :param inputs: The run's inputs (:class:`~haystack_deep_research.RunInputs`), or ``None``.
        :param kwargs: Every other input of ``Agent.run``.
        :returns: What ``Agent.run`` returns.
        :raises InvalidQuestionError: If ``messages`` is not a list of ``ChatMessage``.
        :raises ConfigurationError: If ``hook_context`` is not a dict, or ``inputs`` is not a ``RunInputs``.
        """
        with _guarded(messages, streaming_callback, hook_context, inputs) as call:
            return InstructedAgent.run(self, **call, generation_kwargs=generation_kwargs, tools=tools, **kwargs)

    async def run_async(
        self,
        messages: list[ChatMessage],
        streaming_callback: StreamingCallbackT | None = None,
        *,
        generation_kwargs: dict[str, Any] | None = None,
        tools: ToolsType | list[str] | None = None,
        hook_context: dict[str, Any] | None = None,
        inputs: RunInputs | None = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        """Async variant of :meth:`run`: the same parameters, outputs and errors, with ``Agent.run_async``."""
        with _guarded(messages, streaming_callback, hook_context, inputs) as call:
            return await InstructedAgent.run_async(
                self, **call, generation_kwargs=generation_kwargs, tools=tools, **kwargs
            )

    def _writer(self) -> Any:
        return next(
            (hook.chat_generator for hook in self.hooks.get("after_run", []) if hasattr(hook, "chat_generator")),
            self.chat_generator,
        )

    def _researcher(self) -> TopicResearcher:
        tools = [tool for item in self.tools or [] for tool in (item if isinstance(item, Toolset) else [item])]
        for tool in tools:
            if isinstance(tool, ResearchSubtopicTool):
                return subtopic_researcher(tool.researcher)
            if isinstance(tool, TaskTool) and tool.subagents:  # a deep agent's: its first subagent researches
                return subtopic_researcher(tool.subagents[sorted(tool.subagents)[0]][1])
        raise ConfigurationError(
            "this agent has no researcher of sub-topics (a deep agent researches with its subagents: pass "
            "subagents=[SubAgentDef(...)]); ask without research=True."
        )


@contextmanager
def _guarded(messages: Any, streaming_callback: Any, hook_context: Any, inputs: Any) -> Iterator[dict[str, Any]]:
    """Check the run's input; yield the Agent's ``messages``, ``streaming_callback`` and ``hook_context``."""
    check_messages(messages)
    context = check_hook_context(hook_context)
    given = run_inputs(inputs, streaming_callback)
    guard = RunGuard()
    try:
        yield {
            "messages": messages,
            "streaming_callback": given.streaming_callback,
            "hook_context": {**context, RUN_GUARD_KEY: guard, INPUTS_KEY: given},
        }
    finally:
        guard.close()
