"""
What a reader reads in a report: the words of a cited sentence (link text kept, URLs and citation markers dropped),
and the report's headings, as a CommonMark renderer shows them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from haystack_deep_research.evidence._reader import plain_text, reader, reference_env
from haystack_deep_research.evidence._styles import marker_like

__all__ = ["Heading", "headings", "sentence_reader"]

_URL_TEXT = re.compile(r"(?:https?:)?//[^\s<>]+|www\.[^\s<>]+", re.IGNORECASE)
_MARKERS = re.compile(
    r"\s*(?:\[\s*\^?\d{1,4}(?:\s*[,;\-\u2013]\s*\^?\d{1,4})*\s*\]|\[\^[^\[\]\s]{1,30}\]|\u3010[^\u3010\u3011]{1,80}\u3011)"
)


def sentence_reader(report: str) -> Callable[[str], str]:
    """
    A function that turns a sentence of ``report`` into what a reader reads in it (the claim a judge is shown).

    :returns: ``read(sentence) -> text``: link text kept, URLs and citation markers (``[1]``, ``[^2]``, ``【3】``)
        dropped, whitespace collapsed.
    """
    env = reference_env(report)

    def read(sentence: str) -> str:
        text = plain_text(sentence, env, is_marker=marker_like)
        return " ".join(_MARKERS.sub("", _URL_TEXT.sub("", text)).split())

    return read


@dataclass(frozen=True)
class Heading:
    """
    A heading of a Markdown document.

    :param level: 1 for ``#`` (or a ``===`` underline), 2 for ``##`` (or ``---``), and so on.
    :param title: Its text as written, without the ``#`` marks or the underline.
    :param line: Its first line, 0-based.
    :param end: The line after it (``line + 1``, or ``line + 2`` for an underlined heading).
    """

    level: int
    title: str
    line: int
    end: int


def headings(report: str) -> list[Heading]:
    """
    The top-level headings of a Markdown document, in order: those a CommonMark renderer shows as headings, so not
    a ``#`` line inside a code fence, a list item or a block quote.

    :returns: Its headings.
    """
    tokens = reader().parse(report)
    found: list[Heading] = []
    for index, token in enumerate(tokens):
        if token.type == "heading_open" and token.level == 0 and token.map is not None:
            title = tokens[index + 1].content if index + 1 < len(tokens) else ""
            found.append(Heading(int(token.tag[1:]), title.strip(), token.map[0], token.map[1]))
    return found
