"""
The events of the research itself: the sub-researchers (or a deep agent's subagents) and the searches and pages they
read::

    Event
    ├── SubagentSpawned (subagent_spawned)  a sub-researcher (or a deep agent's subagent) started
    ├── SubagentCompleted (subagent_completed)  it returned its note (restored from a run directory, or partial)
    ├── SubagentFailed (subagent_failed)    it failed: no note (the orchestrator reads the error)
    ├── SearchDone (search)                 a search returned results
    ├── PageRead (page_read)                a page was fetched, extracted and summarized
    └── PageRefused (page_refused)          a page could not be read, and why
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from haystack_deep_research.events.types import Event

__all__ = ["PageRead", "PageRefused", "SearchDone", "SubagentCompleted", "SubagentFailed", "SubagentSpawned"]


@dataclass(frozen=True, kw_only=True)
class SubagentSpawned(Event):
    """
    A sub-researcher started.

    :param subtopic: Its sub-topic.
    :param slot: Its number among the run's delegations (1-based).
    :param planned: How many sub-topics the run has planned so far (at least ``slot``).
    :param limit: How many sub-topics the run may delegate.
    :param agent: The name of the deep agent's subagent that runs the task (then ``subtopic`` is the task), or ``""``.
    """

    kind: ClassVar[str] = "subagent_spawned"
    subtopic: str
    slot: int = 0
    planned: int = 0
    limit: int = 0
    agent: str = ""

    def describe(self) -> str:
        if self.agent:
            return f"subagent {self.agent}: {self.subtopic}"
        return f"[{self.slot}/{self.planned}] researching: {self.subtopic}"


@dataclass(frozen=True, kw_only=True)
class SubagentCompleted(Event):
    """
    A sub-researcher returned its note.

    :param subtopic: Its sub-topic.
    :param note: The note it returned.
    :param partial: Whether it stopped early.
    :param restored: Whether the note came from the run directory instead of a new researcher.
    :param agent: The name of the deep agent's subagent that ran the task, or ``""``.
    """

    kind: ClassVar[str] = "subagent_completed"
    subtopic: str
    note: str
    partial: bool = False
    restored: bool = False
    agent: str = ""

    def describe(self) -> str:
        if self.agent:
            return f"subagent {self.agent} done{' (partial)' if self.partial else ''}: {self.subtopic}"
        if self.restored:
            return f"restored from the run directory, not researched again: {self.subtopic}"
        return f"done{' (partial)' if self.partial else ''}: {self.subtopic}"


@dataclass(frozen=True, kw_only=True)
class SubagentFailed(Event):
    """
    A sub-researcher failed without a note; the orchestrator gets the error as the tool result.

    :param subtopic: Its sub-topic.
    :param error: The error, as ``Type: message``.
    :param agent: The name of the deep agent's subagent that ran the task, or ``""``.
    """

    kind: ClassVar[str] = "subagent_failed"
    subtopic: str
    error: str
    agent: str = ""

    def describe(self) -> str:
        if self.agent:
            return f"subagent {self.agent} failed: {self.subtopic} ({self.error})"
        return f"failed: {self.subtopic} ({self.error})"


@dataclass(frozen=True, kw_only=True)
class SearchDone(Event):
    """
    A search returned.

    :param query: The query.
    :param results: How many results it gave.
    :param cached: Whether the results came from the cross-run cache instead of the search engine.
    """

    kind: ClassVar[str] = "search"
    query: str
    results: int
    cached: bool = False

    def describe(self) -> str:
        return f"searched '{self.query}': {self.results} result(s){' (cached)' if self.cached else ''}"


@dataclass(frozen=True, kw_only=True)
class PageRead(Event):
    """
    A page was read and summarized.

    :param url: The URL.
    :param title: Its title.
    :param chars: Characters of text given to the summarizer.
    :param shared: Whether the summary was shared by another researcher of the run instead of read again.
    :param cached: Whether the page's text came from the cross-run cache instead of being fetched.
    """

    kind: ClassVar[str] = "page_read"
    url: str
    title: str = ""
    chars: int = 0
    shared: bool = False
    cached: bool = False

    def describe(self) -> str:
        verb = "shared" if self.shared else "read (cached)" if self.cached else "read"
        return f"{verb} {self.url}"


@dataclass(frozen=True, kw_only=True)
class PageRefused(Event):
    """A page could not be read. :param url: The URL. :param reason: Why."""

    kind: ClassVar[str] = "page_refused"
    url: str
    reason: str

    def describe(self) -> str:
        return f"could not read {self.url}: {self.reason}"
