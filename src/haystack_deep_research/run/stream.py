"""Iterating a run's events with ``async for``: the iteration ends by itself when the run ends."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from typing import Any, Protocol

from haystack_deep_research.events.types import Event
from haystack_deep_research.run.context import run_inputs

__all__ = ["EventStream"]


class _AsyncRunnable(Protocol):
    async def run_async(self, **kwargs: Any) -> dict[str, Any]: ...


class EventStream:
    """
    Run an agent asynchronously and iterate its events as they happen.

    ::

        stream = EventStream(agent, messages=[ChatMessage.from_user("...")])
        async for event in stream:
            print(event.describe())
        result = stream.result

    The iteration ends when the run ends; then :attr:`result` holds the run's result. A run that fails raises its
    error from the ``async for``. Leaving the loop early cancels the run.

    :param agent: A shape of this library (anything whose ``run_async`` takes ``inputs=RunInputs(...)``).
    :param run_kwargs: The arguments of ``run_async`` (``messages``, ``streaming_callback``, ``inputs``, ...). A
        subscriber already in ``inputs`` (``RunInputs(on_event=...)``) still receives every event.
    """

    def __init__(self, agent: _AsyncRunnable, **run_kwargs: Any) -> None:
        self._agent = agent
        self._kwargs = run_kwargs
        self.result: dict[str, Any] | None = None

    def __aiter__(self) -> AsyncIterator[Event]:
        return self._events()

    async def _events(self) -> AsyncIterator[Event]:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Event] = asyncio.Queue()
        given = run_inputs(self._kwargs.get("inputs"))
        chained = given.on_event

        def deliver(event: Event) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, event)
            if callable(chained):
                chained(event)

        inputs = dataclasses.replace(given, on_event=deliver)
        task = asyncio.ensure_future(self._agent.run_async(**{**self._kwargs, "inputs": inputs}))
        try:
            while True:
                getter = asyncio.ensure_future(queue.get())
                done, _ = await asyncio.wait({getter, task}, return_when=asyncio.FIRST_COMPLETED)
                if getter in done:
                    yield getter.result()
                    continue
                getter.cancel()
                await asyncio.sleep(0)  # deliveries scheduled from worker threads before the run ended
                while not queue.empty():
                    yield queue.get_nowait()
                self.result = task.result()
                return
        finally:
            if not task.done():
                task.cancel()
