"""
A tiny PDF writer for tests (PDF 1.4, one US Letter page of Helvetica text per string, which ordinary readers, pypdf
included, open and extract), and two kinds of PDF a reader must cope with: scans without text, decompression bombs.
"""

from __future__ import annotations

import textwrap
import zlib
from collections.abc import Sequence

from haystack_deep_research import _checks
from haystack_deep_research.errors import ConfigurationError

__all__ = ["make_inflating_pdf", "make_pdf", "make_scanned_pdf"]

_PAGE_WIDTH = 612
_PAGE_HEIGHT = 792
_MARGIN = 72
_FONT_SIZE = 11
_LEADING = 14
# Helvetica averages a little over half an em per character, so this many fit between the margins.
_CHARS_PER_LINE = 84


def make_pdf(pages: str | Sequence[str], *, title: str | None = None, compress: bool = False) -> bytes:
    """
    Write a small, valid PDF with one page per string.

    Each string is split into lines at ``\\n`` and long lines are wrapped at word boundaries. A page whose text does
    not fit on a Letter page is made taller, so page ``i`` always holds exactly ``pages[i]``. Text is encoded as
    Windows-1252 (the font's encoding); characters outside it come out as ``?``.

    :param pages: The text of each page; a single string makes a one-page PDF. An empty string is a blank page.
    :param title: The document title stored in the ``/Info`` dictionary, or ``None`` for none.
    :param compress: Whether to compress the content streams (``/FlateDecode``), as most real PDFs do.
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

    pages_drawn = []
    for text in page_texts:
        lines = _wrap(text)
        height = max(_PAGE_HEIGHT, 2 * _MARGIN + _LEADING * len(lines))
        pages_drawn.append((_content_stream(lines, top=height - _MARGIN), height))
    return _document(pages_drawn, title=title, compress=compress)


def make_scanned_pdf(page_count: int = 1, *, footer: str = "") -> bytes:
    """
    Write a PDF like a scan without a text layer: each page is one grey image, plus at most a short footer.

    :param page_count: The number of pages, at least 1.
    :param footer: Text drawn at the foot of every page after the page number (``"1 "``, ``"2 "``, ...), as
        scanners stamp; ``""`` draws nothing, so the PDF holds no text at all.
    :returns: The PDF file's bytes.
    :raises ConfigurationError: If ``page_count`` is below 1 or ``footer`` is not a string.
    """
    _checks.int_in_range("page_count", page_count, 1)
    if not isinstance(footer, str):
        raise ConfigurationError(f"footer must be a str, got {type(footer).__name__}.")
    pages = []
    for number in range(1, page_count + 1):
        stream = b"q %d 0 0 %d 0 0 cm /Im1 Do Q" % (_PAGE_WIDTH, _PAGE_HEIGHT)
        if footer:
            stamp = f"{number} {footer}".encode("cp1252", errors="replace")
            stream += b"\nBT /F1 8 Tf 72 24 Td " + _literal(stamp) + b" Tj ET"
        pages.append((stream, _PAGE_HEIGHT))
    return _document(pages, title=None, compress=False, image=True)


def make_inflating_pdf(inflated_bytes: int, *, pages: int = 1) -> bytes:
    """
    Write a decompression bomb: pages whose content streams are small compressed and ``inflated_bytes`` each inflated.

    The content is a run of text-showing operators, the costliest kind for a reader to parse: a 74 MB page compresses
    to about 110 KB.

    :param inflated_bytes: The size of each page's content once decompressed, at least 1.
    :param pages: The number of pages, at least 1.
    :returns: The PDF file's bytes.
    :raises ConfigurationError: If an argument is out of range.
    """
    _checks.int_in_range("inflated_bytes", inflated_bytes, 1)
    _checks.int_in_range("pages", pages, 1)
    unit = b"(a) Tj\n"
    block = unit * (65536 // len(unit))
    compressor = zlib.compressobj(9)
    parts = [compressor.compress(block) for _ in range(inflated_bytes // len(block))]
    whole_units = inflated_bytes % len(block) // len(unit) * len(unit)
    padding = b" " * (inflated_bytes % len(unit))  # whitespace, so the stream stays well-formed at any size
    parts += [compressor.compress(block[:whole_units] + padding), compressor.flush()]
    stream = b"".join(parts)
    return _document([(stream, _PAGE_HEIGHT)] * pages, title=None, compress=False, precompressed=True)


def _document(
    pages: list[tuple[bytes, int]],
    *,
    title: str | None,
    compress: bool,
    image: bool = False,
    precompressed: bool = False,
) -> bytes:
    # Object numbers: 1 catalog, 2 page tree, 3 font, 4 image, then a (page, content) pair per page, then the info.
    objects: list[bytes] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"",  # the page tree, once the pages are known
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        b"<< /Type /XObject /Subtype /Image /Width 8 /Height 8 /ColorSpace /DeviceGray /BitsPerComponent 8 "
        b"/Length 64 >>\nstream\n" + bytes(range(0, 256, 4)) + b"\nendstream",
    ]
    resources = "/Font << /F1 3 0 R >>" + (" /XObject << /Im1 4 0 R >>" if image else "")
    page_refs: list[str] = []
    for stream, height in pages:
        page_number, content_number = len(objects) + 1, len(objects) + 2
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {_PAGE_WIDTH} {height}] "
            f"/Resources << {resources} >> /Contents {content_number} 0 R >>".encode("ascii")
        )
        data, flate = (zlib.compress(stream, 9), True) if compress else (stream, precompressed)
        dictionary = b"<< /Length %d%s >>" % (len(data), b" /Filter /FlateDecode" if flate else b"")
        objects.append(dictionary + b"\nstream\n" + data + b"\nendstream")
        page_refs.append(f"{page_number} 0 R")
    objects[1] = f"<< /Type /Pages /Kids [{' '.join(page_refs)}] /Count {len(page_refs)} >>".encode("ascii")
    info_ref = ""
    if title is not None:
        objects.append(b"<< /Title " + _text_string(title) + b" /Producer (haystack-deep-research testing) >>")
        info_ref = f" /Info {len(objects)} 0 R"
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
