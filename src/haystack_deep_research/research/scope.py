"""
The deep research agent's ``before_run`` hook: open the run and turn the question into a research brief.

:class:`ScopeHook` is the run's :class:`~haystack_deep_research.run.OpenRunHook` plus the scope phase: once the run is
open, the scope model turns the question into a brief, which replaces the conversation the orchestrator sees. A
brief already known (journaled by an earlier attempt of the run, or passed in ``hook_context`` under ``BRIEF_KEY``) is
used without calling the model, and a failing scope model makes the question the brief, with a warning. Then the
run directory's earlier work is restored (see :mod:`haystack_deep_research.run.resume`).
"""

from __future__ import annotations

from typing import Any

from haystack.components.agents.state import State
from haystack.components.agents.state.state_utils import replace_values
from haystack.components.generators.chat.types import ChatGenerator
from haystack.core.serialization import component_to_dict, default_from_dict, default_to_dict
from haystack.dataclasses import ChatMessage, ChatRole
from haystack.utils.deserialization import deserialize_component_inplace

from haystack_deep_research import _checks
from haystack_deep_research._clock import today
from haystack_deep_research.events import PhaseEnded, PhaseStarted
from haystack_deep_research.prompts import SCOPE, render_chat
from haystack_deep_research.run import OpenRunHook, Phase, Price, ResearchRun, ask, failure
from haystack_deep_research.run.resume import restore
from haystack_deep_research.state import BRIEF_KEY, HOOK_CONTEXT, MESSAGES, PHASE_SCOPE

__all__ = ["ScopeHook"]


class ScopeHook(OpenRunHook):
    """
    ``before_run``: open the run, then question → research brief, which replaces the conversation.

    Raises :class:`~haystack_deep_research.errors.InvalidQuestionError` before any model is called when the messages
    hold no question.

    :param chat_generator: The scope model.
    :param token_budget: Total tokens one run may spend across all phases, 1 to 1,000,000,000, or ``None``.
    :param time_budget: Seconds of wall-clock time one run may take (up to 7 days), or ``None``.
    :param cost_budget: US dollars one run's model calls may cost, or ``None``.
    :param phase_models: The model each phase of the run calls, by phase name (what its usage costs).
    :param prices: Model prices on top of the defaults.
    :raises ConfigurationError: If a parameter is invalid.
    """

    def __init__(
        self,
        *,
        chat_generator: ChatGenerator,
        token_budget: int | None = None,
        time_budget: float | None = None,
        cost_budget: float | None = None,
        phase_models: dict[str, str] | None = None,
        prices: dict[str, Price] | None = None,
    ) -> None:
        super().__init__(
            token_budget=token_budget,
            time_budget=time_budget,
            cost_budget=cost_budget,
            phase_models=phase_models,
            prices=prices,
        )
        self.chat_generator = _checks.chat_generator("chat_generator", chat_generator, needs_tools=False)

    def _used_models(self) -> list[Any]:
        return [self.chat_generator]

    def begin(self, state: State, run: ResearchRun) -> Phase[None]:
        """
        Write the brief (or take the one already known), make it the conversation, restore earlier work.

        :param state: The orchestrator's live State.
        :param run: The run.
        :returns: The phase.
        """
        context = state.data.get(HOOK_CONTEXT) or {}
        given = run.journal.brief if run.journal is not None and run.journal.brief else context.get(BRIEF_KEY)
        if isinstance(given, str) and given.strip():
            brief = given.strip()
        else:
            run.events.emit(PhaseStarted(phase=PHASE_SCOPE, detail="writing the research brief"))
            prompt = render_chat(SCOPE, today=today(), question=run.question)
            [scoped] = yield [
                ask(
                    self.chat_generator,
                    prompt,
                    role="scope",
                    streaming_callback=run.streaming_callback,
                    budget=run.budget,
                )
            ]
            if scoped.reply is not None:
                run.record_usage(PHASE_SCOPE, scoped.reply.meta.get("usage"))
            brief = scoped.text
            if not brief:
                run.warn(
                    PHASE_SCOPE, f"the scope model failed ({failure(scoped.error)}); the question serves as the brief"
                )
                brief = run.question
        run.brief = brief
        system = [m for m in state.data.get(MESSAGES) or [] if m.is_from(ChatRole.SYSTEM)]
        state.set(MESSAGES, [*system, ChatMessage.from_user(brief)], handler_override=replace_values)
        run.events.emit(PhaseEnded(phase=PHASE_SCOPE, detail="brief ready"))
        yield from restore(state, run)

    def to_dict(self) -> dict[str, Any]:
        """:returns: The serialized hook."""
        return default_to_dict(
            self,
            chat_generator=component_to_dict(obj=self.chat_generator, name="chat_generator"),
            **self.run_parameters(),
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ScopeHook:
        """
        :param data: What ``to_dict`` returned.
        :returns: The hook.
        """
        deserialize_component_inplace(data["init_parameters"], key="chat_generator")
        cls.run_parameters_from_dict(data["init_parameters"])
        return default_from_dict(cls, data)
