"""
The events of the research itself: the sub-researchers (or a deep agent's subagents), the searches and pages they
read, and the iterative agent's rounds.
"""

from __future__ import annotations

from haystack_deep_research.events.types import Event


def _by(agent: str) -> str:
    return f"subagent {agent} " if agent else ""


class SubagentSpawned(Event, kind="subagent_spawned"):
    """
    A sub-researcher started.

    :param subtopic: Its sub-topic.
    :param slot: Its number among the run's delegations (1-based).
    :param planned: How many sub-topics the run has planned so far (at least ``slot``).
    :param limit: How many sub-topics the run may delegate.
    :param agent: The name of the deep agent's subagent that runs the task (then ``subtopic`` is the task), or ``""``.
    """

    subtopic: str
    slot: int = 0
    planned: int = 0
    limit: int = 0
    agent: str = ""

    def describe(self) -> str:
        if self.agent:
            return f"subagent {self.agent}: {self.subtopic}"
        return f"[{self.slot}/{self.planned}] researching: {self.subtopic}"


class SubagentCompleted(Event, kind="subagent_completed"):
    """
    A sub-researcher returned its note.

    :param subtopic: Its sub-topic.
    :param note: The note it returned.
    :param partial: Whether it stopped early.
    :param restored: Whether the note came from the run directory instead of a new researcher.
    :param agent: The name of the deep agent's subagent that ran the task, or ``""``.
    """

    subtopic: str
    note: str
    partial: bool = False
    restored: bool = False
    agent: str = ""

    def describe(self) -> str:
        if self.restored and not self.agent:
            return f"restored from the run directory, not researched again: {self.subtopic}"
        return f"{_by(self.agent)}done{' (partial)' if self.partial else ''}: {self.subtopic}"


class SubagentFailed(Event, kind="subagent_failed"):
    """
    A sub-researcher failed without a note; the orchestrator gets the error as the tool result.

    :param subtopic: Its sub-topic.
    :param error: The error, as ``Type: message``.
    :param agent: The name of the deep agent's subagent that ran the task, or ``""``.
    """

    subtopic: str
    error: str
    agent: str = ""

    def describe(self) -> str:
        return f"{_by(self.agent)}failed: {self.subtopic} ({self.error})"


class SearchDone(Event, kind="search"):
    """
    A search returned.

    :param query: The query.
    :param results: How many results it gave.
    :param cached: Whether the results came from the cross-run cache instead of the search engine.
    """

    query: str
    results: int
    cached: bool = False

    def describe(self) -> str:
        return f"searched '{self.query}': {self.results} result(s){' (cached)' if self.cached else ''}"


class PageRead(Event, kind="page_read"):
    """
    A page was read and summarized.

    :param url: The URL.
    :param title: Its title.
    :param chars: Characters of text given to the summarizer.
    :param shared: Whether the summary was shared by another researcher of the run instead of read again.
    :param cached: Whether the page's text came from the cross-run cache instead of being fetched.
    """

    url: str
    title: str = ""
    chars: int = 0
    shared: bool = False
    cached: bool = False

    def describe(self) -> str:
        verb = "shared" if self.shared else "read (cached)" if self.cached else "read"
        return f"{verb} {self.url}"


class PageRefused(Event, kind="page_refused", line="could not read {url}: {reason}"):
    """A page could not be read. :param url: The URL. :param reason: Why."""

    url: str
    reason: str


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
