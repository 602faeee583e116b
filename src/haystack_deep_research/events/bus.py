"""
Delivering a run's events: to the caller's callbacks, to a legacy ``progress(phase, message)`` callback, and to
Haystack's tracing (one short span per event, tagged with its fields).

A subscriber that raises never breaks the run: the error is logged once per subscriber and the run goes on.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterable
from typing import Any

from haystack import logging, tracing

from haystack_deep_research.events.types import Event, RunEnded, RunStarted, ToolCalled, ToolReturned, UsageRecorded

__all__ = ["EventBus", "Subscriber", "progress_view"]

logger = logging.getLogger(__name__)

Subscriber = Callable[[Event], Any]
"""A callable receiving every event of a run."""


def progress_view(progress: Callable[[str, str], Any]) -> Subscriber:
    """
    Adapt a ``progress(phase, message)`` callback to the event stream: each event becomes one ``(phase, line)`` call,
    except the two that open and close the run and the per-call tool and usage events (searches and pages have their
    own).

    :param progress: The callback.
    :returns: A subscriber.
    """

    def view(event: Event) -> None:
        if not isinstance(event, RunStarted | RunEnded | ToolCalled | ToolReturned | UsageRecorded):
            progress(event.phase, event.describe())

    return view


class EventBus:
    """
    The events of one run, delivered in the order they are emitted (per thread) to every subscriber.

    :param run_id: The run's id; every event emitted through the bus carries it.
    :param subscribers: The callables to deliver events to.
    """

    def __init__(self, run_id: str, subscribers: Iterable[Subscriber] = ()) -> None:
        self.run_id = run_id
        self._subscribers = list(subscribers)
        self._broken: set[int] = set()
        self._lock = threading.Lock()

    def subscribe(self, subscriber: Subscriber) -> None:
        """Add a subscriber of every later event."""
        with self._lock:
            self._subscribers.append(subscriber)

    def emit(self, event: Event, *, researcher: str = "") -> Event:
        """Stamp an event with the run id (and the researcher's sub-topic), trace it, deliver it; return it stamped."""
        stamped = dataclasses.replace(event, run_id=self.run_id, researcher=researcher or event.researcher)
        tags = {f"haystack_deep_research.event.{key}": value for key, value in stamped.to_dict().items()}
        with tracing.tracer.trace(f"haystack_deep_research.event.{stamped.kind}", tags=tags):
            pass
        with self._lock:
            subscribers = list(self._subscribers)
        for subscriber in subscribers:
            try:
                subscriber(stamped)
            except Exception as error:  # a broken observer must not end research; it is logged once
                with self._lock:
                    first = id(subscriber) not in self._broken
                    self._broken.add(id(subscriber))
                if first:
                    logger.warning(
                        "An event subscriber raised {error_type}: {error}; the run goes on and further errors of this "
                        "subscriber are not logged.",
                        error_type=type(error).__name__,
                        error=error,
                    )
        return stamped
