"""
Repairing a scanned report: removing what failed verification and rebuilding its Sources section.

Every edit keeps the number of lines (a span holding a line break is replaced by as many line breaks), so a line
of the repaired text is still the line of the same number in the report; lines are then dropped or replaced as a
whole. The rule itself is described in :mod:`haystack_deep_research.evidence.verification`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from haystack_deep_research.evidence._document import Doc, Hit, key
from haystack_deep_research.evidence._edits import Edit, apply_edits
from haystack_deep_research.evidence._markdown import parse
from haystack_deep_research.evidence._styles import NO_SOURCES
from haystack_deep_research.evidence.entry import normalize_url

__all__ = ["repair", "source_line"]

_NOTHING_LEFT = re.compile(r"^\s*(?:[-*+>]|\d+[.)])?\s*$")


def source_line(url: str, title: str, named: str = "") -> str:
    """
    One line of a rebuilt Sources list: ``- [title or url](url)``, and the note in parentheses, a named URL as code (no
    link: nothing was read there).
    """
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
        lines[first : last + 1] = apply_edits(text, [(a - base, b - base, new) for a, b, new in group]).split("\n")
        touched.update(range(first, last + 1))
    return lines, drop, touched


def _closer(text: str) -> str:
    """The line that closes the report's last block, if it runs to the end unclosed (see :class:`._markdown.Parsed`)."""
    return parse(text).unclosed


def repair(doc: Doc, retrieved: Mapping[str, str], failed_url: Callable[[str], bool], sources: list[str]) -> str:
    """
    Repair a scanned report by the rule, and put the rebuilt Sources section in place of the old one (or append it).

    :param doc: The scanned report.
    :param retrieved: The retrieved URLs by normalised URL.
    :param failed_url: Tells whether a cited URL failed verification.
    :param sources: The lines of the rebuilt Sources list.
    :returns: The repaired report.
    """
    kept: dict[str, tuple[int, str]] = {}
    for hit in (hit for hit in doc.hits if doc.line(hit) not in doc.section_lines):
        for label, url in zip(hit.refs, hit.urls, strict=False):  # markers and reference links have labels
            known = doc.definitions.get(key(label))
            if known and known[2] and not failed_url(url):
                kept.setdefault(key(label), (known[1], f"[{label}]: {retrieved[normalize_url(url)]}"))
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
        closer = _closer(text)
        text += f"\n{closer}" if closer else ""
        appended = ["## Sources", "", *sources, *(["", *definitions] if definitions else [])]
        return text + ("\n\n" if text.strip() else "") + "\n".join(appended) + "\n"
    text = "\n".join(out)
    return text.rstrip("\n") + "\n" if doc.parsed.text.endswith("\n") else text
