"""
An agent's own model failing must not throw the run away.

Haystack's Agent lets an exception from its chat generator end ``run`` at once, before the ``after_run`` hooks: the
brief, the notes gathered so far and the run directory's outcome would be lost with it, and the caller would get an
exception instead of the run contract's outputs. :class:`PreservingChatGenerator` wraps the model of an agent the
library runs (the deep research agent's orchestrator, the deep agent): a failing call becomes a final text reply
marked in its ``meta``, so the Agent stops normally and its ``after_run`` hook closes the run from what it has, with an
honest ``exit_reason`` (``orchestrator_failed``; ``failed`` for the deep agent) and a warning that carries the
provider's error (a wrong key, say). The stand-in text itself never becomes report content.
A call still in flight when the run's time budget runs out is cut (see :mod:`haystack_deep_research.run._budget`):
the Agent's next budget check ends the run with ``exit_reason="time_budget"``.
"""

from __future__ import annotations

from typing import Any

from haystack import component
from haystack.components.generators.chat.types import ChatGenerator
from haystack.dataclasses import ChatMessage

from haystack_deep_research import _checks
from haystack_deep_research._prompts import ORCHESTRATOR_STAND_IN, render_text
from haystack_deep_research._serialization import InitSerialized
from haystack_deep_research.errors import DeadlineExceededError
from haystack_deep_research.run._budget import bound_budget, call_sync_within_async, call_within, call_within_async
from haystack_deep_research.run._phases import (
    Call,
    Phase,
    UsesModels,
    deadline_reply,
    drive,
    drive_async,
    for_async,
    for_sync,
)

__all__ = ["FAILURE_META", "PreservingChatGenerator", "model_failure"]

FAILURE_META = "haystack_deep_research.model_failure"
"""The ``meta`` key of the stand-in reply; its value says what failed."""


@component
class PreservingChatGenerator(UsesModels, InitSerialized):
    """
    Wrap a chat generator so that its failure ends the run instead of discarding it.

    :param chat_generator: The agent's chat generator; it must support tools.
    :param role: The role its streamed chunks are tagged with, or ``None`` to pass them on as Haystack streams them.
    :raises ConfigurationError: If it is not a chat generator that supports tools.
    """

    def __init__(self, *, chat_generator: ChatGenerator, role: str | None = "orchestrator") -> None:
        # Any: Haystack's ChatGenerator protocol declares run(messages) only; this one is checked to take tools.
        self.chat_generator: Any = _checks.chat_generator("chat_generator", chat_generator, needs_tools=True)
        self.role = role

    def _used_models(self) -> list[Any]:
        return [self.chat_generator]

    def _phase(self, messages: list[ChatMessage], tools: Any, kwargs: dict[str, Any]) -> Phase[dict[str, Any]]:
        generator = self.chat_generator
        if self.role is not None and kwargs.get("streaming_callback") is not None:  # tagged like every other role's
            given = kwargs["streaming_callback"]
            tagged = for_sync(given, self.role) or for_async(given, self.role)
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
        why = f"{type(called.error).__name__}: {called.error}"
        reply = ChatMessage.from_assistant(
            render_text(ORCHESTRATOR_STAND_IN, why=why), meta={"finish_reason": "stop", FAILURE_META: why}
        )
        return {"replies": [reply]}

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        """:returns: The wrapped generator's replies, or a stand-in final reply when it failed."""
        return drive(self._phase(messages, tools, kwargs))

    @component.output_types(replies=list[ChatMessage])
    async def run_async(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        """As :meth:`run`; a wrapped generator without ``run_async`` runs in a worker thread."""
        return await drive_async(self._phase(messages, tools, kwargs))


def model_failure(messages: list[ChatMessage] | None) -> str | None:
    """
    Say whether the run ended on a stand-in reply, and why.

    :param messages: The orchestrator's messages.
    :returns: The failure, or ``None`` when the last reply is a real one.
    """
    last = messages[-1] if messages else None
    return last.meta.get(FAILURE_META) if last is not None else None
