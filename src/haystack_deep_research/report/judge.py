"""
Judging cited claims against the stored text of the sources they cite: one judge call per cited source, its text
fenced as untrusted data, a JSON verdict per claim; what the judge does not decide is ``unknown`` (docs/evidence.md,
"Grounding", gives the verdicts and the score).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Protocol

from haystack.components.generators.chat.types import ChatGenerator

import haystack_deep_research._untrusted.json_text as _safe_json
from haystack_deep_research._prompts import JUDGE, fence, render_chat
from haystack_deep_research.evidence.citations import extract_citations
from haystack_deep_research.evidence.entry import normalize_url
from haystack_deep_research.evidence.reading import sentence_reader
from haystack_deep_research.run._budget import add_usage
from haystack_deep_research.run._phases import Phase, ask

__all__ = [
    "SUPPORTED",
    "UNKNOWN",
    "UNSUPPORTED",
    "Claim",
    "ClaimVerdict",
    "Judgement",
    "SourceText",
    "SourceTexts",
    "SourceVerdict",
    "Verdict",
    "cited_claims",
    "grounding_score",
    "judge_claims",
    "parse_verdicts",
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


def grounding_score(verdicts: Iterable[ClaimVerdict]) -> float:
    """``supported / (supported + unsupported)`` over the verdicts; 1.0 when no claim is decided."""
    decided = [v.verdict for v in verdicts if v.verdict != UNKNOWN]
    return decided.count(SUPPORTED) / len(decided) if decided else 1.0


@dataclass
class Judgement:
    """The outcome of :func:`judge_claims`: a verdict per claim, in order, warnings and the judge's summed usage."""

    verdicts: list[ClaimVerdict]
    warnings: list[str] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)

    @property
    def score(self) -> float:
        return grounding_score(self.verdicts)

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
        prompts.append(
            render_chat(
                JUDGE,
                url=fence(entry.url),
                title=fence(entry.title),
                source=fence(entry.text),
                claims=[fence(claims[i].text) for i in indexes],
            )
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
            missing = len(indexes) - len(parsed)
            judgement.warnings.append(
                f"the judge gave no verdict for {missing} claim(s) citing {url}; they count as unknown"
            )
        for number, index in enumerate(indexes, 1):
            verdict, reason = (parsed or {}).get(number, (UNKNOWN, missed))
            found[(index, key)] = SourceVerdict(url, verdict, reason)
    for index, claim in enumerate(claims):
        sources = tuple(found[(index, normalize_url(url))] for url in claim.urls)
        judgement.verdicts.append(ClaimVerdict(claim=claim, verdict=_combine(sources), sources=sources))
    return judgement
