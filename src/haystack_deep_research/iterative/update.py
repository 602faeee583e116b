"""
Incremental updates of a finished iterative run, from its run directory's journal and the cache's time to live (see
docs/iterative.md for what is kept, checked again and new, and how claims are compared), and :class:`StartStep`, the
agent's first step, which resumes or updates the work the run directory holds.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from haystack import component

from haystack_deep_research import _checks
from haystack_deep_research._serialization import InitSerialized
from haystack_deep_research._untrusted.files import read_regular_file
from haystack_deep_research.errors import RunDirError, UsageError
from haystack_deep_research.events import Notice
from haystack_deep_research.evidence import EvidenceLedger
from haystack_deep_research.evidence.citations import extract_citations
from haystack_deep_research.evidence.clock import parse_iso, today
from haystack_deep_research.evidence.entry import normalize_url
from haystack_deep_research.iterative.iteration import IterationRun, UpdatePlan
from haystack_deep_research.report.assessment import Claim, cited_claims
from haystack_deep_research.report.contradictions import disagree, figures_in
from haystack_deep_research.report.headings import ReportSections
from haystack_deep_research.run._cache import DEFAULT_CACHE_TTL
from haystack_deep_research.run._journal import REPORT_FILE, JournaledNote, RunJournal
from haystack_deep_research.run._lifecycle import current_run
from haystack_deep_research.run._phases import Phase, blocking, drive, drive_async
from haystack_deep_research.state import PHASE_ORCHESTRATOR

__all__ = ["CLAIM_OVERLAP", "StartStep", "changes", "claim_changes", "plan_update"]

CLAIM_OVERLAP = 0.5
"""The share of their words (figures aside) two claims must share to be the same claim in two reports."""
_WORDS = re.compile(r"[^\W\d_]+")


def _age(ledger: EvidenceLedger, url: str, now: float) -> float:
    entry = ledger.get(url)
    if entry is None:
        return float("inf")
    try:
        return now - parse_iso(entry.fetched_at).timestamp()
    except (ValueError, TypeError, AttributeError):
        return float("inf")


def plan_update(
    notes: Iterable[JournaledNote], ledger: EvidenceLedger, *, ttl: float, previous_report: str
) -> tuple[UpdatePlan, list[JournaledNote]]:
    """The plan splitting a finished run's journaled findings into kept and stale, and the kept topics' notes."""
    now = time.time()
    kept: list[JournaledNote] = []
    stale: list[str] = []
    for note in notes:
        sources = ledger.read_sources_in(note.note)
        if sources and all(_age(ledger, url, now) < ttl for url in sources):
            kept.append(note)
        else:
            stale.append(note.subtopic)
    read = [entry for entry in ledger.entries() if entry.url in ledger.read_urls()]
    latest = max((entry.fetched_at for entry in read), default="")
    since = parse_iso(latest).strftime("%Y-%m-%d") if latest else today()
    plan = UpdatePlan(
        since=since,
        previous_report=previous_report,
        kept=tuple(note.subtopic for note in kept),
        stale=tuple(stale),
        hashes={normalize_url(entry.url): entry.content_hash for entry in read},
        read_at={normalize_url(entry.url): entry.fetched_at for entry in read},
    )
    return plan, kept


def changes(iteration: IterationRun) -> dict[str, Any]:
    """What an update changed in topics and sources (the ``changes`` output, see docs/iterative.md); ``{}`` for a run
    that is not an update. The write step adds the claims' changes (:func:`claim_changes`)."""
    plan = iteration.update
    if plan is None:
        return {}
    known = {*plan.kept, *plan.stale}
    changed, unchanged, added = [], [], []
    for entry in iteration.run.ledger.entries():
        if entry.url not in iteration.run.ledger.read_urls():
            continue
        key = normalize_url(entry.url)
        before = plan.hashes.get(key)
        if before is None:
            added.append(entry.url)
        elif before != entry.content_hash:
            changed.append(entry.url)
        elif plan.read_at.get(key) != entry.fetched_at:
            unchanged.append(entry.url)
    return {
        "since": plan.since,
        "kept_topics": list(plan.kept),
        "rechecked_topics": list(plan.stale),
        "new_topics": [topic for topic in iteration.topics if topic not in known],
        "changed_sources": changed,
        "unchanged_sources": unchanged,
        "new_sources": added,
    }


def _body(report: str, sections: ReportSections) -> str:
    """The report without the sections the library writes from data (what changed, contradictions)."""
    own = {sections.changed.casefold(), sections.contradictions.casefold()}
    kept, skipping = [], False
    for line in report.split("\n"):
        if line.startswith("## "):
            heading = line[3:].strip().casefold()
            skipping = any(heading.startswith(title) for title in own)
        if not skipping:
            kept.append(line)
    return "\n".join(kept)


def _claims(report: str, sections: ReportSections) -> list[Claim]:
    body = _body(report, sections)
    claims = cited_claims(body, [citation.url for citation in extract_citations(body, sources_section=False)])
    return list({claim.sentence: claim for claim in reversed(claims)}.values())[::-1]  # a sentence said twice is one


def _words(claim: Claim) -> set[str]:
    return {word for word in _WORDS.findall(claim.text.casefold()) if len(word) > 2}


def _overlap(a: Claim, b: Claim) -> float:
    one, other = _words(a), _words(b)
    return len(one & other) / max(len(one | other), 1)


def _changed_figure(old: Claim, new: Claim) -> tuple[str, str] | None:
    before, after = figures_in(old.text), figures_in(new.text)
    for figure in after:
        alike = [previous for previous in before if previous.kind == figure.kind]
        if alike and all(disagree(previous, figure) for previous in alike):
            return alike[0].text, figure.text
    return None


def claim_changes(previous_report: str, report: str, sections: ReportSections) -> dict[str, list[dict[str, Any]]]:
    """What an update changed in the report's claims, in report order (``new_claims``, ``changed_claims``,
    ``no_longer_supported``: see docs/iterative.md); the sections the library writes are left out."""
    before, after = _claims(previous_report, sections), _claims(report, sections)
    pairs = sorted(
        ((_overlap(old, new), i, j) for i, old in enumerate(before) for j, new in enumerate(after)), reverse=True
    )
    matched: dict[int, int] = {}
    taken: set[int] = set()
    for overlap, i, j in pairs:
        if overlap >= CLAIM_OVERLAP and i not in matched and j not in taken:
            matched[i] = j
            taken.add(j)
    by_new = {j: i for i, j in matched.items()}
    changed = []
    for j, new in enumerate(after):
        if j in by_new and (figures := _changed_figure(before[by_new[j]], new)) is not None:
            old = before[by_new[j]]
            changed.append(
                {
                    "claim": new.text,
                    "previous_claim": old.text,
                    "figure": figures[1],
                    "previous_figure": figures[0],
                    "sources": list(new.urls),
                    "previous_sources": list(old.urls),
                }
            )
    return {
        "new_claims": [{"claim": c.text, "sources": list(c.urls)} for j, c in enumerate(after) if j not in taken],
        "changed_claims": changed,
        "no_longer_supported": [
            {"claim": c.text, "sources": list(c.urls)} for i, c in enumerate(before) if i not in matched
        ],
    }


def _read_report(journal: RunJournal) -> str:
    path = Path(journal.directory) / REPORT_FILE
    try:  # the run directory's own report, through the door: a regular file under it, at most 64 MiB
        return read_regular_file(path, root=journal.directory, max_bytes=64 * 1024 * 1024).decode("utf-8")
    except FileNotFoundError:
        return ""


@component
class StartStep(InitSerialized):
    """
    Start the rounds: resume the findings the run directory holds (each restored topic counts as one of the ``depth``
    rounds), or, with ``update``, plan the update of a finished run whose sources stay fresh ``freshness`` seconds.
    """

    def __init__(self, *, depth: int = 3, freshness: float = DEFAULT_CACHE_TTL) -> None:
        self.depth = _checks.int_in_range("depth", depth, 1, 50)
        self.freshness = _checks.number_in_range("freshness", freshness, 0.0)

    @component.output_types(iteration=IterationRun)
    def run(self, update: bool = False) -> dict[str, IterationRun]:
        """
        :param update: Research the finished run of the run directory again (see :mod:`.update`).
        :returns: ``iteration``: the first round's input.
        :raises UsageError: If ``update`` is set without a run directory.
        :raises RunDirError: If the run directory holds no run to update.
        """
        return {"iteration": drive(self.phase(update))}

    @component.output_types(iteration=IterationRun)
    async def run_async(self, update: bool = False) -> dict[str, IterationRun]:
        """As :meth:`run`, on the event loop."""
        return {"iteration": await drive_async(self.phase(update))}

    def phase(self, update: bool) -> Phase[IterationRun]:
        run = current_run().run
        journal = run.journal
        if update and journal is None:
            raise UsageError("update=True needs the finished run's directory: inputs=RunInputs(run_dir=...).")
        iteration = IterationRun()
        if journal is None or not journal.notes():
            if update:
                raise RunDirError(f"{str(journal.directory)!r} holds no finished run to update.")  # type: ignore[union-attr]
            return iteration
        if len(restored := journal.ledger()):
            run.ledger = restored
        if not update:
            notes = journal.notes()
            run.add_notes(note.note for note in notes)
            topics = tuple(note.subtopic for note in notes)
            run.events.emit(Notice(phase=PHASE_ORCHESTRATOR, text=f"resumed: {len(topics)} topic(s) restored"))
            return iteration.but(topics=topics, rounds=min(len(topics), self.depth))
        [previous] = yield [blocking(_read_report, journal)]
        plan, kept = plan_update(
            journal.notes(), run.ledger, ttl=self.freshness, previous_report=str(previous.value or "")
        )
        run.add_notes(note.note for note in kept)
        run.events.emit(
            Notice(
                phase=PHASE_ORCHESTRATOR,
                text=f"updating the run of {plan.since}: {len(plan.kept)} topic(s) still fresh, "
                f"{len(plan.stale)} to check again",
            )
        )
        return iteration.but(topics=plan.kept, recheck=plan.stale, update=plan)
