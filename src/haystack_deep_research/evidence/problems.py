"""
What keeps a reader from seeing a report's citations: the problems :func:`reading_problems` finds.

A report is read as CommonMark reads it (:mod:`haystack_deep_research.evidence.citations`), so a slip in its
Markdown can hide its citations from a reader and from any check alike. Three such slips are reported, each with its
line numbers:

- ``unclosed_fence``: a code fence that never closes, so that everything after it, a reference list included, is
  code. A line that looks like the closing fence but holds more (```` ``` [21] ````) is named: a closing fence holds
  nothing but its backticks or tildes.
- ``unresolved_markers``: markers such as ``[3]`` or ``[^2]`` in the body that point to no entry a reader can see
  (the reference list is missing, inside code, or lacks those labels).
- ``references_in_code``: reference-list entries (a label and a URL) or a Sources title inside a code block.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any, Literal

from haystack_deep_research.evidence._document import Doc
from haystack_deep_research.evidence._markdown import Code
from haystack_deep_research.evidence._styles import entry_label, is_title
from haystack_deep_research.evidence.citations import _scan

__all__ = ["ProblemKind", "ReadingProblem", "reading_problems"]

ProblemKind = Literal["unclosed_fence", "unresolved_markers", "references_in_code"]

_SHOWN = 12  # line numbers written out in a message; the problem's ``lines`` holds them all


@dataclass(frozen=True)
class ReadingProblem:
    """
    One slip in a report's Markdown that hides citations from a reader.

    :param kind: What it is (see the module docstring).
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
    """The lines of a code block that read as a reference-list entry with a URL, or as a Sources title."""
    rows = range(code.first + bool(code.fence), code.end - (code.fence != "" and code.closed))
    found = []
    for row in rows:
        line = doc.lines[row]
        if is_title(line.strip().lstrip("#>").strip()) or (entry_label(line, True) and "://" in line):
            found.append(row + 1)
    return found


def reading_problems(markdown: str) -> list[ReadingProblem]:
    """
    Find what keeps a reader from seeing a report's citations (see the module docstring).

    :param markdown: The report.
    :returns: The problems, unclosed fences first; an empty list for a report that reads as it should.
    :raises ConfigurationError: If ``markdown`` is not a string.
    """
    doc = _scan(markdown)
    problems = [_unclosed(doc, code) for code in doc.parsed.code if code.fence and not code.closed]
    if doc.unresolved:
        rows = sorted({doc.parsed.line_of(start) + 1 for start, _, _ in doc.unresolved})
        labels = list(dict.fromkeys(f"[{text}]" for _, _, text in doc.unresolved))
        problems.append(
            ReadingProblem(
                "unresolved_markers",
                tuple(rows),
                f"{len(doc.unresolved)} marker(s) such as {', '.join(labels[:3])} on line(s) {_shown(rows)} point to "
                "no reference a reader can see: add the reference list, or take it out of the code block holding it",
            )
        )
    in_code = [row for code in doc.parsed.code for row in _in_code(doc, code)]
    if in_code:
        problems.append(
            ReadingProblem(
                "references_in_code",
                tuple(in_code),
                f"{len(in_code)} reference(s) on line(s) {_shown(in_code)} stand inside code, where a reader sees no "
                "link: end the code block before the references",
            )
        )
    return problems
