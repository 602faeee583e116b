"""Iterating a run's events with ``async for``: the iteration ends by itself when the run ends."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any, Protocol

from haystack_deep_research.events.types import Event
from haystack_deep_research.state import EVENTS_KEY, STREAMING_KEY

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

    :param agent: An agent of this library (anything whose ``run_async`` accepts ``hook_context``).
    :param run_kwargs: The arguments of ``run_async`` (``messages``, ``hook_context``, ...). A subscriber already in
        ``hook_context`` under ``EVENTS_KEY`` still receives every event. A ``streaming_callback`` is also handed to
        the run itself (``hook_context[STREAMING_KEY]``), so every model of the run streams to it from the start.
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
        context = dict(self._kwargs.get("hook_context") or {})
        chained = context.get(EVENTS_KEY)

        def deliver(event: Event) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, event)
            if callable(chained):
                chained(event)

        context[EVENTS_KEY] = deliver
        if self._kwargs.get("streaming_callback") is not None:
            context.setdefault(STREAMING_KEY, self._kwargs["streaming_callback"])
        task = asyncio.ensure_future(self._agent.run_async(**{**self._kwargs, "hook_context": context}))
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
