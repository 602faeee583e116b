"""
The text layer of a PDF; runs inside a parser process (see ``_worker.py``).

pypdf reads the first ``max_pages`` pages under a budget of decompressed page content for the whole document: a
page's content streams are decompressed before its text is extracted, and reading stops at the page that would pass
the budget. pypdf's own limits are tightened to match, for this document only: no stream may decompress past the
budget (a bomb is cut as soon as it does), and no content stream may hold more than ``_PARSE_WORK`` tokens (the
parsed operators of one page are what costs memory). Encrypted PDFs are opened with the
empty password, as viewers do; a PDF whose pages hold only images (a scan) is reported as having no text layer.
"""

from __future__ import annotations

import io
import re
from itertools import islice

import pypdf
from pypdf.errors import DependencyError, LimitReachedError
from pypdf.generic import ArrayObject, DictionaryObject, StreamObject

from haystack_deep_research.errors import ExtractionError

__all__ = ["pdf_text"]

# Tokens in one content stream. A dense page of text has about 5,000; 300,000 parse into about 40 MiB.
_PARSE_WORK = 300_000
# Text forms drawn per page; pypdf's default of 5,000 lets one small form be redrawn into minutes of work.
_FORM_DRAWS = 500
# Below this many letters and digits per page, pages that hold images are a scan, whatever stray text they carry.
_SCAN_CHARACTERS_PER_PAGE = 32
_INLINE_IMAGE = re.compile(rb"(?:^|\s)BI\s")


def pdf_text(body: bytes, *, url: str, max_pages: int, max_decompressed: int) -> tuple[str, str]:
    """
    The title (``""`` when there is none) and text of a PDF, pages separated by blank lines, reading at most
    ``max_pages`` pages and ``max_decompressed`` bytes of page content, all pages together.

    :raises ExtractionError: The PDF is malformed, locked by a password, has no text layer, or passes the budget
        before any text is found.
    :raises MemoryError: Reading needed more memory than the process may use.
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
    if texts and image_pages == len(texts) and _characters(text) < _SCAN_CHARACTERS_PER_PAGE * len(texts):
        raise ExtractionError(
            f"The PDF at {url} has no text layer to read: its pages hold only images, as a scan does."
        )
    if not text:
        raise ExtractionError(f"The PDF at {url} has no text to read (it may hold only scanned images).")
    return title, text


def _unlock(reader: pypdf.PdfReader, url: str) -> None:
    """Open a PDF that is encrypted with an empty user password, as PDF viewers do."""
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


def _characters(text: str) -> int:
    return sum(1 for char in text if char.isalnum())
