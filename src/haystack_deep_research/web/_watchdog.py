"""
One watchdog thread that runs short actions at given times (:func:`call_at`): shutting a socket down or killing a
parser process releases a call blocked on it, which Python cannot interrupt; a deadline costs a heap entry, not a
thread. And the thread pools of calls that mostly wait (name lookups, parser processes).
"""

from __future__ import annotations

import heapq
import itertools
import logging
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

__all__ = ["Alarm", "call_at", "waiting_threads"]

_logger = logging.getLogger(__name__)


class Alarm:
    """An action scheduled by :func:`call_at`; it runs on the watchdog thread and must return quickly."""

    def __init__(self, when: float, action: Callable[[], None]) -> None:
        self.when = when
        self._action: Callable[[], None] | None = action

    @property
    def cancelled(self) -> bool:
        """Whether the action was cancelled or has already been taken to run."""
        return self._action is None

    def cancel(self) -> None:
        self._action = None

    def _take(self) -> Callable[[], None] | None:
        action, self._action = self._action, None
        return action


class _Watchdog:
    def __init__(self) -> None:
        self.pid = os.getpid()
        self._changed = threading.Condition()
        self._heap: list[tuple[float, int, Alarm]] = []
        self._order = itertools.count()
        threading.Thread(target=self._serve, name="haystack-deep-research-watchdog", daemon=True).start()

    def schedule(self, alarm: Alarm) -> None:
        with self._changed:
            heapq.heappush(self._heap, (alarm.when, next(self._order), alarm))
            if self._heap[0][2] is alarm:
                self._changed.notify()

    def _serve(self) -> None:
        while True:
            with self._changed:
                while not self._heap or self._heap[0][0] > time.monotonic():
                    while self._heap and self._heap[0][2].cancelled:  # finished guards leave no work behind
                        heapq.heappop(self._heap)
                    self._changed.wait(self._heap[0][0] - time.monotonic() if self._heap else None)
                action = heapq.heappop(self._heap)[2]._take()
            if action is None:
                continue
            try:
                action()
            except Exception:  # one failing action must not stop the deadlines of every other fetch
                _logger.exception("A deadline action of the web layer failed.")


_lock = threading.Lock()
_watchdog: _Watchdog | None = None


def call_at(when: float, action: Callable[[], None]) -> Alarm:
    """Run a quick ``action`` on the watchdog thread at ``when`` (``time.monotonic()``) unless it is cancelled."""
    global _watchdog  # noqa: PLW0603 - one watchdog per process, started on first use
    alarm = Alarm(when, action)
    with _lock:
        if _watchdog is None or _watchdog.pid != os.getpid():  # a forked child has no watchdog thread
            _watchdog = _Watchdog()
        watchdog = _watchdog
    watchdog.schedule(alarm)
    return alarm


_pools_lock = threading.Lock()
_pools: dict[str, tuple[int, ThreadPoolExecutor]] = {}


def waiting_threads(name: str, size: int) -> ThreadPoolExecutor:
    """
    The process's thread pool ``name`` of at most ``size`` threads: these waits never fill the event loop's default
    executor, and one kind stuck (a resolver that never answers) never delays the other.
    """
    with _pools_lock:
        entry = _pools.get(name)
        if entry is None or entry[0] != os.getpid():  # a forked child has none of the pool's threads
            entry = (os.getpid(), ThreadPoolExecutor(max_workers=size, thread_name_prefix=name))
            _pools[name] = entry
        return entry[1]
