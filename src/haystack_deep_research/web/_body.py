"""
A fetch's :class:`Deadline`, and its body: read under a byte cap (:class:`BodyReader` asks zlib for at most the bytes
still allowed, so a compression bomb is cut without being held), then decoded by the character set declared, looked up
among the WHATWG labels (``webencodings``), never Python's codecs, which know ``rot13`` and ``zlib`` (docs/safety.md).
"""

from __future__ import annotations

import math
import re
import time
import zlib
from typing import TYPE_CHECKING

import webencodings

from haystack_deep_research.errors import ContentTooLargeError, FetchError, FetchTimeoutError, UnsupportedContentError

if TYPE_CHECKING:
    from haystack_deep_research.web.limits import FetchLimits

__all__ = ["BodyReader", "Deadline", "decode", "decode_html", "text_charset"]

_UTF8 = webencodings.UTF8
_WINDOWS_1252 = webencodings.lookup("windows-1252") or _UTF8  # always in the table
# Where a page declares its encoding in its markup, and how far in browsers look for it (the HTML prescan).
_PRESCAN_BYTES = 1024
_DECLARATIONS = (
    re.compile(rb"""^\s*<\?xml[^>]*?\bencoding\s*=\s*["']([^"']{1,40})["']"""),
    re.compile(rb"""<meta\b[^>]*?\bcharset\s*=\s*["']?\s*([^\s"'>;/]{1,40})""", re.IGNORECASE),
)


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


def decode(body: bytes, charset: str | None) -> str:
    """A body decoded by its byte order mark, else its character set, else UTF-8; bad bytes become U+FFFD."""
    return _decode(body, _encoding(charset) or _UTF8)


def decode_html(body: bytes, charset: str | None) -> str:
    """
    An HTML or XHTML page decoded as :func:`decode`, but with the encoding its markup declares before UTF-8 (when valid)
    and windows-1252 (what browsers assume for an undeclared legacy page).
    """
    encoding = _encoding(charset) or _declared_in_markup(body)
    if encoding is None:
        try:
            body.decode("utf-8")
            encoding = _UTF8
        except UnicodeDecodeError:
            encoding = _WINDOWS_1252
    return _decode(body, encoding)


def text_charset(label: str) -> str | None:
    """A declared character set label (``"ISO-8859-1"``) stripped and lower-cased, or ``None`` for no text encoding."""
    return label.strip().lower() if _encoding(label) is not None else None


def _encoding(label: str | None) -> webencodings.Encoding | None:
    return webencodings.lookup(label) if label else None


def _declared_in_markup(body: bytes) -> webencodings.Encoding | None:
    head = body[:_PRESCAN_BYTES]
    for declaration in _DECLARATIONS:
        found = declaration.search(head)
        encoding = _encoding(found.group(1).decode("ascii", "replace")) if found else None
        if encoding is not None:
            # Markup readable as ASCII is not UTF-16 whatever it says (the HTML prescan's rule).
            return _UTF8 if encoding.name.startswith("utf-16") else encoding
    return None


def _decode(body: bytes, encoding: webencodings.Encoding) -> str:
    text, _used = webencodings.decode(body, encoding, errors="replace")
    return text
