"""
Assessing a report in a run: judge its cited claims, and mark the claims that stay unsupported.

The deep research agent's grounding stage and the research workflow's grounding eval both judge with
:func:`judge_report` and mark with :func:`mark_unsupported`, so a claim is judged and marked the same way in either
shape.

**Rule for claims still unsupported after the last attempt: they are marked, not dropped.** The sentence stays and
gets the marker ``*(unsupported by the cited source)*`` before its final punctuation, so a reader sees which claims
the sources did not bear out and nothing is silently removed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from haystack.components.generators.chat.types import ChatGenerator

from haystack_deep_research.events import Notice
from haystack_deep_research.report.judge import Claim, Judgement, cited_claims, judge_claims
from haystack_deep_research.run import Phase, ResearchRun
from haystack_deep_research.state import PHASE_GROUND

__all__ = ["UNSUPPORTED_MARK", "judge_report", "mark_unsupported", "verdict_outputs"]

UNSUPPORTED_MARK = "*(unsupported by the cited source)*"


def mark_unsupported(report: str, claims: list[Claim]) -> tuple[str, list[Claim]]:
    """
    Mark claims in a report by the module's rule: :data:`UNSUPPORTED_MARK` before the sentence's final punctuation.

    :param report: The report.
    :param claims: The claims to mark (found with :func:`~haystack_deep_research.report.cited_claims` on this report).
    :returns: The marked report and the claims that were marked (a claim whose sentence is no longer on its line,
        or is already marked, is skipped).
    """
    lines = report.split("\n")
    marked: list[Claim] = []
    for number in sorted({claim.line for claim in claims}):
        if not 1 <= number <= len(lines):
            continue
        text, edits = lines[number - 1], []
        for claim in (c for c in claims if c.line == number):
            start = text.find(claim.sentence)
            if start < 0 or UNSUPPORTED_MARK in claim.sentence:
                continue
            end = start + len(claim.sentence) - (1 if claim.sentence[-1:] in ".!?" else 0)
            edits.append((end, claim))
        for end, claim in sorted(edits, key=lambda edit: edit[0], reverse=True):
            text = f"{text[:end].rstrip()} {UNSUPPORTED_MARK}{text[end:]}"
            marked.append(claim)
        lines[number - 1] = text
    return "\n".join(lines), marked


def judge_report(run: ResearchRun, report: str, verified_urls: Sequence[str], judge: ChatGenerator) -> Phase[Judgement]:
    """
    Judge the cited claims of a report against the stored text of their sources in the run's ledger.

    The judge's usage counts toward the ``ground`` phase; what went wrong on the way becomes the run's warnings.

    :param run: The run, whose ledger holds the sources' stored texts.
    :param report: The verified report.
    :param verified_urls: The URLs whose citations count (the ``verified_urls`` of its citation check).
    :param judge: The judge's chat generator.
    :returns: The phase; it returns the :class:`~haystack_deep_research.report.Judgement`.
    """
    claims = cited_claims(report, verified_urls)
    run.events.emit(Notice(phase=PHASE_GROUND, text=f"judging {len(claims)} cited claim(s) against their sources"))
    judged = yield from judge_claims(claims, run.ledger, judge, streaming_callback=run.streaming_callback)
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
