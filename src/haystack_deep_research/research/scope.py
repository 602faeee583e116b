"""
The deep research agent's ``before_run`` hook: :class:`ScopeHook` opens the run, then the scope model turns the
question into a research brief that replaces the conversation (see docs/how-it-works.md). A brief already known
(journaled, or ``RunInputs(brief=...)``) is used without a call; with ``clarify=True`` the model may ask one clarifying
question instead (see docs/clarify-and-report-types.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from haystack.components.agents.state import State
from haystack.components.agents.state.state_utils import replace_values
from haystack.components.generators.chat.types import ChatGenerator
from haystack.core.serialization import default_from_dict, default_to_dict
from haystack.dataclasses import ChatMessage, ChatRole
from haystack.utils.deserialization import deserialize_component_inplace

from haystack_deep_research import _checks
from haystack_deep_research._prompts import (
    CLARIFIED_QUESTION,
    MAX_CLARIFICATION_CHARS,
    SCOPE,
    SCOPE_CLARIFIED,
    SCOPE_CLARIFY,
    render_chat,
    render_text,
)
from haystack_deep_research._serialization import init_parameters
from haystack_deep_research._untrusted.json_text import extract_json_object
from haystack_deep_research.events import PhaseEnded, PhaseStarted
from haystack_deep_research.evidence.clock import today
from haystack_deep_research.evidence.text import clean_text
from haystack_deep_research.run import ResearchRun
from haystack_deep_research.run._lifecycle import OpenRunHook, inputs_of, restore
from haystack_deep_research.run._phases import Phase, ask_counted, failure
from haystack_deep_research.settings import Price
from haystack_deep_research.state import (
    CLARIFICATION,
    EXIT_CLARIFICATION_NEEDED,
    HOOK_CONTEXT,
    MESSAGES,
    PHASE_SCOPE,
    STOP_RUN,
)

__all__ = ["ScopeHook"]

MAX_CLARIFICATION_TURNS = 5
"""The most clarifying questions and answers of a conversation the scope model reads (the latest ones)."""


@dataclass(frozen=True)
class _Conversation:
    """The research question and the clarifying questions answered since (oldest first)."""

    question: str
    clarifications: list[dict[str, str]]


def _conversation(messages: Any, question: str) -> _Conversation:
    """The first user message is the question, each assistant turn followed by a user turn a clarifying question and
    its answer; a conversation without an assistant turn is the run's question."""
    turns = [m for m in messages or [] if isinstance(m, ChatMessage) and not m.is_from(ChatRole.SYSTEM) and m.text]
    if not any(m.is_from(ChatRole.ASSISTANT) for m in turns):
        return _Conversation(question, [])
    first = next((m for m in turns if m.is_from(ChatRole.USER)), None)
    start = turns.index(first) + 1 if first is not None else 0
    pairs = [
        {"question": clean_text(asked.text or "").strip(), "answer": clean_text(answer.text or "").strip()}
        for asked, answer in zip(turns[start:], turns[start + 1 :], strict=False)
        if asked.is_from(ChatRole.ASSISTANT) and answer.is_from(ChatRole.USER)
    ]
    opening = clean_text(first.text or "").strip() if first is not None else question
    return _Conversation(opening or question, pairs[-MAX_CLARIFICATION_TURNS:])


def _clarify_reply(reply: str) -> tuple[str | None, str]:
    """``(clarifying question, None)`` or ``(None, brief)`` of a clarify-mode scope reply: a JSON object's
    ``clarification`` or ``brief``; any other reply is the brief as it is."""
    try:
        data = extract_json_object(reply)
    except ValueError:
        return None, reply  # prose: the brief itself
    if not isinstance(data, dict):
        return None, reply
    brief, asked = data.get("brief"), data.get("clarification")
    if isinstance(brief, str) and brief.strip():
        return None, brief.strip()
    if isinstance(asked, str) and clean_text(asked).strip():
        return clean_text(asked).strip()[:MAX_CLARIFICATION_CHARS], reply
    return None, reply


class ScopeHook(OpenRunHook):
    """
    ``before_run``: open the run (the budget parameters are :class:`OpenRunHook`'s), then question → research brief,
    which replaces the conversation; with ``clarify``, perhaps one clarifying question instead. A conversation holding
    no question raises ``InvalidQuestionError`` before any model is called.
    """

    _model_attributes = ("chat_generator",)

    def __init__(
        self,
        *,
        chat_generator: ChatGenerator,
        token_budget: int | None = None,
        time_budget: float | None = None,
        cost_budget: float | None = None,
        phase_models: dict[str, str] | None = None,
        prices: dict[str, Price] | None = None,
        clarify: bool = False,
    ) -> None:
        super().__init__(
            token_budget=token_budget,
            time_budget=time_budget,
            cost_budget=cost_budget,
            phase_models=phase_models,
            prices=prices,
        )
        self.chat_generator = _checks.chat_generator("chat_generator", chat_generator, needs_tools=False)
        self.clarify = _checks.boolean("clarify", clarify)

    def question_of(self, messages: Any) -> str:
        """The run's question; with ``clarify``, a conversation of answered clarifying questions keeps the question it
        opened with (so a run directory of the first turn is the same run)."""
        last = super().question_of(messages)
        return _conversation(messages, last).question if self.clarify else last

    def begin(self, state: State, run: ResearchRun) -> Phase[None]:
        """Write the brief (or take the one already known), make it the conversation, restore earlier work."""
        context = state.data.get(HOOK_CONTEXT) or {}
        state.set(CLARIFICATION, "", handler_override=replace_values)
        given = run.journal.brief if run.journal is not None and run.journal.brief else inputs_of(context).brief
        messages = list(state.data.get(MESSAGES) or [])
        if isinstance(given, str) and given.strip():
            brief = given.strip()
        else:
            talk = _conversation(messages, run.question)
            clarify = self.clarify and not talk.clarifications  # one clarifying question per conversation
            run.events.emit(PhaseStarted(phase=PHASE_SCOPE, detail="writing the research brief"))
            if talk.clarifications:
                prompt = render_chat(
                    SCOPE_CLARIFIED, today=today(), question=talk.question, clarifications=talk.clarifications
                )
            else:
                prompt = render_chat(SCOPE_CLARIFY if clarify else SCOPE, today=today(), question=talk.question)
            scoped = yield from ask_counted(run, PHASE_SCOPE, self.chat_generator, prompt, role="scope")
            asked, brief = _clarify_reply(scoped.text) if clarify and scoped.text else (None, scoped.text)
            if asked is not None:
                self._ask_user(state, run, messages, asked)
                return
            if not brief:
                run.warn(
                    PHASE_SCOPE, f"the scope model failed ({failure(scoped.error)}); the question serves as the brief"
                )
                brief = render_text(CLARIFIED_QUESTION, question=talk.question, clarifications=talk.clarifications)
        run.brief = brief
        system = [m for m in messages if m.is_from(ChatRole.SYSTEM)]
        state.set(MESSAGES, [*system, ChatMessage.from_user(brief)], handler_override=replace_values)
        run.events.emit(PhaseEnded(phase=PHASE_SCOPE, detail="brief ready"))
        yield from restore(state, run)

    @staticmethod
    def _ask_user(state: State, run: ResearchRun, messages: list[ChatMessage], asked: str) -> None:
        """Stop the run before the orchestrator's first call, with the clarifying question as its outcome."""
        run.brief = ""  # no brief is written until the question is clear
        state.set(CLARIFICATION, asked, handler_override=replace_values)
        state.set(MESSAGES, [*messages, ChatMessage.from_assistant(asked)], handler_override=replace_values)
        state.set(STOP_RUN, EXIT_CLARIFICATION_NEEDED)
        run.events.emit(PhaseEnded(phase=PHASE_SCOPE, detail="a clarifying question for the user"))

    def to_dict(self) -> dict[str, Any]:
        """:returns: The serialized hook."""
        return default_to_dict(self, **init_parameters(self, **self.run_parameters()))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ScopeHook:
        deserialize_component_inplace(data["init_parameters"], key="chat_generator")
        cls.run_parameters_from_dict(data["init_parameters"])
        return default_from_dict(cls, data)
