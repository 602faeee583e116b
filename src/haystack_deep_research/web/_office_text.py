"""
The title and text of a Word, PowerPoint or Excel file; runs inside a parser process (see ``_worker.py``).

The text comes from Haystack's own converters (``DOCXToDocument`` with python-docx, ``PPTXToDocument`` with
python-pptx, ``XLSXToDocument`` with pandas and openpyxl), imported here on the first such file so that a process
that only ever parses web pages never loads them. These files are ZIP archives of XML: a small file can unpack into
much more, which is why they are parsed here, under the process's time and memory limits, like a PDF.

The title is the document's own: a Word file's core "title" property, else its first Title or Heading paragraph; a
presentation's first slide title, else its core "title" property; a workbook's "title" property. ``""`` when none.
"""

from __future__ import annotations

import io
import os
from typing import Any

from haystack_deep_research.errors import ExtractionError

__all__ = ["OFFICE_KINDS", "load", "office_text"]

OFFICE_KINDS = ("docx", "pptx", "xlsx")
"""The kinds of office file read, named by their suffix."""

_LOADED: set[str] = set()


def office_text(body: bytes, *, kind: str, url: str) -> tuple[str, str]:
    """
    The title (``""`` when there is none) and text of an office file of one of :data:`OFFICE_KINDS`.

    :raises ExtractionError: The file is not a valid file of its kind, or holds no text.
    :raises ImportError: The packages its converter needs are not installed.
    :raises MemoryError: Reading needed more memory than the process may use.
    """
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
    return _title(kind, body, documents[0].meta), text


def load(kind: str) -> bool:
    """
    Import the converter of an office kind (Haystack and the converter's packages), once per process.

    The parser process calls this before it caps its memory for the file: the code is not the file's cost.
    Returns whether it was imported now (``False`` when it already was, or the kind is unknown).
    """
    if kind not in OFFICE_KINDS or kind in _LOADED:
        return False
    _converter(kind)
    _LOADED.add(kind)
    return True


def _converter(kind: str) -> Any:
    # A parser process sends nothing anywhere; Haystack's telemetry is only ever sent from pipeline runs, but say so.
    os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
    if kind == "docx":
        from haystack.components.converters.docx import DOCXToDocument

        return DOCXToDocument(table_format="csv")
    if kind == "pptx":
        from haystack.components.converters.pptx import PPTXToDocument

        return PPTXToDocument()
    from haystack.components.converters.xlsx import XLSXToDocument

    return XLSXToDocument(table_format="csv")


def _title(kind: str, body: bytes, meta: dict[str, Any]) -> str:
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
