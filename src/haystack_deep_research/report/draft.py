"""
The shape of a report written in parts (see :mod:`.sections`): a writer's reply turned into one part whatever the
model added around it, the parts rendered as one document, and a rendered report split back into its parts, so a
grounding rewrite writes again only those that hold unsupported claims (docs/how-it-works.md, "Write and check").
A heading is what a CommonMark renderer shows as one at the top level (read with markdown-it): ``#`` lines and
underlined headings, never a ``#`` line inside a code fence, a list item or a block quote.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from haystack_deep_research._prompts import REPORT_TITLE, SUMMARY_HEADING
from haystack_deep_research.evidence._styles import is_title
from haystack_deep_research.evidence.reading import headings
from haystack_deep_research.report.headings import SUMMARY_HEADINGS

__all__ = [
    "Outline",
    "Part",
    "ReportParts",
    "frame_from_reply",
    "opening_from_reply",
    "parse_outlined",
    "parse_report",
    "render_outlined",
    "render_report",
    "section_from_reply",
]

_LIBRARY_SUMMARIES = {" ".join(heading.split()).casefold() for heading in SUMMARY_HEADINGS}
"""The executive summary's heading in every language the library writes headings in (see :mod:`.headings`)."""
_SUMMARY_NAMES = {"executive summary", "summary", "tl;dr", "overview"} | _LIBRARY_SUMMARIES
_SOURCES_NAMES = {"sources", "references", "bibliography", "works cited"}


@dataclass(frozen=True)
class Part:
    """A section's ``##`` heading (the opening's title) and body; its 1-based lines when parsed (inclusive)."""

    heading: str
    body: str
    first_line: int = 0
    last_line: int = 0

    def holds(self, line: int) -> bool:
        return self.first_line <= line <= self.last_line


@dataclass(frozen=True)
class ReportParts:
    """A report's opening and sections; its Sources list is rebuilt on publishing, so it is not kept."""

    opening: Part
    sections: list[Part]


@dataclass(frozen=True)
class Outline:
    """
    The headings around a report's sections; the default is the main agent's report. The iterative agent's puts the
    sections under one ``findings`` heading after a lead-in the opening writes (``""``: each section a ``## `` part of
    its own), adds ``closing`` sections the opening writes too, ends with its own ``sources`` heading (``""``:
    publishing appends ``## Sources``) and may ask the writer to ``translate`` them (its headings are then kept).
    """

    summary: str = SUMMARY_HEADING
    findings: str = ""
    closing: tuple[str, ...] = ()
    sources: str = ""
    translate: bool = False

    @property
    def frame(self) -> tuple[str, ...]:
        """The ``## `` headings the opening writes."""
        return (self.summary, *((self.findings,) if self.findings else ()), *self.closing)


@dataclass
class _Block:
    level: int  # 0 before the first heading
    title: str
    line: int  # 0-based line of the heading (of the first line for level 0)
    lines: list[str]


def _blocks(text: str, *, max_level: int = 2) -> list[_Block]:
    lines = text.split("\n")
    blocks = [_Block(0, "", 0, [])]
    start = 0
    for heading in headings(text):
        if heading.level > max_level:
            continue
        blocks[-1].lines += lines[start : heading.line]
        blocks.append(_Block(heading.level, heading.title, heading.line, []))
        start = heading.end
    blocks[-1].lines += lines[start:]
    return blocks


def _title(blocks: Sequence[_Block]) -> str:
    return next((b.title for b in blocks if b.level == 1 and b.title), REPORT_TITLE)


def _name(title: str) -> str:
    return " ".join(title.strip().rstrip(":").split()).casefold()


def _tidy(lines: list[str]) -> str:
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def section_from_reply(text: str, fallback_heading: str) -> Part:
    """
    The writer's reply for one section, headed by its first ``##`` heading (else ``fallback_heading``); a title or
    further heading becomes ``###``, and an executive summary or Sources list it wrote is dropped.
    """
    heading, lines = "", []
    for block in _blocks(text):
        name = _name(block.title)
        if block.level and (name in _SOURCES_NAMES or name == "executive summary"):
            continue
        if block.level == 2 and not heading:
            heading = block.title
            lines += block.lines
        else:
            lines += [f"### {block.title}", *block.lines] if block.level else block.lines
    return Part(heading=heading or " ".join(fallback_heading.split()), body=_tidy(lines))


def opening_from_reply(text: str) -> Part:
    """The writer's reply for the opening: its title and its executive summary's text, nothing after it."""
    blocks = _blocks(text)
    title = _title(blocks)
    summary = next((b for b in blocks if b.level == 2 and _name(b.title) in _SUMMARY_NAMES), None)
    if summary is not None:
        return Part(heading=title, body=_tidy(summary.lines))
    lines: list[str] = []
    for block in blocks:  # no summary heading: the text up to the first section is the summary
        if block.level == 2:
            break
        lines += block.lines
    return Part(heading=title, body=_tidy(lines))


def frame_from_reply(text: str, outline: Outline) -> tuple[str, list[Part]]:
    """
    Turn the opening's reply for an outline into its title and one part per heading of ``outline.frame``.

    A ``## `` part the reply wrote fills the heading of the same name, or else the next heading not filled yet (so a
    translated heading fills its place); text before its first ``## `` heading is the summary. A part takes the
    heading the writer wrote when the outline asks for translation, else the outline's; a heading left unfilled has
    no text. A Sources list the reply wrote is dropped.
    """
    blocks = _blocks(text)
    title = _title(blocks)
    written = [(b.title, _tidy(b.lines)) for b in blocks if b.level == 2 and _name(b.title) not in _SOURCES_NAMES]
    first = next((index for index, block in enumerate(blocks) if block.level == 2), len(blocks))
    before = _tidy([line for block in blocks[:first] for line in block.lines])
    heads = list(outline.frame)
    names = [_name(h) for h in heads]
    filled: dict[int, tuple[str, str]] = {0: (heads[0], before)} if before else {}
    for heading, body in written:
        name = _name(heading)
        slot = names.index(name) if name in names and names.index(name) not in filled else -1
        if slot < 0 and name in _SUMMARY_NAMES and 0 not in filled:
            slot = 0
        if slot < 0:
            slot = next((i for i in range(max(filled, default=-1) + 1, len(heads)) if i not in filled), -1)
        if slot >= 0:
            filled[slot] = (heading if outline.translate else heads[slot], body)
    parts = [Part(*filled.get(i, (head, ""))) for i, head in enumerate(heads)]
    return title, parts


def _deeper(text: str) -> str:
    lines = text.split("\n")
    for heading in reversed(headings(text)):
        lines[heading.line : heading.end] = [f"{'#' * min(heading.level + 1, 6)} {heading.title}"]
    return "\n".join(lines)


def render_report(
    opening: Part, sections: list[Part], *, outline: Outline | None = None, frame: list[Part] | None = None
) -> str:
    """
    The parts as one Markdown document without a Sources list, each section under a heading of its own (a heading
    already used gets its number). ``frame`` holds the parts the opening wrote for ``outline.frame``: they replace the
    outline's, except the summary's text, which is ``opening.body``; a closing part without text is left out.
    """
    outline = outline or Outline()
    frame = frame or [Part(heading, "") for heading in outline.frame]
    summary, lead, closing = frame[0], (frame[1] if outline.findings else None), frame[2 if outline.findings else 1 :]
    out = [f"# {opening.heading}", "", f"## {summary.heading}", "", opening.body]
    used: set[str] = {_name(part.heading) for part in frame} | _SOURCES_NAMES | {_name(SUMMARY_HEADING)}
    if lead is not None:
        out += ["", f"## {lead.heading}", "", lead.body]
    for number, section in enumerate(sections, 1):
        heading = section.heading
        if _name(heading) in used:
            heading = f"{heading} ({number})"
        used.add(_name(heading))
        body = _deeper(section.body) if lead is not None else section.body
        out += ["", f"{'###' if lead is not None else '##'} {heading}", "", body]
    for part in closing:
        if part.body:
            out += ["", f"## {part.heading}", "", part.body]
    if outline.sources:
        out += ["", f"## {outline.sources}"]
    return _tidy(out) + "\n"


def render_outlined(title: str, sections: list[Part], *, sources: str = "") -> str:
    """A report of a style's own outline: its title, each section under its heading, then ``sources``."""
    out = [f"# {title}"]
    for section in sections:
        out += ["", f"## {section.heading}", "", section.body]
    if sources:
        out += ["", f"## {sources}"]
    return _tidy(out) + "\n"


def parse_outlined(report: str, outline: Sequence[str]) -> ReportParts | None:
    """A report of :func:`render_outlined` as its parts with their line ranges; ``None`` when a heading is missing."""
    blocks = _blocks(report)
    ends = [block.line for block in blocks[1:]] + [report.count("\n") + 1]
    found = {_name(b.title): (b, ends[i]) for i, b in enumerate(blocks) if b.level == 2}
    if any(_name(heading) not in found for heading in outline):
        return None
    title = _title(blocks)
    first = min(found[_name(heading)][0].line for heading in outline) if outline else 0
    sections = [
        Part(heading, _tidy(block.lines), block.line + 1, end)
        for heading in outline
        for block, end in [found[_name(heading)]]
    ]
    return ReportParts(opening=Part(title, "", 1, first), sections=sections)


def parse_report(report: str) -> ReportParts | None:
    """A report of :func:`render_report` as its parts with their line ranges; ``None`` without that shape."""
    blocks = _blocks(report)
    total = report.count("\n") + 1
    ends = [block.line for block in blocks[1:]] + [total]
    summary_at = next((i for i, b in enumerate(blocks) if b.level == 2 and _name(b.title) in _LIBRARY_SUMMARIES), -1)
    if summary_at < 0:
        return None
    title = _title(blocks[:summary_at])
    opening = Part(title, _tidy(blocks[summary_at].lines), 1, ends[summary_at])
    sections = [
        Part(block.title, _tidy(block.lines), block.line + 1, ends[index])
        for index, block in enumerate(blocks)
        if index > summary_at
        and block.level == 2
        and _name(block.title) not in _SOURCES_NAMES
        and not is_title(block.title)
    ]
    return ReportParts(opening=opening, sections=sections) if sections else None
