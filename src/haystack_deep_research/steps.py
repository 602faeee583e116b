"""
Work that makes several calls, written once and run either synchronously or asynchronously.

A *phase* is a generator. It yields a batch (a list of :class:`Call`), receives one :class:`Outcome` per call in the
same order, and finally returns its result. :func:`drive` runs the calls of a batch in worker threads,
:func:`drive_async` runs them concurrently on the event loop; both run at most ``max_concurrency`` calls at once. A
call that raises never ends the phase: its outcome carries the error and the phase decides what to do with it. An
error the phase itself raises propagates to the caller of :func:`drive` / :func:`drive_async`.

A :class:`ReportStage` is a phase factory that runs after the report is written and its citations verified (see
:class:`~haystack_deep_research.hooks.WriteHook`): grounding and structured output are stages.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Generator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from haystack.components.agents.state import State
from haystack.dataclasses import ChatMessage

from haystack_deep_research import llm

__all__ = ["Call", "Outcome", "Phase", "ReportStage", "ask", "drive", "drive_async"]

T = TypeVar("T")


@dataclass(frozen=True)
class Call:
    """
    One call a phase asks for, in both forms.

    :param run: Makes the call synchronously.
    :param run_async: Makes the call on the event loop.
    """

    run: Callable[[], Any]
    run_async: Callable[[], Awaitable[Any]]


@dataclass(frozen=True)
class Outcome:
    """
    What one call gave: its value, or the error it raised.

    :param value: The call's return value (``None`` after an error).
    :param error: The exception the call raised, or ``None``.
    """

    value: Any = None
    error: Exception | None = None

    @property
    def reply(self) -> ChatMessage | None:
        """:returns: The value when it is a chat message (the outcome of :func:`ask`), else ``None``."""
        return self.value if isinstance(self.value, ChatMessage) else None

    @property
    def text(self) -> str:
        """:returns: The stripped text of :attr:`reply`; ``""`` when there is none."""
        reply = self.reply
        return ((reply.text if reply is not None else None) or "").strip()


Phase = Generator[list[Call], list[Outcome], T]


class ReportStage(Protocol):
    """
    A step that runs after the report is written and verified; it may judge, rewrite or convert the report.

    ``max_concurrency`` bounds the calls of one batch of its phase.
    """

    max_concurrency: int

    def review(self, state: State, writer: Any) -> Phase[None]:
        """
        :param state: The orchestrator's live State, holding the verified report.
        :param writer: The writer's chat generator.
        :returns: The phase to drive.
        """
        ...

    def to_dict(self) -> dict[str, Any]:
        """:returns: The serialized stage."""
        ...


def ask(generator: Any, messages: list[ChatMessage]) -> Call:
    """
    A call to a chat generator, without tools.

    :param generator: A Haystack chat generator.
    :param messages: The prompt.
    :returns: A call whose value is the first reply (a ``ChatMessage``) or ``None``.
    """
    return Call(lambda: llm.call(generator, messages), lambda: llm.call_async(generator, messages))


def _attempt(call: Call) -> Outcome:
    try:
        return Outcome(value=call.run())
    except Exception as error:  # handed to the phase, which decides what the failure means
        return Outcome(error=error)


async def _attempt_async(call: Call, limit: asyncio.Semaphore) -> Outcome:
    async with limit:
        try:
            return Outcome(value=await call.run_async())
        except Exception as error:  # handed to the phase, which decides what the failure means
            return Outcome(error=error)


def drive(phase: Phase[T], *, max_concurrency: int = 5) -> T:
    """
    Run a phase synchronously; the calls of a batch run in worker threads.

    :param phase: The phase.
    :param max_concurrency: Calls of one batch running at once.
    :returns: What the phase returned.
    """
    try:
        batch = next(phase)
        while True:
            if len(batch) <= 1:
                outcomes = [_attempt(call) for call in batch]
            else:
                with ThreadPoolExecutor(max_workers=min(max_concurrency, len(batch))) as pool:
                    outcomes = list(pool.map(_attempt, batch))
            batch = phase.send(outcomes)
    except StopIteration as stop:
        return stop.value


async def drive_async(phase: Phase[T], *, max_concurrency: int = 5) -> T:
    """
    Run a phase on the event loop; the calls of a batch run concurrently.

    :param phase: The phase.
    :param max_concurrency: Calls of one batch running at once.
    :returns: What the phase returned.
    """
    limit = asyncio.Semaphore(max_concurrency)
    try:
        batch = next(phase)
        while True:
            outcomes = list(await asyncio.gather(*(_attempt_async(call, limit) for call in batch)))
            batch = phase.send(outcomes)
    except StopIteration as stop:
        return stop.value
