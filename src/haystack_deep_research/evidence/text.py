"""
Text from outside the library, made safe to store, show and send on.

Search results, fetched pages and the caller's question may hold what no text needs and what breaks the places text
goes: lone UTF-16 surrogates (valid in a Python ``str`` and in JSON's ``\\ud800`` escapes, but not encodable as
UTF-8, so writing them to a file or an HTTP body raises ``UnicodeEncodeError``) and control characters (a NUL, or an
escape sequence that rewrites the terminal a progress line is printed on). :func:`clean_text` is the one place that
removes them; it runs wherever such text enters a run (the question, search results, fetched text) and on every
record written to a run directory.
"""

from __future__ import annotations

import re

__all__ = ["clean_text"]

REPLACEMENT = "\ufffd"
"""What a lone surrogate becomes: U+FFFD REPLACEMENT CHARACTER, the character UTF-8 decoders use for bad input."""

_SURROGATES = re.compile("[\ud800-\udfff]")
# C0 controls but tab, line feed and carriage return; DEL; C1 controls (0x9b is a one-byte CSI on some terminals).
_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def clean_text(text: str) -> str:
    """
    Replace every lone surrogate with U+FFFD and drop control characters other than tab, line feed and carriage
    return. Everything else, any script and emoji included, is kept as it is; clean text comes back unchanged.

    :param text: Text from outside the library.
    :returns: The text, encodable as UTF-8 and free of control characters.
    """
    return _CONTROLS.sub("", _SURROGATES.sub(REPLACEMENT, text))
