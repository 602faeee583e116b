"""
The sentences of a report that cite nothing: claims a judge cannot check against a source, so they count as unjudged.

A report's body is read as CommonMark (markdown-it, as its citations are): the text of its paragraphs and list items,
not its headings, code, tables of contents or its Sources (or References) section. Each such text is cut into
sentences at ``.``, ``!`` or ``?`` followed by a space; a sentence cites something when it holds a link, a bare URL of
a scheme a run reads, or a citation marker (``[1]``, ``[^2]``). A question, a label ending in ``:`` and a sentence of
fewer than four words ("See below.") are not counted: they claim nothing.
"""

from __future__ import annotations

import re

__all__ = ["uncited_sentences"]

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_CITES = re.compile(r"\]\(|\]\[|https?://|www\.|doc://|file://|mcp://|\[\^?\d+\]|【\d+】")
_SOURCES = re.compile(r"^(sources|references|bibliography)$", re.IGNORECASE)
_MIN_WORDS = 4


def uncited_sentences(report: str) -> list[str]:
    """
    :param report: The Markdown report.
    :returns: Its body sentences that cite nothing, in order (see the module docstring).
    """
    from markdown_it import MarkdownIt  # imported where used: reading a report is not on the import path

    tokens = MarkdownIt("commonmark").parse(report)
    found: list[str] = []
    in_heading = False
    for token in tokens:
        if token.type == "heading_open":
            in_heading = True
            continue
        if token.type == "heading_close":
            in_heading = False
            continue
        if token.type != "inline":
            continue
        if in_heading:
            if _SOURCES.match(token.content.strip()):
                break  # the Sources list and what follows it are not claims
            continue
        for sentence in _SENTENCE_END.split(" ".join(token.content.split())):
            if sentence.endswith(("?", ":")):
                continue  # a question or a label claims nothing
            if len(sentence.split()) >= _MIN_WORDS and not _CITES.search(sentence):
                found.append(sentence)
    return found
