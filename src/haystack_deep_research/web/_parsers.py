"""
The parsers that run inside a parser process (``_worker.py``): the main text and title of an HTML page (trafilatura,
after a linear check that refuses markup costing libxml2 quadratic time), of a PDF (pypdf, under a budget of
decompressed page content) and of a Word, PowerPoint or Excel file (Haystack's converters, imported on the first such
file). docs/safety.md ("Extraction ends on time and within its memory") and docs/sources.md give the rules.
"""

from __future__ import annotations

import io
import re
from itertools import islice
from typing import Any

import lxml.etree
import lxml.html
import pypdf
import trafilatura
from pypdf.errors import DependencyError, LimitReachedError
from pypdf.generic import ArrayObject, DictionaryObject, StreamObject

from haystack_deep_research.errors import ExtractionError
from haystack_deep_research.web._text_files import decode_html

# Only a tag this long can hold enough attributes to matter (each takes at least two characters).
_LONG_TAG = re.compile(rb"<[A-Za-z][^<>]{512,}>")
_ATTRIBUTE = re.compile(rb"""[^\s"'<>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'<>=`]+))?""")
# The parser's work on attributes grows with the square of their number per element. 50 million (about 7,000
# attributes on one element, or 1,000 elements of 220) costs it about a tenth of a second; ordinary pages stay
# far below (an element rarely has more than 30 attributes).
_MAX_ATTRIBUTE_WORK = 50_000_000


def html_text(body: bytes, *, charset: str | None, url: str) -> tuple[str, str]:
    """``(title, main text)`` of an HTML or XHTML page; an ExtractionError for pathological markup or no text."""
    _check_attributes(body, url)
    # Decoded once, here: the text and the title are read from the same characters, whatever the parsers guess.
    markup = decode_html(body, charset)
    try:
        # Without trafilatura's metadata pass: it looks for dates, authors and licences this library never uses,
        # and costs about four times the text extraction itself.
        result = trafilatura.bare_extraction(
            markup, url=url, with_metadata=False, include_comments=False, include_tables=True
        )
        text = (getattr(result, "text", None) or "").strip()
    except MemoryError:
        raise
    except Exception as exc:  # trafilatura and lxml raise many unrelated types on bad markup
        raise ExtractionError(f"The page at {url} could not be parsed as HTML ({type(exc).__name__}).") from exc
    if not text:
        raise ExtractionError(f"The page at {url} has no main text to read.")
    return _html_title(markup), text


def _check_attributes(body: bytes, url: str) -> None:
    work = 0
    most = 0
    for tag in _LONG_TAG.finditer(body):
        count = sum(1 for _ in _ATTRIBUTE.finditer(tag.group(), 1))
        work += count * count
        most = max(most, count)
    if work > _MAX_ATTRIBUTE_WORK:
        raise ExtractionError(
            f"The page at {url} was not parsed: its elements carry too many attributes (up to {most} on one "
            "element), which would take the HTML parser minutes."
        )


def _html_title(markup: str) -> str:
    """Its ``og:title``, else its only ``<h1>``, else its ``<title>``, whitespace collapsed; ``""`` for bad markup."""
    data = markup.encode("utf-8")
    try:
        # The encoding is given: the markup's own <meta charset> or XML declaration no longer applies to it.
        tree = lxml.html.fromstring(data, parser=lxml.html.HTMLParser(encoding="utf-8")) if data.strip() else None
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


# Tokens in one content stream. A dense page of text has about 5,000; 300,000 parse into about 40 MiB.
_PARSE_WORK = 300_000
# Text forms drawn per page; pypdf's default of 5,000 lets one small form be redrawn into minutes of work.
_FORM_DRAWS = 500
# Below this many letters and digits per page, pages that hold images are a scan, whatever stray text they carry.
_SCAN_CHARACTERS_PER_PAGE = 32
_INLINE_IMAGE = re.compile(rb"(?:^|\s)BI\s")


def pdf_text(body: bytes, *, url: str, max_pages: int, max_decompressed: int) -> tuple[str, str]:
    """
    ``(title, text)`` of a PDF's first ``max_pages`` pages, within ``max_decompressed`` bytes of page content in all;
    an ExtractionError when it is malformed, locked, has no text layer, or passes the budget before any text.
    """
    limits = {
        name: max_decompressed
        for name in (
            "zlib_maximum_output_length",
            "lzw_maximum_output_length",
            "run_length_maximum_output_length",
            "brotli_maximum_output_length",
            "array_based_stream_maximum_output_length",
            "image_maximum_buffer_size",
        )
    }
    configuration = pypdf.get_configuration().with_overwrites(
        **limits,
        stream_parsing_work_maximum_count=_PARSE_WORK,
        xform_maximum_invocations_per_extraction=_FORM_DRAWS,
        jbig2dec_binary=None,  # never start an external decoder for a stranger's file
    )
    with pypdf.apply_configuration(configuration):
        return _read(body, url=url, max_pages=max_pages, limit=max_decompressed)


def _read(body: bytes, *, url: str, max_pages: int, limit: int) -> tuple[str, str]:
    budget = limit
    stopped = ""  # why reading stopped early: "bytes" (the budget) or "work" (a page too complex to parse)
    try:
        reader = pypdf.PdfReader(io.BytesIO(body))
        if reader.is_encrypted:
            _unlock(reader, url)
        metadata = reader.metadata
        title = str(metadata.title or "").strip() if metadata is not None else ""
        texts: list[str] = []
        image_pages = 0
        for page in islice(reader.pages, max_pages):
            try:
                size, has_images = _contents(page)
            except LimitReachedError:  # one stream alone decompresses past the budget
                size, has_images = budget + 1, False
            if size > budget:
                stopped = "bytes"
                break
            budget -= size
            try:
                texts.append((page.extract_text() or "").strip())
            except LimitReachedError:
                stopped = "work"
                break
            image_pages += has_images
    except (MemoryError, ExtractionError):
        raise
    except Exception as exc:  # pypdf raises its own errors and plain ValueError/KeyError on broken files
        raise ExtractionError(
            f"The PDF at {url} is malformed and cannot be read ({type(exc).__name__}: {exc})."
        ) from exc
    text = "\n\n".join(page for page in texts if page)
    if not text and stopped == "bytes":
        raise ExtractionError(
            f"The PDF at {url} was not read: its pages decompress to more than the {limit} bytes of content "
            "allowed (FetchLimits.max_pdf_decompressed_bytes) before any text is found."
        )
    if not text and stopped == "work":
        raise ExtractionError(
            f"The PDF at {url} was not read: a page holds more than the {_PARSE_WORK} drawing instructions a page "
            "may hold before any text is found."
        )
    characters = sum(1 for char in text if char.isalnum())
    if texts and image_pages == len(texts) and characters < _SCAN_CHARACTERS_PER_PAGE * len(texts):
        raise ExtractionError(
            f"The PDF at {url} has no text layer to read: its pages hold only images, as a scan does."
        )
    if not text:
        raise ExtractionError(f"The PDF at {url} has no text to read (it may hold only scanned images).")
    return title, text


def _unlock(reader: pypdf.PdfReader, url: str) -> None:
    """Open a PDF encrypted with an empty user password, as viewers do."""
    try:
        opened = reader.decrypt("") != pypdf.PasswordType.NOT_DECRYPTED
    except DependencyError as exc:
        raise ExtractionError(
            f"The PDF at {url} is encrypted with a method this installation cannot decrypt ({exc}); install "
            "haystack-deep-research with its declared dependencies (pypdf[crypto])."
        ) from exc
    if not opened:
        raise ExtractionError(f"The PDF at {url} is encrypted with a password and cannot be read.")


def _contents(page: pypdf.PageObject) -> tuple[int, bool]:
    """Decompress a page's content streams; return their size and whether the page draws an image."""
    contents = page.get("/Contents")
    resolved = contents.get_object() if contents is not None else None
    streams = [item.get_object() for item in resolved] if isinstance(resolved, ArrayObject) else [resolved]
    data = [stream.get_data() for stream in streams if isinstance(stream, StreamObject)]
    has_images = _draws_images(page) or any(_INLINE_IMAGE.search(chunk) for chunk in data)
    return sum(len(chunk) for chunk in data), has_images


def _draws_images(page: pypdf.PageObject) -> bool:
    resources = page.get("/Resources")
    resources = resources.get_object() if resources is not None else None
    xobjects = resources.get("/XObject") if isinstance(resources, DictionaryObject) else None
    xobjects = xobjects.get_object() if xobjects is not None else None
    if not isinstance(xobjects, DictionaryObject):
        return False
    return any(
        isinstance(item := xobjects[name].get_object(), DictionaryObject) and item.get("/Subtype") == "/Image"
        for name in xobjects
    )


OFFICE_KINDS = ("docx", "pptx", "xlsx")
"""The kinds of office file read, named by their suffix."""

_LOADED: set[str] = set()


def office_text(body: bytes, *, kind: str, url: str) -> tuple[str, str]:
    """``(title, text)`` of an office file of :data:`OFFICE_KINDS`; ``ImportError`` without its converter's packages."""
    from haystack.dataclasses.byte_stream import ByteStream

    if kind not in OFFICE_KINDS:
        raise ExtractionError(f"The file at {url} could not be read: {kind!r} is not an office format read here.")
    converter = _converter(kind)
    # The converters log a file they cannot read and return nothing for it (logging is off in this process).
    documents = converter.run(sources=[ByteStream(data=body)])["documents"]
    if not documents:
        raise ExtractionError(f"The file at {url} could not be read: it is not a valid .{kind} file.")
    parts = []
    for document in documents:
        text = (document.content or "").strip()
        sheet = (document.meta.get("xlsx") or {}).get("sheet_name") if kind == "xlsx" else None
        if text:
            parts.append(f"{sheet}\n{text}" if sheet else text)
    text = "\n\n".join(parts)
    if not text.strip():
        raise ExtractionError(f"The file at {url} holds no text.")
    return _office_title(kind, body, documents[0].meta), text


def load_office(kind: str) -> bool:
    """Import the converter of an office kind, once a process: whether it was imported now."""
    if kind not in OFFICE_KINDS or kind in _LOADED:
        return False
    _converter(kind)
    _LOADED.add(kind)
    return True


def _converter(kind: str) -> Any:
    if kind == "docx":
        from haystack.components.converters.docx import DOCXToDocument

        return DOCXToDocument(table_format="csv")
    if kind == "pptx":
        from haystack.components.converters.pptx import PPTXToDocument

        return PPTXToDocument()
    from haystack.components.converters.xlsx import XLSXToDocument

    return XLSXToDocument(table_format="csv")


def _office_title(kind: str, body: bytes, meta: dict[str, Any]) -> str:
    try:
        if kind == "docx":
            return _docx_title(body, meta)
        if kind == "pptx":
            return _pptx_title(body)
        return _xlsx_title(body)
    except (ValueError, KeyError, AttributeError, IndexError, OSError):  # a damaged part of the file: no title
        return ""


def _docx_title(body: bytes, meta: dict[str, Any]) -> str:
    title = str((meta.get("docx") or {}).get("title") or "").strip()
    if title:
        return title
    import docx

    for paragraph in docx.Document(io.BytesIO(body)).paragraphs:
        style = paragraph.style.name if paragraph.style is not None else ""
        if (style == "Title" or style.startswith("Heading")) and paragraph.text.strip():
            return paragraph.text.strip()
    return ""


def _pptx_title(body: bytes) -> str:
    from pptx import Presentation

    presentation = Presentation(io.BytesIO(body))
    for slide in list(presentation.slides)[:1]:
        shape = slide.shapes.title
        if shape is not None and shape.has_text_frame and shape.text_frame.text.strip():
            return str(shape.text_frame.text).strip()
    return str(presentation.core_properties.title or "").strip()


def _xlsx_title(body: bytes) -> str:
    import openpyxl

    workbook = openpyxl.load_workbook(io.BytesIO(body), read_only=True)
    try:
        return str(workbook.properties.title or "").strip()
    finally:
        workbook.close()
