"""
Writing the report in parts, so that no model call's output grows with the research (docs/how-it-works.md, "Write
and check", gives the parts, their limits, the numbered citations, the retries and why they are not one streamed
call; docs/clarify-and-report-types.md, "Your own outline and instructions", the parts of a style's own outline).

:func:`write_report` makes one batch of calls, side by side: the opening and one section per note (or per heading of
a style's outline), each citing by number (:class:`SourceKeys`), each tried at most twice
(:func:`~haystack_deep_research.run._phases.ask_twice`). Each reply becomes one :class:`Part` whatever the model
added around it, the parts are rendered as one document
(:func:`render_report`), and a rendered report splits back into its parts (:func:`parse_report`), so
:func:`rewrite_report`, the grounding stage's rewrite, writes again only the parts that hold unsupported claims.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from haystack.components.generators.chat.types import ChatGenerator

from haystack_deep_research._prompts import (
    FALLBACK_OPENING,
    FALLBACK_REPORT,
    FALLBACK_SECTION,
    NO_EVIDENCE_SECTION,
    OMITTED,
    OPENING_NOTE_CHARS,
    REPORT_TITLE,
    REWRITE_OPENING,
    REWRITE_SECTION,
    SUMMARY_HEADING,
    WRITER_OPENING,
    WRITER_SECTION,
    fence,
    render_chat,
    render_text,
)
from haystack_deep_research.evidence._styles import is_title
from haystack_deep_research.evidence.citations import extract_citations, sentence_ends
from haystack_deep_research.evidence.entry import normalize_url
from haystack_deep_research.evidence.reading import headings
from haystack_deep_research.report.assessment import Claim
from haystack_deep_research.report.headings import SUMMARY_HEADINGS, report_sections
from haystack_deep_research.report.style import _CJK, ReportStyle, in_form
from haystack_deep_research.run import ResearchRun
from haystack_deep_research.run._phases import Attempt, Phase, Request, ask_twice
from haystack_deep_research.state import PHASE_WRITE

__all__ = [
    "Framing",
    "Outline",
    "SourceKeys",
    "Written",
    "fallback_report",
    "key_lines",
    "parse_report",
    "rewrite_report",
    "without_sources_list",
    "write_report",
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
    """Text cut at the headings a CommonMark renderer shows at the top level (never in a fence, list or quote)."""
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


OPENING = "the opening (title and executive summary)"
TITLE = "the title"
_WORD = re.compile(r"[^\W\d_]{4,}")
# A link's text: no line break, and brackets one level deep at most (a search title such as "[PDF] Tide tables").
_TEXT = r"(?P<text>(?:[^\[\]\n]|\[[^\[\]\n]*\])*)"
_LINK = re.compile(r"(?<!!)\[" + _TEXT + r"\]\(\s*<?(?P<target>[^\s()<>]+)>?(?:\s+\"[^\"\n]*\")?\s*\)")
_NUMBERS = re.compile(r"(?<!!)\[" + _TEXT + r"\]\(\s*(?P<numbers>\d+(?:\s*[,;]\s*\d+)+)\s*\)")
"""A link to several sources at once, ``[NASA; NOAA](1, 2)``: the writer was asked for one number a link."""
_KEPT = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|//|#)", re.IGNORECASE)
"""Link targets kept as they are (verification checks them): absolute URLs (any scheme, or ``//``) and anchors."""
_SOURCES_LIST = re.compile(
    r"\n[ \t]*(?:#+[ \t]*)?(?:\*\*)?Sources(?:\*\*)?:?(?:\*\*)?[ \t]*\n"
    r"(?:[ \t]*(?:(?:[-*+]|\d+[.)])[ \t]+[^\n]*|<?https?://[^\n]*)?\n?)*\Z",
    re.IGNORECASE,
)
"""A closing Sources list: a ``Sources`` line, then only list items, bare URLs and blank lines to the end."""


def without_sources_list(note: str) -> str:
    """A note without its closing ``Sources:`` list (a ``Sources`` line and everything after it)."""
    return _SOURCES_LIST.sub("", note.strip()).strip()


class SourceKeys:
    """The numbers of one report's sources: ``urls``, in order, the first number 1."""

    def __init__(self, urls: Iterable[str]) -> None:
        first: dict[str, str] = {}  # each source once, as first spelled
        for url in urls:
            first.setdefault(normalize_url(url), url)
        self._urls = {str(number): url for number, url in enumerate(first.values(), 1)}
        self._numbers = {key: str(number) for number, key in enumerate(first, 1)}

    def number(self, url: str) -> str:
        """The number of an allowed URL; ``KeyError`` for any other."""
        return self._numbers[normalize_url(url)]

    def numbers(self, urls: Iterable[str]) -> list[str]:
        return [self.number(url) for url in urls]

    def shorten(self, text: str) -> str:
        """A text the writer reads with every inline link to an allowed URL pointing to its number."""

        def replace(match: re.Match[str]) -> str:
            number = self._numbers.get(normalize_url(match["target"]))
            return match[0] if number is None else f"[{match['text']}]({number})"

        return _LINK.sub(replace, text)

    def expand(self, text: str) -> str:
        """A reply with links to numbers pointing to their URLs (one link per known source), others reduced to text."""

        def several(match: re.Match[str]) -> str:
            known = [self._urls[n] for n in re.split(r"\s*[,;]\s*", match["numbers"]) if n in self._urls]
            return ", ".join(f"[{match['text']}]({url})" for url in dict.fromkeys(known)) or match["text"]

        def replace(match: re.Match[str]) -> str:
            target = match["target"]
            if target in self._urls:
                return f"[{match['text']}]({self._urls[target]})"
            return match[0] if _KEPT.match(target) else match["text"]

        return _LINK.sub(replace, _NUMBERS.sub(several, text))


@dataclass(frozen=True)
class Framing:
    """
    What a shape adds to the report written in parts: the headings around the sections, the topics searched and a
    causal chain from the notes (``""``: none), which the opening reads, and the calls' phase and tracing role.
    """

    outline: Outline = field(default_factory=Outline)
    topics: Sequence[str] = ()
    causal_chain: str = ""
    phase: str = PHASE_WRITE
    role: str = "writer"

    def opening_variables(self) -> dict[str, Any]:
        outline = self.outline
        return {
            "summary": outline.summary,
            "findings": outline.findings,
            "closing": list(outline.closing),
            "translate": outline.translate,
            "topics": [fence(topic) for topic in self.topics],
            "causal_chain": fence(self.causal_chain),
            "title_only": False,
        }


@dataclass(frozen=True)
class Written:
    """The report (``""`` when no part could be written), and why the first part that failed did."""

    report: str
    why: str = ""


def _in_language(framing: Framing | None, run: ResearchRun) -> Framing:
    """The framing, its default outline given the library's headings in the question's language."""
    framing = framing or Framing()
    sections = report_sections(run.question)
    if framing.outline != Outline() or sections.language == "en":
        return framing
    return replace(framing, outline=Outline(summary=sections.summary, sources=sections.sources))


def _urls(text: str) -> set[str]:
    return {normalize_url(citation.url) for citation in extract_citations(text)}


def _allowed_in(notes: list[str], urls: list[str]) -> list[str]:
    cited = set().union(*(_urls(note) for note in notes)) if notes else set()
    return [url for url in urls if normalize_url(url) in cited]


def _subtopic(note: str) -> str:
    first = note.strip().split("\n", 1)[0]
    return first.lstrip("#").strip() if first.startswith("#") else " ".join(first.split()[:8])


def _part_request(
    read: list[str],
    cited: list[str],
    number: int,
    total: int,
    heading: str,
    *,
    label: str,
    keys: SourceKeys,
    style: ReportStyle,
    **more: Any,
) -> Request:
    template = REWRITE_SECTION if "unsupported" in more else WRITER_SECTION
    messages = render_chat(
        template,
        notes=[fence(keys.shorten(note)) for note in read],
        urls=cited,
        keys=keys.numbers(cited),
        number=number,
        total=total,
        max_words=style.part_words(total)[1],
        heading=heading,
        **more,
    )
    return Request(f"section {number} of {total} ('{label}')", style.apply(messages))


def _section_request(
    notes: list[str], urls: list[str], number: int, total: int, *, keys: SourceKeys, style: ReportStyle, **more: Any
) -> Request:
    read, label = [without_sources_list(note) for note in notes], _subtopic(notes[0]) if notes else ""
    return _part_request(read, _allowed_in(notes, urls), number, total, "", label=label, keys=keys, style=style, **more)


def key_lines(note: str, limit: int = OPENING_NOTE_CHARS) -> str:
    """A note without its Sources list, cut after the last sentence ending within ``limit`` (else the first)."""
    text = without_sources_list(note)
    if len(text) <= limit:
        return text
    ends = [end for end in sentence_ends(text) if end < len(text)]
    within = [end for end in ends if end <= limit]
    cut = within[-1] if within else (ends[0] if ends else len(text))
    return f"{text[:cut]}\n\n{OMITTED}" if cut < len(text) else text


def _opening_request(
    run: ResearchRun,
    notes: list[str],
    urls: list[str],
    *,
    keys: SourceKeys,
    style: ReportStyle,
    framing: Framing,
    **more: Any,
) -> Request:
    template = REWRITE_OPENING if "unsupported" in more else WRITER_OPENING
    words = style.part_words(len(notes))[0]
    # A first draft reads each note's key lines; a rewrite reads the notes whole, to check claims against them.
    read = [without_sources_list(n) for n in notes] if "unsupported" in more else [key_lines(n) for n in notes]
    cited = _allowed_in(read, urls)
    messages = render_chat(
        template,
        brief=run.brief,
        notes=[fence(keys.shorten(n)) for n in read],
        urls=cited,
        keys=keys.numbers(cited),
        max_words=words,
        **framing.opening_variables(),
        **more,
    )
    return Request(OPENING, style.apply(messages))


def _words(text: str) -> set[str]:
    """What a heading and a note are matched on: each word's first five letters (four or more), CJK pairs."""
    folded = text.casefold()
    pairs = {run[i : i + 2] for run in _CJK.findall(folded) for i in range(max(len(run) - 1, 1))}
    return {word[:5] for word in _WORD.findall(_CJK.sub(" ", folded))} | pairs


def _heading_request(
    heading: str,
    notes: list[str],
    urls: list[str],
    number: int,
    total: int,
    *,
    keys: SourceKeys,
    style: ReportStyle,
    whole: tuple[str, ...] = (),
    **more: Any,
) -> tuple[Request, list[str]]:
    words = _words(heading)
    read = [without_sources_list(n) if words & _words(n) else key_lines(n) for n in notes if n not in whole]
    read += [without_sources_list(n) for n in whole]
    cited = _allowed_in(read, urls)
    return _part_request(read, cited, number, total, heading, label=heading, keys=keys, style=style, **more), cited


def _title_request(run: ResearchRun, *, style: ReportStyle, framing: Framing) -> Request:
    variables = {**framing.opening_variables(), "topics": [], "causal_chain": "", "title_only": True}
    messages = render_chat(WRITER_OPENING, brief=run.brief, notes=[], urls=[], keys=[], max_words=0, **variables)
    return Request(TITLE, style.apply(messages))


def _no_evidence(run: ResearchRun, heading: str) -> Part:
    sentence = report_sections(run.question).no_evidence
    return Part(heading, render_text(NO_EVIDENCE_SECTION, sentence=sentence))


def _outlined_section(
    run: ResearchRun, heading: str, attempt: Attempt | None, notes: list[str], urls: list[str], *, keys: SourceKeys
) -> Part:
    if attempt is None:
        return _no_evidence(run, heading)
    if not attempt.text:
        kept = [section_from_reply(note, _subtopic(note)) for note in notes]
        text = "\n\n".join(f"### {part.heading}\n\n{part.body}" for part in kept)
        return Part(heading, f"{render_text(FALLBACK_SECTION, error=attempt.why)}\n\n{text}".strip())
    body = section_from_reply(keys.expand(attempt.text), heading).body
    if not _urls(body) & {normalize_url(url) for url in urls}:
        return _no_evidence(run, heading)
    return Part(heading, body)


def _write_outlined(
    generator: ChatGenerator,
    run: ResearchRun,
    notes: list[str],
    urls: list[str],
    *,
    style: ReportStyle,
    framing: Framing,
    unsupported: list[Claim] | None,
    researched: bool,
) -> Phase[Written]:
    keys, total, unsupported = SourceKeys(urls), len(style.outline), unsupported or []
    requests = [_title_request(run, style=style, framing=framing)]
    places: list[int] = []  # the request of each heading, -1 for a heading with no allowed URL to cite
    read: list[list[str]] = []
    for number, heading in enumerate(style.outline, 1):
        request, cited = _heading_request(heading, notes, urls, number, total, keys=keys, style=style)
        claims = [c for c in unsupported if {normalize_url(u) for u in c.urls} & {normalize_url(u) for u in cited}]
        if claims:
            more = _rewrite(claims, keys, researched)
            request, cited = _heading_request(heading, notes, urls, number, total, keys=keys, style=style, **more)
        places.append(len(requests) if cited else -1)
        read.append([note for note in notes if _urls(note) & {normalize_url(u) for u in cited}])
        if cited:
            requests.append(request)
    attempts = yield from ask_twice(generator, requests, run, role=framing.role, phase=framing.phase)
    if len(attempts) > 1 and not any(attempt.text for attempt in attempts[1:]):
        return _written("", [*attempts[1:], attempts[0]])  # why: the first heading's
    title = opening_from_reply(keys.expand(attempts[0].text)).heading if attempts[0].text else REPORT_TITLE
    if not attempts[0].text:
        run.warn(framing.phase, f"the writer failed twice on {TITLE} ({attempts[0].why}); the report is untitled")
    sections = []
    for heading, place, mine in zip(style.outline, places, read, strict=True):
        attempt = attempts[place] if place >= 0 else None
        if attempt is not None and not attempt.text:
            run.warn(
                framing.phase,
                f"the writer failed twice on {requests[place].what} ({attempt.why}); that section holds the "
                "researchers' notes it was written from",
            )
        sections.append(_outlined_section(run, heading, attempt, mine, urls, keys=keys))
    report = in_form(style, render_outlined(title, sections, sources=framing.outline.sources), run.ledger)
    if (missed := style.length_warning(report)) is not None:
        run.warn(framing.phase, missed)
    return _written(report, attempts)


def _rewrite(claims: list[Claim], keys: SourceKeys, researched: bool, previous: str = "") -> dict[str, Any]:
    """The prompt variables that make a part's call rewrite it for its unsupported ``claims``."""
    shown = [fence(keys.shorten(claim.text)) for claim in claims]
    return {"unsupported": shown, "researched": researched, "previous": previous}


def _written(report: str, attempts: list[Attempt]) -> Written:
    return Written(report, next((attempt.why for attempt in attempts if not attempt.text), ""))


def fallback_report(run: ResearchRun, why: str, notes: Sequence[str], urls: Sequence[str]) -> str:
    """
    The report written without the writer model, for every shape whose writer failed on every part (or never ran):
    ``why``, the run's brief (else its question), the notes as written and ``urls`` under Sources.
    """
    brief = run.brief or run.question
    return render_text(FALLBACK_REPORT, error=why, brief=brief, notes=list(notes), urls=list(urls))


def write_report(
    generator: ChatGenerator,
    run: ResearchRun,
    notes: list[str],
    urls: list[str],
    *,
    unsupported: list[Claim] | None = None,
    researched: bool = False,
    style: ReportStyle | None = None,
    framing: Framing | None = None,
) -> Phase[Written]:
    """
    Write the report in parts, side by side; the phase returns ``""`` as the report when no part could be written.

    :param unsupported: For a rewrite of a report that was not written in parts: the claims a fact-checker found
        unsupported; each section is told those that cite a URL its note cites, the opening all of them.
    :param researched: Whether the notes hold findings researched again for those claims.
    :param style: The report's form (the default style when ``None``).
    :param framing: What the shape adds (the main agent's report when ``None``).
    """
    style, framing, keys = style or ReportStyle(), _in_language(framing, run), SourceKeys(urls)
    if style.outline:
        outlined = _write_outlined(
            generator, run, notes, urls, style=style, framing=framing, unsupported=unsupported, researched=researched
        )
        return (yield from outlined)
    total = len(notes)
    more = _rewrite(unsupported, keys, researched) if unsupported else {}
    requests = [_opening_request(run, notes, urls, keys=keys, style=style, framing=framing, **more)]
    for number, note in enumerate(notes, 1):
        mine = [c for c in unsupported or [] if {normalize_url(u) for u in c.urls} & _urls(note)]
        extra = _rewrite(mine, keys, researched) if mine else {}
        requests.append(_section_request([note], urls, number, total, keys=keys, style=style, **extra))
    attempts = yield from ask_twice(generator, requests, run, role=framing.role, phase=framing.phase)
    if not any(attempt.text for attempt in attempts):
        return _written("", attempts)
    opening, frame = _opening(run, attempts[0], framing, keys)
    sections = [
        _section(run, request, note, attempt, phase=framing.phase, keys=keys)
        for request, note, attempt in zip(requests[1:], notes, attempts[1:], strict=True)
    ]
    report = in_form(style, render_report(opening, sections, outline=framing.outline, frame=frame), run.ledger)
    if (missed := style.length_warning(report)) is not None:
        run.warn(framing.phase, missed)
    return _written(report, attempts)


def _opening(run: ResearchRun, attempt: Attempt, framing: Framing, keys: SourceKeys) -> tuple[Part, list[Part] | None]:
    if attempt.text and framing.outline.frame[1:]:
        title, frame = frame_from_reply(keys.expand(attempt.text), framing.outline)
        return Part(title, frame[0].body), frame
    if attempt.text:
        return opening_from_reply(keys.expand(attempt.text)), None
    run.warn(framing.phase, f"the writer failed twice on {OPENING} ({attempt.why}); the report opens with the brief")
    return Part(REPORT_TITLE, render_text(FALLBACK_OPENING, error=attempt.why, brief=run.brief)), None


def _section(run: ResearchRun, request: Request, note: str, attempt: Attempt, *, phase: str, keys: SourceKeys) -> Part:
    if attempt.text:
        return section_from_reply(keys.expand(attempt.text), _subtopic(note))
    run.warn(
        phase,
        f"the writer failed twice on {request.what} ({attempt.why}); that section holds the researcher's note as "
        "written",
    )
    kept = section_from_reply(note, _subtopic(note))
    return Part(kept.heading, f"{render_text(FALLBACK_SECTION, error=attempt.why)}\n\n{kept.body}".strip())


def rewrite_report(
    generator: ChatGenerator,
    run: ResearchRun,
    report: str,
    *,
    notes: list[str],
    urls: list[str],
    unsupported: list[Claim],
    found: dict[str, str] | None = None,
    style: ReportStyle | None = None,
    framing: Framing | None = None,
) -> Phase[Written]:
    """
    Write again the parts of ``report`` (the published one the claims' line numbers refer to) that hold
    ``unsupported`` claims, each from the notes that cite a URL it cites and those researched again for its claims;
    the phase returns ``""`` when every part asked for failed.

    :param found: Notes researched again, by the text of the claim they check (``None``: no research ran).
    :param framing: What the shape adds (the main agent's report when ``None``); a report whose outline has more
        headings than the summary is written again whole, in parts.
    """
    researched, style, framing = found is not None, style or ReportStyle(), _in_language(framing, run)
    keys, outlined = SourceKeys(urls), bool(style.outline)
    if outlined:
        parts = parse_outlined(report, style.outline)
    else:
        parts = parse_report(report) if not framing.outline.frame[1:] else None
    if parts is None:  # not written in parts or under its outline (e.g. assembled from the notes): write it so now
        whole = write_report(
            generator, run, notes, urls, unsupported=unsupported, researched=researched, style=style, framing=framing
        )
        return (yield from whole)
    total = len(parts.sections)
    requests: list[Request] = []
    places: list[int] = []  # -1 is the opening, else the section's index
    opening_claims = [claim for claim in unsupported if parts.opening.holds(claim.line)]
    if opening_claims and not outlined:
        previous = fence(keys.shorten(f"## {framing.outline.summary}\n\n{parts.opening.body}"))
        more = _rewrite(opening_claims, keys, researched, previous)
        requests.append(_opening_request(run, notes, urls, keys=keys, style=style, framing=framing, **more))
        places.append(-1)
    for index, section in enumerate(parts.sections):
        claims = [claim for claim in unsupported if section.holds(claim.line)]
        if not claims:
            continue
        text = f"## {section.heading}\n\n{section.body}"
        more = _rewrite(claims, keys, researched, fence(keys.shorten(text)))
        if outlined:
            again = tuple(found[c.text] for c in claims if found and c.text in found)
            request, _ = _heading_request(
                section.heading, notes, urls, index + 1, total, keys=keys, style=style, whole=again, **more
            )
        else:
            mine = [note for note in notes if _urls(note) & _urls(text)]
            mine += [found[c.text] for c in claims if found and c.text in found and found[c.text] not in mine]
            request = _section_request(mine, urls, index + 1, total, keys=keys, style=style, **more)
        requests.append(request)
        places.append(index)
    if not requests:
        return Written(report)
    attempts = yield from ask_twice(generator, requests, run, role=framing.role, phase=framing.phase)
    if not any(attempt.text for attempt in attempts):
        return _written("", attempts)
    opening, sections = parts.opening, list(parts.sections)
    for request, place, attempt in zip(requests, places, attempts, strict=True):
        if not attempt.text:
            run.warn(framing.phase, f"rewriting {request.what} failed twice ({attempt.why}); it is kept as it was")
        elif place < 0:
            opening = Part(opening.heading, opening_from_reply(keys.expand(attempt.text)).body)
        elif outlined:
            sections[place] = _outlined_section(run, sections[place].heading, attempt, [], urls, keys=keys)
        else:
            sections[place] = section_from_reply(keys.expand(attempt.text), sections[place].heading)
    if outlined:
        rendered = render_outlined(opening.heading, sections, sources=framing.outline.sources)
    else:
        rendered = render_report(opening, sections, outline=framing.outline)
    return _written(in_form(style, rendered, run.ledger), attempts)
