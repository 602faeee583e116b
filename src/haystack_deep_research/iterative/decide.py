"""
Each round's routing (:class:`RoundRouter`: ``search`` an update's stale topics, ``done`` once a budget is spent or
``depth`` rounds ran, else ``decide``) and analysis (:class:`DecideStep`: the seed's decision
``{"nextSearchTopic": ..., "shouldContinue": ...}``, validated, retried once, repeats refused by :class:`TopicFilter`).
See docs/iterative.md for how it copes with what models do.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

from haystack import component
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from haystack_deep_research import _checks
from haystack_deep_research._prompts import ANALYSIS, ANALYSIS_RETRY, fence, render_chat
from haystack_deep_research._serialization import InitSerialized
from haystack_deep_research._untrusted.json_text import extract_json_object
from haystack_deep_research.events import SearchDecided, TopicRefused
from haystack_deep_research.iterative.iteration import IterationRun
from haystack_deep_research.run._phases import Phase, UsesModels, ask_counted, drive, drive_async, failure
from haystack_deep_research.state import (
    EXIT_ANALYSIS_STOPPED,
    EXIT_DECISION_FAILED,
    EXIT_DEPTH_REACHED,
    EXIT_NO_NEW_TOPICS,
    EXIT_TIME_BUDGET,
    PHASE_ANALYZE,
)

__all__ = ["DEFAULT_SIMILARITY", "DecideStep", "RoundRouter", "TopicFilter", "normalize_topic"]


DEFAULT_SIMILARITY = 0.88
"""The similarity (0 to 1) from which a proposed topic counts as a repeat."""

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
# fmt: off
_FUNCTION_WORDS = frozenset({
    "a", "about", "an", "and", "are", "as", "at", "be", "by", "do", "does", "for", "from", "how", "in", "into", "is",
    "it", "its", "of", "on", "or", "the", "to", "what", "when", "where", "which", "who", "why", "with",
})
# fmt: on


def normalize_topic(topic: str) -> str:
    """A topic's comparison form: its content words (NFKC, case folded, punctuation and function words dropped),
    each once, sorted."""
    from rapidfuzz import utils  # imported when the iterative agent first compares topics

    words = utils.default_process(unicodedata.normalize("NFKC", topic).casefold()).split()
    return " ".join(sorted({word for word in words if word not in _FUNCTION_WORDS}))


class TopicFilter:
    """
    The topics a run searched, and the check of new proposals against them: a proposal repeating a known topic in all
    but wording (content words equal, or a rapidfuzz similarity of at least ``similarity``; numbers must agree) is
    refused (see docs/iterative.md). Paraphrases in other words are left to the analysis model.

    :param searched: The topics already searched.
    :param similarity: From this similarity (0 to 1) on, a proposal counts as a repeat.
    """

    def __init__(self, searched: list[str] | tuple[str, ...], *, similarity: float = DEFAULT_SIMILARITY) -> None:
        self.similarity = similarity
        self._known = [normalize_topic(topic) for topic in searched]

    def repeats(self, topic: str) -> bool:
        """Whether a proposed topic repeats a known one."""
        from rapidfuzz import fuzz  # normalized Indel similarity, 0 to 100

        candidate = normalize_topic(topic)
        if not candidate:
            return True
        numbers = set(_NUMBER.findall(candidate))
        for known in self._known:
            if numbers != set(_NUMBER.findall(known)):
                continue
            if candidate == known or fuzz.ratio(candidate, known) >= self.similarity * 100:
                return True
        return False

    def split(self, proposed: list[str]) -> tuple[list[str], list[str]]:
        """``(new, refused)`` in the proposed order; a kept one becomes known, so a later repeat of it is refused."""
        new, refused = [], []
        for topic in proposed:
            if self.repeats(topic):
                refused.append(topic)
            else:
                new.append(topic)
                self._known.append(normalize_topic(topic))
        return new, refused


class SearchDecision(BaseModel):
    """One decision of the analysis model."""

    model_config = ConfigDict(extra="ignore")

    nextSearchTopic: str | list[str] | None = None
    """The next topic to search, a list of topics to search at once, or ``None``."""
    shouldContinue: bool
    """Whether to search again; when ``True`` at least one non-blank topic is required."""

    @field_validator("nextSearchTopic")
    @classmethod
    def _clean(cls, value: str | list[str] | None) -> str | list[str] | None:
        if isinstance(value, list):
            return [" ".join(topic.split()) for topic in value if topic.strip()]
        return " ".join(value.split()) if isinstance(value, str) else None

    @model_validator(mode="after")
    def _topic_when_continuing(self) -> SearchDecision:
        if self.shouldContinue and not self.topics:
            raise ValueError("shouldContinue is true, so nextSearchTopic must name at least one non-empty topic")
        return self

    @property
    def topics(self) -> list[str]:
        """The topics to search (none when the decision is to stop)."""
        value = self.nextSearchTopic
        topics = value if isinstance(value, list) else [value] if value else []
        return [topic for topic in topics if topic]


def parse_decision(text: str) -> tuple[SearchDecision | None, list[dict[str, Any]]]:
    """``(decision, [])`` read from the analysis model's reply, or ``(None, errors)`` with pydantic's list of errors
    (or one error saying that the reply holds no JSON object)."""
    try:
        data = extract_json_object(text)
    except ValueError as error:
        return None, [{"type": "json_invalid", "loc": [], "msg": f"{error}; reply with one JSON object"}]
    try:
        return SearchDecision.model_validate(data), []
    except ValidationError as error:
        return None, json.loads(error.json(include_url=False, include_input=False))


@component
class DecideStep(UsesModels, InitSerialized):
    """
    The analysis step of each round: the ``chat_generator`` (``analysis_llm``) decides the round's topics, at most
    ``max_parallel_searches`` (1 to 10), of round ``k`` of ``depth`` (1 to 50); ``similarity`` is ``TopicFilter``'s.
    """

    _model_attributes = ("chat_generator",)

    def __init__(
        self,
        *,
        chat_generator: Any,
        depth: int = 3,
        max_parallel_searches: int = 10,
        similarity: float = DEFAULT_SIMILARITY,
    ) -> None:
        self.chat_generator = _checks.chat_generator("analysis_llm", chat_generator, needs_tools=False)
        self.depth = _checks.int_in_range("depth", depth, 1, 50)
        self.max_parallel_searches = _checks.int_in_range("max_parallel_searches", max_parallel_searches, 1, 10)
        self.similarity = _checks.number_in_range("topic_similarity", similarity, 0.0, 1.0)

    @component.output_types(search=IterationRun, done=IterationRun)
    def run(self, iteration: IterationRun) -> dict[str, IterationRun]:
        """:returns: ``search`` (the round's topics in ``planned``) or ``done`` (with its ``exit_reason``)."""
        return drive(self.phase(iteration))

    @component.output_types(search=IterationRun, done=IterationRun)
    async def run_async(self, iteration: IterationRun) -> dict[str, IterationRun]:
        """As :meth:`run`, on the event loop."""
        return await drive_async(self.phase(iteration))

    def _ask(
        self, iteration: IterationRun, refused: list[str], previous: str = "", errors: str = ""
    ) -> Phase[tuple[SearchDecision | None, str, str]]:
        run = iteration.run
        prompt = render_chat(
            ANALYSIS_RETRY if previous else ANALYSIS,
            question=run.question,
            round=iteration.rounds + 1,
            depth=self.depth,
            max_topics=self.max_parallel_searches,
            topics=[fence(topic) for topic in iteration.topics],
            findings=[fence(note) for note in run.notes()],
            since=iteration.update.since if iteration.update is not None else "",
            refused=[fence(topic) for topic in refused],
            previous=fence(previous),
            errors=errors,
        )
        asked = yield from ask_counted(run, PHASE_ANALYZE, self.chat_generator, prompt, role="analysis")
        if not asked.text:
            return None, "", failure(asked.error)
        decision, found = parse_decision(asked.text)
        return decision, asked.text, json.dumps(found, ensure_ascii=False, indent=1) if found else ""

    def _decision(self, iteration: IterationRun, refused: list[str]) -> Phase[SearchDecision | None]:
        run = iteration.run
        decision, reply, errors = yield from self._ask(iteration, refused)
        if decision is None and reply:
            decision, reply, errors = yield from self._ask(iteration, refused, previous=reply, errors=errors)
        if decision is None:
            why = " ".join(errors.split()) if reply else errors
            run.warn(PHASE_ANALYZE, f"the analysis model gave no valid decision ({why}); the search stops here")
        return decision

    def phase(self, iteration: IterationRun) -> Phase[dict[str, IterationRun]]:
        run, number = iteration.run, iteration.rounds + 1
        refused: list[str] = []
        for _ in range(2):  # the first answer, and once more when it only repeats searched topics
            decision = yield from self._decision(iteration, refused)
            if decision is None:
                failed = EXIT_TIME_BUDGET if run.out_of_time() else EXIT_DECISION_FAILED
                return {"done": iteration.but(exit_reason=failed)}
            if not decision.shouldContinue:
                run.events.emit(SearchDecided(phase=PHASE_ANALYZE, round=number))
                return {"done": iteration.but(exit_reason=EXIT_ANALYSIS_STOPPED)}
            errors = [topic for topic in decision.topics if run.searches.echoes_error(topic)]
            if errors:  # a tool's or model's error text is never a topic, nor a heading of the report
                run.warn(PHASE_ANALYZE, f"the analysis proposed {len(errors)} error message(s) as topics; refused")
            proposed = [topic for topic in decision.topics if topic not in errors]
            new, repeats = TopicFilter(iteration.topics, similarity=self.similarity).split(proposed)
            for topic in repeats:
                run.events.emit(TopicRefused(phase=PHASE_ANALYZE, topic=topic))
            if new:
                if len(new) > self.max_parallel_searches:
                    run.warn(
                        PHASE_ANALYZE,
                        f"the analysis proposed {len(new)} topics; only the first {self.max_parallel_searches} "
                        "(max_parallel_searches) are searched",
                    )
                    new = new[: self.max_parallel_searches]
                run.events.emit(
                    SearchDecided(phase=PHASE_ANALYZE, topics=tuple(new), should_continue=True, round=number)
                )
                return {"search": iteration.but(planned=tuple(new))}
            refused = repeats
        run.warn(PHASE_ANALYZE, "the analysis proposed only topics already searched, twice; the search stops here")
        return {"done": iteration.but(exit_reason=EXIT_NO_NEW_TOPICS)}


@component
class RoundRouter(InitSerialized):
    """Route a run before a round of its ``depth`` (1 to 50): ``decide``, ``search`` (a re-check) or ``done``."""

    def __init__(self, *, depth: int = 3) -> None:
        self.depth = _checks.int_in_range("depth", depth, 1, 50)

    @component.output_types(decide=IterationRun, search=IterationRun, done=IterationRun)
    def run(self, iteration: IterationRun) -> dict[str, IterationRun]:
        """:returns: Exactly one of ``decide``, ``search`` (an update's re-check, in ``planned``) or ``done``."""
        run = iteration.run
        if iteration.recheck:
            return {"search": iteration.but(planned=iteration.recheck)}
        if (spent := run.spent()) is not None:  # the run warns once, with a BudgetReached event
            return {"done": iteration.but(exit_reason=spent)}
        if iteration.rounds >= self.depth:
            return {"done": iteration.but(exit_reason=EXIT_DEPTH_REACHED)}
        return {"decide": iteration}
