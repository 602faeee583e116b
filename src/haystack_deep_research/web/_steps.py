"""
What a fetch decides apart from its sync or async I/O: its :class:`Deadline`, its body read under a byte cap
(:class:`BodyReader` asks zlib for at most the bytes still allowed, so a compression bomb is cut without being held),
and :class:`Hops` (addressing the checked IP, redirects, the checks of a final response, how errors read); and the
verifying TLS client contexts lent to one fetch at a time (docs/safety.md, "Downloads end on time", says why).
"""

from __future__ import annotations

import math
import ssl
import threading
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

import httpx

from haystack_deep_research import _checks
from haystack_deep_research.errors import ContentTooLargeError, FetchError, FetchTimeoutError, UnsupportedContentError
from haystack_deep_research.web._text_files import text_charset

if TYPE_CHECKING:
    from haystack_deep_research.web.limits import FetchLimits
    from haystack_deep_research.web.url_policy import ResolvedURL, Resolver, UrlPolicy

USER_AGENT = "haystack-deep-research/0.1"
ALLOWED_CONTENT_TYPES = frozenset({"text/html", "application/xhtml+xml", "application/pdf", "text/plain"})
_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_HEADERS = {
    "User-Agent": USER_AGENT,
    "Accept": "text/html,application/xhtml+xml,application/pdf;q=0.9,text/plain;q=0.8",
    "Accept-Encoding": "gzip, deflate",
}


class Deadline:
    """
    When a fetch must end: ``min(limits.total_timeout, deadline_s)`` from now, and for each hop (:meth:`start_hop`)
    ``hop start + transfer_grace + body bytes received / min_transfer_rate``, which moves later as bytes arrive.
    """

    def __init__(self, limits: FetchLimits, *, url: str, deadline_s: float | None = None) -> None:
        self.url = url
        self._limits = limits
        self._by_caller = deadline_s is not None and deadline_s < limits.total_timeout
        self._seconds = deadline_s if deadline_s is not None and self._by_caller else limits.total_timeout
        self._end = time.monotonic() + self._seconds
        self._hop_end = math.inf
        self._received = 0

    def start_hop(self) -> None:
        """Start the rate rule over for a new request."""
        self._received = 0
        if self._limits.min_transfer_rate > 0:
            self._hop_end = time.monotonic() + self._limits.transfer_grace

    def add(self, count: int) -> None:
        """Count body bytes as sent (before decompression); each buys ``1 / min_transfer_rate`` seconds."""
        self._received += count
        if self._limits.min_transfer_rate > 0:
            self._hop_end += count / self._limits.min_transfer_rate

    def expires_at(self) -> float:
        """The ``time.monotonic()`` at which the fetch must stop: the earlier of the total and the rate deadline."""
        return min(self._end, self._hop_end)

    def remaining(self) -> float:
        """Seconds left, at least a small positive number so it can serve as a socket timeout; raises once past."""
        left = self.expires_at() - time.monotonic()
        if left <= 0:
            raise self.error()
        return max(left, 0.001)

    def error(self) -> FetchTimeoutError:
        """The error for an exceeded deadline, naming the limit that ran out."""
        if self._hop_end < self._end:
            rate = self._limits.min_transfer_rate
            return FetchTimeoutError(
                f"{self.url} sent its response slower than {rate:g} bytes per second after the first "
                f"{self._limits.transfer_grace:g} seconds (FetchLimits.min_transfer_rate), so it was cut off "
                f"after {self._received} bytes of body.",
                url=self.url,
            )
        if self._by_caller:
            return FetchTimeoutError(
                f"Reading {self.url} was stopped when the caller's deadline of {self._seconds:g} seconds ran out.",
                url=self.url,
            )
        return FetchTimeoutError(
            f"Reading {self.url} took longer than the total limit of {self._seconds:g} seconds.", url=self.url
        )


class BodyReader:
    """Collects a body, decoding gzip or deflate (nothing else), refused past ``max_bytes`` or the deadline."""

    def __init__(self, *, max_bytes: int, content_encoding: str | None, deadline: Deadline, url: str) -> None:
        self._max_bytes = max_bytes
        self._deadline = deadline
        self._url = url
        self._buffer = bytearray()
        self._encoding = _single_encoding(content_encoding, url)
        self._decoder: zlib._Decompress | None = None
        if self._encoding == "gzip":
            self._decoder = zlib.decompressobj(zlib.MAX_WBITS | 16)
        elif self._encoding == "deflate":
            self._decoder = zlib.decompressobj()
        self._started = False

    def feed(self, chunk: bytes) -> None:
        """Add a raw (possibly compressed) chunk as it came off the connection."""
        self._deadline.add(len(chunk))
        allowance = self._max_bytes - len(self._buffer) + 1
        data = chunk if self._decoder is None else self._decompress(chunk, allowance)
        self._started = True
        if len(data) >= allowance:
            raise self.too_large()
        self._buffer += data
        self._deadline.remaining()

    def body(self) -> bytes:
        return bytes(self._buffer)

    def too_large(self, declared: int | None = None) -> ContentTooLargeError:
        """The error for a body over the cap; ``declared`` is the ``Content-Length`` if that gave it away."""
        size = f" ({declared} bytes announced)" if declared is not None else ""
        return ContentTooLargeError(
            f"The document at {self._url} is larger than the download limit of {self._max_bytes} bytes{size}.",
            url=self._url,
        )

    def _decompress(self, chunk: bytes, allowance: int) -> bytes:
        assert self._decoder is not None
        try:
            data = self._decoder.decompress(chunk, allowance)
        except zlib.error as exc:
            if self._encoding != "deflate" or self._started:
                raise FetchError(
                    f"The {self._encoding}-compressed body from {self._url} is corrupt.", url=self._url
                ) from exc
            # Some servers send raw deflate data without the zlib header the standard asks for.
            self._decoder = zlib.decompressobj(-zlib.MAX_WBITS)
            return self._decompress(chunk, allowance)
        if self._decoder.unconsumed_tail:
            # zlib stopped at ``allowance`` bytes with input left: the body is over the cap.
            raise self.too_large()
        return data


def _single_encoding(header: str | None, url: str) -> str | None:
    codings = [part.strip().lower() for part in (header or "").split(",")]
    codings = [coding for coding in codings if coding and coding != "identity"]
    if not codings:
        return None
    if len(codings) == 1 and codings[0] in {"gzip", "x-gzip", "deflate"}:
        return "deflate" if codings[0] == "deflate" else "gzip"
    raise UnsupportedContentError(
        f"The body from {url} is compressed with {', '.join(codings)}, which cannot be read; only gzip and "
        "deflate are supported.",
        url=url,
    )


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
        :attr:`current` on; a FetchError for a bad redirect or status, a type or encoding that cannot be read, or a
        ``Content-Length`` over ``max_bytes``.
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
