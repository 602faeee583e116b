"""
What a fetch decides apart from its sync or async I/O (:class:`Hops`: addressing the checked IP, redirects, the
checks of a final response, how errors read), and the verifying TLS client contexts lent to one fetch at a time
(docs/safety.md, "Downloads end on time", says why they are kept).
"""

from __future__ import annotations

import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

import httpx

from haystack_deep_research import _checks
from haystack_deep_research.errors import FetchError, FetchTimeoutError, UnsupportedContentError
from haystack_deep_research.web._body import BodyReader, Deadline, text_charset

if TYPE_CHECKING:
    from haystack_deep_research.web.limits import FetchLimits
    from haystack_deep_research.web.url_policy import ResolvedURL, Resolver, UrlPolicy

__all__ = [
    "ALLOWED_CONTENT_TYPES",
    "USER_AGENT",
    "FinalResponse",
    "Hops",
    "lend_context",
    "prepare_contexts",
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


class Hops:
    """One fetch's way through its redirects: the URL asked for, the one read now, the limits and the deadline."""

    def __init__(self, url: str, limits: FetchLimits, deadline_s: float | None) -> None:
        if deadline_s is not None:
            deadline_s = _checks.number_in_range("deadline_s", deadline_s, 0, include_low=True)
        self.asked_url = self.current = url
        self.limits = limits
        self.deadline = Deadline(limits, url=url, deadline_s=deadline_s)

    def check(self, policy: UrlPolicy, resolver: Resolver | None) -> ResolvedURL:
        """Check the next hop with the policy and start its rate rule; a refused redirect target names its origin."""
        try:
            target = policy.check(self.current, resolver=resolver)
        except FetchError as exc:
            if self.current == self.asked_url:
                raise
            raise type(exc)(f"{exc} It was reached by a redirect from {self.asked_url}.", url=self.asked_url) from exc
        self.current = target.url
        self.deadline.start_hop()
        return target

    def request(self, client: httpx.Client | httpx.AsyncClient, target: ResolvedURL) -> httpx.Request:
        """
        A GET request to the checked address (no second DNS lookup) that names the original host in ``Host`` and,
        for https, as the TLS server name the certificate is checked against. No timeout runs past the deadline.
        """
        original = httpx.URL(target.url)
        remaining = self.deadline.remaining()
        limits = self.limits
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

    def inspect(self, response: httpx.Response) -> FinalResponse | None:
        """
        The accepted final response whose headers have arrived, or ``None`` for a redirect, which moves
        :attr:`current` on.

        :raises FetchError: A redirect has no usable ``Location`` or the final status is not 2xx.
        :raises ContentTooLargeError: ``Content-Length`` announces more than ``max_bytes``.
        :raises UnsupportedContentError: The content type or content encoding cannot be read.
        """
        status, current, asked_url = response.status_code, self.current, self.asked_url
        if status in _REDIRECT_STATUSES:
            location = response.headers.get("Location", "").strip()
            if not location:
                raise FetchError(f"HTTP {status} from {current} redirects without a Location header.", url=asked_url)
            try:
                self.current = str(httpx.URL(current).join(location).copy_with(fragment=None))
            except (httpx.InvalidURL, UnicodeError, ValueError) as exc:
                raise FetchError(f"{current} redirects to an invalid URL: {location!r}.", url=asked_url) from exc
            return None
        if not 200 <= status < 300:
            raise FetchError(f"HTTP {status} from {current}", url=asked_url)
        content_type, charset = _parse_content_type(response.headers.get("Content-Type"))
        if content_type is not None and content_type not in ALLOWED_CONTENT_TYPES:
            raise self._unsupported(content_type)
        reader = BodyReader(
            max_bytes=self.limits.max_bytes,
            content_encoding=response.headers.get("Content-Encoding"),
            deadline=self.deadline,
            url=asked_url,
        )
        declared = response.headers.get("Content-Length", "").strip()
        if declared.isdigit() and int(declared) > self.limits.max_bytes:
            raise reader.too_large(int(declared))
        return FinalResponse(status=status, content_type=content_type, charset=charset, reader=reader)

    def content_type(self, step: FinalResponse, body: bytes) -> str:
        """The content type, recognising PDF and HTML by their first bytes when the server sent no type."""
        if step.content_type is not None:
            return step.content_type
        head = body[:1024].lstrip().lower()
        if head.startswith(b"%pdf-"):
            return "application/pdf"
        if head.startswith((b"<!doctype html", b"<html")):
            return "text/html"
        raise self._unsupported("(none)")

    def too_many_redirects(self) -> FetchError:
        return FetchError(
            f"{self.asked_url} redirected more than {self.limits.max_redirects} times; the redirect limit was reached.",
            url=self.asked_url,
        )

    def transport_error(self, exc: Exception) -> FetchError:
        """An httpx error as the library's: a :class:`FetchTimeoutError` for timeouts, else a :class:`FetchError`."""
        current, asked_url = self.current, self.asked_url
        detail = str(exc).strip() or type(exc).__name__
        if len(detail) > 200:
            detail = detail[:197] + "..."
        if isinstance(exc, httpx.ConnectTimeout):
            return FetchTimeoutError(f"Timed out connecting to {current}.", url=asked_url)
        if isinstance(exc, httpx.TimeoutException):
            return FetchTimeoutError(f"Timed out waiting for {current} to respond.", url=asked_url)
        if isinstance(exc, httpx.ConnectError):
            return FetchError(f"Could not connect to {current}: {detail}", url=asked_url)
        return FetchError(f"Reading {current} failed: {detail}", url=asked_url)

    def _unsupported(self, content_type: str) -> UnsupportedContentError:
        return UnsupportedContentError(
            f"The content type {content_type} at {self.current} cannot be read; only HTML, XHTML, PDF and plain "
            "text are supported.",
            url=self.asked_url,
        )


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


_MAX_IDLE = 32
_lock = threading.Lock()
_idle: list[ssl.SSLContext] = []
_preparing: list[threading.Thread] = []


def prepare_contexts(count: int) -> None:
    """Have ``count`` idle contexts built in a background thread, once a process; returns at once."""
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
