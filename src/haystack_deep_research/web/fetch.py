"""
Guarded downloading: every redirect hop checked by the URL policy and connected to at its checked address, a byte
cap, and one deadline nothing outlasts: an asyncio timeout for :func:`fetch_async`, a watchdog that shuts the socket
down for :func:`fetch` (:class:`ConnectionGuard`). docs/safety.md ("Downloads end on time") says why.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import AsyncIterable, Iterable
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import AsyncExitStack, ExitStack
from dataclasses import dataclass
from typing import Any, cast

import httpx

from haystack_deep_research.web._pool import Alarm, call_at, waiting_threads
from haystack_deep_research.web._steps import Deadline, FinalResponse, Hops, lend_context
from haystack_deep_research.web.limits import FetchLimits
from haystack_deep_research.web.url_policy import Resolver, UrlPolicy, system_resolver

__all__ = ["FetchedDocument", "fetch", "fetch_async"]

# Our own transport serves one fetch: its connections are never kept for another request or host.
_ONE_USE = httpx.Limits(max_keepalive_connections=0)


@dataclass(frozen=True, kw_only=True)
class FetchedDocument:
    """
    A downloaded document.

    :param url: The URL that was asked for.
    :param final_url: The URL the body came from, after redirects.
    :param status: The HTTP status code of the final response.
    :param content_type: The lower-cased MIME type without parameters, for example ``"text/html"``.
    :param charset: The character set the server declared, or ``None``.
    :param body: The body, decoded from gzip or deflate if it was compressed.
    """

    url: str
    final_url: str
    status: int
    content_type: str
    charset: str | None
    body: bytes


def fetch(
    url: str,
    *,
    policy: UrlPolicy,
    limits: FetchLimits,
    transport: httpx.BaseTransport | None = None,
    resolver: Resolver | None = None,
    deadline_s: float | None = None,
) -> FetchedDocument:
    """
    Download a URL, checking it and every redirect hop with ``policy``, by its deadline whatever the server does
    (with a ``transport`` of the caller's, which opens no socket of the library's, it is checked between reads).

    :param url: The http or https URL to read.
    :param policy: The URL policy applied to the URL and every redirect target.
    :param limits: Size, time and redirect limits.
    :param transport: An httpx transport to send requests through (for tests or a proxy); it is left open. By
        default a fresh connection is opened for every request and closed afterwards.
    :param resolver: Resolves host names for the policy; defaults to the system resolver.
    :param deadline_s: Seconds the caller has left (for example what remains of a run's time budget); the fetch
        ends by ``min(limits.total_timeout, deadline_s)``. ``None`` leaves it to ``limits.total_timeout``.
    :returns: The downloaded document.
    :raises URLRefusedError: The policy refused the URL or a redirect hop.
    :raises ContentTooLargeError: The body is larger than ``limits.max_bytes``.
    :raises FetchTimeoutError: A connect or read timeout, or the total deadline, ran out.
    :raises UnsupportedContentError: The content type or encoding cannot be read.
    :raises FetchError: The final status is not 2xx, there were too many redirects, or the connection failed.
    :raises ConfigurationError: ``deadline_s`` is negative or not a number.
    """
    hops = Hops(url, limits, deadline_s)
    with ExitStack() as own:
        guard = own.enter_context(ConnectionGuard(hops.deadline))
        if transport is None:  # a caller's transport stays open for the caller to reuse
            transport = own.enter_context(
                httpx.HTTPTransport(verify=own.enter_context(lend_context()), retries=0, limits=_ONE_USE)
            )
        client = httpx.Client(transport=transport, follow_redirects=False, trust_env=False)
        for _hop in range(limits.max_redirects + 1):
            target = hops.check(policy, guard.resolver(resolver))
            guard.follow()
            try:
                request = hops.request(client, target)
                request.extensions["trace"] = guard.trace
                response = client.send(request, stream=True)
                try:
                    # The raw stream, not iter_raw(): a mock transport's response may already be read into memory,
                    # and its stream still yields the undecoded bytes.
                    if step := hops.inspect(response):
                        for chunk in cast(Iterable[bytes], response.stream):
                            step.reader.feed(chunk)
                        if guard.fired:  # a body that ends with the connection looks complete once it is cut
                            raise hops.deadline.error()
                finally:
                    response.close()
            except (httpx.HTTPError, httpx.InvalidURL) as exc:
                if guard.fired:  # the watchdog cut the connection: the error is the deadline's
                    raise hops.deadline.error() from exc
                raise hops.transport_error(exc) from exc
            if step:
                return _document(hops, step)
    raise hops.too_many_redirects()


async def fetch_async(
    url: str,
    *,
    policy: UrlPolicy,
    limits: FetchLimits,
    transport: httpx.AsyncBaseTransport | None = None,
    resolver: Resolver | None = None,
    deadline_s: float | None = None,
) -> FetchedDocument:
    """
    Download a URL without blocking the event loop; the same contract as :func:`fetch`, but the deadline also cuts
    a read that is waiting with any transport. Host names are resolved in a worker thread.

    :param url: The http or https URL to read.
    :param policy: The URL policy applied to the URL and every redirect target.
    :param limits: Size, time and redirect limits.
    :param transport: An httpx async transport to send requests through (for tests or a proxy); it is left open.
    :param resolver: Resolves host names for the policy; defaults to the system resolver.
    :param deadline_s: Seconds the caller has left; the fetch ends by ``min(limits.total_timeout, deadline_s)``.
    :returns: The downloaded document.
    :raises FetchError: What :func:`fetch` raises, in the same subclasses for the same causes.
    :raises ConfigurationError: ``deadline_s`` is negative or not a number.
    """
    hops = Hops(url, limits, deadline_s)
    loop = asyncio.get_running_loop()

    def loop_deadline() -> float:  # on the event loop's clock, which need not be time.monotonic()
        return loop.time() + (hops.deadline.expires_at() - time.monotonic())

    try:
        async with asyncio.timeout_at(loop_deadline()) as timeout, AsyncExitStack() as own:
            if transport is None:  # a caller's transport stays open for the caller to reuse
                transport = await own.enter_async_context(
                    httpx.AsyncHTTPTransport(verify=own.enter_context(lend_context()), retries=0, limits=_ONE_USE)
                )
            client = httpx.AsyncClient(transport=transport, follow_redirects=False, trust_env=False)
            for _hop in range(limits.max_redirects + 1):
                target = await asyncio.to_thread(hops.check, policy, resolver)
                timeout.reschedule(loop_deadline())  # the transfer-rate rule moves the deadline
                try:
                    response = await client.send(hops.request(client, target), stream=True)
                    try:
                        if step := hops.inspect(response):
                            async for chunk in cast(AsyncIterable[bytes], response.stream):
                                step.reader.feed(chunk)
                                timeout.reschedule(loop_deadline())
                    finally:
                        await response.aclose()
                except (httpx.HTTPError, httpx.InvalidURL) as exc:
                    raise hops.transport_error(exc) from exc
                if step:
                    return _document(hops, step)
    except TimeoutError as exc:
        raise hops.deadline.error() from exc
    raise hops.too_many_redirects()


def _document(hops: Hops, step: FinalResponse) -> FetchedDocument:
    body = step.reader.body()
    return FetchedDocument(
        url=hops.asked_url,
        final_url=hops.current,
        status=step.status,
        content_type=hops.content_type(step, body),
        charset=step.charset,
        body=body,
    )


# Lookups stuck in a slow resolver keep a thread until the resolver gives up; this many may be stuck at once.
_LOOKUP_THREADS = 32


class ConnectionGuard:
    """
    Cuts the connection of one synchronous fetch when its deadline (read again at each alarm: it may move) passes;
    :attr:`trace` is the request's ``trace`` extension, through which httpcore reports the connection's socket.
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
