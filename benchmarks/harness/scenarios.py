"""The scenarios every library runs, and the world settings they share."""

from __future__ import annotations

from dataclasses import dataclass

from benchmarks.sim.corpus import Corpus, build_corpus
from benchmarks.sim.llm_server import LatencyModel
from benchmarks.sim.realsize import build_real_corpus

PREFILL_TOKENS_PER_S = 8_000.0
"""The prompt-reading speed of the scenarios that model it (each input token adds 1/8,000 s to the first token)."""
SCALE_TIMEOUT_S = 30.0
"""The chat generators' client timeout in the scale scenarios: a call that takes longer is abandoned and retried."""


@dataclass(frozen=True)
class Scenario:
    """
    One research task and the conditions it runs under.

    ``tokens_per_s`` and ``prefill_tokens_per_s`` override the campaign's latency model when set. ``llm_timeout_s``
    and ``llm_max_retries`` are what both libraries' chat generators get; ``None`` leaves the generator's own default
    (Haystack's: 30 s and 5 retries, or the ``OPENAI_TIMEOUT`` / ``OPENAI_MAX_RETRIES`` environment variables).
    """

    name: str
    title: str
    subtopics: int
    max_concurrent: int
    rate_429: float = 0.0
    invent_rate: float = 0.0
    researcher_invent_rate: float = 0.0
    read_top_k: int = 2
    tokens_per_s: float | None = None
    prefill_tokens_per_s: float = 0.0
    llm_timeout_s: float | None = 60.0
    llm_max_retries: int | None = 5
    corpus: str = "short"
    """``"short"``: the pages of :mod:`benchmarks.sim.corpus`; ``"real-size"``: :mod:`benchmarks.sim.realsize`'s."""
    unreadable_first: bool = False
    """The first page of every facet (the first result of every search) answers 404: what a library keeps of it is
    what its search result's snippet said."""

    def latency(self, base: LatencyModel) -> LatencyModel:
        """
        :param base: The campaign's latency model.
        :returns: The latency model this scenario runs under.
        """
        if base.ttft_s == 0 and base.tokens_per_s == 0:
            return base  # the overhead runs: no model time at all
        tokens_per_s = self.tokens_per_s if self.tokens_per_s is not None else base.tokens_per_s
        return LatencyModel(base.ttft_s, tokens_per_s, self.prefill_tokens_per_s or base.prefill_tokens_per_s)


SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario("three", "3 sub-questions", subtopics=3, max_concurrent=5),
        Scenario(
            "three-prefill",
            "3 sub-questions, prompt reading modelled (8,000 input tokens/s)",
            subtopics=3,
            max_concurrent=5,
            prefill_tokens_per_s=PREFILL_TOKENS_PER_S,
        ),
        Scenario(
            "real-three",
            "3 sub-questions over real-size pages (8-20 KB of article inside 30-40 KB of site furniture), prompt "
            "reading modelled",
            subtopics=3,
            max_concurrent=5,
            prefill_tokens_per_s=PREFILL_TOKENS_PER_S,
            corpus="real-size",
        ),
        Scenario(
            "unreadable-first",
            "3 sub-questions, the first result of every search is a page that answers 404",
            subtopics=3,
            max_concurrent=5,
            unreadable_first=True,
        ),
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
        Scenario(
            "scale-20",
            "20 sub-questions, 10 researchers at once, prompt reading modelled, 30 s client timeout",
            subtopics=20,
            max_concurrent=10,
            prefill_tokens_per_s=PREFILL_TOKENS_PER_S,
            llm_timeout_s=SCALE_TIMEOUT_S,
        ),
        Scenario(
            "scale-50",
            "50 sub-questions, 10 researchers at once, prompt reading modelled, 30 s client timeout",
            subtopics=50,
            max_concurrent=10,
            prefill_tokens_per_s=PREFILL_TOKENS_PER_S,
            llm_timeout_s=SCALE_TIMEOUT_S,
        ),
        Scenario(
            "timeout-20",
            "20 sub-questions, 10 at once, 150 output tokens/s, generators with Haystack's default timeout and retries",
            subtopics=20,
            max_concurrent=10,
            tokens_per_s=150.0,
            prefill_tokens_per_s=PREFILL_TOKENS_PER_S,
            llm_timeout_s=None,
            llm_max_retries=None,
        ),
    )
}


def corpus_of(name: str, seed: int) -> Corpus:
    """
    :param name: A scenario's ``corpus``.
    :param seed: The corpus seed.
    :returns: The pages that scenario's world serves.
    """
    return build_real_corpus(seed=seed) if name == "real-size" else build_corpus(seed=seed)


SMOKE = Scenario("smoke", "2 sub-questions, one page read each", subtopics=2, max_concurrent=2, read_top_k=1)
SCALE_SERIES = ("three-prefill", "scale-20", "scale-50")
"""The scenarios of the scale table, smallest first: the same world with ever more sub-questions."""
HEADLINE = "real-three"
"""The scenario the cost, wall and facts targets are set on: real-size pages, prompt reading modelled."""
SHORT_SUITE = ("three",)
"""The short-corpus scenario whose figures must not get worse than the reference (see :mod:`.targets`)."""
