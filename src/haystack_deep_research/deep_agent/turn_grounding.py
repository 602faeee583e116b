"""
Per-turn grounding: inside the deep agent's loop, each answer is judged against the evidence its tool calls returned
(the run's :class:`EvidenceTrail`), sent back for more research below the threshold, then accepted with its
unsupported claims dropped (see docs/deep-agent.md). An answer given without any tool evidence is accepted as it is.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, replace
from typing import Any

from haystack_deep_research import _checks
from haystack_deep_research._serialization import InitSerialized
from haystack_deep_research.events import Notice
from haystack_deep_research.report.assessment import Claim, Judgement, judge_claims, uncited_claims
from haystack_deep_research.run import RunView
from haystack_deep_research.run._phases import Phase, UsesModels
from haystack_deep_research.state import PHASE_GROUND

__all__ = ["TRAIL_RESOURCE", "EvidenceTrail", "Grounded", "TurnGrounding", "answer_claims"]

TRAIL_RESOURCE = "evidence_trail"
TRAIL_URL = "evidence:tool-results"
MAX_TRAIL_CHARS = 100_000


@dataclass(frozen=True)
class _Trail:
    url: str
    title: str
    text: str


class EvidenceTrail:
    """What the tool calls of a run returned, in order; the judge reads the latest ``MAX_TRAIL_CHARS`` of it."""

    def __init__(self) -> None:
        self._entries: list[str] = []
        self._lock = threading.Lock()

    def add(self, tool: str, arguments: dict[str, Any], result: str) -> None:
        entry = f"[{tool} {json.dumps(arguments, ensure_ascii=False, default=str)}]\n{result}"
        with self._lock:
            self._entries.append(entry)

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def get(self, url: str) -> _Trail | None:
        """The trail as one source, or ``None`` when empty or asked for another address than its own."""
        with self._lock:
            text = "\n\n".join(self._entries)[-MAX_TRAIL_CHARS:]
        return _Trail(TRAIL_URL, "the evidence the tool calls returned", text) if text and url == TRAIL_URL else None


def answer_claims(text: str) -> list[Claim]:
    """An answer's claims, cited or not (see :func:`~haystack_deep_research.report.assessment.is_claim`), each judged
    against the trail."""
    return [replace(claim, urls=(TRAIL_URL,)) for claim in uncited_claims(text, ())]


@dataclass(frozen=True)
class Grounded:
    """The verdict on one answer: the judge's, whether it goes back for research, the sentences to drop from it."""

    judgement: Judgement
    send_back: bool
    dropped: frozenset[str]


class TurnGrounding(UsesModels, InitSerialized):
    """
    Judge each answer against the run's evidence trail with ``judge_llm`` (``None``: the agent's own model); below
    ``threshold`` (0 to 1) it goes back for more research, at most ``max_rounds`` times (0 to 5).
    """

    _model_attributes = ("judge_llm",)

    def __init__(self, *, judge_llm: Any = None, threshold: float = 0.65, max_rounds: int = 2) -> None:
        if judge_llm is not None:
            _checks.chat_generator("judge_llm", judge_llm, needs_tools=False)
        self.judge_llm = judge_llm
        self.threshold = _checks.number_in_range("threshold", threshold, 0.0, 1.0, include_low=True)
        self.max_rounds = _checks.int_in_range("max_rounds", max_rounds, 0, 5)

    def review(self, view: RunView, answer: str, rounds: int, model: Any) -> Phase[Grounded]:
        """The verdict on ``answer``; ``rounds`` counts the answers sent back already, ``model`` judges without a
        ``judge_llm``."""
        trail = view.run.resource(TRAIL_RESOURCE, EvidenceTrail)
        claims = answer_claims(answer)
        judged = yield from judge_claims(
            claims, trail, self.judge_llm or model, streaming_callback=view.run.streaming_callback
        )
        view.record_usage(PHASE_GROUND, judged.usage)
        for warning in judged.warnings:
            view.warn(PHASE_GROUND, warning)
        unsupported = frozenset(claim.sentence for claim in judged.unsupported)
        send_back = judged.score < self.threshold and rounds < self.max_rounds
        detail = f"grounding score {judged.score:.2f} over {len(claims)} claim(s) against {len(trail)} tool result(s)"
        action = "; sent back for more research" if send_back else ""
        view.emit(Notice(phase=PHASE_GROUND, text=detail + action))
        if unsupported and not send_back:
            view.warn(PHASE_GROUND, f"{len(unsupported)} claim(s) unsupported by the tool evidence were dropped")
        return Grounded(judgement=judged, send_back=send_back, dropped=frozenset() if send_back else unsupported)
