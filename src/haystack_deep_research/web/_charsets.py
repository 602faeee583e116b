"""
Decoding a body by the character set its server or its markup declared.

A label is looked up in the WHATWG Encoding Standard's table (the ``webencodings`` package), the labels browsers
accept, rather than among Python's codecs: ``codecs.lookup`` also knows ``base64``, ``hex``, ``rot13``, ``zlib``
and ``uu`` (bytes-to-bytes codecs that ``bytes.decode`` refuses with a ``LookupError``) and text codecs no page is
written in (``idna``, ``unicode_escape``, ``undefined``). A label the table does not know is read as UTF-8.
"""

from __future__ import annotations

import re

import webencodings

__all__ = ["decode", "decode_html", "text_charset"]

_UTF8 = webencodings.UTF8
_WINDOWS_1252 = webencodings.lookup("windows-1252") or _UTF8  # always in the table
# Where a page declares its encoding in its markup, and how far in browsers look for it (the HTML prescan).
_PRESCAN_BYTES = 1024
_DECLARATIONS = (
    re.compile(rb"""^\s*<\?xml[^>]*?\bencoding\s*=\s*["']([^"']{1,40})["']"""),
    re.compile(rb"""<meta\b[^>]*?\bcharset\s*=\s*["']?\s*([^\s"'>;/]{1,40})""", re.IGNORECASE),
)


def decode(body: bytes, charset: str | None) -> str:
    """
    Decode a body with its declared character set; UTF-8 when there is none or it is not a text encoding.

    A byte order mark overrides the declaration, as in browsers, and is dropped. Undecodable bytes become U+FFFD.
    """
    return _decode(body, _encoding(charset) or _UTF8)


def decode_html(body: bytes, charset: str | None) -> str:
    """
    Decode an HTML or XHTML page: by its byte order mark, else the server's character set, else the one its markup
    declares (``<meta charset>``, ``<meta http-equiv>`` or the XML declaration), else UTF-8 if it is valid UTF-8,
    else windows-1252 (what browsers assume for an undeclared legacy page). Undecodable bytes become U+FFFD.
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
    """The text encoding a label names, or ``None`` for no label or one that names no text encoding."""
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
