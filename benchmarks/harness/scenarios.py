"""The scenarios every library runs, and the world settings they share."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Scenario:
    """One research task and the conditions it runs under."""

    name: str
    title: str
    subtopics: int
    max_concurrent: int
    rate_429: float = 0.0
    invent_rate: float = 0.0
    researcher_invent_rate: float = 0.0
    read_top_k: int = 2


SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario("three", "3 sub-questions", subtopics=3, max_concurrent=5),
        Scenario("five-c2", "5 sub-questions, at most 2 researchers at once", subtopics=5, max_concurrent=2),
        Scenario("rate-limit", "3 sub-questions, 20% of LLM requests answered 429", 3, 5, rate_429=0.2),
        Scenario("invented-urls", "3 sub-questions, the writer invents 30% of its citations", 3, 5, invent_rate=0.3),
        Scenario(
            "researcher-invents",
            "3 sub-questions, the researchers invent 30% of their citations",
            3,
            5,
            researcher_invent_rate=0.3,
        ),
    )
}
SMOKE = Scenario("smoke", "2 sub-questions, one page read each", subtopics=2, max_concurrent=2, read_top_k=1)
