"""
The time budget as a deadline for the model calls in flight.

A budget checked between steps cannot end a run whose model server is stuck: one call may wait ``timeout`` seconds
for each of its client's retries. Every model call of a run is therefore bounded by what is left of the run's time
budget:

- :func:`call_within` (sync) runs the call in a daemon thread and stops waiting at the deadline;
  :func:`call_within_async` awaits the call with :func:`asyncio.wait_for` (a generator without ``run_async`` runs in
  a daemon thread there too). A call cut at the deadline raises
  :class:`~haystack_deep_research.errors.DeadlineExceededError`. The abandoned call is not awaited: its thread (or
  its cancelled task) ends when the client gives up, and whatever it returns then is dropped. A call asked for once
  the budget is spent is not started.
- :func:`~haystack_deep_research.run.phases.ask` (the calls the library makes itself) is given the run's budget.
- :class:`~haystack_deep_research.run.bounded.DeadlineChatGenerator` wraps the chat generator of each of the
  library's Agents. The run's ``before_llm`` hook names the run's budget just before each step (:func:`bind`); a call
  cut at the deadline becomes an empty reply, so the Agent stays in its loop and its next ``before_llm`` check ends
  it with ``exit_reason`` "time_budget", before its ``after_run`` hooks keep what it gathered.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TypeVar

from haystack_deep_research.errors import DeadlineExceededError
from haystack_deep_research.run.budget import RunBudget

__all__ = ["bind", "bound_budget", "call_sync_within_async", "call_within", "call_within_async"]

T = TypeVar("T")

_BUDGET: contextvars.ContextVar[RunBudget | None] = contextvars.ContextVar(
    "haystack_deep_research.run_budget", default=None
)


def bind(budget: RunBudget | None) -> None:
    """
    Name the budget that bounds the model calls an Agent makes next in this context (its ``before_llm`` hook does).

    :param budget: The run's budget, or ``None``.
    """
    _BUDGET.set(budget)


def bound_budget() -> RunBudget | None:
    """:returns: The budget :func:`bind` named in this context, or ``None``."""
    return _BUDGET.get()


def _cut(budget: RunBudget) -> DeadlineExceededError:
    return DeadlineExceededError(
        f"the time budget of {budget.time_budget:g} s ran out while a model call was in flight; the call was "
        "abandoned. Pass a larger Budgets(seconds=...), or give the chat generator a smaller timeout so a stuck server "
        "fails sooner."
    )


def _in_daemon_thread(function: Callable[[], T]) -> Future[T]:
    """Run ``function`` in a daemon thread (in a copy of the caller's context): an abandoned call never blocks exit."""
    future: Future[T] = Future()
    context = contextvars.copy_context()

    def target() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(context.run(function))
        except BaseException as error:  # handed to whoever waits; dropped once the call was abandoned
            future.set_exception(error)

    threading.Thread(target=target, name="haystack-deep-research-model-call", daemon=True).start()
    return future


def call_within(function: Callable[[], T], budget: RunBudget | None) -> T:
    """
    Make a sync call, waiting no longer than the time budget has left.

    :param function: The call.
    :param budget: The run's budget, or ``None`` (then the call runs inline, unbounded).
    :returns: What the call returned.
    :raises DeadlineExceededError: If the budget ran out first (the call is abandoned in its daemon thread).
    """
    left = budget.time_left() if budget is not None else None
    if budget is None or left is None:
        return function()
    if left <= 0:
        raise _cut(budget)
    future = _in_daemon_thread(function)
    try:
        return future.result(timeout=left)
    except FutureTimeout:
        raise _cut(budget) from None


async def call_within_async(start: Callable[[], Awaitable[T]], budget: RunBudget | None) -> T:
    """
    Make an async call, waiting no longer than the time budget has left.

    :param start: Starts the call (a coroutine function taking no arguments).
    :param budget: The run's budget, or ``None`` (then the call is awaited unbounded).
    :returns: What the call returned.
    :raises DeadlineExceededError: If the budget ran out first (the call is cancelled).
    """
    left = budget.time_left() if budget is not None else None
    if budget is None or left is None:
        return await start()
    if left <= 0:
        raise _cut(budget)
    try:
        return await asyncio.wait_for(start(), timeout=left)
    except TimeoutError:
        raise _cut(budget) from None


def call_sync_within_async(function: Callable[[], T], budget: RunBudget | None) -> Awaitable[T]:
    """
    A sync call on the async path, in a daemon thread (an abandoned one never holds up the event loop's shutdown).

    :param function: The call.
    :param budget: The run's budget, or ``None``.
    :returns: An awaitable of what the call returned; it raises ``DeadlineExceededError`` as :func:`call_within_async`.
    """
    return call_within_async(lambda: asyncio.wrap_future(_in_daemon_thread(function)), budget)
