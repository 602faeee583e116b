"""
Guarded downloading: every redirect hop checked by the URL policy, a byte cap, and a total deadline.

:func:`fetch` and :func:`fetch_async` follow redirects themselves, checking each hop with a
:class:`~haystack_deep_research.web.url_policy.UrlPolicy`, and connect to the address the policy checked rather
than resolving the host a second time. The body is streamed and dropped as soon as it passes
``FetchLimits.max_bytes``; a total deadline covers connecting, every redirect and the body.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable, Iterable
from contextlib import AsyncExitStack, ExitStack
from dataclasses import dataclass
from typing import cast

import httpx

from haystack_deep_research.web._body import Deadline
from haystack_deep_research.web._steps import (
    FinalResponse,
    build_request,
    check_hop,
    inspect_response,
    settle_content_type,
    too_many_redirects,
    transport_error,
)
from haystack_deep_research.web._tls import lend_context
from haystack_deep_research.web.limits import FetchLimits
from haystack_deep_research.web.url_policy import Resolver, UrlPolicy

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
) -> FetchedDocument:
    """
    Download a URL, checking it and every redirect hop with ``policy``.

    The total deadline is checked before every hop and after every read, and no connect or read timeout is set
    beyond it; a host name lookup by the system resolver runs to the resolver's own timeout.

    :param url: The http or https URL to read.
    :param policy: The URL policy applied to the URL and every redirect target.
    :param limits: Size, time and redirect limits.
    :param transport: An httpx transport to send requests through (for tests or a proxy); it is left open. By
        default a fresh connection is opened for every request and closed afterwards; only the
        verifying TLS context is reused, one fetch at a time.
    :param resolver: Resolves host names for the policy; defaults to the system resolver.
    :returns: The downloaded document.
    :raises URLRefusedError: The policy refused the URL or a redirect hop.
    :raises ContentTooLargeError: The body is larger than ``limits.max_bytes``.
    :raises FetchTimeoutError: A connect or read timeout, or the total deadline, ran out.
    :raises UnsupportedContentError: The content type or encoding cannot be read.
    :raises FetchError: The final status is not 2xx, there were too many redirects, or the connection failed.
    """
    deadline = Deadline(limits.total_timeout, url=url)
    current = url
    with ExitStack() as own:
        if transport is None:  # a caller's transport stays open for the caller to reuse
            transport = own.enter_context(
                httpx.HTTPTransport(verify=own.enter_context(lend_context()), retries=0, limits=_ONE_USE)
            )
        client = httpx.Client(transport=transport, follow_redirects=False, trust_env=False)
        for _hop in range(limits.max_redirects + 1):
            target = check_hop(policy, current, resolver=resolver, asked_url=url)
            current = target.url
            try:
                request = build_request(client, target, limits, deadline)
                response = client.send(request, stream=True)
                try:
                    step = inspect_response(
                        response, current_url=current, asked_url=url, limits=limits, deadline=deadline
                    )
                    if isinstance(step, FinalResponse):
                        # The raw stream, not iter_raw(): a mock transport's response may already be read into
                        # memory, and its stream still yields the undecoded bytes.
                        for chunk in cast(Iterable[bytes], response.stream):
                            step.reader.feed(chunk)
                finally:
                    response.close()
            except (httpx.HTTPError, httpx.InvalidURL) as exc:
                raise transport_error(exc, current_url=current, asked_url=url) from exc
            if isinstance(step, str):
                current = step
                continue
            return _document(step, asked_url=url, final_url=current)
    raise too_many_redirects(limits, url)


async def fetch_async(
    url: str,
    *,
    policy: UrlPolicy,
    limits: FetchLimits,
    transport: httpx.AsyncBaseTransport | None = None,
    resolver: Resolver | None = None,
) -> FetchedDocument:
    """
    Download a URL without blocking the event loop; the same contract as :func:`fetch`.

    Host names are resolved in a worker thread, and the total deadline is enforced strictly (it also cuts a
    read that is waiting).

    :param url: The http or https URL to read.
    :param policy: The URL policy applied to the URL and every redirect target.
    :param limits: Size, time and redirect limits.
    :param transport: An httpx async transport to send requests through (for tests or a proxy); it is left open.
    :param resolver: Resolves host names for the policy; defaults to the system resolver.
    :returns: The downloaded document.
    :raises URLRefusedError: The policy refused the URL or a redirect hop.
    :raises ContentTooLargeError: The body is larger than ``limits.max_bytes``.
    :raises FetchTimeoutError: A connect or read timeout, or the total deadline, ran out.
    :raises UnsupportedContentError: The content type or encoding cannot be read.
    :raises FetchError: The final status is not 2xx, there were too many redirects, or the connection failed.
    """
    deadline = Deadline(limits.total_timeout, url=url)
    try:
        async with asyncio.timeout(limits.total_timeout):
            return await _fetch_async_hops(
                url, policy=policy, limits=limits, transport=transport, resolver=resolver, deadline=deadline
            )
    except TimeoutError as exc:
        raise deadline.error() from exc


async def _fetch_async_hops(
    url: str,
    *,
    policy: UrlPolicy,
    limits: FetchLimits,
    transport: httpx.AsyncBaseTransport | None,
    resolver: Resolver | None,
    deadline: Deadline,
) -> FetchedDocument:
    current = url
    async with AsyncExitStack() as own:
        if transport is None:  # a caller's transport stays open for the caller to reuse
            transport = await own.enter_async_context(
                httpx.AsyncHTTPTransport(verify=own.enter_context(lend_context()), retries=0, limits=_ONE_USE)
            )
        client = httpx.AsyncClient(transport=transport, follow_redirects=False, trust_env=False)
        for _hop in range(limits.max_redirects + 1):
            target = await asyncio.to_thread(check_hop, policy, current, resolver=resolver, asked_url=url)
            current = target.url
            try:
                request = build_request(client, target, limits, deadline)
                response = await client.send(request, stream=True)
                try:
                    step = inspect_response(
                        response, current_url=current, asked_url=url, limits=limits, deadline=deadline
                    )
                    if isinstance(step, FinalResponse):
                        async for chunk in cast(AsyncIterable[bytes], response.stream):
                            step.reader.feed(chunk)
                finally:
                    await response.aclose()
            except (httpx.HTTPError, httpx.InvalidURL) as exc:
                raise transport_error(exc, current_url=current, asked_url=url) from exc
            if isinstance(step, str):
                current = step
                continue
            return _document(step, asked_url=url, final_url=current)
    raise too_many_redirects(limits, url)


def _document(step: FinalResponse, *, asked_url: str, final_url: str) -> FetchedDocument:
    body = step.reader.body()
    content_type = settle_content_type(step.content_type, body, current_url=final_url, asked_url=asked_url)
    return FetchedDocument(
        url=asked_url,
        final_url=final_url,
        status=step.status,
        content_type=content_type,
        charset=step.charset,
        body=body,
    )
