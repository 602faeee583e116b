"""
Judging a report's claims, the same way in every shape that grounds: which sentences are claims (:func:`is_claim`),
one judge call per cited source (:func:`judge_claims`, its text fenced as untrusted data, a JSON verdict per claim,
``unknown`` for what the judge does not decide), a claim that cites nothing judged against the passages the run read
(:class:`ReadPassages`), marking those that stay unsupported (:func:`mark_unsupported`) and the repair policy
(:class:`RepairPolicy`). docs/evidence.md, "Grounding", gives the rules with examples.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Protocol

from haystack.components.generators.chat.types import ChatGenerator

import haystack_deep_research._untrusted.json_text as _safe_json
from haystack_deep_research import _checks
from haystack_deep_research._prompts import JUDGE, fence, render_chat
from haystack_deep_research.events import Notice
from haystack_deep_research.evidence import EvidenceLedger
from haystack_deep_research.evidence.citations import body_sentences, extract_citations
from haystack_deep_research.evidence.entry import normalize_url
from haystack_deep_research.evidence.reading import sentence_reader
from haystack_deep_research.report.headings import NO_EVIDENCE_SENTENCES
from haystack_deep_research.report.style import word_count
from haystack_deep_research.run import ResearchRun
from haystack_deep_research.run._budget import add_usage
from haystack_deep_research.run._phases import Phase, ask
from haystack_deep_research.state import PHASE_GROUND
from haystack_deep_research.tools.passages import PASSAGE_CHARS, ranked_passages

__all__ = [
    "NOTHING_MATCHED",
    "READ_PASSAGES_URL",
    "SUPPORTED",
    "UNKNOWN",
    "UNSUPPORTED",
    "UNSUPPORTED_MARK",
    "Claim",
    "ClaimVerdict",
    "Judgement",
    "ReadPassages",
    "RepairPolicy",
    "cited_claims",
    "cites_nothing",
    "judge_claims",
    "judge_report",
    "mark_unsupported",
    "parse_verdicts",
    "report_claims",
    "uncited_claims",
    "unjudged_claims",
    "verdict_outputs",
    "without_code_fence",
]

Verdict = Literal["supported", "unsupported", "unknown"]
SUPPORTED: Verdict = "supported"
UNSUPPORTED: Verdict = "unsupported"
UNKNOWN: Verdict = "unknown"

_FENCED = re.compile(r"^```[A-Za-z]*\s*(.*?)\s*```$", re.DOTALL)


def without_code_fence(text: str) -> str:
    """A model's reply, stripped, without the Markdown code fence around all of it."""
    body = text.strip()
    fenced = _FENCED.match(body)
    return fenced.group(1) if fenced else body


class SourceText(Protocol):
    """A source a judge reads: the evidence ledger's entries have this shape."""

    @property
    def url(self) -> str: ...

    @property
    def title(self) -> str: ...

    @property
    def text(self) -> str: ...


class SourceTexts(Protocol):
    """Where the judge finds a source's text by the URL a claim cites: the evidence ledger, or another trail."""

    def get(self, url: str) -> SourceText | None: ...


@dataclass(frozen=True)
class Claim:
    """
    One claim of a report: its ``text`` as the judge sees it (as a reader does), the ``sentence`` as written, its
    1-based ``line`` and the verified ``urls`` it cites, once each, as written.
    """

    text: str
    sentence: str
    line: int
    urls: tuple[str, ...]


@dataclass(frozen=True)
class SourceVerdict:
    """The judge's verdict on one claim against one source (its URL as cited), with the reason."""

    url: str
    verdict: Verdict
    reason: str = ""


@dataclass(frozen=True)
class ClaimVerdict:
    """The verdict on one claim, combined over the sources it cites, with the verdict against each."""

    claim: Claim
    verdict: Verdict
    sources: tuple[SourceVerdict, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "claim": self.claim.text,
            "sentence": self.claim.sentence,
            "line": self.claim.line,
            "verdict": self.verdict,
            "sources": [asdict(source) for source in self.sources],
        }


@dataclass
class Judgement:
    """The outcome of :func:`judge_claims`: a verdict per claim, in order, warnings and the judge's summed usage."""

    verdicts: list[ClaimVerdict]
    warnings: list[str] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)

    @property
    def score(self) -> float:
        """``supported / (supported + unsupported)`` over the verdicts; 1.0 when no claim is decided."""
        decided = [v.verdict for v in self.verdicts if v.verdict != UNKNOWN]
        return decided.count(SUPPORTED) / len(decided) if decided else 1.0

    @property
    def unsupported(self) -> list[Claim]:
        return [v.claim for v in self.verdicts if v.verdict == UNSUPPORTED]


def cited_claims(report: str, verified_urls: Iterable[str]) -> list[Claim]:
    """The body sentences citing any of ``verified_urls`` (in any trivially different spelling), in order."""
    verified = {normalize_url(url) for url in verified_urls if isinstance(url, str) and url.strip()}
    grouped: dict[tuple[int, str], dict[str, str]] = {}
    for citation in extract_citations(report, sources_section=False):
        key = normalize_url(citation.url)
        if key in verified:
            grouped.setdefault((citation.line, citation.sentence), {}).setdefault(key, citation.url)
    read = sentence_reader(report)
    return [
        Claim(text=read(sentence) or sentence, sentence=sentence, line=line, urls=tuple(urls.values()))
        for (line, sentence), urls in grouped.items()
    ]


def parse_verdicts(text: str, count: int) -> dict[int, tuple[Verdict, str]] | None:
    """
    Read the judge's reply about ``count`` claims: ``{"verdicts": [...]}`` or a bare list, maybe fenced or in prose,
    of ``{"id": n, "verdict": "...", "reason": "..."}``; ``{id: (verdict, reason)}`` for the items read (another
    verdict is unknown), or ``None`` when the reply is not such JSON at all.
    """
    body = without_code_fence(text)
    try:
        data = _safe_json.loads(body)
    except json.JSONDecodeError:
        start, end = body.find("{"), body.rfind("}")
        try:
            data = _safe_json.loads(body[start : end + 1]) if 0 <= start < end else None
        except json.JSONDecodeError:
            data = None
    items = data.get("verdicts") if isinstance(data, dict) else data
    if not isinstance(items, list):
        return None
    result: dict[int, tuple[Verdict, str]] = {}
    for item in items:
        number = item.get("id") if isinstance(item, dict) else None
        if isinstance(number, str) and number.strip().isdigit():
            number = int(number)
        if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= count:
            continue
        said = str(item.get("verdict") or "").strip().lower()
        verdict: Verdict = SUPPORTED if said == SUPPORTED else UNSUPPORTED if said == UNSUPPORTED else UNKNOWN
        result.setdefault(number, (verdict, str(item.get("reason") or "")))
    return result


def _combine(sources: tuple[SourceVerdict, ...]) -> Verdict:
    verdicts = [source.verdict for source in sources]
    if SUPPORTED in verdicts:
        return SUPPORTED
    return UNSUPPORTED if verdicts and all(v == UNSUPPORTED for v in verdicts) else UNKNOWN


def judge_claims(
    claims: list[Claim], ledger: SourceTexts, judge: ChatGenerator, *, streaming_callback: Any = None
) -> Phase[Judgement]:
    """Judge each claim against the stored text of each source it cites in ``ledger``, one call per source."""
    by_source: dict[str, tuple[str, list[int]]] = {}
    for index, claim in enumerate(claims):
        for url in claim.urls:
            by_source.setdefault(normalize_url(url), (url, []))[1].append(index)
    found: dict[tuple[int, str], SourceVerdict] = {}
    asked: list[str] = []
    prompts = []
    for key, (url, indexes) in by_source.items():
        entry = ledger.get(url)
        if entry is None or not entry.text.strip():
            found.update({(i, key): SourceVerdict(url, UNKNOWN, "no stored text for this source") for i in indexes})
            continue
        asked.append(key)
        texts = [fence(claims[i].text) for i in indexes]
        prompts.append(
            render_chat(JUDGE, url=fence(entry.url), title=fence(entry.title), source=fence(entry.text), claims=texts)
        )
    calls = [ask(judge, prompt, role="judge", streaming_callback=streaming_callback) for prompt in prompts]
    outcomes = (yield calls) if calls else []
    judgement = Judgement(verdicts=[])
    for key, outcome in zip(asked, outcomes, strict=True):
        url, indexes = by_source[key]
        if outcome.reply is not None:
            judgement.usage = add_usage(judgement.usage, outcome.reply.meta.get("usage"))
        parsed = parse_verdicts(outcome.text, len(indexes)) if outcome.error is None else None
        missed = "the judge gave no verdict"
        unknown = f"its {len(indexes)} claim(s) count as unknown"
        if outcome.error is not None:
            failed = f"failed ({type(outcome.error).__name__}: {outcome.error})"
            missed = f"the judge call {failed}"
            judgement.warnings.append(f"the judge call for {url} {failed}; {unknown}")
        elif parsed is None:
            missed = "the judge's reply was not the JSON asked for"
            judgement.warnings.append(f"the judge's reply for {url} was not the JSON asked for; {unknown}")
        elif len(parsed) < len(indexes):
            missing = f"the judge gave no verdict for {len(indexes) - len(parsed)} claim(s) citing {url}"
            judgement.warnings.append(f"{missing}; they count as unknown")
        for number, index in enumerate(indexes, 1):
            verdict, reason = (parsed or {}).get(number, (UNKNOWN, missed))
            found[(index, key)] = SourceVerdict(url, verdict, reason)
    for index, claim in enumerate(claims):
        sources = tuple(found[(index, normalize_url(url))] for url in claim.urls)
        judgement.verdicts.append(ClaimVerdict(claim=claim, verdict=_combine(sources), sources=sources))
    return judgement


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
    The run's ledger (a :class:`SourceTexts`), with the passages it read that best match ``claims`` as one more source
    at :data:`READ_PASSAGES_URL`: for each claim, within its share of :data:`MAX_PASSAGES_CHARS` (at least its best
    one); :data:`NOTHING_MATCHED` when nothing shares a word with them, no source when the run read nothing.
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


@dataclass(frozen=True)
class RepairPolicy:
    """
    When the repair is done, and what it does next: rewrite (``max_regenerations`` times), then replan
    (``max_replans`` times), each 0 to 5, while the score is below ``threshold`` (0 to 1); else ``ConfigurationError``.
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
