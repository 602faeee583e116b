"""
Text from outside the library, made safe to store, show and send on (docs/safety.md): :func:`clean_text` drops what
breaks files and terminals, :func:`plain_title` what would make a title a link or HTML, :func:`inert_text` escapes
untrusted text into one line of Markdown.
"""

from __future__ import annotations

import re

from haystack_deep_research.evidence._markdown import bare_links, plain_text

__all__ = ["clean_text", "inert_text", "plain_title"]

REPLACEMENT = "\ufffd"
"""What a lone surrogate becomes: U+FFFD REPLACEMENT CHARACTER, the character UTF-8 decoders use for bad input."""

_SURROGATES = re.compile("[\ud800-\udfff]")
# C0 controls but tab, line feed and carriage return; DEL; C1 controls (0x9b is a one-byte CSI on some terminals).
_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
# A title longer than this is cut before it is read (no title needs more; reading costs time per character).
MAX_TITLE_CHARS = 1_000
# Reading a title as Markdown again may reveal markup its entities or escapes hid; a title still changing after
# this many readings loses every character Markdown builds links and tags from.
_TITLE_READINGS = 4
_MARKUP = re.compile(r"[<>\[\]()`*_&\\!]")
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|<>~])")


def clean_text(text: str) -> str:
    """Every lone surrogate replaced with U+FFFD, control characters but tab, LF and CR dropped; the rest kept."""
    return _CONTROLS.sub("", _SURROGATES.sub(REPLACEMENT, text))


_BARE_LINK = re.compile(r"(?i)\b(https?|ftp|mailto|file|javascript|data)(?=:)|\b(www)(?=\.)")
"""Where a renderer's linkify (GFM's autolinks, markdown-it's linkify) would make a bare address a link."""
_JOINER = "\u2060"  # WORD JOINER: shows nothing, and no linkify pattern matches across it


def inert_text(text: object, *, limit: int | None = None) -> str:
    """
    Untrusted text as one line of Markdown that shows it as it is: whitespace folded, cut to ``limit`` characters
    (``…`` ends it), Markdown and HTML characters escaped and a word joiner after the scheme of a bare address, so it
    adds no link, tag, emphasis or citation wherever it is placed, with a renderer's linkify too.
    """
    line = " ".join(clean_text(str(text or "")).split())
    if limit is not None and len(line) > limit:
        line = line[: limit - 1] + "…"
    line = _BARE_LINK.sub(lambda found: found.group(0) + _JOINER, line)
    return _MARKDOWN_SPECIAL.sub(r"\\\1", line.replace("&", "&amp;"))


def plain_title(title: str) -> str:
    """
    The text a reader sees in a title read as Markdown, less every URL and HTML tag, on one line; read again until
    nothing changes, so markup hidden behind entities or escapes (``&lt;script&gt;``) goes too.
    """
    text = _one_line(clean_text(title)[:MAX_TITLE_CHARS])
    for _ in range(_TITLE_READINGS):
        read = _one_line(_without_bare_links(plain_text(text, {}, is_marker=lambda _text: False)))
        if read == text:
            return text
        text = read
    return _one_line(_without_bare_links(_MARKUP.sub(" ", text)))


def _without_bare_links(text: str) -> str:
    for start, end, _url in reversed(bare_links(text)):
        text = text[:start] + text[end:]
    return text


def _one_line(text: str) -> str:
    return " ".join(text.split())
