"""
Finding the citations in a Markdown report and checking them against the sources that were really read.

:func:`extract_citations` finds every cited ``http(s)`` URL: inline links ``[text](url)`` (also with a title or
with the URL in angle brackets), autolinks ``<url>``, bare URLs (trailing punctuation that is not part of the URL
is dropped, balanced parentheses are kept), reference definitions ``[1]: url``, entries of a Sources/References
list (``1. [Title](url)``, ``[1] Title — url``, ``- url``) and markers ``[1]``, ``[1, 2]`` or ``[text][label]``
in the text that point to such a definition or numbered entry. Images ``![alt](url)`` and code are never citations.

:func:`verify_citations` compares every cited URL with the retrieved URLs, both normalised with
:func:`~haystack_deep_research.evidence.normalize_url`, and repairs the report by this rule:

* an unverified inline link ``[text](url)`` or ``[text][label]`` is replaced by its bare text: the claim stays,
  the link goes;
* an unverified bare URL or autolink is removed (with a pair of parentheses it leaves empty);
* an unverified reference definition line is removed, and so are its markers in the text;
* the Sources section (the first heading of level 2 or lower named "Sources" or "References", case-insensitive,
  down to the next heading of the same or a higher level; later such sections are merged into it) is rebuilt to
  list exactly the verified cited URLs, once each, in first-cited order, as ``- [title or url](url)`` with the URL
  as it was retrieved. Numbered entries of the old list that markers in the text point to are kept below the list
  as reference definitions ``[1]: url``. A report with verified citations and no such section gets one appended;
  a section left with nothing verified says so.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.evidence import normalize_url

__all__ = ["Citation", "CitationCheck", "CitationKind", "extract_citations", "verify_citations"]

CitationKind = Literal["inline", "bare", "reference"]

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:\s+(.*?))?\s*$")
_SOURCES_TITLE = re.compile(r"(?:sources|references)\s*:?(?:\s+#+)?", re.IGNORECASE)
_DEFINITION = re.compile(r"^ {0,3}\[((?:\\.|[^\[\]\\])+)\]:\s*(?:<([^<>]*)>|(\S+))(.*)$")
_LABELLED = re.compile(r"^\s*(?:[-*+]\s+)?(?:\[(\d+)\]|(\d+)[.)])\s+")
_LINK = re.compile(
    r"(!?)\[((?:\\.|[^\[\]\\]|\[(?:\\.|[^\[\]\\])*\])*)\]"  # ![image] or [text], one level of nested brackets
    r"\(\s*(?:<([^<>]*)>|((?:[^\s()]|\([^\s()]*\))*))"  # (<url> or (url with balanced parentheses
    r"""(?:\s+(?:"[^"]*"|'[^']*'|\([^()]*\)))?\s*\)"""  # an optional "title", then )
)
_AUTOLINK = re.compile(r"<(https?://[^\s<>]+)>", re.IGNORECASE)
_BARE = re.compile(r"https?://[^\s<>\"'`\x00\x01]+", re.IGNORECASE)
_FULL_REF = re.compile(r"\[([^\[\]\x00]+)\]\[([^\[\]\x00]*)\]")
_MARKER = re.compile(r"\[([^\[\]\x00]+)\]")
_CODE_SPAN = re.compile(r"(`+).+?\1")
_SENTENCE_END = re.compile(r"[.!?](?=\s)")
_LINE_PREFIX = re.compile(r"^\s*(?:#+|>+|[-*+]|\d+[.)])\s+")
_NOTHING_LEFT = re.compile(r"^\s*(?:[-*+>]|\d+[.)])?\s*$")
_ENTRY_SEPARATORS = " \t\u2014\u2013-:,"
_NO_SOURCES = "_No verified sources were cited._"


@dataclass(frozen=True)
class Citation:
    """
    One occurrence of a cited URL in a report.

    :param url: The URL as written in the report.
    :param text: The link text, marker label or entry title; ``""`` when there is none.
    :param sentence: The sentence (within its line) the citation stood in.
    :param kind: ``"inline"`` for ``[text](url)``; ``"bare"`` for a bare URL or autolink; ``"reference"`` for a
        reference definition, a Sources list entry or a marker pointing to one.
    :param line: 1-based line number in the report.
    """

    url: str
    text: str
    sentence: str
    kind: CitationKind
    line: int

    def to_dict(self) -> dict[str, Any]:
        """:returns: The citation as a JSON-ready dictionary."""
        return asdict(self)


@dataclass
class CitationCheck:
    """
    The outcome of :func:`verify_citations`.

    :param report: The repaired report.
    :param cited: Every cited URL once, as first written, in first-cited order.
    :param verified: The citation occurrences whose URL was retrieved.
    :param unverified: The citation occurrences whose URL was never retrieved, with the sentence each stood in.
    :param uncited: Retrieved URLs that the report never cites, as given.
    :param repaired: Whether anything unverified was removed from the report.
    :param precision: Verified cited URLs divided by cited URLs (unique URLs); 1.0 when nothing is cited.
    :param verified_urls: The verified URLs of ``cited``, in first-cited order (the rebuilt Sources list).
    :param unverified_urls: The unverified URLs of ``cited``, in first-cited order.
    """

    report: str
    cited: list[str]
    verified: list[Citation]
    unverified: list[Citation]
    uncited: list[str]
    repaired: bool
    precision: float
    verified_urls: list[str] = field(default_factory=list)
    unverified_urls: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """:returns: The outcome as a JSON-ready dictionary, citations included."""
        return asdict(self)


@dataclass
class _Hit:
    """A span of one line that cites URLs; ``mode`` says how to remove it, ``refs`` the labels it points to."""

    line: int
    start: int
    end: int
    mode: Literal["link", "cut", "line", "marker"]
    kind: CitationKind
    urls: list[str]
    text: str = ""
    refs: list[str] = field(default_factory=list)


@dataclass
class _Doc:
    lines: list[str]
    hits: list[_Hit] = field(default_factory=list)
    section_lines: set[int] = field(default_factory=set)
    section_heading: int | None = None
    definitions: dict[str, tuple[str, int, bool]] = field(default_factory=dict)  # label: url, line, in Sources


def _is_http(url: str) -> bool:
    return url.lower().startswith(("http://", "https://")) and len(url) > len("https://")


def _key(label: str) -> str:
    return " ".join(label.split()).casefold()


def _trim_url(url: str) -> str:
    """Drop trailing characters of a bare URL that belong to the text around it."""
    while url and (
        url[-1] in ".,;:!?*_~'\""
        or (url[-1] == ")" and url.count("(") < url.count(")"))
        or (url[-1] == "]" and url.count("[") < url.count("]"))
    ):
        url = url[:-1]
    return url


def _scan_links(index: int, line: str, masked: str, kind: CitationKind | None) -> tuple[list[_Hit], str]:
    """Find inline links, autolinks and bare URLs in one line; return them and the line with every link masked."""
    hits: list[_Hit] = []

    def link(match: re.Match[str]) -> str:
        group = 3 if match.group(3) is not None else 4
        url, text = line[match.start(group) : match.end(group)], line[match.start(2) : match.end(2)]
        if not match.group(1) and _is_http(url):
            hits.append(_Hit(index, match.start(), match.end(), "link", kind or "inline", [url], text))
        return "\x00" * len(match.group(0))

    def bare(match: re.Match[str]) -> str:
        autolink = match.re is _AUTOLINK
        url = line[match.start(1) : match.end(1)] if autolink else _trim_url(match.group(0))
        length = len(match.group(0)) if autolink else len(url)
        if _is_http(url):
            hits.append(_Hit(index, match.start(), match.start() + length, "cut", kind or "bare", [url]))
        return "\x00" * length + match.group(0)[length:]

    return hits, _BARE.sub(bare, _AUTOLINK.sub(bare, _LINK.sub(link, masked)))


def _scan_line(doc: _Doc, index: int, in_section: bool) -> str | None:
    """Record the citations of one line; return the masked line to search for markers, or ``None``."""
    line = doc.lines[index]
    masked = _CODE_SPAN.sub(lambda code: "\x01" * len(code.group(0)), line)
    definition = _DEFINITION.match(masked)
    if definition:
        url = definition.group(2) if definition.group(2) is not None else definition.group(3)
        if _is_http(url):
            title = definition.group(4).strip().strip("\"'()")
            doc.hits.append(_Hit(index, 0, len(line), "line", "reference", [url], title))
            doc.definitions.setdefault(_key(definition.group(1)), (url, index, in_section))
        return None
    labelled = _LABELLED.match(masked) if in_section else None
    if labelled:
        masked = "\x00" * labelled.end() + masked[labelled.end() :]
    hits, masked = _scan_links(index, line, masked, "reference" if in_section else None)
    if labelled and hits:
        doc.definitions.setdefault(_key(labelled.group(1) or labelled.group(2)), (hits[0].urls[0], index, True))
        hits[0].text = hits[0].text or line[labelled.end() : hits[0].start].strip(_ENTRY_SEPARATORS)
    doc.hits.extend(hits)
    return None if in_section else masked


def _scan_markers(doc: _Doc, index: int, masked: str) -> None:
    """Record ``[text][label]`` links and ``[label]`` / ``[1, 2]`` markers that point to a known definition."""
    defs = doc.definitions

    def full(match: re.Match[str]) -> str:
        text, label = match.group(1), match.group(2) or match.group(1)
        if text.strip().isdigit() or _key(label) not in defs:
            return match.group(0)
        url = defs[_key(label)][0]
        doc.hits.append(_Hit(index, match.start(), match.end(), "link", "reference", [url], text, [label]))
        return "\x00" * len(match.group(0))

    for match in _MARKER.finditer(_FULL_REF.sub(full, masked)):
        body = match.group(1)
        labels = [body] if _key(body) in defs else [part.strip() for part in re.split(r"[,;]", body)]
        if all(_key(label) in defs for label in labels):
            urls = [defs[_key(label)][0] for label in labels]
            doc.hits.append(_Hit(index, match.start(), match.end(), "marker", "reference", urls, body, labels))


def _scan(markdown: str) -> _Doc:
    """Find every citation span of a report, its Sources section and its reference definitions."""
    if not isinstance(markdown, str):
        raise ConfigurationError(f"A report must be a string, got {type(markdown).__name__}.")
    doc = _Doc(markdown.split("\n"))
    to_search: dict[int, str] = {}
    fence, section_level = "", 0
    for index, line in enumerate(doc.lines):
        opener = _FENCE.match(line)
        if fence or opener:
            closes = fence and opener and opener.group(1)[0] == fence[0] and len(opener.group(1)) >= len(fence)
            fence = "" if closes else fence or (opener.group(1) if opener else "")
            continue
        heading = _HEADING.match(line)
        if heading and len(heading.group(1)) >= 2 and _SOURCES_TITLE.fullmatch(heading.group(2) or ""):
            section_level = section_level or len(heading.group(1))
            doc.section_heading = index if doc.section_heading is None else doc.section_heading
        elif heading and len(heading.group(1)) <= section_level:
            section_level = 0
        if section_level:
            doc.section_lines.add(index)
        masked = _scan_line(doc, index, bool(section_level))
        if masked is not None:
            to_search[index] = masked
    for index, masked in to_search.items():
        _scan_markers(doc, index, masked)
    doc.hits.sort(key=lambda hit: (hit.line, hit.start))
    return doc


def _citations(doc: _Doc) -> list[Citation]:
    """Turn the hits into citations, each with the sentence it stood in."""
    by_line: dict[int, list[_Hit]] = {}
    for hit in doc.hits:
        by_line.setdefault(hit.line, []).append(hit)
    result: list[Citation] = []
    for index, hits in by_line.items():
        line, shield = doc.lines[index], list(doc.lines[index])
        for hit in hits:
            shield[hit.start : hit.end] = "x" * (hit.end - hit.start)
        ends = [found.end() for found in _SENTENCE_END.finditer("".join(shield))]
        sentences: dict[tuple[int, int], str] = {}
        for hit in hits:
            before, after = bisect_right(ends, hit.start), bisect_left(ends, hit.end)
            span = (ends[before - 1] if before else 0, ends[after] if after < len(ends) else len(line))
            if span not in sentences:
                sentences[span] = _LINE_PREFIX.sub("", line[span[0] : span[1]].strip(), count=1).strip()
            sentence = sentences[span]
            for position, url in enumerate(hit.urls):
                text = hit.refs[position] if hit.mode == "marker" else hit.text
                result.append(Citation(url, text, sentence, hit.kind, index + 1))
    return result


def extract_citations(markdown: str, *, sources_section: bool = True) -> list[Citation]:
    """
    Return every citation in a Markdown report, in document order.

    :param markdown: The report.
    :param sources_section: Whether to include the entries of the Sources section (see the module docstring);
        ``False`` keeps only the citations in the body, where claims are made.
    :returns: One :class:`Citation` per occurrence of a cited URL (a marker ``[1, 2]`` gives two).
    :raises ConfigurationError: If ``markdown`` is not a string.
    """
    doc = _scan(markdown)
    citations = _citations(doc)
    return citations if sources_section else [c for c in citations if c.line - 1 not in doc.section_lines]


def _cut(line: str, start: int, end: int) -> str:
    """Remove ``line[start:end]``, with the space before it and a pair of parentheses it leaves empty."""
    left, right = line[:start], line[end:]
    if left.rstrip().endswith("(") and right.lstrip().startswith(")"):
        left, right = left.rstrip()[:-1], right.lstrip()[1:]
    if left[-1:].isspace() and (not right or right[0] in " \t.,;:!?)"):
        left = left.rstrip()
    return left + (right.lstrip() if not left.strip() else right)


def _repair_line(line: str, hits: list[_Hit], bad: set[str]) -> str | None:
    """Apply the repair rule to one line outside the Sources section; ``None`` means drop the line."""
    changed = False
    for hit in sorted(hits, key=lambda item: item.start, reverse=True):
        flags = [normalize_url(url) in bad for url in hit.urls]
        if not any(flags):
            continue
        changed = True
        if hit.mode == "line":
            return None
        if hit.mode == "link":
            line = line[: hit.start] + hit.text + line[hit.end :]
        elif hit.mode == "marker" and not all(flags):
            kept = ", ".join(label for label, flag in zip(hit.refs, flags, strict=True) if not flag)
            line = f"{line[: hit.start]}[{kept}]{line[hit.end :]}"
        else:
            line = _cut(line, hit.start, hit.end)
    return None if changed and _NOTHING_LEFT.match(line) else line


def _source_line(url: str, title: str) -> str:
    label = (" ".join(title.split()) or url).replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
    if re.search(r"[\s<>]", url) or url.count("(") != url.count(")"):
        url = f"<{url}>"
    return f"- [{label}]({url})"


def _rebuild(doc: _Doc, report: str, retrieved: Mapping[str, str], bad: set[str], sources: list[str]) -> str:
    """Repair the body lines and put the rebuilt Sources section in place of the old one (or append it)."""
    body: dict[int, list[_Hit]] = {}
    kept: dict[str, tuple[int, str]] = {}
    for hit in (hit for hit in doc.hits if hit.line not in doc.section_lines):
        body.setdefault(hit.line, []).append(hit)
        for label, url in zip(hit.refs, hit.urls, strict=False):  # only markers and [text][label] have refs
            _, defined_at, in_section = doc.definitions[_key(label)]
            if in_section and normalize_url(url) in retrieved:
                kept.setdefault(_key(label), (defined_at, f"[{label}]: {retrieved[normalize_url(url)]}"))
    repaired = {index: _repair_line(doc.lines[index], hits, bad) for index, hits in body.items()}
    definitions = [text for _, text in sorted(kept.values())]
    out: list[str] = []
    after_block = False
    for index, line in enumerate(doc.lines):
        if index == doc.section_heading:
            while out and not out[-1].strip():
                out.pop()
            out += [*([""] if out else []), line.strip(), "", *(sources or [_NO_SOURCES])]
            out += ["", *definitions] if definitions else []
            after_block = True
        elif index not in doc.section_lines and (new := repaired.get(index, line)) is not None:
            out += [""] if after_block and new.strip() else []
            after_block = False
            out.append(new)
    text = "\n".join(out)
    if doc.section_heading is None and sources:
        return text.rstrip("\n") + ("\n\n" if text.strip() else "") + "## Sources\n\n" + "\n".join(sources) + "\n"
    return text.rstrip("\n") + "\n" if report.endswith("\n") else text


def verify_citations(
    report: str, retrieved_urls: Iterable[str], *, titles: Mapping[str, str] | None = None
) -> CitationCheck:
    """
    Check every citation of ``report`` against ``retrieved_urls`` and repair the report by the module's rule.

    :param report: The Markdown report.
    :param retrieved_urls: The URLs whose content was really read. A set is read in sorted order, so that
        ``uncited`` does not depend on hashing.
    :param titles: Optional titles by URL (in any trivially different spelling) for the rebuilt Sources list.
    :returns: The repaired report and the findings.
    :raises ConfigurationError: If ``report`` or a retrieved URL is not a string.
    """
    doc = _scan(report)
    retrieved: dict[str, str] = {}
    for url in sorted(retrieved_urls, key=str) if isinstance(retrieved_urls, set | frozenset) else retrieved_urls:
        if not isinstance(url, str):
            raise ConfigurationError(f"Retrieved URLs must be strings, got {type(url).__name__}.")
        if url.strip():
            retrieved.setdefault(normalize_url(url), url.strip())
    title_of = {normalize_url(url): title for url, title in (titles or {}).items() if url.strip()}
    cited: dict[str, str] = {}
    verified: list[Citation] = []
    unverified: list[Citation] = []
    for citation in _citations(doc):
        key = normalize_url(citation.url)
        cited.setdefault(key, citation.url)
        (verified if key in retrieved else unverified).append(citation)
    good = [key for key in cited if key in retrieved]
    sources = [_source_line(retrieved[key], title_of.get(key, "")) for key in good]
    return CitationCheck(
        report=_rebuild(doc, report, retrieved, set(cited) - set(good), sources),
        cited=list(cited.values()),
        verified=verified,
        unverified=unverified,
        uncited=[url for key, url in retrieved.items() if key not in cited],
        repaired=bool(unverified),
        precision=len(good) / len(cited) if cited else 1.0,
        verified_urls=[cited[key] for key in good],
        unverified_urls=[cited[key] for key in cited if key not in retrieved],
    )
