"""
Reading back the journal of an earlier attempt when a run resumes: its first record checked (a journal of this
library, of this version, for the same question), then the brief, the notes, the reviewed sub-topics and the journaled
ledger entries its records hold. A record whose sources are not a list of entries is skipped (what it recorded is
researched again); an entry whose seal does not verify is restored as a search result only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from haystack import logging

from haystack_deep_research.errors import ConfigurationError, RunDirError
from haystack_deep_research.evidence import EvidenceLedger
from haystack_deep_research.run.journal_records import JournaledDecision, JournaledNote, decision_of, subtopic_key
from haystack_deep_research.run.journal_seal import unseal

__all__ = ["JOURNAL_VERSION", "Restored", "restore_records"]

JOURNAL_VERSION = 2

logger = logging.getLogger(__name__)


def _same_question(a: str, b: str) -> bool:
    return " ".join(a.split()) == " ".join(b.split())


@dataclass
class Restored:
    """
    What the journal of earlier attempts holds.

    :param brief: The brief an earlier attempt wrote, or ``None``.
    :param notes: The completed sub-topics, by :func:`~.journal_records.subtopic_key`.
    :param decisions: The reviewed sub-topics, by :func:`~.journal_records.subtopic_key`.
    :param sources: The ledger entries as journaled, by id, in the order first seen.
    """

    brief: str | None = None
    notes: dict[str, JournaledNote] = field(default_factory=dict)
    decisions: dict[str, JournaledDecision] = field(default_factory=dict)
    sources: dict[str, dict[str, Any]] = field(default_factory=dict)


def restore_records(records: list[dict[str, Any]], *, path: Path, directory: Path, question: str) -> Restored:
    """
    :param records: The journal's whole records, oldest first (at least one).
    :param path: The journal file, as errors and warnings name it.
    :param directory: The run directory, as errors name it.
    :param question: The question of the run resuming.
    :returns: What the records hold.
    :raises RunDirError: If the journal is not one this library wrote, is of another version or another question, or
        holds sources this library did not write.
    """
    first = records[0]
    if first.get("type") != "start" or "version" not in first:
        raise RunDirError(f"{path} is not a journal of this library; pass a new run_dir.")
    if first.get("version") != JOURNAL_VERSION:
        raise RunDirError(
            f"{path} was written by another version of this library (journal version {first.get('version')!r}; "
            f"this one reads version {JOURNAL_VERSION}); pass a new run_dir."
        )
    started = str(first.get("question") or "")
    if not _same_question(started, question):
        raise RunDirError(
            f"run_dir {str(directory)!r} holds a run of another question ({started!r}); pass the same "
            "question to resume it, or a new run_dir to start a new run."
        )
    restored, untrusted = Restored(), 0
    for number, record in enumerate(records, 1):
        sources = record.get("sources") or []
        if not isinstance(sources, list) or not all(isinstance(entry, dict) for entry in sources):
            logger.warning(
                "{path} record {number} ({kind}) holds sources that are not a list of entries; it was skipped, "
                "so what it recorded is researched again.",
                path=str(path),
                number=number,
                kind=str(record.get("type")),
            )
            continue
        if record.get("type") == "brief" and isinstance(record.get("brief"), str):
            restored.brief = record["brief"]
        elif record.get("type") == "note" and isinstance(record.get("note"), str):
            subtopic = str(record.get("subtopic") or "")
            restored.notes[subtopic_key(subtopic)] = JournaledNote(
                subtopic=subtopic,
                note=record["note"],
                summary=str(record.get("summary") or ""),
                partial=bool(record.get("partial")),
                position=record["position"] if type(record.get("position")) is int else None,
            )
        elif record.get("type") == "decision" and isinstance(record.get("decision"), str):
            decided = decision_of(record)
            restored.decisions[subtopic_key(decided.subtopic)] = decided
        for entry in sources:
            unsealed, trusted = unseal(entry)
            untrusted += not trusted
            restored.sources[str(unsealed.get("id"))] = unsealed
    if untrusted:
        logger.warning(
            "{path} holds {count} read source(s) this library did not journal (their seal does not verify); "
            "they are restored as search results only, so nothing cites them as read.",
            path=str(path),
            count=untrusted,
        )
    try:
        EvidenceLedger.from_list(restored.sources.values())
    except ConfigurationError as error:
        raise RunDirError(f"{path} holds sources this library did not write ({error}); pass a new run_dir.") from error
    return restored
