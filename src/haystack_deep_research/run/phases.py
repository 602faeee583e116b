"""
The library's one sync/async pattern: work is written once as a *phase*, and driven either way.

A phase is a generator. It yields a batch (a list of :class:`Call`), receives one :class:`Outcome` per call in the
same order, and finally returns its result. :func:`drive` runs the calls of a batch in worker threads (a batch of
one runs inline), :func:`drive_async` runs them concurrently on the event loop; both run at most
``max_concurrency`` calls at once. A call that raises never ends the phase: its outcome carries the error and the
phase decides what it means. An error the phase itself raises propagates to the caller of the driver.

Every hook and tool of the library is a phase with a thin sync shell (``drive``) and async shell (``drive_async``).
Blocking work (file writes, parsing, sync-only clients) is a :func:`blocking` call, which the async driver runs in a
worker thread, so nothing blocking runs on the event loop. :func:`ask` is a model call, traced with a span.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable, Generator, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from haystack import tracing
from haystack.components.generators.chat.types import ChatGenerator
from haystack.dataclasses import ChatMessage

from haystack_deep_research.run.budget import RunBudget
from haystack_deep_research.run.deadline import call_sync_within_async, call_within, call_within_async
from haystack_deep_research.run.streaming import (
    accepts_streaming,
    drop_chunk,
    for_async,
    for_sync,
    stream_usage_kwargs,
)

__all__ = ["Call", "Outcome", "Phase", "ask", "blocking", "drive", "drive_async", "failure", "model_name", "subphase"]

T = TypeVar("T")

MODEL_CALL_SPAN = "haystack_deep_research.model_call"
"""The name of the tracing span around every model call the library makes itself."""


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


def failure(error: Exception | None) -> str:
    """
    Say why a model call produced no text.

    :param error: The exception the call raised, or ``None`` when it returned no text.
    :returns: A short reason.
    """
    return f"{type(error).__name__}: {error}" if error is not None else "the model returned no text"


def model_name(generator: Any) -> str:
    """
    :param generator: A chat generator.
    :returns: Its model name when it has one, else its class name.
    """
    name = getattr(generator, "model", None)
    return name if isinstance(name, str) and name else type(generator).__name__


@contextmanager
def _model_span(generator: Any, role: str, messages: list[ChatMessage]) -> Iterator[Any]:
    tags = {"haystack_deep_research.role": role, "haystack_deep_research.model": model_name(generator)}
    with tracing.tracer.trace(MODEL_CALL_SPAN, tags=tags) as span:
        if tracing.tracer.is_content_tracing_enabled:
            span.set_content_tag("haystack_deep_research.input", [m.to_dict() for m in messages])
        yield span


def _first_reply(result: dict[str, Any], span: Any) -> ChatMessage | None:
    replies = result.get("replies") or []
    reply = replies[0] if replies else None
    if reply is not None and tracing.tracer.is_content_tracing_enabled:
        span.set_content_tag("haystack_deep_research.output", reply.to_dict())
    return reply


def ask(
    generator: ChatGenerator,
    messages: list[ChatMessage],
    *,
    role: str,
    streaming_callback: Any = None,
    generation_kwargs: dict[str, Any] | None = None,
    agent: str = "",
    keep_alive: bool = False,
    budget: RunBudget | None = None,
) -> Call:
    """
    A call to a chat generator, without tools, inside a tracing span named :data:`MODEL_CALL_SPAN`.

    A generator without ``run_async`` runs in a worker thread on the async path, so the event loop is never blocked.
    A call that streams to Haystack's ``OpenAIChatGenerator`` asks the stream to carry the token usage, which it
    otherwise leaves out (see :func:`~haystack_deep_research.run.streaming.stream_usage_kwargs`).

    :param generator: A Haystack chat generator.
    :param messages: The prompt.
    :param role: The role of the call (``scope``, ``summarizer``, ``writer``, ``judge``, ...), a span tag.
    :param streaming_callback: The run's streaming callback, or ``None``: the generator streams to it (when its
        ``run`` takes one), each chunk tagged with ``role`` (see :mod:`haystack_deep_research.run.streaming`).
    :param generation_kwargs: Generation settings for this call only (for example a strict ``response_format``).
    :param agent: The sub-researcher's sub-topic or subagent's name the call works for, tagged on streamed chunks.
    :param keep_alive: Ask for the reply as a stream even without a streaming callback (its chunks are dropped), so
        that a client's read timeout applies to the wait between two chunks, not to the whole reply. A generator
        with a streaming callback of its own keeps it.
    :param budget: The run's budget: the call waits no longer than its time budget has left and then fails with
        :class:`~haystack_deep_research.errors.DeadlineExceededError` (see :mod:`.deadline`); ``None`` for no bound.
    :returns: A call whose value is the first reply (a ``ChatMessage``) or ``None``.
    """
    own = getattr(generator, "streaming_callback", None) is not None
    if streaming_callback is None and keep_alive and not own:
        streaming_callback = drop_chunk
    streams = streaming_callback is not None and accepts_streaming(generator)
    settings = {**(generation_kwargs or {}), **(stream_usage_kwargs(generator) if streams or own else {})}
    extra: dict[str, Any] = {"generation_kwargs": settings} if settings else {}

    def run() -> ChatMessage | None:
        callback = for_sync(streaming_callback, role, agent) if streams else None
        inputs = {**extra, **({"streaming_callback": callback} if callback is not None else {})}
        with _model_span(generator, role, messages) as span:
            return _first_reply(call_within(lambda: generator.run(messages=messages, **inputs), budget), span)

    async def run_async() -> ChatMessage | None:
        callback = for_async(streaming_callback, role, agent) if streams else None
        inputs = {**extra, **({"streaming_callback": callback} if callback is not None else {})}
        with _model_span(generator, role, messages) as span:
            if hasattr(generator, "run_async"):
                started = await call_within_async(lambda: generator.run_async(messages=messages, **inputs), budget)
                return _first_reply(started, span)
            if callback is not None:  # a sync run in a worker thread streams through a plain callback
                inputs["streaming_callback"] = for_sync(streaming_callback, role, agent)
                if inputs["streaming_callback"] is None:
                    del inputs["streaming_callback"]
            threaded = await call_sync_within_async(lambda: generator.run(messages=messages, **inputs), budget)
            return _first_reply(threaded, span)

    return Call(run, run_async)


def blocking(function: Callable[..., T], *args: Any, **kwargs: Any) -> Call:
    """
    A blocking call: run inline on the sync path, in a worker thread on the async path.

    :param function: The function.
    :param args: Its positional arguments.
    :param kwargs: Its keyword arguments.
    :returns: The call.
    """
    return Call(lambda: function(*args, **kwargs), lambda: asyncio.to_thread(function, *args, **kwargs))


def subphase(factory: Callable[[], Phase[T]], *, max_concurrency: int = 5) -> Call:
    """
    A nested phase as one call of a batch, so that several phases of one batch proceed side by side.

    :param factory: Builds the phase (called once per drive).
    :param max_concurrency: Calls of one batch of the nested phase running at once.
    :returns: The call; its value is what the nested phase returns.
    """
    return Call(
        lambda: drive(factory(), max_concurrency=max_concurrency),
        lambda: drive_async(factory(), max_concurrency=max_concurrency),
    )


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
    Run a phase synchronously; the calls of a batch run in worker threads (each in a copy of the caller's context,
    so tracing spans nest under the caller's).

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
                    futures = [pool.submit(contextvars.copy_context().run, _attempt, call) for call in batch]
                    outcomes = [future.result() for future in futures]
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
