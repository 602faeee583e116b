"""The records of a run journal that resuming reads back: a completed sub-topic's note, and a person's review of a
planned sub-topic; and the key both are matched by."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["DECISION_FIELDS", "JournaledDecision", "JournaledNote", "decision_of", "subtopic_key"]


def subtopic_key(subtopic: str) -> str:
    """
    The key a sub-topic is matched by when a run resumes: case-folded, whitespace collapsed, end punctuation dropped.

    :param subtopic: The sub-topic text.
    :returns: Its key.
    """
    return " ".join(subtopic.casefold().split()).rstrip(" .;:!?")


@dataclass(frozen=True)
class JournaledNote:
    """
    A completed sub-topic as the journal holds it.

    :param subtopic: The sub-topic as it was delegated.
    :param note: The note the writer received.
    :param summary: The researcher's summary inside the note.
    :param partial: Whether the researcher stopped early.
    :param position: Its place among the run's notes, in the order the sub-topics were delegated (``None`` in a
        journal of an older version: then the order it completed in).
    """

    subtopic: str
    note: str
    summary: str
    partial: bool
    position: int | None = None


@dataclass(frozen=True)
class JournaledDecision:
    """
    A person's review of one planned sub-topic, as the journal holds it.

    :param subtopic: The sub-topic as the orchestrator planned it.
    :param decision: ``"accept"``, ``"edit"`` or ``"drop"``.
    :param edited_to: The sub-topic researched instead (``"edit"``), else ``None``.
    :param feedback: What the orchestrator was told (a drop's reason, an edit's explanation), or ``None``.
    """

    subtopic: str
    decision: str
    edited_to: str | None = None
    feedback: str | None = None


DECISION_FIELDS = ("subtopic", "decision", "edited_to", "feedback")
"""The fields of a ``decision`` record, besides its type."""


def decision_of(record: dict[str, Any]) -> JournaledDecision:
    """
    :param record: A ``decision`` record of the journal (its ``decision`` a string).
    :returns: The review it holds; a field that is not a string is read as missing.
    """

    def text(name: str) -> str | None:
        value = record.get(name)
        return value if isinstance(value, str) else None

    return JournaledDecision(
        subtopic=text("subtopic") or "",
        decision=record["decision"],
        edited_to=text("edited_to"),
        feedback=text("feedback"),
    )
