"""
Holding the synchronous fetch to its deadline while it is blocked in a socket call or a name lookup.

httpx's read timeout starts over with every byte, so a server that sends its headers or body one byte at a time
never trips it. :class:`ConnectionGuard` watches the connection a fetch opens (httpcore reports it through the
``trace`` request extension) and, when the fetch's :class:`~haystack_deep_research.web._body.Deadline` passes,
shuts the socket down from the watchdog thread: the blocked read returns at once and the fetch raises
:class:`~haystack_deep_research.errors.FetchTimeoutError`. Name lookups run in a small thread pool and are waited
for only until the deadline.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from haystack_deep_research.web._body import Deadline
from haystack_deep_research.web._watchdog import Alarm, call_at, waiting_threads
from haystack_deep_research.web.url_policy import Resolver, system_resolver

__all__ = ["ConnectionGuard"]

# Lookups stuck in a slow resolver keep a thread until the resolver gives up; this many may be stuck at once.
_LOOKUP_THREADS = 32


class ConnectionGuard:
    """
    Cuts the connection of one synchronous fetch when its deadline passes.

    Use it as a context manager around the fetch; pass :attr:`trace` as the request's ``trace`` extension and
    :meth:`resolver` to the URL policy. The deadline is read again whenever the alarm goes off, so it may move.
    """

    def __init__(self, deadline: Deadline) -> None:
        self._deadline = deadline
        self._lock = threading.Lock()
        self._socket: socket.socket | None = None
        self._alarm: Alarm | None = None
        self._done = False
        self.fired = False

    def __enter__(self) -> ConnectionGuard:
        self._arm()
        return self

    def __exit__(self, *exc_info: object) -> None:
        with self._lock:
            self._done = True
            if self._alarm is not None:
                self._alarm.cancel()
            self._swap(None)

    def trace(self, event: str, info: dict[str, Any]) -> None:
        """The ``trace`` request extension: remember each new connection's socket (a connect's ``return_value``)."""
        if event != "connection.connect_tcp.complete":
            return
        sock = info["return_value"].get_extra_info("socket")
        if not isinstance(sock, socket.socket):
            return
        with self._lock:
            if self._done:
                return
            # A duplicate of the descriptor: shutting it down cuts the connection, and no one else can close it
            # and hand its number to another socket while the watchdog holds it.
            self._swap(sock.dup())
            if self.fired:
                self._cut()

    def follow(self) -> None:
        """Move the alarm earlier if the deadline moved earlier (a new hop starts its transfer-rate clock)."""
        with self._lock:
            if self._done or self._alarm is None or self._alarm.when <= self._deadline.expires_at():
                return
            self._alarm.cancel()
            self._arm()

    def resolver(self, resolver: Resolver | None) -> Resolver:
        """The caller's resolver (``None``: the system's), its wait cut at the deadline by a ``FetchTimeoutError``."""
        chosen = resolver or system_resolver

        def bounded(host: str, port: int) -> list[str]:
            future = waiting_threads("haystack-deep-research-dns", _LOOKUP_THREADS).submit(chosen, host, port)
            try:
                return future.result(timeout=self._deadline.remaining())
            except FutureTimeout:
                future.cancel()
                raise self._deadline.error() from None

        return bounded

    def _arm(self) -> None:
        self._alarm = call_at(self._deadline.expires_at(), self._on_alarm)

    def _on_alarm(self) -> None:
        with self._lock:
            if self._done:
                return
            if time.monotonic() < self._deadline.expires_at():  # bytes arrived since: the deadline moved on
                self._arm()
                return
            self.fired = True
            self._cut()

    def _cut(self) -> None:
        if self._socket is not None:
            # An OSError means the peer closed it already: the blocked call has returned on its own.
            with contextlib.suppress(OSError):
                self._socket.shutdown(socket.SHUT_RDWR)

    def _swap(self, sock: socket.socket | None) -> None:
        if self._socket is not None:
            self._socket.close()
        self._socket = sock
