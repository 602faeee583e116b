"""
The events of the iterative research agent::

    Event
    ├── SearchDecided (search_decided)     the analysis model decided: the next topics, or stop
    ├── TopicRefused (topic_refused)       a proposed topic repeats one already searched
    └── SearchRoundDone (search_round)     a round of searches ended: "search round {k} of {depth} done"
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from haystack_deep_research.events.types import Event

__all__ = ["SearchDecided", "SearchRoundDone", "TopicRefused"]


@dataclass(frozen=True, kw_only=True)
class SearchDecided(Event):
    """
    The analysis model decided (the seed's ``nextSearchTopic`` and ``shouldContinue``).

    :param topics: The topics to search next (after repeats were refused); empty when the search stops.
    :param should_continue: Whether the search goes on.
    :param round: The round the decision is for (1-based).
    """

    kind: ClassVar[str] = "search_decided"
    topics: tuple[str, ...] = ()
    should_continue: bool = False
    round: int = 0

    def describe(self) -> str:
        if not self.should_continue:
            return f"round {self.round}: the analysis says the findings suffice"
        return f"round {self.round}: next search: {'; '.join(self.topics)}"


@dataclass(frozen=True, kw_only=True)
class TopicRefused(Event):
    """A proposed topic was refused: it repeats a topic already searched. :param topic: The topic."""

    kind: ClassVar[str] = "topic_refused"
    topic: str

    def describe(self) -> str:
        return f"refused a repeated topic: {self.topic}"


@dataclass(frozen=True, kw_only=True)
class SearchRoundDone(Event):
    """
    A round of searches ended; ``describe()`` says which of how many, and how many topics it searched.

    :param round: The round (1-based).
    :param depth: The rounds the run may make.
    :param topics: The topics the round searched.
    """

    kind: ClassVar[str] = "search_round"
    round: int
    depth: int
    topics: tuple[str, ...] = ()

    def describe(self) -> str:
        searched = f" ({len(self.topics)} topic{'' if len(self.topics) == 1 else 's'})" if self.topics else ""
        return f"search round {self.round} of {self.depth} done{searched}"
