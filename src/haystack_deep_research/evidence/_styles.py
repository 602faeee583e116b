"""
A report as the citation layer sees it: the spans (:class:`Hit`) that cite something, with what removing each takes,
and the citation styles that find them: its Sources section (a heading or a plain line naming it, in many languages,
or an untitled list that ends the report), reference-list entries, footnotes and markers (docs/evidence.md,
"Checking any report"). A citation is any link a browser would open as another document but ``mailto:`` and
``tel:``; only the kinds a run reads (``http(s)``, ``file://``, ``doc://``, ``mcp://``) can be verified.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Literal, NamedTuple, cast

from haystack_deep_research.evidence._markdown import Link, Parsed, decoded, parse_fragment

CitationKind = Literal["inline", "bare", "reference", "image", "html"]
Mode = Literal["link", "cut", "line", "marker"]

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
_NOT_SOURCES = frozenset({"mailto", "tel"})
_READ_SCHEMES = frozenset({"http", "https", "file", "doc", "mcp"})


def _as_browsed(url: str) -> str:
    """The URL as a browser reads it: C0 controls and spaces stripped at both ends, tabs and line breaks removed."""
    return re.sub(r"[\t\n\r]", "", url.strip("".join(map(chr, range(33)))))


def citable(url: str) -> bool:
    """:returns: Whether a link to ``url`` cites another document (see the module docstring)."""
    browsed = _as_browsed(url)
    if browsed[:2].replace("\\", "/") == "//":
        return True
    scheme = _SCHEME.match(browsed)
    return scheme is not None and scheme.group(1).lower() not in _NOT_SOURCES


def verifiable(url: str) -> bool:
    """:returns: Whether ``url`` is of a kind a run reads: ``http(s)://``, ``file://``, ``doc://`` or ``mcp://``."""
    browsed = _as_browsed(url)
    scheme = _SCHEME.match(browsed)
    return scheme is not None and scheme.group(1).lower() in _READ_SCHEMES and browsed[scheme.end() :][:2] == "//"


def key(label: str) -> str:
    """:returns: The comparison key of a reference label (blanks collapsed, case folded)."""
    return " ".join(label.split()).casefold()


@dataclass
class Hit:
    """
    A span of the report that cites ``urls``. Its ``mode`` says how to remove it: ``link`` keeps the span ``keep``
    (a link's text), ``cut`` removes it, ``line`` removes ``lines`` (a definition or a footnote; otherwise the lines
    of its block), ``marker`` removes the labels (``refs``, one per URL) that fail. ``tail`` goes with it (an
    anchor's closing tag); when its place is unknown (``mapped`` false) repairing it removes its block's lines.
    ``entry``: it stands in a definition or a reference-list entry, where no claim is made.
    """

    start: int
    end: int
    mode: Mode
    kind: CitationKind
    urls: list[str]
    text: str = ""
    refs: list[str] = field(default_factory=list)
    keep: tuple[int, int] | None = None
    tail: tuple[int, int] | None = None
    lines: tuple[int, int] = (0, 0)
    mapped: bool = True
    entry: bool = False


@dataclass
class Doc:
    """
    A scanned report: its hits, the lines of its Sources section(s) and of its first title, each label's URL, line
    and whether that is in the section, the lines of definitions and entries, and the body's spans that look like
    markers but name no label (with their text).
    """

    parsed: Parsed
    hits: list[Hit] = field(default_factory=list)
    section_lines: set[int] = field(default_factory=set)
    section_heading: int | None = None
    definitions: dict[str, tuple[str, int, bool]] = field(default_factory=dict)
    entry_lines: set[int] = field(default_factory=set)
    unresolved: list[tuple[int, int, str]] = field(default_factory=list)

    @property
    def lines(self) -> list[str]:
        return self.parsed.lines

    def text(self, span: tuple[int, int] | None) -> str:
        return self.parsed.text[span[0] : span[1]] if span else ""

    def line(self, hit: Hit) -> int:
        """:returns: The 0-based line where ``hit`` starts."""
        return self.parsed.line_of(hit.start)


def link_hit(doc: Doc, link: Link) -> Hit:
    """The span of one link: its text stays when the link goes, a URL standing for itself is cut."""
    kind = cast(CitationKind, "bare" if link.form == "autolink" else link.form)
    if link.text is None:
        return Hit(link.start, link.end, "cut", kind, [link.url], lines=link.lines, mapped=link.mapped)
    text, refs = doc.text(link.text), [link.label] if link.label is not None else []
    return Hit(
        link.start, link.end, "link", kind, [link.url], text, refs, link.text, link.tail, link.lines, link.mapped
    )


NO_SOURCES = "_No verified sources were cited._"
"""What a rebuilt Sources section says when nothing cited was verified (and part of the section when read again)."""

_TITLES = frozenset(
    word.casefold()
    for word in (
        # English
        "sources", "source", "references", "reference list", "bibliography", "works cited", "citations",
        "cited sources", "sources cited", "cited works", "footnotes", "notes and references", "references and notes",
        # Spanish, Portuguese, Catalan, Galician
        "referencias", "fuentes", "bibliografía", "obras citadas", "fuentes consultadas", "referencias bibliográficas",
        "referências", "fontes", "bibliografia", "referències", "fonts",
        # French, Italian, Romanian
        "références", "bibliographie", "riferimenti", "fonti", "riferimenti bibliografici", "referințe", "surse",
        # German, Dutch, Scandinavian, Finnish
        "quellen", "quellenangaben", "literatur", "literaturverzeichnis", "referenzen", "einzelnachweise", "belege",
        "quellenverzeichnis", "bronnen", "referenties", "bronvermelding", "literatuur", "källor", "referenser",
        "kilder", "referencer", "referanser", "lähteet", "viitteet",
        # Central and Eastern European
        "źródła", "bibliografia", "przypisy", "zdroje", "literatura", "források", "irodalom", "izvori",
        "источники", "литература", "список литературы", "ссылки", "джерела", "список джерел", "източници",
        # Greek, Turkish, Hebrew, Arabic, Persian, Hindi
        "πηγές", "βιβλιογραφία", "αναφορές", "kaynaklar", "kaynakça", "מקורות", "המקורות", "المراجع", "المصادر",
        "منابع", "संदर्भ", "स्रोत",
        # East and South-East Asian
        "参考文献", "参考资料", "参考資料", "来源", "來源", "资料来源", "資料來源", "出典", "出处", "出處", "引用",
        "引用文献", "참고 문헌", "참고문헌", "출처", "참고 자료", "tài liệu tham khảo", "nguồn", "nguồn tham khảo",
        "参考来源", "referensi", "sumber", "daftar pustaka", "rujukan", "แหล่งที่มา", "อ้างอิง", "เอกสารอ้างอิง",
    )
)  # fmt: skip
_TITLE = re.compile(r"[\s*_]*(?:\d{1,2}(?:\.\d{1,2})*\.?\s+)?(.*?)[\s*_:\uff1a.]*")
_PREFIX = re.compile(r"(?:[ \t]*>)*[ \t]*(?:[-*+][ \t]+)?")
_LABEL = re.compile(r"(?:\[(\^?[^\[\]\s]{1,30})\](:?)|\((\d{1,4})\)|(\d{1,4})[.)])(?=\s|$)")
_MARKER = re.compile(
    r"\[\s*([^\[\]\n]{1,80}?)\s*\]"  # [1], [1, 2], [^1]
    r"|\u3010\s*([^\u3010\u3011\n]{1,80}?)\s*\u3011"  # 【1】
    r"|\uff3b\s*([^\uff3b\uff3d\n]{1,80}?)\s*\uff3d"  # full-width [1]
)
_RANGE = re.compile(r"(\d{1,4})\s*[-\u2013\u2014]\s*(\d{1,4})")
_SEPARATORS = " \t\n\u2014\u2013-:,."
_PLAIN = ("paragraph_open", "ordered_list_open", "bullet_list_open")  # a plain title: a paragraph, or "7. Sources"


def is_title(text: str) -> bool:
    """:returns: Whether ``text`` names a Sources section (see the module docstring)."""
    match = _TITLE.fullmatch(unicodedata.normalize("NFC", text.strip()))
    return match is not None and " ".join(match.group(1).split()).casefold() in _TITLES


def marker_like(text: str) -> bool:
    """:returns: Whether a label looks like a citation marker: a number or a footnote label ``^x``."""
    return re.fullmatch(r"\^\S{1,30}|\d{1,4}", text.strip()) is not None


def _cites(citing: list[int], first: int, end: int) -> bool:
    at = bisect_left(citing, first)
    return at < len(citing) and citing[at] < end


def find_sections(doc: Doc) -> None:
    """Find the Sources section(s) and set ``doc.section_lines`` and ``doc.section_heading``."""
    parsed = doc.parsed
    blocks = {block.first: block for block in parsed.blocks if block.kind in ("heading", "paragraph")}
    units = sorted(parsed.units)
    citing = sorted({parsed.line_of(link.start) for link in parsed.links if citable(link.url)})
    for index, (first, end, kind) in enumerate(units):
        block = blocks.get(first)
        if block is None:
            continue
        if kind == "heading_open" and is_title(block.content):
            later = (unit for unit in units[index + 1 :] if unit[2] == "heading_open")
            stop = next((unit[0] for unit in later if blocks[unit[0]].level <= block.level), len(parsed.lines))
        elif kind in _PLAIN and block.kind == "paragraph" and is_title(block.content.split("\n")[0]):
            stop = end
            for next_first, next_end, next_kind in units[index + 1 :]:
                cites = next_kind == "definition" or _cites(citing, next_first, next_end)
                cites = cites or doc.lines[next_first].strip() == NO_SOURCES
                if next_kind == "heading_open" or not cites:
                    break
                stop = next_end
        else:
            continue
        doc.section_lines.update(range(first, stop))
        doc.section_heading = first if doc.section_heading is None else doc.section_heading
    if not doc.section_lines:
        _untitled_list(doc, units, citing)


def _untitled_list(doc: Doc, units: list[tuple[int, int, str]], citing: list[int]) -> None:
    """
    Take a reference list without a title for the Sources section: the blocks that end the report, right after the
    body (not after a heading; a rule between aside), made of entries that each start with a label (not a footnote's
    ``[label]:``) and cite something, when a marker of the body names one of their labels.
    """
    first = end = None
    for unit_first, unit_end, kind in reversed(units):
        if kind == "hr" and first is None:
            continue
        if kind not in _PLAIN:
            break
        rows = [row for row in range(unit_first, unit_end) if doc.lines[row].strip()]
        labels = {row: found for row in rows if (found := entry_label(doc.lines[row], True))}
        starts = list(labels)
        if not rows or rows[0] not in labels or any(found.colon for found in labels.values()):
            break
        bounds = zip(starts, [*starts[1:], unit_end], strict=True)
        if not all(_cites(citing, row, stop) for row, stop in bounds) or any(
            row not in starts and not doc.lines[row][:1].isspace() for row in rows
        ):
            break
        first, end = unit_first, end or unit_end
    above = [kind for unit_first, _, kind in units if unit_first < (first or 0) and kind != "hr"]
    if first is None or end is None or above[-1:] == ["heading_open"]:  # a list under another title is not one
        return
    named = {key(found.label) for row in range(first, end) if (found := entry_label(doc.lines[row], True))}
    body = "\n".join(doc.lines[:first])
    marked = {key(label) for match in _MARKER.finditer(body) for label in _labels(_body(match), None) or []}
    if named & marked:
        doc.section_lines.update(range(first, end))


def split_links(doc: Doc) -> tuple[list[Hit], list[Link]]:
    """:returns: The spans of the links that cite something, and the links that may be markers instead."""
    hits: list[Hit] = []
    maybe: list[Link] = []
    for link in doc.parsed.links:
        in_body = doc.parsed.line_of(link.start) not in doc.section_lines
        text = doc.text(link.text)
        if in_body and link.form in ("inline", "reference") and link.text is not None:
            is_marker = link.form == "reference" and (marker_like(text) or marker_like(link.label or ""))
            if is_marker or (not citable(link.url) and _labels(text.strip().strip("[]\u3010\u3011"), None) is not None):
                maybe.append(link)
                continue
        if citable(link.url):
            hits.append(link_hit(doc, link))
    for definition in doc.parsed.definitions:
        lines = (definition.first, definition.end)
        in_section = definition.first in doc.section_lines
        start, end = doc.parsed.starts[definition.first], doc.parsed.starts[definition.end - 1]
        end += len(doc.lines[definition.end - 1])
        if definition.label.startswith("^"):  # a footnote: a renderer with footnotes shows its text
            found = [link_hit(doc, link) for link in parse_fragment(doc.parsed, definition.after, end, lines)]
            found = [hit for hit in found if citable(hit.urls[0])]
            if found:
                found[0].mode, found[0].lines = "line", lines
            _define(doc, definition.label, found, in_section=in_section, lines=lines)
            hits += found
        elif citable(definition.url):
            hit = Hit(start, end, "line", "reference", [definition.url], definition.title, lines=lines, entry=True)
            doc.definitions.setdefault(key(definition.label), (definition.url, definition.first, in_section))
            doc.entry_lines.update(range(*lines))
            hits.append(hit)
    return hits, maybe


def _define(doc: Doc, label: str, hits: list[Hit], *, in_section: bool, lines: tuple[int, int]) -> None:
    doc.entry_lines.update(range(*lines))
    for hit in hits:
        hit.entry, hit.kind = True, "reference"
    if hits:
        doc.definitions.setdefault(key(label), (hits[0].urls[0], lines[0], in_section))


class _Label(NamedTuple):
    label: str
    end: int  # where it ends in its line
    colon: bool  # written ``[label]:``, as a definition or footnote


def entry_label(line: str, in_section: bool) -> _Label | None:
    """The label that starts an entry line: any label in the Sources section, ``[label]:`` anywhere."""
    match = _LABEL.match(line, _PREFIX.match(line).end())  # type: ignore[union-attr]  # the prefix may be empty
    if match is None or not (in_section or match.group(2)):
        return None
    label = next(group for group in (match.group(1), match.group(3), match.group(4)) if group)
    return _Label(label, match.end(), bool(match.group(2)))


def find_entries(doc: Doc) -> None:
    """Find the labelled entries (see the module docstring) and record their labels in ``doc.definitions``."""
    parsed = doc.parsed
    doc.hits.sort(key=lambda hit: (hit.start, -hit.end))
    starts = [hit.start for hit in doc.hits]
    for block in parsed.blocks:
        if block.kind != "paragraph":
            continue
        in_section = block.first in doc.section_lines
        entries = []
        for row in range(block.first, block.end):
            found = entry_label(doc.lines[row], in_section) if row != doc.section_heading else None
            if found:
                entries.append((row, found.label, found.end))
        for number, (row, label, label_end) in enumerate(entries):
            stop = entries[number + 1][0] if number + 1 < len(entries) else block.end
            first, last = parsed.starts[row], parsed.starts[stop - 1] + len(doc.lines[stop - 1])
            span = doc.hits[bisect_left(starts, first) : bisect_left(starts, last)]
            inside = [hit for hit in span if hit.mode != "line"]
            if inside:
                title = doc.parsed.text[first + label_end : inside[0].start].strip(_SEPARATORS)
                inside[0].text = inside[0].text or " ".join(title.split())
                if not in_section:
                    inside[0].mode, inside[0].lines = "line", (row, stop)
            _define(doc, label, inside, in_section=in_section, lines=(row, stop))


def _labels(body: str, known: dict[str, tuple[str, int, bool]] | None) -> list[str] | None:
    """The labels a marker's text names, if it is a marker: all of them must be ``known`` (any, when ``None``)."""
    if known is not None and key(body) in known:
        return [body]
    labels: list[str] = []
    for piece in re.split(r"[,;\uff0c\uff1b\u3001]", body):
        part = piece.split("\u2020")[0].strip()  # 【1†source】
        span = _RANGE.fullmatch(part)
        if span and int(span.group(1)) < int(span.group(2)) <= int(span.group(1)) + 50:
            labels += [str(number) for number in range(int(span.group(1)), int(span.group(2)) + 1)]
        elif marker_like(part):
            labels.append(part)
        else:
            return None
    return labels if labels and (known is None or all(key(label) in known for label in labels)) else None


def _body(match: re.Match[str]) -> str:
    return next(group for group in match.groups() if group is not None)


def _marker(
    doc: Doc, span: tuple[int, int], labels: list[str], *, body: str, lines: tuple[int, int], link: Link | None = None
) -> Hit:
    """A marker naming ``labels``; a reference link's own URL stands for its label."""
    urls = [link.url] if link is not None else [doc.definitions[key(label)][0] for label in labels]
    mapped = link.mapped if link is not None else True
    return Hit(*span, "marker", "reference", urls, body, labels, lines=lines, mapped=mapped)


def find_markers(doc: Doc, maybe: list[Link]) -> None:
    """Find the markers of the body (see the module docstring) and add them to ``doc.hits``."""
    known = doc.definitions
    for link in maybe:
        text, label, lines = doc.text(link.text), link.label or "", link.lines
        if link.form == "reference" and key(text) == key(label):  # [1] or [1][]
            if citable(link.url):
                doc.hits.append(_marker(doc, (link.start, link.end), [label], body=label, lines=lines, link=link))
        elif link.form == "reference" and link.text is not None:  # [1][2]: two markers
            middle = link.text[1] + 1
            if (found := _labels(text, known)) is not None:
                doc.hits.append(_marker(doc, (link.start, middle), found, body=text, lines=lines))
            if citable(link.url):
                doc.hits.append(_marker(doc, (middle, link.end), [label], body=label, lines=lines, link=link))
        elif (found := _labels(text.strip().strip("[]\u3010\u3011"), known)) is not None:
            doc.hits.append(_marker(doc, (link.start, link.end), found, body=text, lines=lines))
    taken = sorted((hit.start, hit.end) for hit in doc.hits)
    taken_starts = [start for start, _ in taken]
    reach = list(accumulate((end for _, end in taken), max))  # the furthest end of the spans up to each one
    for block in doc.parsed.blocks:
        if block.first in doc.section_lines or block.first in doc.entry_lines:
            continue
        for start, end in block.segments:
            text, spans = decoded(doc.parsed.text, start, end)
            for match in _MARKER.finditer(text):
                body = _body(match)
                begin, finish = spans[match.start()][0], spans[match.end() - 1][1]
                labels = _labels(body, known)
                before = bisect_left(taken_starts, finish) - 1  # the last span starting before this one ends
                if before >= 0 and reach[before] > begin:
                    continue
                if labels is not None:
                    doc.hits.append(_marker(doc, (begin, finish), labels, body=body, lines=(block.first, block.end)))
                elif _labels(body, None) is not None:  # it looks like a marker, but names no entry a reader sees
                    doc.unresolved.append((begin, finish, body))
