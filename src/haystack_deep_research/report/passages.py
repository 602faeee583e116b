"""
The passages behind a report's citations: for every verified citation in the report's body, the window of its
source's stored text that best matches the sentence citing it, so a reader can check the claim without opening the
source.

The passage is chosen by the library, never written by a model: the evidence ledger keeps the whole text of every
page and document the run read, and :func:`~haystack_deep_research.tools.passages.best_passages` picks, with BM25+,
the window of at most :data:`~haystack_deep_research.tools.passages.PASSAGE_CHARS` characters of that text that
shares the most with the citing sentence. A source only a search result's snippet backs gives that snippet, marked
so. A citation is given once per sentence and URL, in the order the report cites them; the Sources section itself is
not a claim and gets none.
"""

from __future__ import annotations

from haystack_deep_research.evidence import EvidenceLedger, SourceEntry
from haystack_deep_research.evidence.citations import extract_citations
from haystack_deep_research.evidence.entry import CITABLE_KINDS, normalize_url
from haystack_deep_research.tools.passages import PASSAGE_CHARS, best_passages

__all__ = ["cited_passages"]


def cited_passages(report: str, ledger: EvidenceLedger, *, size: int = PASSAGE_CHARS) -> list[dict[str, str]]:
    """
    The passage of its source behind every citation of a (verified) report.

    :param report: The report, after its citations were verified and repaired.
    :param ledger: The run's evidence ledger.
    :param size: The longest passage, in characters.
    :returns: One entry per cited sentence and URL, in citing order, for citations of sources the ledger holds as
        read: ``url`` (as retrieved), ``title``, ``read_at`` (when the
        source was read, ISO-8601 UTC), ``sentence`` (the citing sentence, as the report writes it) and ``passage``
        (the best-matching window of the source's stored text), ``kind`` (the source's ledger kind: ``"page"``,
        ``"document"`` or ``"snippet"``); a source not read adds
        ``named``: how it was not read ("named by <source>, not read: <url>"; "search result snippet, not read" for a
        source only a search result's snippet backs, whose passage is that snippet).
    """
    wanted: dict[tuple[str, str], SourceEntry] = {}
    for citation in extract_citations(report, sources_section=False):
        entry = ledger.get(citation.url)
        if entry is not None and entry.kind in CITABLE_KINDS and entry.text.strip():
            wanted.setdefault((normalize_url(entry.url), citation.sentence), entry)
    by_source: dict[str, tuple[SourceEntry, list[str]]] = {}
    for (key, sentence), entry in wanted.items():
        by_source.setdefault(key, (entry, []))[1].append(sentence)
    chosen: dict[tuple[str, str], str] = {}
    for key, (entry, sentences) in by_source.items():
        for sentence, passage in zip(sentences, best_passages(entry.text, sentences, size=size), strict=True):
            chosen[(key, sentence)] = passage
    return [
        {
            "url": entry.url,
            "title": entry.title,
            "read_at": entry.fetched_at,
            "sentence": sentence,
            "passage": chosen[(key, sentence)],
            "kind": entry.kind,
            **({"named": entry.note} if entry.note else {}),
        }
        for (key, sentence), entry in wanted.items()
    ]
