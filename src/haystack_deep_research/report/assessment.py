"""
Assessing a report in a run, the same way in every shape that grounds: which sentences are claims (:func:`is_claim`),
judging every claim (:func:`judge_report`: a cited one against its sources, one that cites nothing against the
passages the run read, :class:`ReadPassages`), marking those that stay unsupported (:func:`mark_unsupported`) and
the repair policy (:class:`RepairPolicy`). docs/evidence.md, "Grounding", gives the rules with examples.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from haystack.components.generators.chat.types import ChatGenerator

from haystack_deep_research import _checks
from haystack_deep_research.events import Notice
from haystack_deep_research.evidence import EvidenceLedger
from haystack_deep_research.evidence.citations import body_sentences
from haystack_deep_research.evidence.entry import normalize_url
from haystack_deep_research.evidence.reading import sentence_reader
from haystack_deep_research.report.headings import NO_EVIDENCE_SENTENCES
from haystack_deep_research.report.judge import UNKNOWN, Claim, Judgement, SourceText, cited_claims, judge_claims
from haystack_deep_research.report.style import word_count
from haystack_deep_research.run import ResearchRun
from haystack_deep_research.run._phases import Phase
from haystack_deep_research.state import PHASE_GROUND
from haystack_deep_research.tools.passages import PASSAGE_CHARS, ranked_passages

__all__ = [
    "MAX_PASSAGES_CHARS",
    "NOTHING_MATCHED",
    "READ_PASSAGES_URL",
    "UNCITED_MARK",
    "UNSUPPORTED_MARK",
    "ReadPassages",
    "RepairPolicy",
    "RepairStep",
    "cites_nothing",
    "is_claim",
    "judge_report",
    "mark_unsupported",
    "report_claims",
    "uncited_claims",
    "unjudged_claims",
    "verdict_outputs",
]

UNSUPPORTED_MARK = "*(unsupported by the cited source)*"
UNCITED_MARK = "*(not supported by the sources read)*"

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
    Whether a sentence of a report or an answer, as written or as read, claims something to be judged; the library's
    own sentence under a heading of the user's outline the research gathered no evidence on claims nothing.
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
    """Whether the claim cites no verified source, so is judged against the passages the run read."""
    return claim.urls == (READ_PASSAGES_URL,)


def uncited_claims(report: str, verified_urls: Iterable[str]) -> list[Claim]:
    """The claims of a report that cite none of ``verified_urls``, in order, each citing :data:`READ_PASSAGES_URL`."""
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
    The run's ledger (a :class:`~haystack_deep_research.report.judge.SourceTexts`), with the passages it read that
    best match ``claims`` as one more source at :data:`READ_PASSAGES_URL`: for each claim, within its share of
    :data:`MAX_PASSAGES_CHARS` (at least its best one); :data:`NOTHING_MATCHED` when nothing shares a word with the
    claims, and no source when the run read nothing.
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
        return self._passages if url == READ_PASSAGES_URL else self._ledger.get(url)


def mark_unsupported(report: str, claims: list[Claim]) -> tuple[str, list[Claim]]:
    """
    Mark ``claims`` (found in this report by :func:`judge_report`): :data:`UNSUPPORTED_MARK` (:data:`UNCITED_MARK`
    for a claim that cites nothing) before the sentence's final punctuation; returns the marked report and the
    claims marked (one no longer on its line, or already marked, is skipped).
    """
    lines = report.split("\n")
    marked: list[Claim] = []
    for number in sorted({claim.line for claim in claims}):
        if not 1 <= number <= len(lines):
            continue
        text, edits = lines[number - 1], []
        for claim in (c for c in claims if c.line == number):
            start = text.find(claim.sentence)
            if start < 0 or UNSUPPORTED_MARK in claim.sentence or UNCITED_MARK in claim.sentence:
                continue
            end = start + len(claim.sentence) - (1 if claim.sentence[-1:] in ".!?" else 0)
            edits.append((end, claim))
        for end, claim in sorted(edits, key=lambda edit: edit[0], reverse=True):
            mark = UNCITED_MARK if cites_nothing(claim) else UNSUPPORTED_MARK
            text = f"{text[:end].rstrip()} {mark}{text[end:]}"
            marked.append(claim)
        lines[number - 1] = text
    return "\n".join(lines), marked


def report_claims(
    report: str, verified_urls: Sequence[str], ledger: EvidenceLedger
) -> tuple[list[Claim], ReadPassages]:
    """Every claim of a verified report, in order, and the sources they are judged against."""
    cited, uncited = cited_claims(report, verified_urls), uncited_claims(report, verified_urls)
    return sorted(cited + uncited, key=lambda claim: claim.line), ReadPassages(ledger, uncited)


def judge_report(run: ResearchRun, report: str, verified_urls: Sequence[str], judge: ChatGenerator) -> Phase[Judgement]:
    """Judge every claim of a verified report; usage and warnings go to the run's ``ground`` phase."""
    claims, sources = report_claims(report, verified_urls, run.ledger)
    uncited = sum(cites_nothing(claim) for claim in claims)
    text = f"judging {len(claims) - uncited} cited claim(s) against their sources"
    text += f" and {uncited} uncited claim(s) against the passages the run read" if uncited else ""
    run.events.emit(Notice(phase=PHASE_GROUND, text=text))
    judged = yield from judge_claims(claims, sources, judge, streaming_callback=run.streaming_callback)
    run.record_usage(PHASE_GROUND, judged.usage)
    for warning in judged.warnings:
        run.warn(PHASE_GROUND, warning)
    return judged


def verdict_outputs(judged: Judgement, marked: Sequence[Claim]) -> list[dict[str, Any]]:
    """The ``grounding`` output: one verdict per claim of the last judgement, with ``marked``."""
    return [{**verdict.to_dict(), "marked": verdict.claim in marked} for verdict in judged.verdicts]


def unjudged_claims(judged: Judgement | None) -> list[str]:
    """The ``grounding_unjudged`` output: the claims the last judgement (if any) left unknown, as written."""
    return [] if judged is None else [v.claim.sentence for v in judged.verdicts if v.verdict == UNKNOWN]


RepairStep = Literal["done", "spent", "regenerate", "replan", "exhausted"]
"""What the repair does next."""


@dataclass(frozen=True)
class RepairPolicy:
    """
    When the repair is done, and what it does next: rewrite, then replan, until both are used up.

    :param threshold: The lowest acceptable grounding score, 0 to 1.
    :param max_regenerations: Rewrites without tools in one run, 0 to 5.
    :param max_replans: Rounds of researching the unsupported claims again, 0 to 5.
    :raises ConfigurationError: If a value is out of its range (the message names the parameter).
    """

    threshold: float = 0.65
    max_regenerations: int = 1
    max_replans: int = 2

    def __post_init__(self) -> None:
        _checks.number_in_range("threshold", self.threshold, 0.0, 1.0, include_low=True)
        _checks.int_in_range("max_regenerations", self.max_regenerations, 0, 5)
        _checks.int_in_range("max_replans", self.max_replans, 0, 5)

    def next_step(self, score: float, *, regenerations: int, replans: int, spent: str | None) -> RepairStep:
        """What the repair does next, given the score, the rewrites and replans so far and the spent budget's name."""
        if score >= self.threshold:
            return "done"
        if spent is not None:
            return "spent"
        if regenerations < self.max_regenerations:
            return "regenerate"
        if replans < self.max_replans:
            return "replan"
        return "exhausted"
