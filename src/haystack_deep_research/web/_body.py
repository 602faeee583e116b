"""
Reading a response body under a byte cap and a deadline, decoding gzip or deflate without unbounded output.

Both :func:`~haystack_deep_research.web.fetch.fetch` and
:func:`~haystack_deep_research.web.fetch.fetch_async` feed raw chunks into a :class:`BodyReader`, so the size
accounting, decompression and deadline checks exist once. Decompression asks zlib for at most the bytes still
allowed, so a small compressed body that would expand to gigabytes is cut at the cap without ever being held.
"""

from __future__ import annotations

import time
import zlib

from haystack_deep_research.errors import ContentTooLargeError, FetchError, FetchTimeoutError, UnsupportedContentError

__all__ = ["BodyReader", "Deadline"]


class Deadline:
    """
    The total time a fetch may take, counted from construction.

    :param seconds: The time limit.
    :param url: The URL asked for, named in the timeout error.
    """

    def __init__(self, seconds: float, *, url: str) -> None:
        self.seconds = seconds
        self.url = url
        self._end = time.monotonic() + seconds

    def remaining(self) -> float:
        """
        Time left before the deadline.

        :returns: Seconds left (at least a small positive number, so it can serve as a socket timeout).
        :raises FetchTimeoutError: The deadline has passed.
        """
        left = self._end - time.monotonic()
        if left <= 0:
            raise self.error()
        return max(left, 0.001)

    def error(self) -> FetchTimeoutError:
        """
        Build the error for an exceeded deadline.

        :returns: A :class:`FetchTimeoutError` naming the URL and the limit.
        """
        return FetchTimeoutError(
            f"Reading {self.url} took longer than the total limit of {self.seconds:g} seconds.", url=self.url
        )


class BodyReader:
    """
    Collects a response body, decoding its content encoding, and refuses it once it exceeds ``max_bytes``.

    :param max_bytes: The largest decoded body accepted.
    :param content_encoding: The ``Content-Encoding`` header value, or ``None``.
    :param deadline: The fetch's deadline, checked after every chunk.
    :param url: The URL asked for, named in errors.
    :raises UnsupportedContentError: The content encoding is not identity, gzip or deflate.
    """

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
        """
        Add a raw chunk as it came off the connection.

        :param chunk: The raw (possibly compressed) bytes.
        :raises ContentTooLargeError: The decoded body now exceeds ``max_bytes``.
        :raises FetchTimeoutError: The deadline has passed.
        :raises FetchError: The compressed data is corrupt.
        """
        allowance = self._max_bytes - len(self._buffer) + 1
        data = chunk if self._decoder is None else self._decompress(chunk, allowance)
        self._started = True
        if len(data) >= allowance:
            raise self.too_large()
        self._buffer += data
        self._deadline.remaining()

    def body(self) -> bytes:
        """
        The body collected so far.

        :returns: The decoded bytes.
        """
        return bytes(self._buffer)

    def too_large(self, declared: int | None = None) -> ContentTooLargeError:
        """
        Build the error for a body over the cap.

        :param declared: The size the ``Content-Length`` header announced, if that is what gave it away.
        :returns: A :class:`ContentTooLargeError` naming the URL and the cap.
        """
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
