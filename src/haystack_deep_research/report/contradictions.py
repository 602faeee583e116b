"""
Contradictions: two sources a report cites that give different figures for the same quantity (docs/evidence.md,
"Contradictions", gives the rules with examples). They are found in the passages cited for the report, first by their
figures (no model), then confirmed or rejected by the judge when the shape has one; its reply is read as untrusted.
:func:`contradictions_section` writes the report's section, every piece of page or model text in it escaped.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import combinations, pairwise
from typing import Any

from haystack.components.generators.chat.types import ChatGenerator

from haystack_deep_research._prompts import CONTRADICTION, fence, render_chat
from haystack_deep_research._untrusted.json_text import extract_json_object
from haystack_deep_research.evidence.citations import sentence_ends
from haystack_deep_research.evidence.entry import normalize_url
from haystack_deep_research.evidence.text import inert_text
from haystack_deep_research.report.headings import report_sections
from haystack_deep_research.run import ResearchRun
from haystack_deep_research.run._budget import add_usage
from haystack_deep_research.run._phases import Phase, ask
from haystack_deep_research.state import CONTRADICTIONS, PHASE_GROUND

__all__ = ["MAX_JUDGE_CALLS", "add_contradictions", "disagree", "figures_in", "find_contradictions"]

APPROXIMATE = 0.10
"""How far an approximate figure ("about 3.2 million") reaches either side, as a share of its value."""
ROUNDING = 0.02
"""How far apart two exact figures may be and still agree (rounding: 3.2 and 3.24 million), as a share."""
MIN_SHARED_WORDS = 2
"""The fewest words the contexts of two figures share for them to be of the same quantity."""
MAX_JUDGE_CALLS = 6
"""The most judge calls one report's contradictions take (one per pair of passages)."""
MAX_CONTRADICTIONS = 20
_CONTEXT_CHARS = 80
"""How many characters either side of a figure give the words it is compared by."""
_ADDRESS = re.compile(r"\]\([^)\s]*\)?|\b[a-z][a-z0-9+.-]*:(?://)?\S+", re.IGNORECASE)
_MAX_REASON = 300

_NUMBER = r"\d{1,3}(?:[,\u00a0\u202f ]\d{3})+(?:\.\d+)?|\d+(?:[.,]\d+)?"
_FIGURE = re.compile(rf"(?<![A-Za-z0-9_.,\-/])({_NUMBER})(?![\d])")
_RANGE = re.compile(rf"\s*(?:-|\u2013|\u2014|to|and|à|et|bis|und|a|y|al|~|至|到)\s*({_NUMBER})(?![\d])", re.IGNORECASE)
_SCALES = {
    **dict.fromkeys(("thousand", "thousands", "k"), 1e3),
    **dict.fromkeys(("million", "millions", "mn", "mio", "millionen", "millones", "百万"), 1e6),
    **dict.fromkeys(("billion", "billions", "bn", "milliard", "milliards", "mrd", "milliarden", "mil millones"), 1e9),
    **dict.fromkeys(("trillion", "trillions"), 1e12),
    **dict.fromkeys(("亿", "億"), 1e8),
    "万": 1e4,
}
_UNITS: dict[str, tuple[str, float]] = {
    # "\uff05" is the full-width percent sign
    **dict.fromkeys(("%", "\uff05", "percent", "per cent", "pour cent", "prozent", "por ciento"), ("percent", 1)),
    **dict.fromkeys(("km", "kilometres", "kilometers"), ("length", 1e3)),
    "miles": ("length", 1609.344),
    **dict.fromkeys(("kg", "kilograms"), ("mass", 1)),
    **dict.fromkeys(("tonnes", "tons"), ("mass", 1e3)),
    **dict.fromkeys(("gw", "gigawatts"), ("power", 1e9)),
    **dict.fromkeys(("mw", "megawatts"), ("power", 1e6)),
    "kw": ("power", 1e3),
    "twh": ("energy", 1e12),
    **dict.fromkeys(("gwh", "gigawatt hours"), ("energy", 1e9)),
    "mwh": ("energy", 1e6),
    "kwh": ("energy", 1e3),
    "°c": ("temperature", 1),
    **dict.fromkeys(("usd", "dollars", "dollar"), ("money USD", 1)),
    **dict.fromkeys(("eur", "euros", "euro", "€"), ("money EUR", 1)),
    **dict.fromkeys(("gbp", "£"), ("money GBP", 1)),
}
_CURRENCY_BEFORE = {"$": "money USD", "us$": "money USD", "€": "money EUR", "£": "money GBP", "¥": "money JPY"}


def _alternatives(words: Iterable[str]) -> str:
    return "|".join(re.escape(word) for word in sorted(words, key=len, reverse=True))


_LATIN_AFTER = r"(?![A-Za-z\u00c0-\u024f])"
_SCALE = re.compile(rf"\s*({_alternatives(_SCALES)})\.?{_LATIN_AFTER}", re.IGNORECASE)
_UNIT = re.compile(rf"\s*(?:de\s+)?({_alternatives(_UNITS)}){_LATIN_AFTER}", re.IGNORECASE)
_CURRENCY = re.compile(rf"({_alternatives(_CURRENCY_BEFORE)})\s*$", re.IGNORECASE)
_APPROX = re.compile(
    r"(?:about|around|roughly|approximately|approx\.|nearly|almost|some|circa|ca\.|~|≈|environ|près de|presque|"
    r"etwa|rund|ungefähr|fast|alrededor de|aproximadamente|casi|cerca de|约|大约|約)\s*$",
    re.IGNORECASE,
)
_AT_LEAST = re.compile(
    r"(?:more than|over|above|at least|exceeding|plus de|au moins|mehr als|über|mindestens|más de|al menos|超过)\s*$",
    re.IGNORECASE,
)
_AT_MOST = re.compile(
    r"(?:less than|under|below|up to|at most|fewer than|moins de|jusqu'à|weniger als|bis zu|höchstens|menos de|"
    r"hasta|不到)\s*$",
    re.IGNORECASE,
)
_YEAR = re.compile(r"(?<!\d)(1[89]\d\d|20\d\d|2100)(?!\d)")
_WORD = re.compile(r"[^\W\d_]+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
_COMMON_WORDS = (
    "the and are was were has have had its their this that these those with from for into than then about around "
    "more less over under between per cent percent which while when where what who will would could should been "
    "being also some most many much such only other each according reported report reports said says say new "
    "les des une est sont pour dans par sur avec selon plus moins que qui environ près cent pour "
    "der die das und ist sind mit für von den dem des ein eine einer wurde wurden etwa rund prozent über laut "
    "los las una son para por con según del que más menos alrededor ciento"
)
_STOPWORDS = frozenset(_COMMON_WORDS.split())
_UNIT_WORDS = frozenset(word for key in [*_SCALES, *_UNITS] for word in key.split())


@dataclass(frozen=True)
class Figure:
    """
    A number with a unit in a passage: the interval it allows, normalised (``3.2 million`` is 3.2e6, "more than" has
    ``math.inf`` as ``high``), its ``kind`` (``percent``, ``count``, ``money USD``, ``length``, ...), the ``text`` as
    written, its ``sentence``, the ``words`` around it (case folded, common words left out), the ``years`` its sentence
    names, and whether it is stated as approximate, a bound or a range.
    """

    low: float
    high: float
    kind: str
    text: str
    sentence: str
    words: frozenset[str]
    years: frozenset[str]
    approximate: bool


def _value(text: str) -> float:
    digits = re.sub(r"[\u00a0\u202f ]", "", text)
    if "," in digits and "." not in digits and re.fullmatch(r"\d+,\d{1,2}|\d+,\d{4,}", digits):
        return float(digits.replace(",", "."))  # a decimal comma: 3,2 (but 3,200 is three thousand two hundred)
    return float(digits.replace(",", ""))


def _words(text: str) -> frozenset[str]:
    found: set[str] = set()
    for word in _WORD.findall(text.casefold()):
        if _CJK.search(word):
            found.update(word[i : i + 2] for i in range(max(len(word) - 1, 1)))  # CJK: two characters a word
        elif len(word) >= 3 and word not in _STOPWORDS and word not in _UNIT_WORDS:
            found.add(word[:-1] if len(word) > 4 and word.endswith("s") and not word.endswith("ss") else word)
    return frozenset(found)


def _figure(sentence: str, match: re.Match[str]) -> tuple[Figure, int] | None:
    low = high = _value(match.group(1))
    end = match.end()
    if (ranged := _RANGE.match(sentence, end)) is not None and (
        _SCALE.match(sentence, ranged.end()) or _UNIT.match(sentence, ranged.end())
    ):
        high, end = _value(ranged.group(1)), ranged.end()
    scale = 1.0
    if (scaled := _SCALE.match(sentence, end)) is not None:
        scale, end = _SCALES[scaled.group(1).casefold()], scaled.end()
    before = sentence[max(0, match.start() - 30) : match.start()]
    currency = _CURRENCY.search(before)
    kind, factor = "count", 1.0
    if (unit := _UNIT.match(sentence, end)) is not None:
        kind, factor = _UNITS[unit.group(1).casefold()]
        end = unit.end()
    elif currency is not None:
        kind = _CURRENCY_BEFORE[currency.group(1).casefold()]
    elif scaled is None:
        return None  # a bare number (a year, a count of things not named by a unit) is not a quantity read here
    low, high = sorted((low * scale * factor, high * scale * factor))
    approximate = high != low
    start = currency.start() + match.start() - len(before) if currency is not None else match.start()
    prefix = sentence[max(0, start - 30) : start]
    if _APPROX.search(prefix):
        low, high, approximate = low * (1 - APPROXIMATE), high * (1 + APPROXIMATE), True
    elif _AT_LEAST.search(prefix):
        high, approximate = math.inf, True
    elif _AT_MOST.search(prefix):
        low, approximate = 0.0, True
    context = sentence[max(0, start - _CONTEXT_CHARS) : start] + " " + sentence[end : end + _CONTEXT_CHARS]
    context = _ADDRESS.sub(" ", context)  # a link's address says nothing of the quantity
    figure = Figure(
        low=low,
        high=high,
        kind=kind,
        text=" ".join(sentence[start:end].split()),
        sentence=" ".join(sentence.split()),
        words=_words(_YEAR.sub(" ", context)),
        years=frozenset(_YEAR.findall(sentence)),
        approximate=approximate,
    )
    return figure, end


def figures_in(text: str) -> list[Figure]:
    """The figures with units in plain text (a passage, a claim), in order."""
    found: list[Figure] = []
    bounds = [0, *sentence_ends(text), len(text)]
    for first, last in pairwise(bounds):
        sentence = text[first:last]
        consumed = 0
        for match in _FIGURE.finditer(sentence):
            if match.start() >= consumed and (read := _figure(sentence, match)) is not None:
                figure, consumed = read
                found.append(figure)
    return found


def _shared(a: Figure, b: Figure) -> frozenset[str]:
    return a.words & b.words


def same_quantity(a: Figure, b: Figure) -> bool:
    """
    Whether two figures are of the same quantity (the rule of docs/evidence.md, "Contradictions"); with just
    :data:`MIN_SHARED_WORDS` shared words, no word may tell them apart.
    """
    if a.kind != b.kind or (a.years and b.years and not a.years & b.years):
        return False
    shared, apart = len(_shared(a, b)), len(a.words ^ b.words)
    if shared < MIN_SHARED_WORDS or shared * 3 < min(len(a.words), len(b.words)):
        return False
    return apart == 0 or (shared > MIN_SHARED_WORDS and apart <= shared)  # "copper market grew" is no "tin market grew"


def disagree(a: Figure, b: Figure) -> bool:
    """Whether the two figures' intervals lie further apart than :data:`ROUNDING` allows."""
    gap = max(a.low, b.low) - min(a.high, b.high)
    size = max(abs(a.low), abs(b.low), abs(a.high) if math.isfinite(a.high) else 0, 1e-9)
    return gap > ROUNDING * size


@dataclass(frozen=True)
class _Side:
    url: str
    title: str
    sentence: str
    figure: Figure

    def to_dict(self) -> dict[str, str]:
        return {
            "url": self.url,
            "title": self.title,
            "sentence": self.sentence,
            "passage": self.figure.sentence,
            "figure": self.figure.text,
        }


@dataclass
class _Pair:
    first: _Side
    second: _Side
    found: bool
    why: str = ""
    found_by: str = "figures"

    def to_dict(self) -> dict[str, Any]:
        subject, kind = sorted(_shared(self.first.figure, self.second.figure)), self.first.figure.kind
        name = {"percent": "percentage", "count": "number"}.get(kind) or ("amount" if "money" in kind else kind)
        same = f"{self.first.figure.text} and {self.second.figure.text} are given for the same {name}"
        why = self.why or f"{same} ({', '.join(subject)})"
        return {
            "quantity": self.first.figure.kind,
            "subject": " ".join(subject),
            "why": why,
            "found_by": self.found_by,
            "claims": [self.first.to_dict(), self.second.to_dict()],
        }


def _sides(passages: Iterable[Mapping[str, Any]]) -> dict[str, list[_Side]]:
    by_source: dict[str, list[_Side]] = {}
    seen: set[tuple[str, str]] = set()
    for passage in passages:
        if not isinstance(passage, Mapping):
            continue  # a result's citations may come from anywhere: only passages as the library writes them count
        url, text = passage.get("url"), passage.get("passage")
        if not isinstance(url, str) or not isinstance(text, str):
            continue
        key, title, sentence = normalize_url(url), str(passage.get("title") or ""), str(passage.get("sentence") or "")
        for figure in figures_in(text):
            if (key, figure.sentence + figure.text) not in seen:
                seen.add((key, figure.sentence + figure.text))
                by_source.setdefault(key, []).append(_Side(url, title, sentence, figure))
    return by_source


def _pairs(passages: Iterable[Mapping[str, Any]]) -> list[_Pair]:
    """
    The first pass's contradictions, then the other candidates the judge may be asked about. Two sources disagree
    only when no figure of the one agrees with a figure of the other for that quantity.
    """
    found: list[_Pair] = []
    candidates: list[_Pair] = []
    by_source = _sides(passages)
    for one, other in combinations(by_source.values(), 2):
        said: set[tuple[str, frozenset[str]]] = set()
        for a in one:
            alike = [b for b in other if same_quantity(a.figure, b.figure)]
            if alike and all(disagree(a.figure, b.figure) for b in alike):
                b = max(alike, key=lambda b: len(_shared(a.figure, b.figure)))
                key = (a.figure.kind, _shared(a.figure, b.figure))
                if key not in said:
                    said.add(key)
                    found.append(_Pair(a, b, found=True))
            candidates += [
                _Pair(a, b, found=False)
                for b in other
                if a.figure.kind == b.figure.kind
                and _shared(a.figure, b.figure)
                and not same_quantity(a.figure, b.figure)
                and disagree(a.figure, b.figure)
            ]
    return found[:MAX_CONTRADICTIONS] + candidates


def find_contradictions(passages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """
    The first pass alone (no model).

    :param passages: The passages cited for a report (``citations["passages"]``).
    :returns: The contradictions (see the module docstring), at most :data:`MAX_CONTRADICTIONS`.
    """
    return [pair.to_dict() for pair in _pairs(passages) if pair.found][:MAX_CONTRADICTIONS]


def _verdict(text: str) -> tuple[bool, str] | None:
    try:
        data = extract_json_object(text)
    except ValueError:
        return None
    said = data.get("contradict") if isinstance(data, dict) else None
    if not isinstance(said, bool):
        return None
    return said, " ".join(str(data.get("why") or "").split())[:_MAX_REASON]


def _judged(run: ResearchRun, pairs: list[_Pair], judge: ChatGenerator) -> Phase[list[_Pair]]:
    asked = pairs[:MAX_JUDGE_CALLS]
    prompts = [
        render_chat(
            CONTRADICTION,
            first_url=fence(pair.first.url),
            first=fence(pair.first.figure.sentence),
            second_url=fence(pair.second.url),
            second=fence(pair.second.figure.sentence),
            quantity=pair.first.figure.kind,
        )
        for pair in asked
    ]
    calls = [ask(judge, prompt, role="judge", streaming_callback=run.streaming_callback) for prompt in prompts]
    outcomes = (yield calls) if calls else []
    usage: dict[str, Any] = {}
    for pair, outcome in zip(asked, outcomes, strict=True):
        if outcome.reply is not None:
            usage = add_usage(usage, outcome.reply.meta.get("usage"))
        verdict = _verdict(outcome.text) if outcome.error is None else None
        if verdict is None:
            why = "failed" if outcome.error is not None else "was not the JSON asked for"
            run.warn(PHASE_GROUND, f"the judge's answer on two figures ({pair.first.url}, {pair.second.url}) {why}")
            continue
        pair.found, pair.why, pair.found_by = verdict[0], verdict[1], "judge"
    run.record_usage(PHASE_GROUND, usage)
    return pairs


def contradictions_section(contradictions: list[dict[str, Any]], question: str) -> str:
    """The report's "Contradictions" section (its heading in the language of ``question``), or ``""`` for none."""
    if not contradictions:
        return ""
    lines = [f"## {report_sections(question).contradictions}", ""]
    for number, found in enumerate(contradictions, 1):
        first, second = found["claims"]
        subject = inert_text(found["subject"]) or inert_text(found["quantity"])
        lines.append(f"{number}. {subject}: {inert_text(first['figure'])} ≠ {inert_text(second['figure'])}")
        for side in (first, second):
            url, title = side["url"], inert_text(side["title"], limit=120) or inert_text(side["url"])
            link = title if re.search(r"[\s<>]", url) else f"[{title}](<{url}>)"
            lines.append(f"   - {link}: “{inert_text(side['passage'], limit=400)}”")
        if found["found_by"] == "judge" and found["why"]:
            lines.append(f"   - {inert_text(found['why'])}")
    return "\n".join(lines) + "\n"


def _placed(report: str, section: str, question: str) -> str:
    """The section before the Sources list (the report's last ``## `` heading of that name), else at the end."""
    heading = report_sections(question).sources.casefold()
    lines = report.rstrip("\n").split("\n")
    for index in range(len(lines) - 1, -1, -1):
        if lines[index].startswith("## ") and lines[index][3:].strip().casefold() in (heading, "sources"):
            return "\n".join([*lines[:index], section.rstrip("\n"), "", *lines[index:]]) + "\n"
    return report.rstrip("\n") + "\n\n" + section


def add_contradictions(
    run: ResearchRun, report: str, passages: Iterable[Mapping[str, Any]], judge: ChatGenerator | None = None
) -> Phase[str]:
    """
    Find the contradictions of a verified report, keep them as the run's ``contradictions`` output and put their
    section into the report before its Sources list; the phase returns the report.

    :param passages: The passages cited for it (``citations["passages"]``).
    :param judge: The judge's chat generator, or ``None`` for the first pass alone.
    """
    pairs = _pairs(passages)
    if judge is not None and pairs and run.spent() is None:  # a spent budget leaves the figures' verdict alone
        pairs = yield from _judged(run, pairs, judge)
    found = [pair.to_dict() for pair in pairs if pair.found][:MAX_CONTRADICTIONS]
    kept: list[dict[str, Any]] = run.resource(CONTRADICTIONS, list)
    kept[:] = found
    if not found or not report.strip():
        return report
    return _placed(report, contradictions_section(found, run.question), run.question)
