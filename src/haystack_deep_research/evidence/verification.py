"""
Checking a report's citations against the sources that were really read, and repairing the report. The rule, and
why the repaired report cites nothing that was not read, are in docs/evidence.md ("Citation verification").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from functools import cache
from typing import Any

from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.evidence._markdown import parse
from haystack_deep_research.evidence._styles import NO_SOURCES, Doc, Hit, verifiable
from haystack_deep_research.evidence._styles import key as label_key
from haystack_deep_research.evidence.citations import Citation, _citations, _scan
from haystack_deep_research.evidence.entry import normalize_url

__all__ = ["CitationCheck", "verify_citations"]

_PASSES = 8


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
    :param passages: For every verified citation in the body, the passage of its source that supports the sentence
        citing it: ``url``, ``title``, ``read_at``, ``sentence`` and ``passage``, one entry per sentence and URL in
        citing order. :func:`verify_citations` has no ledger and leaves it empty;
        :func:`haystack_deep_research.report.verify_report` fills it from the run's ledger.
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
    passages: list[dict[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """:returns: The outcome as a JSON-ready dictionary, citations included."""
        return asdict(self)


def verify_citations(
    report: str,
    retrieved_urls: Iterable[str],
    *,
    titles: Mapping[str, str] | None = None,
    named: Mapping[str, str] | None = None,
) -> CitationCheck:
    """
    Check every citation of ``report`` against ``retrieved_urls`` (the URLs really read; a set is read sorted, so that
    ``uncited`` does not depend on hashing) and repair the report; ``titles`` and ``named`` notes by URL (see
    :meth:`.EvidenceLedger.named_notes`) go into the rebuilt Sources list.
    """
    doc = _scan(report)
    retrieved: dict[str, str] = {}
    for url in sorted(retrieved_urls, key=str) if isinstance(retrieved_urls, set | frozenset) else retrieved_urls:
        if not isinstance(url, str):
            raise ConfigurationError(f"Retrieved URLs must be strings, got {type(url).__name__}.")
        if url.strip():
            retrieved.setdefault(normalize_url(url), url.strip())
    title_of = {normalize_url(url): title for url, title in (titles or {}).items() if url.strip()}
    note_of = {normalize_url(url): note for url, note in (named or {}).items() if url.strip()}

    @cache
    def failed(url: str) -> bool:
        return not verifiable(url) or normalize_url(url) not in retrieved

    cited: dict[str, str] = {}
    verified: list[Citation] = []
    unverified: list[Citation] = []
    for citation in _citations(doc):
        cited.setdefault(normalize_url(citation.url), citation.url)
        (unverified if failed(citation.url) else verified).append(citation)
    good = [key for key, url in cited.items() if not failed(url)]
    sources = [_source_line(retrieved[key], title_of.get(key, ""), note_of.get(key, "")) for key in good]
    text = _repair(doc, retrieved, failed, sources)
    for _ in range(_PASSES):
        again = _repair(_scan(text), retrieved, failed, sources)
        if again == text:
            break
        text = again
    else:
        text = _strip_lines(text, failed)
    return CitationCheck(
        report=text,
        cited=list(cited.values()),
        verified=verified,
        unverified=unverified,
        uncited=[url for key, url in retrieved.items() if key not in cited],
        repaired=bool(unverified),
        precision=len(good) / len(cited) if cited else 1.0,
        verified_urls=[cited[key] for key in good],
        unverified_urls=[url for key, url in cited.items() if key not in good],
    )


def _strip_lines(text: str, failed: Callable[[str], bool]) -> str:
    """The last resort: drop every line that still cites something unverified until nothing does."""
    while True:
        doc = _scan(text)
        lines = {doc.line(hit) for hit in doc.hits if any(failed(url) for url in hit.urls)}
        if not lines:
            return text
        text = "\n".join(line for index, line in enumerate(doc.lines) if index not in lines)


# Every edit of a repair keeps the number of lines (a span holding a line break is replaced by as many line
# breaks), so a line of the repaired text is still the line of the same number in the report; lines are then
# dropped or replaced as a whole.
Edit = tuple[int, int, str | None]
"""``(start, end, replacement)``; a replacement of ``None`` cuts the span."""

_LEADING_BLANKS = re.compile(r"[^\S\n]*")
_AFTER_A_CUT = frozenset(" \t.,;:!?)")


def _first(right: list[str], *, solid: bool) -> str:
    """The first character of the line in ``right`` (the first non-blank one if ``solid``); ``""`` at its end."""
    for piece in reversed(right):
        for char in piece:
            if char == "\n":
                return ""
            if not (solid and char.isspace()):
                return char
    return ""


def _drop_blanks(right: list[str]) -> None:
    """Remove the blanks at the start of ``right``, up to a line break."""
    while right:
        blanks = _LEADING_BLANKS.match(right[-1])
        right[-1] = right[-1][blanks.end() if blanks else 0 :]
        if right[-1]:
            return
        right.pop()


def _cut(before: str, right: list[str], *, starts_text: bool) -> str:
    """``before`` as cutting the span after it leaves it (``right``: the text after the span, updated)."""
    head, line = before[: before.rfind("\n") + 1], before[before.rfind("\n") + 1 :]
    if line.rstrip().endswith("(") and _first(right, solid=True) == ")":
        line = line.rstrip()[:-1]
        _drop_blanks(right)  # then the ")" starts the first piece
        right[-1] = right[-1][1:]
    if line[-1:].isspace() and (_first(right, solid=False) or " ") in _AFTER_A_CUT:
        line = line.rstrip()
    if not line.strip() and (head or starts_text):  # nothing but blanks before it on its line
        _drop_blanks(right)
    return head + line


def _apply_edits(text: str, edits: list[Edit]) -> str:
    """
    The edited text, with as many lines as ``text``. A cut removes the span with the blank before it (when a blank,
    punctuation or the line's end follows), a pair of parentheses it leaves empty, and the blanks after it when only
    blanks precede it on its line. Edits must not overlap; they are applied from the right onto a stack of pieces
    rather than one string, so many edits on one long line stay linear.
    """
    right: list[str] = []  # the edited text on the right of the edit at hand, last piece first
    _push(right, text[edits[-1][1] :] if edits else text)
    for number in reversed(range(len(edits))):
        start, end, new = edits[number]
        before = text[edits[number - 1][1] if number else 0 : start]
        breaks = text.count("\n", start, end)
        if new is None:
            _push(right, "\n" * breaks)
            before = _cut(before, right, starts_text=number == 0)
        else:
            _push(right, new + "\n" * max(0, breaks - new.count("\n")))
        _push(right, before)
    return "".join(reversed(right))


def _push(right: list[str], piece: str) -> None:
    if piece:  # no empty piece, so that the start of the text on the right is found at once
        right.append(piece)


_NOTHING_LEFT = re.compile(r"^\s*(?:[-*+>]|\d+[.)])?\s*$")


def _source_line(url: str, title: str, named: str = "") -> str:
    """``- [title or url](url)`` and the note in parentheses, a named URL as code (no link: nothing was read there)."""
    label = (" ".join(title.split()) or url).replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
    if re.search(r"[\s<>]", url) or url.count("(") != url.count(")"):
        url = f"<{url}>"
    if not named:
        return f"- [{label}]({url})"
    words, _, address = " ".join(named.split()).rpartition(": ")
    if not words:
        return f"- [{label}]({url}) ({address})"
    return f"- [{label}]({url}) ({words}: `{address.replace('`', '%60')}`)"


def _edits(doc: Doc, hit: Hit, failed: list[bool]) -> list[Edit]:
    """The edits that remove the failed URLs of one hit."""
    if hit.mode == "link" and hit.keep is not None and doc.text(hit.keep).strip():
        inside = hit.start <= hit.keep[0] and hit.keep[1] <= hit.end  # else the text follows (an HTML anchor)
        edits: list[Edit] = [(hit.start, hit.end, doc.text(hit.keep) if inside else "")]
        return edits + ([(*hit.tail, "")] if hit.tail else [])
    if hit.mode == "marker" and not all(failed):
        kept = ", ".join(label for label, flag in zip(hit.refs, failed, strict=True) if not flag)
        return [(hit.start, hit.end, f"[{kept}]")]
    return [(hit.start, hit.end, None)]


def _body(doc: Doc, failed_url: Callable[[str], bool]) -> tuple[list[str], set[int], set[int]]:
    """Apply the rule to the body: the edited lines, the lines to drop and the lines an edit touched."""
    drop: set[int] = set()
    edits: list[Edit] = []
    for hit in doc.hits:
        failed = [failed_url(url) for url in hit.urls]
        if doc.line(hit) in doc.section_lines or not any(failed):
            continue
        if hit.mode == "line" or not hit.mapped:
            drop.update(range(*hit.lines))
        else:
            edits += _edits(doc, hit, failed)
    groups: list[tuple[int, int, list[Edit]]] = []  # the edits to make, by the lines they span
    reach = -1
    for start, end, new in sorted(edits, key=lambda edit: (edit[0], -edit[1])):
        first, last = doc.parsed.line_of(start), doc.parsed.line_of(max(start, end - 1))
        if start < reach or first in drop or first in doc.section_lines:
            continue  # inside an edit made (a link's text: the next pass sees to it), or on a line that goes
        reach = end
        if groups and first <= groups[-1][1]:
            groups[-1][2].append((start, end, new))
            groups[-1] = (groups[-1][0], max(last, groups[-1][1]), groups[-1][2])
        else:
            groups.append((first, last, [(start, end, new)]))
    lines, touched = list(doc.lines), set[int]()
    for first, last, group in groups:
        base = doc.parsed.starts[first]
        text = "\n".join(lines[first : last + 1])
        lines[first : last + 1] = _apply_edits(text, [(a - base, b - base, new) for a, b, new in group]).split("\n")
        touched.update(range(first, last + 1))
    return lines, drop, touched


def _repair(doc: Doc, retrieved: Mapping[str, str], failed_url: Callable[[str], bool], sources: list[str]) -> str:
    """The report repaired, the rebuilt Sources lines ``sources`` in place of the old section or appended."""
    kept: dict[str, tuple[int, str]] = {}
    for hit in (hit for hit in doc.hits if doc.line(hit) not in doc.section_lines):
        for label, url in zip(hit.refs, hit.urls, strict=False):  # markers and reference links have labels
            known = doc.definitions.get(label_key(label))
            if known and known[2] and not failed_url(url):
                kept.setdefault(label_key(label), (known[1], f"[{label}]: {retrieved[normalize_url(url)]}"))
    lines, drop, touched = _body(doc, failed_url)
    definitions = [text for _, text in sorted(kept.values())]
    out: list[str] = []
    after_block = False
    for index, line in enumerate(lines):
        if index == doc.section_heading:
            while out and not out[-1].strip():
                out.pop()
            out += [*([""] if out else []), doc.lines[index].strip(), "", *(sources or [NO_SOURCES])]
            out += ["", *definitions] if definitions else []
            after_block = True
        elif index in doc.section_lines or index in drop or (index in touched and _NOTHING_LEFT.match(line)):
            continue
        else:
            out += [""] if after_block and line.strip() else []
            after_block = False
            out.append(line)
    if doc.section_heading is None and sources:
        while out and not out[-1].strip():
            out.pop()
        text = "\n".join(out)
        closer = parse(text).unclosed
        text += f"\n{closer}" if closer else ""
        appended = ["## Sources", "", *sources, *(["", *definitions] if definitions else [])]
        return text + ("\n\n" if text.strip() else "") + "\n".join(appended) + "\n"
    text = "\n".join(out)
    return text.rstrip("\n") + "\n" if doc.parsed.text.endswith("\n") else text
