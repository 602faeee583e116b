"""
An Agent's chat generator bounded by the run's time budget (see :mod:`.deadline`).

The run's ``before_llm`` hook binds the run's budget just before each step; a call cut at the deadline becomes one
empty reply, marked in its ``meta``, so the Agent stays in its loop and its next ``before_llm`` check ends it with
``exit_reason`` "time_budget" before its ``after_run`` hooks keep what it gathered.
"""

from __future__ import annotations

from typing import Any

from haystack import component
from haystack.core.serialization import component_to_dict, default_from_dict, default_to_dict
from haystack.dataclasses import ChatMessage
from haystack.utils.deserialization import deserialize_component_inplace

from haystack_deep_research.errors import DeadlineExceededError
from haystack_deep_research.run.deadline import bound_budget, call_sync_within_async, call_within, call_within_async
from haystack_deep_research.run.hooks import UsesModels

__all__ = ["DEADLINE_META", "DeadlineChatGenerator", "deadline_reply"]

DEADLINE_META = "haystack_deep_research.deadline"
"""The ``meta`` key of the empty reply that stands in for a call cut at the deadline; its value says why."""


def deadline_reply(error: DeadlineExceededError) -> dict[str, Any]:
    """
    :param error: Why a call was cut at the deadline.
    :returns: The result that stands in for the call: one empty reply whose ``meta[DEADLINE_META]`` says why.
    """
    return {"replies": [ChatMessage.from_assistant("", meta={DEADLINE_META: str(error)})]}


@component
class DeadlineChatGenerator(UsesModels):
    """
    Wrap an Agent's chat generator so that no call outlives the run's time budget (see :mod:`.deadline`).

    :param chat_generator: The chat generator.
    """

    def __init__(self, *, chat_generator: Any) -> None:
        self.chat_generator = chat_generator

    @property
    def model(self) -> Any:
        """:returns: The wrapped generator's model name (``None`` when it has none)."""
        return getattr(self.chat_generator, "model", None)

    def _used_models(self) -> list[Any]:
        return [self.chat_generator]

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        """
        Call the wrapped generator, waiting no longer than the run's time budget has left.

        :param messages: The conversation.
        :param tools: The tools offered, or ``None``.
        :param kwargs: Other generator inputs (streaming callback, generation kwargs).
        :returns: The wrapped generator's replies, or one empty reply (``meta[DEADLINE_META]`` says why) when the
            call was cut at the deadline.
        """
        inputs = {**kwargs, **({"tools": tools} if tools is not None else {})}
        try:
            result: dict[str, Any] = call_within(
                lambda: self.chat_generator.run(messages=messages, **inputs), bound_budget()
            )
        except DeadlineExceededError as error:
            return deadline_reply(error)
        return result

    @component.output_types(replies=list[ChatMessage])
    async def run_async(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        """
        Async variant of :meth:`run`; a wrapped generator without ``run_async`` runs in a daemon thread.

        :param messages: The conversation.
        :param tools: The tools offered, or ``None``.
        :param kwargs: Other generator inputs.
        :returns: As for :meth:`run`.
        """
        inputs = {**kwargs, **({"tools": tools} if tools is not None else {})}
        generator, budget = self.chat_generator, bound_budget()
        try:
            if hasattr(generator, "run_async"):
                result: dict[str, Any] = await call_within_async(
                    lambda: generator.run_async(messages=messages, **inputs), budget
                )
            else:
                result = await call_sync_within_async(lambda: generator.run(messages=messages, **inputs), budget)
        except DeadlineExceededError as error:
            return deadline_reply(error)
        return result

    def to_dict(self) -> dict[str, Any]:
        """:returns: The serialized wrapper, with the wrapped generator nested."""
        return default_to_dict(self, chat_generator=component_to_dict(obj=self.chat_generator, name="chat_generator"))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DeadlineChatGenerator:
        """
        :param data: What ``to_dict`` returned.
        :returns: The wrapper.
        """
        deserialize_component_inplace(data["init_parameters"], key="chat_generator")
        return default_from_dict(cls, data)
