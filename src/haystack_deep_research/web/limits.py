"""The limits on reading one document: download size and time, redirects, and what extracting its text may cost."""

from __future__ import annotations

from dataclasses import dataclass

from haystack_deep_research import _checks
from haystack_deep_research._serialization import FieldsSerialized

__all__ = ["FetchLimits"]


@dataclass(frozen=True, kw_only=True)
class FetchLimits(FieldsSerialized):
    """
    Limits on reading one document: downloading it, and turning it into text.

    Downloading (:func:`~haystack_deep_research.web.fetch` and :func:`~haystack_deep_research.web.fetch_async`):

    :param max_bytes: The largest body accepted, in bytes (after gzip/deflate decoding).
    :param connect_timeout: Seconds to wait for a connection.
    :param read_timeout: Seconds to wait for each read from the connection.
    :param total_timeout: Seconds the whole fetch may take (name lookups, connecting, TLS, redirects, headers, body),
        whatever the server does.
    :param min_transfer_rate: Bytes per second of body each response must keep up, on average, once
        ``transfer_grace`` seconds have passed since its request began (docs/safety.md); ``0`` turns the rule off.
    :param transfer_grace: Seconds each response may take (connecting, TLS, headers) before ``min_transfer_rate``
        applies.
    :param max_redirects: The most redirects followed (0 to 20); 0 refuses any redirect.

    Extracting text (:func:`~haystack_deep_research.web.extract_text`):

    :param max_pdf_pages: The most PDF pages turned into text.
    :param max_pdf_decompressed_bytes: The most bytes of page content a PDF may decompress to, all pages together;
        reading stops at the page that would pass it.
    :param extraction_timeout: Seconds the parser may spend on one HTML or PDF document before it is refused.
    :param max_extraction_memory: Bytes of memory the parser may allocate for one HTML or PDF document, on top of
        what it holds when idle (enforced on Linux; at least 32 MiB).
    :raises ConfigurationError: A value is out of range.
    """

    max_bytes: int = 5_000_000
    connect_timeout: float = 5.0
    read_timeout: float = 10.0
    total_timeout: float = 30.0
    min_transfer_rate: float = 16_384.0
    transfer_grace: float = 5.0
    max_redirects: int = 5
    max_pdf_pages: int = 50
    max_pdf_decompressed_bytes: int = 4_000_000
    extraction_timeout: float = 15.0
    max_extraction_memory: int = 100 * 1024 * 1024

    def __post_init__(self) -> None:
        for name in ("max_bytes", "max_pdf_pages", "max_pdf_decompressed_bytes"):
            _checks.int_in_range(f"FetchLimits.{name}", getattr(self, name), 1)
        _checks.int_in_range("FetchLimits.max_redirects", self.max_redirects, 0, 20)
        _checks.int_in_range("FetchLimits.max_extraction_memory", self.max_extraction_memory, 32 * 1024 * 1024)
        for name in ("connect_timeout", "read_timeout", "total_timeout", "transfer_grace", "extraction_timeout"):
            object.__setattr__(self, name, _checks.number_in_range(f"FetchLimits.{name}", getattr(self, name), 0))
        rate = _checks.number_in_range("FetchLimits.min_transfer_rate", self.min_transfer_rate, 0, include_low=True)
        object.__setattr__(self, "min_transfer_rate", rate)
