"""Decoding a body by the character set its server declared."""

from __future__ import annotations

import codecs

__all__ = ["decode"]


def decode(body: bytes, charset: str) -> str:
    """
    Decode a body with its declared character set, falling back to UTF-8 for one Python does not know.

    :param body: The bytes.
    :param charset: The declared character set.
    :returns: The text; undecodable bytes become U+FFFD.
    """
    try:
        codecs.lookup(charset)
    except LookupError:
        charset = "utf-8"
    return body.decode(charset, errors="replace")
