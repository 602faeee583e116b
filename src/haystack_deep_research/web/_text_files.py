"""
Decoding text. A web body by the character set its server or markup declared, looked up among the WHATWG labels
(``webencodings``), never Python's codecs, which know ``rot13`` and ``zlib`` (docs/safety.md). Text, Markdown and CSV
files of a folder in whatever encoding they were written in (UTF-8 when valid, else detected by charset-normalizer;
bytes no encoding reads are an ``ExtractionError``), then converted by Haystack's own converters, in the parser
processes (docs/sources.md). It imports nothing but ``webencodings`` and the errors when it is loaded.
"""

from __future__ import annotations

import codecs
import re
from pathlib import Path
from typing import Any

import webencodings

from haystack_deep_research.errors import ExtractionError

_UTF8 = webencodings.UTF8
_WINDOWS_1252 = webencodings.lookup("windows-1252") or _UTF8  # always in the table
# Where a page declares its encoding in its markup, and how far in browsers look for it (the HTML prescan).
_PRESCAN_BYTES = 1024
_DECLARATIONS = (
    re.compile(rb"""^\s*<\?xml[^>]*?\bencoding\s*=\s*["']([^"']{1,40})["']"""),
    re.compile(rb"""<meta\b[^>]*?\bcharset\s*=\s*["']?\s*([^\s"'>;/]{1,40})""", re.IGNORECASE),
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


_MARKDOWN = (".md", ".markdown")
TEXT_TYPES = (*_MARKDOWN, ".txt", ".text", ".csv")
"""The suffixes of files read as text."""

# Checked in this order: a UTF-32 little-endian mark begins with the UTF-16 one.
_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_PREFERRED = "cp1252"


def decode_text(data: bytes, *, name: str) -> tuple[str, str]:
    """``(text, encoding)`` of a text file's bytes; ``ExtractionError`` if they are text in no encoding detected."""
    try:
        return data.decode("utf-8-sig"), "utf-8"
    except UnicodeDecodeError:
        pass  # not UTF-8: detect the encoding below
    for mark, encoding in _BOMS:  # a byte order mark says it; charset-normalizer would weigh it against the text
        if data.startswith(mark):
            try:
                return data.decode(encoding), encoding
            except UnicodeDecodeError:
                break
    from charset_normalizer import from_bytes

    matches = from_bytes(data)
    best = matches.best()
    if best is None:
        raise ExtractionError(f"{name} is not text in any encoding recognised (a binary file?).")
    # Short Latin text reads equally well in several code pages (French in Windows-1250 and Windows-1252 alike);
    # a tie goes to the most common one, as the WHATWG default for such text is Windows-1252.
    tied = [match for match in matches if (match.chaos, match.coherence) == (best.chaos, best.coherence)]
    if any(_PREFERRED in match.could_be_from_charset for match in tied):
        return data.decode(_PREFERRED), _PREFERRED
    return str(best), best.encoding


def markdown_title(text: str) -> str:
    """The first level-one heading of a Markdown text (read with markdown-it, so none in a code block), or ``""``."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").parse(text)
    for number, token in enumerate(tokens[:-1]):
        if token.type == "heading_open" and token.tag == "h1":
            inline = tokens[number + 1]
            words = "".join(child.content for child in inline.children or [] if child.type in ("text", "code_inline"))
            if words.strip():
                return " ".join(words.split())
    return ""


def load() -> bool:
    """Import Haystack's text converters and the parsers they use, once a process: whether they were imported now."""
    if _CONVERTERS:
        return False
    import charset_normalizer  # noqa: F401 - imported for its cost, before the file's memory cap
    from haystack.components.converters.csv import CSVToDocument
    from haystack.components.converters.markdown import MarkdownToDocument
    from haystack.components.converters.txt import TextFileToDocument

    _CONVERTERS.update(
        markdown=MarkdownToDocument(store_full_path=True, progress_bar=False),
        csv=CSVToDocument(encoding="utf-8", store_full_path=True),
        text=TextFileToDocument(encoding="utf-8", store_full_path=True),
    )
    return True


_CONVERTERS: dict[str, Any] = {}


def text_file(data: bytes, *, name: str) -> tuple[str, str, str]:
    """
    ``(title, text, encoding)`` of a text, Markdown or CSV file, in a parser process under the caps of a PDF (parsing
    a hostile Markdown file can take minutes and gigabytes); the title is a Markdown file's first heading or ``""``.
    """
    from haystack.dataclasses.byte_stream import ByteStream

    load()
    text, encoding = decode_text(data, name=name)
    suffix = Path(name).suffix.lower()
    title = markdown_title(text) if suffix in _MARKDOWN else ""
    converter = _CONVERTERS["markdown" if suffix in _MARKDOWN else "csv" if suffix == ".csv" else "text"]
    # The converters decode with meta["encoding"]: the text goes to them as UTF-8, its encoding is returned apart.
    stream = ByteStream(data=text.encode("utf-8", "replace"), meta={"encoding": "utf-8"})
    documents = converter.run(sources=[stream])["documents"]
    return title, "\n\n".join(document.content or "" for document in documents), encoding
