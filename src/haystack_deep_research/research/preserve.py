"""
The orchestrator's model failing after research has begun must not throw that research away.

Haystack's Agent lets an exception from its chat generator end ``run`` at once, before the ``after_run`` hooks: the
notes gathered so far would be lost with it. :class:`PreservingChatGenerator` wraps the orchestrator's generator:
once at least one sub-topic has been researched, a failing call becomes a final text reply marked in its ``meta``,
so the Agent stops normally and the write hook writes the report from the notes, with
``exit_reason="orchestrator_failed"``. A failure before any research is re-raised: there is nothing to keep, and the
caller should see the provider's error (a wrong key, say). A call still in flight when the run's time budget runs
out is cut (see :mod:`haystack_deep_research.run.deadline`): the Agent's next budget check ends the run with
``exit_reason="time_budget"``, before research or after.
"""

from __future__ import annotations

from typing import Any

from haystack import component
from haystack.components.generators.chat.types import ChatGenerator
from haystack.core.serialization import component_to_dict, default_from_dict, default_to_dict
from haystack.dataclasses import ChatMessage
from haystack.utils.deserialization import deserialize_component_inplace

from haystack_deep_research import _checks
from haystack_deep_research.errors import DeadlineExceededError
from haystack_deep_research.prompts import ORCHESTRATOR_STAND_IN, RESEARCH_SUBTOPIC, render_text
from haystack_deep_research.run import Call, Phase, UsesModels, drive, drive_async
from haystack_deep_research.run.bounded import deadline_reply
from haystack_deep_research.run.deadline import bound_budget, call_sync_within_async, call_within, call_within_async
from haystack_deep_research.run.streaming import for_async, for_sync

__all__ = ["FAILURE_META", "PreservingChatGenerator", "model_failure"]

FAILURE_META = "haystack_deep_research.model_failure"
"""The ``meta`` key of the stand-in reply; its value says what failed."""


def _research_done(messages: list[ChatMessage]) -> bool:
    return any(
        m.tool_call_result is not None
        and not m.tool_call_result.error
        and m.tool_call_result.origin.tool_name == RESEARCH_SUBTOPIC
        for m in messages
    )


@component
class PreservingChatGenerator(UsesModels):
    """
    Wrap a chat generator so that its failure after research has begun ends the run instead of discarding it.

    :param chat_generator: The orchestrator's chat generator; it must support tools.
    :raises ConfigurationError: If it is not a chat generator that supports tools.
    """

    def __init__(self, *, chat_generator: ChatGenerator) -> None:
        # Any: Haystack's ChatGenerator protocol declares run(messages) only; this one is checked to take tools.
        self.chat_generator: Any = _checks.chat_generator("chat_generator", chat_generator, needs_tools=True)

    def _used_models(self) -> list[Any]:
        return [self.chat_generator]

    def _phase(self, messages: list[ChatMessage], tools: Any, kwargs: dict[str, Any]) -> Phase[dict[str, Any]]:
        generator = self.chat_generator
        if kwargs.get("streaming_callback") is not None:  # the orchestrator's chunks, tagged like every other role's
            given = kwargs["streaming_callback"]
            tagged = for_sync(given, "orchestrator") or for_async(given, "orchestrator")
            kwargs = {**kwargs, "streaming_callback": tagged}

        budget = bound_budget()

        def run() -> Any:
            return call_within(lambda: generator.run(messages=messages, tools=tools, **kwargs), budget)

        async def run_async() -> Any:
            if hasattr(generator, "run_async"):
                return await call_within_async(
                    lambda: generator.run_async(messages=messages, tools=tools, **kwargs), budget
                )
            return await call_sync_within_async(lambda: generator.run(messages=messages, tools=tools, **kwargs), budget)

        [called] = yield [Call(run, run_async)]
        if called.error is None:
            return called.value
        if isinstance(called.error, DeadlineExceededError):  # the Agent's next budget check ends the run
            return deadline_reply(called.error)
        if not _research_done(messages):
            raise called.error
        why = f"{type(called.error).__name__}: {called.error}"
        reply = ChatMessage.from_assistant(
            render_text(ORCHESTRATOR_STAND_IN, why=why), meta={"finish_reason": "stop", FAILURE_META: why}
        )
        return {"replies": [reply]}

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        """
        Call the wrapped generator.

        :param messages: The conversation.
        :param tools: The tools offered.
        :param kwargs: Other generator inputs (streaming callback, generation kwargs).
        :returns: The wrapped generator's replies, or a stand-in final reply after research has begun.
        """
        return drive(self._phase(messages, tools, kwargs))

    @component.output_types(replies=list[ChatMessage])
    async def run_async(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        """
        Async variant of :meth:`run`; a wrapped generator without ``run_async`` runs in a worker thread.

        :param messages: The conversation.
        :param tools: The tools offered.
        :param kwargs: Other generator inputs.
        :returns: The wrapped generator's replies, or a stand-in final reply after research has begun.
        """
        return await drive_async(self._phase(messages, tools, kwargs))

    def to_dict(self) -> dict[str, Any]:
        """
        :returns: The serialized wrapper, with the wrapped generator nested.
        """
        return default_to_dict(self, chat_generator=component_to_dict(obj=self.chat_generator, name="chat_generator"))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PreservingChatGenerator:
        """
        :param data: What ``to_dict`` returned.
        :returns: The wrapper.
        """
        deserialize_component_inplace(data["init_parameters"], key="chat_generator")
        return default_from_dict(cls, data)


def model_failure(messages: list[ChatMessage] | None) -> str | None:
    """
    Say whether the run ended on a stand-in reply, and why.

    :param messages: The orchestrator's messages.
    :returns: The failure, or ``None`` when the last reply is a real one.
    """
    last = messages[-1] if messages else None
    return last.meta.get(FAILURE_META) if last is not None else None
