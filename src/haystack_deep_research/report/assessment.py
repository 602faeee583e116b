"""
Assessing a report in a run: judge every claim it makes, and mark the claims that stay unsupported.

The deep research agent's grounding stage, the research workflow's grounding eval and the iterative agent's judge
all judge with :func:`judge_report` and mark with :func:`mark_unsupported`, so a claim is judged and marked the same
way in every shape. Every claim is judged (see :mod:`.uncited` for what a claim is): a cited claim against the stored
text of the sources it cites, a claim that cites nothing against the passages the run read.

**Rule for claims still unsupported after the last attempt: they are marked, not dropped.** The sentence stays and
gets the marker ``*(unsupported by the cited source)*`` (``*(not supported by the sources read)*`` for a claim that
cites nothing) before its final punctuation, so a reader sees which claims the sources did not bear out and nothing
is silently removed.

The repair policy (:class:`RepairPolicy`) is shared too: after each judgement, a score at the threshold is done; a
spent budget stops the repair (no further model call starts); below the threshold the text is first rewritten from the
same evidence, without tools (``max_regenerations`` times over the whole run), then the unsupported claims are
researched again and the text rewritten (``max_replans`` times); once both are used up the repair is exhausted. The
deep research agent's grounding stage runs it inside its write hook; the research workflow's router runs it as the
branches of its Pipeline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from haystack.components.generators.chat.types import ChatGenerator

from haystack_deep_research import _checks
from haystack_deep_research.events import Notice
from haystack_deep_research.evidence import EvidenceLedger
from haystack_deep_research.report.judge import UNKNOWN, Claim, Judgement, cited_claims, judge_claims
from haystack_deep_research.report.uncited import ReadPassages, cites_nothing, uncited_claims
from haystack_deep_research.run import ResearchRun
from haystack_deep_research.run._phases import Phase
from haystack_deep_research.state import PHASE_GROUND

__all__ = [
    "UNCITED_MARK",
    "UNSUPPORTED_MARK",
    "RepairPolicy",
    "RepairStep",
    "judge_report",
    "mark_unsupported",
    "report_claims",
    "unjudged_claims",
    "verdict_outputs",
]

UNSUPPORTED_MARK = "*(unsupported by the cited source)*"
UNCITED_MARK = "*(not supported by the sources read)*"


def mark_unsupported(report: str, claims: list[Claim]) -> tuple[str, list[Claim]]:
    """
    Mark ``claims`` (found in this report by :func:`judge_report`) by the module's rule: :data:`UNSUPPORTED_MARK`
    (:data:`UNCITED_MARK` for a claim that cites nothing) before the sentence's final punctuation.

    :returns: The marked report and the claims marked (a claim whose sentence is no longer on its line, or is already
        marked, is skipped).
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
    """
    Every claim of a verified report, in order (cited ones, and those that cite nothing, which cite
    :data:`~haystack_deep_research.report.uncited.READ_PASSAGES_URL`), and the sources they are judged against: the
    ledger, with the passages that match the claims that cite nothing.
    """
    cited, uncited = cited_claims(report, verified_urls), uncited_claims(report, verified_urls)
    return sorted(cited + uncited, key=lambda claim: claim.line), ReadPassages(ledger, uncited)


def judge_report(run: ResearchRun, report: str, verified_urls: Sequence[str], judge: ChatGenerator) -> Phase[Judgement]:
    """
    Judge every claim of a verified report: a cited claim against the stored text of its sources in the run's ledger,
    a claim that cites nothing against the passages the run read that best match it (see :mod:`.uncited`).

    The judge's usage counts toward the ``ground`` phase; what went wrong on the way becomes the run's warnings.
    """
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
    """
    :param judged: The last judgement of a report.
    :param marked: The claims :func:`mark_unsupported` marked in it.
    :returns: The ``grounding`` output: one verdict per claim (see ``ClaimVerdict.to_dict``) with ``marked``.
    """
    return [{**verdict.to_dict(), "marked": verdict.claim in marked} for verdict in judged.verdicts]


def unjudged_claims(judged: Judgement | None) -> list[str]:
    """
    :param judged: The last judgement of a report or answer, or ``None`` when none was made.
    :returns: The ``grounding_unjudged`` output: the claims no judge decided (judged unknown), as written, in order.
    """
    return [] if judged is None else [v.claim.sentence for v in judged.verdicts if v.verdict == UNKNOWN]


RepairStep = Literal["done", "spent", "regenerate", "replan", "exhausted"]
"""What the repair does next."""


@dataclass(frozen=True)
class RepairPolicy:
    """
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
        """
        :param score: The grounding score of the current text.
        :param regenerations: Rewrites made so far in the run.
        :param replans: Replans made so far in the run.
        :param spent: The budget the run has spent (its name), or ``None``.
        :returns: What the repair does next.
        """
        if score >= self.threshold:
            return "done"
        if spent is not None:
            return "spent"
        if regenerations < self.max_regenerations:
            return "regenerate"
        if replans < self.max_replans:
            return "replan"
        return "exhausted"
