"""
The events of the iterative research agent::

    Event
    ├── SearchDecided (search_decided)     the analysis model decided: the next topics, or stop
    ├── TopicRefused (topic_refused)       a proposed topic repeats one already searched
    └── SearchRoundDone (search_round)     a round of searches ended: "search round {k} of {depth} done"
"""

from __future__ import annotations

from haystack_deep_research.events.types import Event

__all__ = ["SearchDecided", "SearchRoundDone", "TopicRefused"]


class SearchDecided(Event, kind="search_decided"):
    """
    The analysis model decided (the seed's ``nextSearchTopic`` and ``shouldContinue``).

    :param topics: The topics to search next (after repeats were refused); empty when the search stops.
    :param should_continue: Whether the search goes on.
    :param round: The round the decision is for (1-based).
    """

    topics: tuple[str, ...] = ()
    should_continue: bool = False
    round: int = 0

    def describe(self) -> str:
        if not self.should_continue:
            return f"round {self.round}: the analysis says the findings suffice"
        return f"round {self.round}: next search: {'; '.join(self.topics)}"


class TopicRefused(Event, kind="topic_refused", line="refused a repeated topic: {topic}"):
    """A proposed topic was refused: it repeats a topic already searched. :param topic: The topic."""

    topic: str


class SearchRoundDone(Event, kind="search_round"):
    """
    A round of searches ended; ``describe()`` says which of how many, and how many topics it searched.

    :param round: The round (1-based).
    :param depth: The rounds the run may make.
    :param topics: The topics the round searched.
    """

    round: int
    depth: int
    topics: tuple[str, ...] = ()

    def describe(self) -> str:
        searched = f" ({len(self.topics)} topic{'' if len(self.topics) == 1 else 's'})" if self.topics else ""
        return f"search round {self.round} of {self.depth} done{searched}"
