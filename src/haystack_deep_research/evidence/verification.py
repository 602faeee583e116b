"""
Checking a report's citations against the sources that were really read, and repairing the report.

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
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.evidence.citations import Citation, _citations, _Doc, _Hit, _key, _scan
from haystack_deep_research.evidence.ledger import normalize_url

__all__ = ["CitationCheck", "verify_citations"]

_NOTHING_LEFT = re.compile(r"^\s*(?:[-*+>]|\d+[.)])?\s*$")
_NO_SOURCES = "_No verified sources were cited._"


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
