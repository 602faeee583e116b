"""
Incremental updates of a finished iterative run, built on its run directory's journal and the cache's time to live.

The journal holds every finding with the sources it was written from (a ``note`` record carries the ledger entries
it added), so an update knows, for each topic, which pages its finding rests on and when each was read
(``fetched_at``). With the agent's cache ``ttl`` (``cache=ResearchCache(directory=..., ttl=...)``; one day without a
cache) as the measure of freshness:

- a topic whose every cited page was read less than ``ttl`` seconds ago is **kept**: its finding stays as it
  is and it is not searched again;
- a topic with an older page (or with no page read at all) is **stale**: it is searched and read again first (with
  a cache, its entries have expired too, so the pages are really fetched), and its new finding replaces the old one;
- then the agent's rounds look for what is **new** since the last run (the analysis model is told its date);
- the report is written again from all findings, and a "what changed" section, written from data, goes after its
  title: new topics, topics checked again and kept, pages whose text changed, new pages.

:func:`plan_update` makes the plan from the journal; :func:`changes` measures what the update changed.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from haystack_deep_research.evidence import EvidenceLedger, normalize_url
from haystack_deep_research.evidence.clock import parse_iso, today
from haystack_deep_research.iterative.iteration import IterationRun, UpdatePlan
from haystack_deep_research.run._journal import JournaledNote

__all__ = ["changes", "plan_update", "sources_of"]


def sources_of(note: str, ledger: EvidenceLedger) -> list[str]:
    """
    :param note: A finding.
    :param ledger: The run's ledger.
    :returns: The URLs the finding cites whose pages the run read, and the documents it retrieved whose URI the
        finding states, in order.
    """
    return ledger.read_sources_in(note)


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
    """
    Split a finished run's findings into kept and stale ones.

    :param notes: The journaled findings, one per topic, in order.
    :param ledger: The ledger the journal restored.
    :param ttl: Seconds a source stays fresh.
    :param previous_report: The run's report (``report.md``), or ``""``.
    :returns: The plan, and the notes of the kept topics (restored as they are).
    """
    now = time.time()
    kept: list[JournaledNote] = []
    stale: list[str] = []
    for note in notes:
        sources = sources_of(note.note, ledger)
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
    """
    What an update changed.

    :param iteration: The updated run, its rounds done.
    :returns: ``since``, ``kept_topics``, ``rechecked_topics``, ``new_topics``, ``changed_sources`` (read again, other
        text), ``unchanged_sources`` (read again, same text) and ``new_sources`` (read for the first time); ``{}``
        for a run that is not an update.
    """
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
