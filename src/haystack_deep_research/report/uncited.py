"""
The claims of a report that cite no verified source, and the one rule of what a sentence claims.

A report's sentences are those of :func:`~haystack_deep_research.evidence.citations.body_sentences`: its paragraphs
and list items, line by line, not its headings, code, tables or Sources section. **A sentence is a claim** (see
:func:`is_claim`) unless it claims nothing:

- it has fewer than four words (a run of CJK characters counts one word per two characters): "See below.";
- it is a question or a label (it ends with ``?`` or ``:``);
- it is a signpost: it says what the report itself does ("This report covers...", "This answer draws on..."), or it
  holds no digit and points within the report ("The following...", "as follows", "below", "Let us turn to...").

Every claim is judged, in every shape that grounds. A claim that cites a verified source is judged against that
source's stored text (:func:`~haystack_deep_research.report.judge.cited_claims`). A claim that cites none
(:func:`uncited_claims`) is judged against the passages the run read (:class:`ReadPassages`): the window of every
ledger entry's stored text that best matches it, by the BM25+ ranking of
:func:`~haystack_deep_research.tools.passages.best_passages`, together as one source at the address
:data:`READ_PASSAGES_URL`. Judged unsupported, it lowers the score and is marked; when the run read nothing, it is
unknown, so listed in ``grounding_unjudged``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from haystack_deep_research.evidence import EvidenceLedger, normalize_url
from haystack_deep_research.evidence.citations import body_sentences
from haystack_deep_research.evidence.reading import sentence_reader
from haystack_deep_research.report.judge import Claim, SourceText
from haystack_deep_research.report.style import word_count
from haystack_deep_research.tools.passages import PASSAGE_CHARS, best_passages

__all__ = ["MAX_PASSAGES_CHARS", "READ_PASSAGES_URL", "ReadPassages", "cites_nothing", "is_claim", "uncited_claims"]

READ_PASSAGES_URL = "evidence:read-passages"
"""The address the claims that cite nothing are judged at: the passages the run read, as one source."""
MAX_PASSAGES_CHARS = 60_000
"""The most characters of read passages one judge call holds."""
MIN_CLAIM_WORDS = 4

_LETTER = re.compile(r"[^\W\d_]")
_ENDS_UNCLAIMED = ("?", "\uff1f", ":", "\uff1a")  # also their full-width forms
_ABOUT_REPORT = re.compile(
    r"^(?:this|the present|our) (?:report|section|summary|document|overview|analysis|chapter|brief|answer) (?:covers|"
    r"describes|summari[sz]es|outlines|follows|presents|reviews|is organi[sz]ed|draws on|sets out|looks at|turns to|"
    r"begins|ends|explains|discusses)\b",
    re.IGNORECASE,
)
_POINTER = re.compile(
    r"\b(?:the following|as follows|below|above)\b|^(?:let us|let's|we (?:now )?turn|turning to|next,)", re.IGNORECASE
)


def is_claim(sentence: str) -> bool:
    """
    :param sentence: A sentence of a report or an answer, as written or as read.
    :returns: Whether it claims something to be judged (the rule of the module docstring).
    """
    text = " ".join(sentence.split())
    if not _LETTER.search(text) or word_count(text) < MIN_CLAIM_WORDS or text.rstrip("*_ ").endswith(_ENDS_UNCLAIMED):
        return False
    if _ABOUT_REPORT.search(text):
        return False
    return any(char.isdigit() for char in text) or not _POINTER.search(text)


def cites_nothing(claim: Claim) -> bool:
    """:returns: Whether the claim cites no verified source, so is judged against the passages the run read."""
    return claim.urls == (READ_PASSAGES_URL,)


def uncited_claims(report: str, verified_urls: Iterable[str]) -> list[Claim]:
    """
    :param report: The Markdown report.
    :param verified_urls: The URLs whose citations count (those of its citation check).
    :returns: Its claims that cite none of them, in report order, each citing :data:`READ_PASSAGES_URL`.
    """
    verified = {normalize_url(url) for url in verified_urls if isinstance(url, str) and url.strip()}
    read = sentence_reader(report)
    claims = []
    for sentence in body_sentences(report):
        if any(normalize_url(url) in verified for url in sentence.urls):
            continue
        text = read(sentence.text) or sentence.text
        if is_claim(text):
            claims.append(Claim(text=text, sentence=sentence.text, line=sentence.line, urls=(READ_PASSAGES_URL,)))
    return claims


@dataclass(frozen=True)
class _Passages:
    url: str
    title: str
    text: str


class ReadPassages:
    """
    The run's ledger, with the passages it read that best match some claims as one more source at
    :data:`READ_PASSAGES_URL` (a :class:`~haystack_deep_research.report.judge.SourceTexts`).

    :param ledger: The run's evidence ledger.
    :param claims: The claims that cite nothing.
    """

    def __init__(self, ledger: EvidenceLedger, claims: Sequence[Claim]) -> None:
        self._ledger = ledger
        queries = list(dict.fromkeys(claim.text for claim in claims))
        chosen: dict[str, None] = {}
        for entry in ledger.entries() if queries else []:
            if not entry.text.strip():
                continue
            for passage in best_passages(entry.text, queries, size=2 * PASSAGE_CHARS):
                chosen.setdefault(f"[{entry.title or entry.url}]\n{passage.strip()}", None)
        text = "\n\n".join(chosen)[:MAX_PASSAGES_CHARS]
        self._passages = _Passages(READ_PASSAGES_URL, "the passages the run read", text) if text.strip() else None

    def get(self, url: str) -> SourceText | None:
        """
        :param url: A cited URL, or :data:`READ_PASSAGES_URL`.
        :returns: The source, or ``None`` when unknown (or the run read nothing).
        """
        return self._passages if url == READ_PASSAGES_URL else self._ledger.get(url)
