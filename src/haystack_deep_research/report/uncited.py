"""
The claims of a report that cite no verified source, and the one rule of what a sentence claims.

A report's sentences are those of :func:`~haystack_deep_research.evidence.citations.body_sentences`: its paragraphs
and list items, line by line, not its headings, code, tables or Sources section. **A sentence is a claim** (see
:func:`is_claim`) unless it claims nothing:

- it has fewer than four words (a run of CJK characters counts one word per two characters): "See below.";
- it is a question or a label (it ends with ``?`` or ``:``);
- it is a signpost: it says what the report itself does ("This report covers...", "This answer draws on...") with no
  "that" clause claiming something, or it holds no digit and opens or ends by pointing within the report ("The
  following sections...", "...as follows:", "...listed below.", "Let us turn to..."); "below freezing" and "The
  following drugs were withdrawn" are claims;
- it is the library's own sentence under a heading of the user's outline that the research gathered no evidence on
  (:data:`~haystack_deep_research.report.headings.NO_EVIDENCE_SENTENCES`).

Every claim is judged, in every shape that grounds. A claim that cites a verified source is judged against that
source's stored text (:func:`~haystack_deep_research.report.judge.cited_claims`). A claim that cites none
(:func:`uncited_claims`) is judged against the passages the run read (:class:`ReadPassages`): the passages of the
ledger's stored texts that best match it, by the BM25+ ranking of
:func:`~haystack_deep_research.tools.passages.ranked_passages`, together as one source at the address
:data:`READ_PASSAGES_URL`. Judged unsupported, it lowers the score and is marked; when the run read nothing, it is
unknown, so listed in ``grounding_unjudged``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from haystack_deep_research.evidence import EvidenceLedger
from haystack_deep_research.evidence.citations import body_sentences
from haystack_deep_research.evidence.entry import normalize_url
from haystack_deep_research.evidence.reading import sentence_reader
from haystack_deep_research.report.headings import NO_EVIDENCE_SENTENCES
from haystack_deep_research.report.judge import Claim, SourceText
from haystack_deep_research.report.style import word_count
from haystack_deep_research.tools.passages import PASSAGE_CHARS, ranked_passages

__all__ = [
    "MAX_PASSAGES_CHARS",
    "NOTHING_MATCHED",
    "READ_PASSAGES_URL",
    "ReadPassages",
    "cites_nothing",
    "is_claim",
    "uncited_claims",
]

READ_PASSAGES_URL = "evidence:read-passages"
"""The address the claims that cite nothing are judged at: the passages the run read, as one source."""
MAX_PASSAGES_CHARS = 60_000
"""The most characters of read passages one judge call holds."""
MIN_CLAIM_WORDS = 4
NOTHING_MATCHED = "(Nothing the run read shares a word with these claims.)"
"""What the judge reads for claims that share no word with anything the run read: they are judged unsupported."""

_LETTER = re.compile(r"[^\W\d_]")
_ENDS_UNCLAIMED = ("?", "\uff1f", ":", "\uff1a")  # also their full-width forms
_ABOUT_REPORT = re.compile(
    r"^(?:this|the present|our) (?:report|section|summary|document|overview|analysis|chapter|brief|answer) (?:covers|"
    r"describes|summari[sz]es|outlines|follows|presents|reviews|is organi[sz]ed|draws on|sets out|looks at|turns to|"
    r"begins|ends|explains|discusses)\b",
    re.IGNORECASE,
)
# A pointer within the report opens or ends the sentence ("The following...", "...are listed below."); "below
# freezing" or "above all" in the middle of a sentence points nowhere.
_POINTER = re.compile(
    r"^(?:the following (?:sections?|chapters?|parts?|list|table|points?|paragraphs?|pages?)|as follows|let us|let's|"
    r"we (?:now )?turn|turning to|next,|see (?:below|above))\b"
    r"|\b(?:below|above|as follows|the following)\W*$",
    re.IGNORECASE,
)
_THAT = re.compile(r"\bthat\b", re.IGNORECASE)


def is_claim(sentence: str) -> bool:
    """
    :param sentence: A sentence of a report or an answer, as written or as read.
    :returns: Whether it claims something to be judged (the rule of the module docstring).
    """
    text = " ".join(sentence.split())
    if not _LETTER.search(text) or word_count(text) < MIN_CLAIM_WORDS or text.rstrip("*_ ").endswith(_ENDS_UNCLAIMED):
        return False
    if text.strip("*_ ") in NO_EVIDENCE_SENTENCES:
        return False
    if _ABOUT_REPORT.search(text) and not _THAT.search(text):  # "This report draws on proof that X" claims X
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
    :data:`READ_PASSAGES_URL` (a :class:`~haystack_deep_research.report.judge.SourceTexts`): for each claim, the
    passages of every source's stored text that share the most words with it, best first, within its share of
    :data:`MAX_PASSAGES_CHARS` (at least its best one), each under its source's title; :data:`NOTHING_MATCHED` when
    the run read something but nothing shares a word with the claims, and no source when it read nothing.

    :param ledger: The run's evidence ledger.
    :param claims: The claims that cite nothing.
    """

    def __init__(self, ledger: EvidenceLedger, claims: Sequence[Claim]) -> None:
        self._ledger = ledger
        queries = list(dict.fromkeys(claim.text for claim in claims))
        # In address order, not the order the run read them in (which concurrency decides): the same evidence gives
        # the judge the same prompt, so a recorded run replays.
        read = sorted(ledger.entries(), key=lambda entry: entry.url) if queries else []
        entries = [entry for entry in read if entry.text.strip()]
        share = MAX_PASSAGES_CHARS // max(len(queries), 1)
        chosen: dict[str, None] = {}
        for ranked in ranked_passages([entry.text for entry in entries], queries, size=2 * PASSAGE_CHARS):
            used = 0
            for number, passage in ranked:
                if used and used + len(passage) > share:
                    break
                used += len(passage)
                entry = entries[number]
                chosen.setdefault(f"[{entry.title or entry.url}]\n{passage.strip()}", None)
        text = "\n\n".join(chosen)[:MAX_PASSAGES_CHARS] or (NOTHING_MATCHED if entries else "")
        self._passages = _Passages(READ_PASSAGES_URL, "the passages the run read", text) if text else None

    def get(self, url: str) -> SourceText | None:
        """
        :param url: A cited URL, or :data:`READ_PASSAGES_URL`.
        :returns: The source, or ``None`` when unknown (or the run read nothing).
        """
        return self._passages if url == READ_PASSAGES_URL else self._ledger.get(url)
