"""
Turning a downloaded document into plain text: HTML and XHTML through trafilatura, PDFs through pypdf, office files
(read from local folders) through Haystack's converters, all in parser processes under ``FetchLimits``' time and
memory bounds (docs/safety.md); plain text is decoded here. Every failure is an
:class:`~haystack_deep_research.errors.ExtractionError` naming the URL.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from haystack_deep_research import _checks
from haystack_deep_research.errors import ConfigurationError, ExtractionError, UnsupportedContentError
from haystack_deep_research.web import _pool
from haystack_deep_research.web._text_files import decode
from haystack_deep_research.web.fetch import FetchedDocument
from haystack_deep_research.web.limits import FetchLimits

__all__ = ["ExtractedText", "extract_text", "extract_text_async", "extract_text_file"]

_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_OFFICE = "application/vnd.openxmlformats-officedocument."
# Word, PowerPoint and Excel files, parsed with Haystack's converters (only local folders are read in these formats:
# the web reader does not accept them).
_OFFICE_TYPES = {
    f"{_OFFICE}wordprocessingml.document": "docx",
    f"{_OFFICE}presentationml.presentation": "pptx",
    f"{_OFFICE}spreadsheetml.sheet": "xlsx",
}
# Threads that wait for a parser process on behalf of extract_text_async; waiting is all they do.
_WAITING_THREADS = 64


@dataclass(frozen=True, kw_only=True)
class ExtractedText:
    """
    The readable text of a document.

    :param title: The document's title, or ``""`` when it has none.
    :param text: The main text.
    :param content_type: The content type it was extracted from, for example ``"application/pdf"``.
    """

    title: str
    text: str
    content_type: str


def extract_text(
    document: FetchedDocument,
    *,
    max_pdf_pages: int | None = None,
    limits: FetchLimits | None = None,
    deadline_s: float | None = None,
) -> ExtractedText:
    """
    Extract the title and main text of a fetched document (in a parser process, but for plain text).

    :param document: The downloaded document.
    :param max_pdf_pages: The most PDF pages to read (at least 1); later pages are ignored. ``None`` takes
        ``limits.max_pdf_pages``.
    :param limits: The extraction limits; ``None`` takes the defaults of :class:`FetchLimits`.
    :param deadline_s: Seconds the caller has left in all, waiting for a free parser process included (for example
        what remains of a run's time budget); ``None`` for no limit beyond ``limits.extraction_timeout``.
    :returns: The title and text.
    :raises ConfigurationError: ``max_pdf_pages`` is below 1, ``limits`` is not a :class:`FetchLimits`, or
        ``deadline_s`` is negative.
    :raises UnsupportedContentError: The content type is not HTML, XHTML, PDF, plain text, DOCX, PPTX or XLSX.
    :raises ExtractionError: The document is malformed, encrypted, holds no text, or could not be parsed within
        the time and memory allowed.
    """
    request = _Request(document, max_pdf_pages=max_pdf_pages, limits=limits, deadline_s=deadline_s)
    return request.answer(request.parse(_pool.Ticket())) if request.header else request.plain_text()


async def extract_text_async(
    document: FetchedDocument,
    *,
    max_pdf_pages: int | None = None,
    limits: FetchLimits | None = None,
    deadline_s: float | None = None,
) -> ExtractedText:
    """
    :func:`extract_text` without blocking the event loop: the parse is waited for in a thread of the library's own
    (not the loop's default executor), and cancelling the awaiting task kills the parser process working on it.

    :param document: The downloaded document.
    :param max_pdf_pages: The most PDF pages to read; ``None`` takes ``limits.max_pdf_pages``.
    :param limits: The extraction limits; ``None`` takes the defaults of :class:`FetchLimits`.
    :param deadline_s: Seconds the caller has left in all; ``None`` for no limit beyond the extraction timeout.
    :returns: The title and text.
    :raises ConfigurationError: An argument is out of range.
    :raises FetchError: What :func:`extract_text` raises (``UnsupportedContentError``, ``ExtractionError``).
    """
    request = _Request(document, max_pdf_pages=max_pdf_pages, limits=limits, deadline_s=deadline_s)
    if request.header is None:
        return request.plain_text()
    ticket = _pool.Ticket()
    waiting = _pool.waiting_threads("haystack-deep-research-parse", _WAITING_THREADS)
    try:
        answer = await asyncio.get_running_loop().run_in_executor(waiting, request.parse, ticket)
    except asyncio.CancelledError:
        ticket.cancel()
        raise
    return request.answer(answer)


class _Request:
    """One document checked and routed: a request for a parser process, or plain text to decode here."""

    def __init__(
        self,
        document: FetchedDocument,
        *,
        max_pdf_pages: int | None,
        limits: FetchLimits | None,
        deadline_s: float | None,
    ) -> None:
        if limits is not None and not isinstance(limits, FetchLimits):
            raise ConfigurationError(f"limits must be a FetchLimits or None; got {type(limits).__name__}.")
        self.limits = limits or FetchLimits()
        pages = self.limits.max_pdf_pages if max_pdf_pages is None else max_pdf_pages
        _checks.int_in_range("max_pdf_pages", pages, 1)
        if deadline_s is not None:
            deadline_s = _checks.number_in_range("deadline_s", deadline_s, 0, include_low=True)
        self.deadline_s = deadline_s
        self.document = document
        self.header: dict[str, Any] | None = None
        common = {"url": document.final_url, "max_memory": self.limits.max_extraction_memory}
        if document.content_type in _HTML_TYPES:
            self.header = {"kind": "html", "charset": document.charset, **common}
        elif document.content_type == "application/pdf":
            self.header = {
                "kind": "pdf",
                "max_pdf_pages": pages,
                "max_pdf_decompressed_bytes": self.limits.max_pdf_decompressed_bytes,
                **common,
            }
        elif document.content_type in _OFFICE_TYPES:
            self.header = {"kind": "office", "format": _OFFICE_TYPES[document.content_type], **common}
        elif document.content_type != "text/plain":
            raise UnsupportedContentError(
                f"The content type {document.content_type} at {document.final_url} cannot be read; only HTML, "
                "XHTML, PDF, plain text, DOCX, PPTX and XLSX are supported.",
                url=document.url,
            )

    def parse(self, ticket: _pool.Ticket) -> tuple[dict[str, Any], bytes]:
        assert self.header is not None
        document = self.document
        return _pool.parse(
            self.header,
            document.body,
            url=document.final_url,
            asked_url=document.url,
            timeout=self.limits.extraction_timeout,
            deadline_s=self.deadline_s,
            ticket=ticket,
        )

    def answer(self, answer: tuple[dict[str, Any], bytes]) -> ExtractedText:
        header, payload = answer
        if "error" in header:
            raise ExtractionError(str(header["error"]), url=self.document.url)
        return ExtractedText(
            title=str(header.get("title", "")),
            text=payload.decode("utf-8", "surrogatepass"),
            content_type=self.document.content_type,
        )

    def plain_text(self) -> ExtractedText:
        text = decode(self.document.body, self.document.charset).strip()
        if not text:
            raise ExtractionError(f"The document at {self.document.final_url} is empty.", url=self.document.url)
        return ExtractedText(title="", text=text, content_type=self.document.content_type)


def extract_text_file(data: bytes, *, name: str, url: str, limits: FetchLimits | None = None) -> tuple[str, str, str]:
    """
    ``(text, title, encoding)`` of a local text file (``.md``, ``.txt``, ``.csv``, which ``name`` tells apart) read in
    a parser process within the extraction limits, as PDFs are; ``url`` is named in errors.

    :raises ExtractionError: The file could not be read within the time and memory allowed.
    """
    limits = limits or FetchLimits()
    header = {"kind": "text", "name": name, "url": url, "max_memory": limits.max_extraction_memory}
    answer, text = _pool.parse(
        header, data, url=url, asked_url=url, timeout=limits.extraction_timeout, deadline_s=None, ticket=_pool.Ticket()
    )
    if "error" in answer:
        raise ExtractionError(str(answer["error"]), url=url)
    return text.decode("utf-8", "surrogatepass"), str(answer.get("title") or ""), str(answer.get("encoding"))
