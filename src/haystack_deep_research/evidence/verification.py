"""
Checking a report's citations against the sources that were really read, and repairing the report.

:func:`verify_citations` compares every cited URL (see :mod:`haystack_deep_research.evidence.citations`) with the
retrieved URLs, both normalised with :func:`~haystack_deep_research.evidence.entry.normalize_url`. Only a URL of a kind
a run reads can verify (``http(s)://``, ``file://`` or ``doc://`` for documents from datastores, ``mcp://`` for the
results of MCP tools): a
``javascript:`` or ``data:`` link, a protocol-relative ``//host`` link and any other scheme never do. The report is
repaired by this rule:

* an unverified inline link ``[text](url)`` or ``[text][label]``, or an image, is replaced by its bare text (the
  image by its description): the claim stays, the link goes; an unverified HTML anchor loses its tags and keeps its
  content; any other HTML tag with an unverified URL is removed;
* an unverified bare URL or autolink is removed (with a pair of parentheses it leaves empty);
* an unverified reference definition line is removed, and so are its markers in the text; so is a footnote or other
  entry written ``[label]: ...`` whose URL fails, whole;
* a line that a removal leaves with nothing but a list or quote marker is dropped;
* the Sources section (see :mod:`haystack_deep_research.evidence._styles`: a heading or a plain line such as
  "Sources", "References" or "Quellen"; later such sections are merged into the first) is rebuilt to list exactly
  the verified cited URLs, once each, in first-cited order, as ``- [title or url](url)`` with the URL as it was
  retrieved. Entries of the old list that markers in the text point to are kept below the list as reference
  definitions ``[1]: url``. A report with verified citations and no such section gets one appended; a section left
  with nothing verified says so.

The repaired report is read and repaired again until that changes nothing (the text of a removed link may itself
hold a link, a removal may make a line the Sources title); a link whose place cannot be established takes the lines
of its block with it, and if no fixed point comes every line still citing something unverified goes. So the
repaired report cites nothing that was not read, as this parser reads it, and repairing it again changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from functools import cache
from typing import Any

from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.evidence._document import verifiable
from haystack_deep_research.evidence._repair import repair, source_line
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
    Check every citation of ``report`` against ``retrieved_urls`` and repair the report by the module's rule.

    :param report: The Markdown report.
    :param retrieved_urls: The URLs whose content was really read. A set is read in sorted order, so that
        ``uncited`` does not depend on hashing.
    :param titles: Optional titles by URL (in any trivially different spelling) for the rebuilt Sources list.
    :param named: Optional notes by URL for the rebuilt Sources list: "named by <source>, not read: <url>" for a
        source that names a URL it did not read (see :meth:`.EvidenceLedger.named_notes`).
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
    sources = [source_line(retrieved[key], title_of.get(key, ""), note_of.get(key, "")) for key in good]
    text = repair(doc, retrieved, failed, sources)
    for _ in range(_PASSES):
        again = repair(_scan(text), retrieved, failed, sources)
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
