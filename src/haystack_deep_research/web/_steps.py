"""
The steps of one fetch that do not depend on sync or async I/O.

:func:`~haystack_deep_research.web.fetch.fetch` and :func:`~haystack_deep_research.web.fetch.fetch_async` only
send requests and pull chunks; everything they decide (how to address the checked IP, whether a response is a
redirect and where to, whether a final response is acceptable, how transport errors read) lives here; and the
verifying TLS client contexts, built once and lent to one fetch at a time.

Building a context loads the whole CA bundle, which costs tens of milliseconds, so a fresh one per page would
dominate the cost of reading it. A fetch still opens its own connection to the checked address (no connection is
reused across fetches or hosts); only the context, which holds no per-connection state, is kept. Each context is
lent to one fetch at a time, because the HTTP stack sets its ALPN protocols on every connect.

The contexts are built by httpx, with its defaults: certificate and host name checks on, the ``certifi`` bundle, or
the bundle named by ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` when one of them was set before the first https fetch.
:func:`prepare_contexts` builds some in the background ahead of the first fetches (``read_url`` asks for them when it
warms up, so a run's first pages, read side by side, do not each wait for a context while the run's first model calls
are still running).
"""

from __future__ import annotations

import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

import httpx

from haystack_deep_research.errors import FetchError, FetchTimeoutError, UnsupportedContentError
from haystack_deep_research.web._body import BodyReader, Deadline, text_charset

if TYPE_CHECKING:
    from haystack_deep_research.web.limits import FetchLimits
    from haystack_deep_research.web.url_policy import ResolvedURL, Resolver, UrlPolicy

__all__ = [
    "ALLOWED_CONTENT_TYPES",
    "USER_AGENT",
    "FinalResponse",
    "build_request",
    "check_hop",
    "inspect_response",
    "lend_context",
    "prepare_contexts",
    "settle_content_type",
    "too_many_redirects",
    "transport_error",
]

USER_AGENT = "haystack-deep-research/0.1"
ALLOWED_CONTENT_TYPES = frozenset({"text/html", "application/xhtml+xml", "application/pdf", "text/plain"})
_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_HEADERS = {
    "User-Agent": USER_AGENT,
    "Accept": "text/html,application/xhtml+xml,application/pdf;q=0.9,text/plain;q=0.8",
    "Accept-Encoding": "gzip, deflate",
}


@dataclass(frozen=True)
class FinalResponse:
    """A final (non-redirect) response that passed the status and header checks; its body is still to be read."""

    status: int
    content_type: str | None
    charset: str | None
    reader: BodyReader


def check_hop(policy: UrlPolicy, url: str, *, resolver: Resolver | None, asked_url: str) -> ResolvedURL:
    """Check one hop with the policy; a refused redirect target says which URL redirected there."""
    try:
        return policy.check(url, resolver=resolver)
    except FetchError as exc:
        if url == asked_url:
            raise
        raise type(exc)(f"{exc} It was reached by a redirect from {asked_url}.", url=asked_url) from exc


def build_request(
    client: httpx.Client | httpx.AsyncClient, target: ResolvedURL, limits: FetchLimits, deadline: Deadline
) -> httpx.Request:
    """
    Build a GET request that connects to the checked address while naming the original host.

    The URL's host is replaced by ``target.address`` (so no second DNS lookup happens), the ``Host`` header
    carries the original host, and for https the original host is the TLS server name, so the certificate is
    checked against it. No timeout runs past the total deadline.
    """
    original = httpx.URL(target.url)
    remaining = deadline.remaining()
    timeout = httpx.Timeout(
        connect=min(limits.connect_timeout, remaining),
        read=min(limits.read_timeout, remaining),
        write=min(limits.read_timeout, remaining),
        pool=min(limits.connect_timeout, remaining),
    )
    extensions = {"sni_hostname": target.host} if target.scheme == "https" else {}
    return client.build_request(
        "GET",
        original.copy_with(host=target.address),
        headers={**_HEADERS, "Host": original.netloc.decode("ascii")},
        timeout=timeout,
        extensions=extensions,
    )


def inspect_response(
    response: httpx.Response, *, current_url: str, asked_url: str, limits: FetchLimits, deadline: Deadline
) -> str | FinalResponse:
    """
    Decide what to do with a response whose headers have arrived.

    :returns: The absolute URL to go to next for a redirect, or the accepted final response.
    :raises FetchError: A redirect has no usable ``Location`` or the final status is not 2xx.
    :raises ContentTooLargeError: ``Content-Length`` announces more than ``max_bytes``.
    :raises UnsupportedContentError: The content type or content encoding cannot be read.
    """
    status = response.status_code
    if status in _REDIRECT_STATUSES:
        location = response.headers.get("Location", "").strip()
        if not location:
            raise FetchError(f"HTTP {status} from {current_url} redirects without a Location header.", url=asked_url)
        try:
            return str(httpx.URL(current_url).join(location).copy_with(fragment=None))
        except (httpx.InvalidURL, UnicodeError, ValueError) as exc:
            raise FetchError(f"{current_url} redirects to an invalid URL: {location!r}.", url=asked_url) from exc
    if not 200 <= status < 300:
        raise FetchError(f"HTTP {status} from {current_url}", url=asked_url)
    content_type, charset = _parse_content_type(response.headers.get("Content-Type"))
    if content_type is not None and content_type not in ALLOWED_CONTENT_TYPES:
        raise _unsupported(content_type, current_url, asked_url)
    reader = BodyReader(
        max_bytes=limits.max_bytes,
        content_encoding=response.headers.get("Content-Encoding"),
        deadline=deadline,
        url=asked_url,
    )
    declared = _content_length(response)
    if declared is not None and declared > limits.max_bytes:
        raise reader.too_large(declared)
    return FinalResponse(status=status, content_type=content_type, charset=charset, reader=reader)


def settle_content_type(content_type: str | None, body: bytes, *, current_url: str, asked_url: str) -> str:
    """The content type, recognising PDF and HTML by their first bytes when the server sent no type."""
    if content_type is not None:
        return content_type
    head = body[:1024].lstrip().lower()
    if head.startswith(b"%pdf-"):
        return "application/pdf"
    if head.startswith((b"<!doctype html", b"<html")):
        return "text/html"
    raise _unsupported("(none)", current_url, asked_url)


def too_many_redirects(limits: FetchLimits, asked_url: str) -> FetchError:
    return FetchError(
        f"{asked_url} redirected more than {limits.max_redirects} times; the redirect limit was reached.",
        url=asked_url,
    )


def transport_error(exc: Exception, *, current_url: str, asked_url: str) -> FetchError:
    """An httpx error as the library's: a :class:`FetchTimeoutError` for timeouts, otherwise a :class:`FetchError`."""
    detail = str(exc).strip() or type(exc).__name__
    if len(detail) > 200:
        detail = detail[:197] + "..."
    if isinstance(exc, httpx.ConnectTimeout):
        return FetchTimeoutError(f"Timed out connecting to {current_url}.", url=asked_url)
    if isinstance(exc, httpx.TimeoutException):
        return FetchTimeoutError(f"Timed out waiting for {current_url} to respond.", url=asked_url)
    if isinstance(exc, httpx.ConnectError):
        return FetchError(f"Could not connect to {current_url}: {detail}", url=asked_url)
    return FetchError(f"Reading {current_url} failed: {detail}", url=asked_url)


def _parse_content_type(header: str | None) -> tuple[str | None, str | None]:
    if not header or not header.strip():
        return None, None
    mime, *params = header.split(";")
    charset = None
    for param in params:
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset":
            charset = text_charset(value.strip().strip("\"'")) or charset
    return mime.strip().lower() or None, charset


def _content_length(response: httpx.Response) -> int | None:
    value = response.headers.get("Content-Length", "").strip()
    return int(value) if value.isdigit() else None


def _unsupported(content_type: str, current_url: str, asked_url: str) -> UnsupportedContentError:
    return UnsupportedContentError(
        f"The content type {content_type} at {current_url} cannot be read; only HTML, XHTML, PDF and plain "
        "text are supported.",
        url=asked_url,
    )


_MAX_IDLE = 32
_lock = threading.Lock()
_idle: list[ssl.SSLContext] = []
_preparing: list[threading.Thread] = []


def prepare_contexts(count: int) -> None:
    """
    Have ``count`` idle contexts ready (at most the pool's size), built in a background thread; returns at once.
    Only the first call in a process builds any: later ones find the contexts the run's fetches give back.
    """
    wanted = min(count, _MAX_IDLE)
    with _lock:
        if _preparing:
            return
        thread = threading.Thread(target=_build, args=(wanted,), name="hdr-tls-contexts", daemon=True)
        _preparing[:] = [thread]
    thread.start()


def _build(wanted: int) -> None:
    while True:
        with _lock:
            if len(_idle) >= wanted:
                return
        context = httpx.create_ssl_context()
        with _lock:
            _idle.append(context)


@contextmanager
def lend_context() -> Iterator[ssl.SSLContext]:
    """Borrow a verifying TLS client context that no other fetch uses until it is given back, for one fetch."""
    with _lock:
        context = _idle.pop() if _idle else None
    if context is None:
        context = httpx.create_ssl_context()
    try:
        yield context
    finally:
        with _lock:
            if len(_idle) < _MAX_IDLE:
                _idle.append(context)
