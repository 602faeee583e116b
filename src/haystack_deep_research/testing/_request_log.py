"""
The request log of the loopback test servers: each answered request as a :class:`LoggedRequest`, kept in arrival order
in a thread-safe :class:`RequestLog` that tests can wait on.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

from haystack_deep_research import _checks

__all__ = ["LoggedRequest", "RequestLog"]


@dataclass(frozen=True)
class LoggedRequest:
    """
    One request a loopback server answered.

    :param method: The HTTP method, for example ``"GET"``.
    :param path: The request target as sent, query string included.
    :param status: The status code of the response (``0`` if the handler failed before sending one).
    :param started: ``time.monotonic()`` when the request line had been read.
    :param finished: ``time.monotonic()`` when the response had been written (or the client went away).
    :param headers: The request headers.
    :param json_body: The request body decoded as JSON, or ``None`` when there was none or it was not JSON.
    """

    method: str
    path: str
    status: int
    started: float
    finished: float
    headers: Mapping[str, str] = field(default_factory=dict)
    json_body: Any = None

    @property
    def duration(self) -> float:
        """Seconds between reading the request and finishing the response."""
        return self.finished - self.started


class RequestLog(Sequence[LoggedRequest]):
    """
    A thread-safe list of :class:`LoggedRequest`, in the order the requests arrived.

    Requests are logged when their response is finished, which on a threaded server is not always the order they
    arrived in; each entry is put in its place by its ``started`` time. Reading never blocks the server for long.
    """

    def __init__(self) -> None:
        self._entries: list[LoggedRequest] = []
        self._changed = threading.Condition()

    def append(self, entry: LoggedRequest) -> None:
        """Add one finished request and wake anyone waiting in :meth:`wait_for`."""
        with self._changed:
            bisect.insort(self._entries, entry, key=lambda logged: logged.started)
            self._changed.notify_all()

    def snapshot(self) -> list[LoggedRequest]:
        """Copy the entries logged so far, in arrival order, into a new list."""
        with self._changed:
            return list(self._entries)

    def clear(self) -> None:
        """Forget every entry logged so far."""
        with self._changed:
            self._entries.clear()

    def wait_for(self, count: int, *, timeout: float = 5.0) -> list[LoggedRequest]:
        """
        Wait until at least ``count`` requests are logged.

        A client can see the response a moment before the server logs it, so tests that read the log right after
        a request should call this instead of reading the list directly.

        :param count: How many entries to wait for.
        :param timeout: The most seconds to wait.
        :returns: A snapshot of the log.
        :raises ConfigurationError: If ``count`` is negative or ``timeout`` is not positive.
        :raises TimeoutError: If fewer than ``count`` entries were logged within ``timeout`` seconds.
        """
        _checks.int_in_range("count", count, 0)
        _checks.number_in_range("timeout", timeout, 0)
        with self._changed:
            if not self._changed.wait_for(lambda: len(self._entries) >= count, timeout=timeout):
                raise TimeoutError(f"{len(self._entries)} of {count} requests were logged within {timeout} s.")
            return list(self._entries)

    def __len__(self) -> int:
        with self._changed:
            return len(self._entries)

    @overload
    def __getitem__(self, index: int) -> LoggedRequest: ...

    @overload
    def __getitem__(self, index: slice) -> list[LoggedRequest]: ...

    def __getitem__(self, index: int | slice) -> LoggedRequest | list[LoggedRequest]:
        with self._changed:
            return self._entries[index]

    def __iter__(self) -> Iterator[LoggedRequest]:
        return iter(self.snapshot())
