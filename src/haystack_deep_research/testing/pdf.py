"""
A tiny PDF writer for tests: one US Letter page per string, plain Helvetica text, nothing else.

The output is a complete PDF 1.4 file (catalog, page tree, one content stream per page, cross-reference table and
trailer) that ordinary PDF readers, pypdf included, open and extract the text from.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from haystack_deep_research.errors import ConfigurationError

__all__ = ["make_pdf"]

_PAGE_WIDTH = 612
_PAGE_HEIGHT = 792
_MARGIN = 72
_FONT_SIZE = 11
_LEADING = 14
# Helvetica averages a little over half an em per character, so this many fit between the margins.
_CHARS_PER_LINE = 84


def make_pdf(pages: str | Sequence[str], *, title: str | None = None) -> bytes:
    """
    Write a small, valid PDF with one page per string.

    Each string is split into lines at ``\\n`` and long lines are wrapped at word boundaries. A page whose text does
    not fit on a Letter page is made taller, so page ``i`` always holds exactly ``pages[i]``. Text is encoded as
    Windows-1252 (the font's encoding); characters outside it come out as ``?``.

    :param pages: The text of each page; a single string makes a one-page PDF. An empty string is a blank page.
    :param title: The document title stored in the ``/Info`` dictionary, or ``None`` for none.
    :returns: The PDF file's bytes.
    :raises ConfigurationError: If ``pages`` is empty or holds something other than strings, or ``title`` is not a
        string.
    """
    page_texts = [pages] if isinstance(pages, str) else list(pages)
    if not page_texts:
        raise ConfigurationError("pages must hold at least one string; pass [''] for a single blank page.")
    for index, text in enumerate(page_texts):
        if not isinstance(text, str):
            raise ConfigurationError(f"pages[{index}] must be a str, got {type(text).__name__}.")
    if title is not None and not isinstance(title, str):
        raise ConfigurationError(f"title must be a str or None, got {type(title).__name__}.")

    # Object numbers: 1 catalog, 2 page tree, 3 font, then a (page, content) pair per page, then the info dict.
    objects: list[bytes] = [
        b"",
        b"",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    ]
    page_refs: list[str] = []
    for text in page_texts:
        page_number, content_number = len(objects) + 1, len(objects) + 2
        lines = _wrap(text)
        height = max(_PAGE_HEIGHT, 2 * _MARGIN + _LEADING * len(lines))
        stream = _content_stream(lines, top=height - _MARGIN)
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {_PAGE_WIDTH} {height}] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {content_number} 0 R >>".encode("ascii")
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
        page_refs.append(f"{page_number} 0 R")
    objects[0] = b"<< /Type /Catalog /Pages 2 0 R >>"
    objects[1] = f"<< /Type /Pages /Kids [{' '.join(page_refs)}] /Count {len(page_refs)} >>".encode("ascii")
    info_ref = ""
    if title is not None:
        objects.append(b"<< /Title " + _text_string(title) + b" /Producer (haystack-deep-research testing) >>")
        info_ref = f" /Info {len(objects)} 0 R"
    return _assemble(objects, info_ref)


def _wrap(text: str) -> list[str]:
    lines: list[str] = []
    for paragraph in text.splitlines() or [""]:
        wrapped = textwrap.wrap(paragraph, width=_CHARS_PER_LINE, break_on_hyphens=False)
        lines.extend(wrapped or [""])
    return lines


def _content_stream(lines: list[str], *, top: int) -> bytes:
    operations = [f"BT /F1 {_FONT_SIZE} Tf {_LEADING} TL {_MARGIN} {top} Td".encode("ascii")]
    for number, line in enumerate(lines):
        if number:
            operations.append(b"T*")
        if line:
            operations.append(_literal(line.encode("cp1252", errors="replace")) + b" Tj")
    operations.append(b"ET")
    return b"\n".join(operations)


def _literal(raw: bytes) -> bytes:
    escaped = raw.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")
    return b"(" + escaped.replace(b"\r", b"\\r").replace(b"\n", b"\\n") + b")"


def _text_string(text: str) -> bytes:
    """Encode a PDF text string: a literal when Latin-1 suffices, else UTF-16BE with a byte-order mark, in hex."""
    try:
        return _literal(text.encode("latin-1"))
    except UnicodeEncodeError:
        return b"<FEFF" + text.encode("utf-16-be").hex().upper().encode("ascii") + b">"


def _assemble(objects: list[bytes], info_ref: str) -> bytes:
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets: list[int] = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref_offset = len(out)
    out += b"xref\n0 %d\n" % (len(objects) + 1)
    out += b"0000000000 65535 f \n"
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R{info_ref} >>\n".encode("ascii")
    out += b"startxref\n%d\n%%%%EOF\n" % xref_offset
    return bytes(out)
