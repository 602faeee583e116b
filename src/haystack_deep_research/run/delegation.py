"""
The sub-topics a run delegates: the slots they claim under the run's limit, and their notes for the writer, kept in
the order the sub-topics were planned whatever order their researchers finish in.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

__all__ = ["Delegation"]


class Delegation:
    """
    The delegation of one run's sub-topics and their notes; thread-safe (parallel sub-researchers add at once).

    :class:`~haystack_deep_research.run.ResearchRun` holds one and documents each method.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._restored: list[str] = []
        self._notes: dict[int, str] = {}
        self._plan: list[str | None] = []
        self._delegated = 0
        self._granted = 0

    def plan(self, subtopics: Iterable[str]) -> None:
        """:param subtopics: The sub-topics about to be researched side by side, in the order asked for."""
        with self._lock:
            self._plan.extend(" ".join(subtopic.split()) for subtopic in subtopics)

    def planned(self) -> int:
        """:returns: How many sub-topics were planned (or delegated unplanned) so far."""
        with self._lock:
            return len(self._plan)

    def position(self, subtopic: str) -> int:
        """
        :param subtopic: The sub-topic, as delegated.
        :returns: Its first unclaimed planned place among the notes (0-based), else the next one; taken.
        """
        key = " ".join(subtopic.split())
        with self._lock:
            for index, planned in enumerate(self._plan):
                if planned == key:
                    self._plan[index] = None
                    return index
            self._plan.append(None)
            return len(self._plan) - 1

    def add_notes(self, notes: Iterable[str], *, position: int | None = None) -> None:
        """
        :param notes: Notes for the writer; a note already held is kept once.
        :param position: The place of a delegated sub-topic's note; notes without one come first, in order given.
        """
        with self._lock:
            for note in notes:
                if note in self._restored or note in self._notes.values():
                    continue
                if position is None:
                    self._restored.append(note)
                else:
                    self._notes[position] = note

    def place_of(self, note: str) -> int | None:
        """:returns: The place of a delegated note, or ``None`` (a restored note, or none such)."""
        with self._lock:
            return next((place for place, held in self._notes.items() if held == note), None)

    def notes(self) -> list[str]:
        """:returns: A copy of the notes: restored ones first, then delegated ones in their planned order."""
        with self._lock:
            return [*self._restored, *(self._notes[key] for key in sorted(self._notes))]

    def left(self, limit: int) -> int:
        """
        :param limit: How many sub-topics the run may delegate in all.
        :returns: How many more slots :meth:`claim` would grant (0 once every slot is taken).
        """
        with self._lock:
            return max(limit + self._granted - self._delegated, 0)

    def claim(self, limit: int) -> int | None:
        """
        :param limit: How many sub-topics the run may delegate in all.
        :returns: The 1-based number of the claimed slot, or ``None`` when ``limit`` were already delegated.
        """
        with self._lock:
            if self._delegated >= limit + self._granted:
                return None
            self._delegated += 1
            return self._delegated

    def grant(self, count: int) -> None:
        """:param count: How many sub-topics the run may delegate beyond its limit."""
        with self._lock:
            self._granted += max(count, 0)
