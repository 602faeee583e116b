"""
What a reader reads in a report: the words of a cited sentence (link text kept, URLs and citation markers dropped),
its headings, and what keeps a reader from seeing its citations (:func:`reading_problems`: an unclosed fence,
markers pointing to no visible entry, references inside code; see docs/evidence.md, "Checking any report").
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Literal

from haystack_deep_research.evidence._markdown import Code, block_tokens, plain_text, reference_env
from haystack_deep_research.evidence._styles import Doc, entry_label, is_title, marker_like
from haystack_deep_research.evidence.citations import _scan

__all__ = ["Heading", "ProblemKind", "ReadingProblem", "headings", "reading_problems", "sentence_reader"]

_URL_TEXT = re.compile(r"(?:https?:)?//[^\s<>]+|www\.[^\s<>]+", re.IGNORECASE)
_MARKERS = re.compile(
    r"\s*(?:\[\s*\^?\d{1,4}(?:\s*[,;\-\u2013]\s*\^?\d{1,4})*\s*\]|\[\^[^\[\]\s]{1,30}\]|\u3010[^\u3010\u3011]{1,80}\u3011)"
)


def sentence_reader(report: str) -> Callable[[str], str]:
    """``read(sentence)``: what a reader reads in a sentence of ``report`` (the claim a judge is shown)."""
    env = reference_env(report)

    def read(sentence: str) -> str:
        text = plain_text(sentence, env, is_marker=marker_like)
        return " ".join(_MARKERS.sub("", _URL_TEXT.sub("", text)).split())

    return read


@dataclass(frozen=True)
class Heading:
    """A heading: its level (1 for ``#`` or ``===``), its text as written, its 0-based line and the line after it."""

    level: int
    title: str
    line: int
    end: int


def headings(report: str) -> list[Heading]:
    """The top-level headings a CommonMark renderer shows (not a ``#`` line in code, a list item or a quote)."""
    tokens = block_tokens(report)
    found: list[Heading] = []
    for index, token in enumerate(tokens):
        if token.type == "heading_open" and token.level == 0 and token.map is not None:
            title = tokens[index + 1].content if index + 1 < len(tokens) else ""
            found.append(Heading(int(token.tag[1:]), title.strip(), token.map[0], token.map[1]))
    return found


ProblemKind = Literal["unclosed_fence", "unresolved_markers", "references_in_code"]

_SHOWN = 12  # line numbers written out in a message; the problem's ``lines`` holds them all


@dataclass(frozen=True)
class ReadingProblem:
    """
    One slip in a report's Markdown that hides citations from a reader.

    :param kind: What it is (see docs/evidence.md, "Checking any report").
    :param lines: The 1-based lines concerned, in order.
    :param message: What is wrong and how to fix it, with the lines.
    """

    kind: ProblemKind
    lines: tuple[int, ...]
    message: str

    def to_dict(self) -> dict[str, Any]:
        """:returns: The problem as a JSON-ready dictionary."""
        return {**asdict(self), "lines": list(self.lines)}


def _shown(lines: list[int]) -> str:
    listed = ", ".join(map(str, lines[:_SHOWN]))
    return f"{listed} and {len(lines) - _SHOWN} more" if len(lines) > _SHOWN else listed


def _unclosed(doc: Doc, code: Code) -> ReadingProblem:
    lines = doc.lines
    last = code.end
    while last > code.first + 1 and not lines[last - 1].strip():
        last -= 1
    near = re.compile(rf"[ \t>]*({re.escape(code.fence[0])}{{{len(code.fence)},}})[ \t]*(\S.*)")
    misses = [row + 1 for row in range(code.first + 1, code.end) if near.fullmatch(lines[row])]
    message = (
        f"line {code.first + 1}: the code fence {code.fence} opened here never closes, so lines "
        f"{code.first + 2}-{last} read as code, and no citation in them is a link"
    )
    if misses:
        message += (
            f"; line(s) {_shown(misses)} look like its closing fence but are not: a closing fence holds nothing but "
            f"the fence, so put {code.fence} alone on its own line"
        )
    return ReadingProblem("unclosed_fence", (code.first + 1, *misses), message)


def _in_code(doc: Doc, code: Code) -> list[int]:
    """The lines of a code block that read as a reference-list entry with a URL or as a Sources title."""
    rows = range(code.first + bool(code.fence), code.end - (code.fence != "" and code.closed))
    found = []
    for row in rows:
        line = doc.lines[row]
        if is_title(line.strip().lstrip("#>").strip()) or (entry_label(line, True) and "://" in line):
            found.append(row + 1)
    return found


def reading_problems(markdown: str) -> list[ReadingProblem]:
    """
    Find what keeps a reader from seeing a report's citations.

    :returns: The problems, unclosed fences first; an empty list for a report that reads as it should.
    :raises ConfigurationError: If ``markdown`` is not a string.
    """
    doc = _scan(markdown)
    problems = [_unclosed(doc, code) for code in doc.parsed.code if code.fence and not code.closed]
    if doc.unresolved:
        rows = sorted({doc.parsed.line_of(start) + 1 for start, _, _ in doc.unresolved})
        labels = list(dict.fromkeys(f"[{text}]" for _, _, text in doc.unresolved))
        message = (
            f"{len(doc.unresolved)} marker(s) such as {', '.join(labels[:3])} on line(s) {_shown(rows)} point to "
            "no reference a reader can see: add the reference list, or take it out of the code block holding it"
        )
        problems.append(ReadingProblem("unresolved_markers", tuple(rows), message))
    in_code = [row for code in doc.parsed.code for row in _in_code(doc, code)]
    if in_code:
        message = (
            f"{len(in_code)} reference(s) on line(s) {_shown(in_code)} stand inside code, where a reader sees no "
            "link: end the code block before the references"
        )
        problems.append(ReadingProblem("references_in_code", tuple(in_code), message))
    return problems
