"""
Turning a downloaded document into plain text: main text of HTML pages, the text layer of PDFs, plain text.

:func:`extract_text` routes by content type: HTML and XHTML go through trafilatura (boilerplate such as menus
and footers is dropped), PDFs through pypdf (the first ``max_pdf_pages`` pages), plain text is decoded. Whatever
goes wrong inside a parser comes out as an :class:`~haystack_deep_research.errors.ExtractionError` whose message
says what happened to which URL.
"""

from __future__ import annotations

import codecs
import io
from dataclasses import dataclass
from itertools import islice

import lxml.etree
import lxml.html
import pypdf
import trafilatura

from haystack_deep_research import _checks
from haystack_deep_research.errors import ExtractionError, UnsupportedContentError
from haystack_deep_research.web.fetch import FetchedDocument

__all__ = ["ExtractedText", "extract_text"]

_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})


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


def extract_text(document: FetchedDocument, *, max_pdf_pages: int) -> ExtractedText:
    """
    Extract the title and main text of a fetched document.

    :param document: The downloaded document.
    :param max_pdf_pages: The most PDF pages to read (at least 1); later pages are ignored.
    :returns: The title and text.
    :raises ConfigurationError: ``max_pdf_pages`` is below 1.
    :raises UnsupportedContentError: The content type is not HTML, XHTML, PDF or plain text.
    :raises ExtractionError: The PDF is malformed or encrypted, or the document holds no text to read.
    """
    _checks.int_in_range("max_pdf_pages", max_pdf_pages, 1)
    if document.content_type in _HTML_TYPES:
        return _extract_html(document)
    if document.content_type == "application/pdf":
        return _extract_pdf(document, max_pdf_pages)
    if document.content_type == "text/plain":
        return _extract_plain(document)
    raise UnsupportedContentError(
        f"The content type {document.content_type} at {document.final_url} cannot be read; only HTML, XHTML, "
        "PDF and plain text are supported.",
        url=document.url,
    )


def _extract_html(document: FetchedDocument) -> ExtractedText:
    markup: str | bytes = document.body if document.charset is None else _decode(document.body, document.charset)
    try:
        # Without trafilatura's metadata pass: it looks for dates, authors and licences this library never uses,
        # and costs about four times the text extraction itself.
        result = trafilatura.bare_extraction(
            markup, url=document.final_url, with_metadata=False, include_comments=False, include_tables=True
        )
        text = (getattr(result, "text", None) or "").strip()
    except Exception as exc:  # trafilatura and lxml raise many unrelated types on bad markup
        raise ExtractionError(
            f"The page at {document.final_url} could not be parsed as HTML ({type(exc).__name__}).",
            url=document.url,
        ) from exc
    if not text:
        raise ExtractionError(f"The page at {document.final_url} has no main text to read.", url=document.url)
    return ExtractedText(title=_html_title(markup), text=text, content_type=document.content_type)


def _html_title(markup: str | bytes) -> str:
    """
    The page's title: its ``og:title``, else its only ``<h1>``, else its ``<title>`` tag, whitespace collapsed.

    A page whose markup lxml cannot parse simply has no title here.
    """
    data = markup.encode("utf-8") if isinstance(markup, str) else markup
    try:
        tree = lxml.html.fromstring(data) if data.strip() else None
    except (lxml.etree.ParserError, ValueError):
        return ""
    if tree is None:
        return ""
    headings = tree.findall(".//h1")
    candidates = (
        *(meta.get("content") for meta in tree.iterfind(".//meta[@property='og:title']")),
        headings[0].text_content() if len(headings) == 1 else None,
        tree.findtext(".//title"),
    )
    return next((" ".join(c.split()) for c in candidates if c and c.strip()), "")


def _extract_pdf(document: FetchedDocument, max_pdf_pages: int) -> ExtractedText:
    url = document.final_url
    try:
        reader = pypdf.PdfReader(io.BytesIO(document.body))
        locked = reader.is_encrypted and not _unlock(reader)
    except Exception as exc:  # pypdf raises its own errors and plain ValueError/KeyError on broken files
        raise _malformed(document, exc) from exc
    if locked:
        raise ExtractionError(f"The PDF at {url} is encrypted and cannot be read.", url=document.url)
    try:
        metadata = reader.metadata
        title = str(metadata.title or "").strip() if metadata is not None else ""
        pages = [page.extract_text() or "" for page in islice(reader.pages, max_pdf_pages)]
    except Exception as exc:  # see above
        raise _malformed(document, exc) from exc
    text = "\n\n".join(page.strip() for page in pages if page.strip())
    if not text:
        raise ExtractionError(
            f"The PDF at {url} has no text to read (it may hold only scanned images).", url=document.url
        )
    return ExtractedText(title=title, text=text, content_type=document.content_type)


def _unlock(reader: pypdf.PdfReader) -> bool:
    """Open a PDF that is encrypted with an empty user password, as PDF viewers do."""
    try:
        return reader.decrypt("") != pypdf.PasswordType.NOT_DECRYPTED
    except pypdf.errors.DependencyError:
        # The encryption needs a cryptography package that is not installed; treat the PDF as locked.
        return False


def _malformed(document: FetchedDocument, exc: Exception) -> ExtractionError:
    return ExtractionError(
        f"The PDF at {document.final_url} is malformed and cannot be read ({type(exc).__name__}: {exc}).",
        url=document.url,
    )


def _extract_plain(document: FetchedDocument) -> ExtractedText:
    text = _decode(document.body, document.charset or "utf-8-sig").strip()
    if not text:
        raise ExtractionError(f"The document at {document.final_url} is empty.", url=document.url)
    return ExtractedText(title="", text=text, content_type=document.content_type)


def _decode(body: bytes, charset: str) -> str:
    try:
        codecs.lookup(charset)
    except LookupError:
        charset = "utf-8"
    return body.decode(charset, errors="replace")
