"""
One run, one lifecycle: the run is opened by one ``before_run`` hook and closed by one ``after_run`` hook.

- :class:`OpenRunHook` checks the question and the run-time inputs in ``hook_context``, opens the run directory's
  journal, makes the :class:`~haystack_deep_research.run.ResearchRun`, puts its view in ``hook_context`` (under
  ``RUN_KEY``) and hands it to the run's tools, then runs :meth:`OpenRunHook.begin` (a subclass adds its own
  opening work there: the deep research agent writes its brief).
- :class:`CloseRunHook` runs :meth:`CloseRunHook.finish` (the deep research agent writes its report there), then
  publishes the run's outputs, writes the run directory and emits ``RunEnded`` — also when ``finish`` raised, before
  the error propagates.
- :class:`BudgetHook` (``before_llm`` of the orchestrator and of every sub-researcher) counts the agent's token usage
  into the run as it grows and stops the agent once the run's budget is spent.

Each agent has exactly one hook at each of these points, so nothing depends on the order of a hook list.
"""

from __future__ import annotations

import uuid
from typing import Any

from haystack import logging
from haystack.components.agents.state import State
from haystack.components.agents.state.state_utils import replace_values
from haystack.core.serialization import default_from_dict, default_to_dict
from haystack.dataclasses import ChatMessage, ChatRole

from haystack_deep_research.errors import ConfigurationError, InvalidQuestionError
from haystack_deep_research.events import EventBus, RunEnded, RunStarted, progress_view
from haystack_deep_research.run.budget import RunBudget
from haystack_deep_research.run.hooks import PhaseHook, RunBound, StatelessHook
from haystack_deep_research.run.phases import Phase
from haystack_deep_research.run.research_run import ResearchRun, RunView
from haystack_deep_research.run.resume import close_journal, open_journal
from haystack_deep_research.state import (
    BRIEF,
    EVENTS_KEY,
    EXIT_REASON,
    HOOK_CONTEXT,
    MESSAGES,
    NOTES,
    PHASE_RUN,
    PROGRESS_KEY,
    RUN_KEY,
    SOURCES,
    STOP_RUN,
    TOKEN_USAGE,
    TOOLS,
    USAGE_BY_PHASE,
    WARNINGS,
)

__all__ = ["BudgetHook", "CloseRunHook", "OpenRunHook", "event_bus", "publish", "question_from", "view_of"]

logger = logging.getLogger(__name__)


def question_from(messages: Any) -> str:
    """
    Find the research question: the text of the last user message.

    :param messages: The messages passed to ``run``.
    :returns: The question, stripped.
    :raises InvalidQuestionError: If ``messages`` is not a list of ``ChatMessage`` or holds no user message with text.
    """
    if isinstance(messages, ChatMessage):
        raise InvalidQuestionError("messages must be a list of ChatMessage; wrap the message: messages=[message].")
    if not isinstance(messages, list) or not all(isinstance(m, ChatMessage) for m in messages):
        raise InvalidQuestionError(
            f"messages must be a list of ChatMessage, for example [ChatMessage.from_user('your question')]; "
            f"got {type(messages).__name__}."
        )
    for message in reversed(messages):
        if message.is_from(ChatRole.USER):
            text = (message.text or "").strip()
            if text:
                return text
            break
    raise InvalidQuestionError(
        "No research question: pass messages=[ChatMessage.from_user('your question')] with a non-empty question."
    )


def view_of(state: State) -> RunView | None:
    """
    :param state: An agent's live State.
    :returns: The agent's view of its run, or ``None`` when it runs outside a run of this library.
    """
    context = state.data.get(HOOK_CONTEXT)
    view = context.get(RUN_KEY) if isinstance(context, dict) else None
    return view if isinstance(view, RunView) else None


def _context(state: State) -> dict[str, Any]:
    context = state.data.get(HOOK_CONTEXT)
    if context is None:
        return {}
    if not isinstance(context, dict):
        raise ConfigurationError(f"hook_context must be a dict; got {type(context).__name__}.")
    return context


def event_bus(run_id: str, context: dict[str, Any]) -> EventBus:
    """
    The event bus of a run, delivering to the callbacks the caller put in ``hook_context``.

    :param run_id: The run's id.
    :param context: The run's ``hook_context``: ``EVENTS_KEY`` (``on_event(event)``) and ``PROGRESS_KEY``
        (``progress(phase, message)``) are read.
    :returns: The bus.
    :raises ConfigurationError: If one of them is not callable.
    """
    subscribers = []
    for key, adapt in ((PROGRESS_KEY, progress_view), (EVENTS_KEY, None)):
        given = context.get(key)
        if given is None:
            continue
        if not callable(given):
            shape = "progress(phase, message)" if key == PROGRESS_KEY else "on_event(event)"
            raise ConfigurationError(f"hook_context[{key!r}] must be a callable {shape}; got {type(given).__name__}.")
        subscribers.append(adapt(given) if adapt is not None else given)
    return EventBus(run_id, subscribers)


def publish(state: State, run: ResearchRun) -> None:
    """
    Set the outputs that mirror the run: ``brief``, ``notes``, ``sources``, ``warnings``, ``usage_by_phase`` and
    ``token_usage`` (all phases).

    :param state: The orchestrator's live State.
    :param run: The run.
    """
    state.set(BRIEF, run.brief, handler_override=replace_values)
    state.set(NOTES, run.notes(), handler_override=replace_values)
    state.set(SOURCES, run.ledger.to_list(), handler_override=replace_values)
    state.set(WARNINGS, run.warnings(), handler_override=replace_values)
    state.set(USAGE_BY_PHASE, run.usage_by_phase(), handler_override=replace_values)
    state.set(TOKEN_USAGE, run.total_usage(), handler_override=replace_values)


class OpenRunHook(PhaseHook):
    """
    ``before_run``: open the run (see the module docstring).

    :param token_budget: Total tokens one run may spend across all phases, 1 to 1,000,000,000, or ``None``.
    :param time_budget: Seconds of wall-clock time one run may take (up to 7 days), or ``None``.
    :raises ConfigurationError: If a budget is out of range.
    """

    allowed_hook_points = ("before_run",)

    def __init__(self, *, token_budget: int | None = None, time_budget: float | None = None) -> None:
        budget = RunBudget(token_budget=token_budget, time_budget=time_budget)
        self.token_budget = budget.token_budget
        self.time_budget = budget.time_budget

    def phase(self, state: State) -> Phase[None]:
        """
        :param state: The agent's live State.
        :returns: The phase.
        :raises InvalidQuestionError: (from the phase) If the messages hold no question; nothing has run yet.
        :raises RunDirError: (from the phase) If the run directory cannot be used.
        :raises ConfigurationError: (from the phase) If a ``hook_context`` entry has the wrong type.
        """
        question = question_from(state.data.get(MESSAGES))
        context = _context(state)
        bus = event_bus(uuid.uuid4().hex, context)
        journal = yield from open_journal(context, question)
        budget = RunBudget(token_budget=self.token_budget, time_budget=self.time_budget)
        run = ResearchRun(question=question, budget=budget, journal=journal, events=bus)
        view = run.view()
        state.set(HOOK_CONTEXT, {**context, RUN_KEY: view}, handler_override=replace_values)
        shared = [
            getattr(tool, "name", repr(tool))
            for tool in state.data.get(TOOLS) or []
            if isinstance(tool, RunBound) and not tool.attach_run(view)
        ]
        if shared:
            logger.warning(
                "The tools {tools} are shared by every run of this agent, so they work without the run (nothing they "
                "read is recorded). Put them in a RunToolset.",
                tools=shared,
            )
        run.events.emit(RunStarted(phase=PHASE_RUN, question=question))
        yield from self.begin(state, run)
        publish(state, run)

    def begin(self, state: State, run: ResearchRun) -> Phase[None]:
        """
        Opening work of a subclass, after the run is open.

        :param state: The agent's live State.
        :param run: The run.
        :returns: The phase.
        """
        yield from ()

    def to_dict(self) -> dict[str, Any]:
        """:returns: The serialized hook."""
        return default_to_dict(self, token_budget=self.token_budget, time_budget=self.time_budget)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Any:
        """
        :param data: What ``to_dict`` returned.
        :returns: The hook.
        """
        return default_from_dict(cls, data)


class CloseRunHook(PhaseHook):
    """``after_run``: close the run (see the module docstring); nothing happens outside a run of this library."""

    allowed_hook_points = ("after_run",)

    def phase(self, state: State) -> Phase[None]:
        """
        :param state: The agent's live State.
        :returns: The phase.
        """
        view = view_of(state)
        if view is None:
            return
        run = view.run
        view.count_usage(state.data.get(TOKEN_USAGE))
        failure: Exception | None = None
        try:
            yield from self.finish(state, run)
        except Exception as error:  # the run is closed first; then the error propagates
            failure = error
        yield from close_journal(state, run)
        publish(state, run)
        ended = RunEnded(
            phase=PHASE_RUN,
            exit_reason=str(state.data.get(EXIT_REASON) or ""),
            notes=len(run.notes()),
            sources=len(run.ledger),
            warnings=len(run.warnings()),
        )
        run.events.emit(ended)
        if failure is not None:
            raise failure

    def finish(self, state: State, run: ResearchRun) -> Phase[None]:
        """
        Closing work of a subclass, before the run is closed.

        :param state: The agent's live State.
        :param run: The run.
        :returns: The phase.
        """
        yield from ()

    def to_dict(self) -> dict[str, Any]:
        """:returns: The serialized hook."""
        return default_to_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Any:
        """
        :param data: What ``to_dict`` returned.
        :returns: The hook.
        """
        return default_from_dict(cls, data)


class BudgetHook(StatelessHook):
    """
    ``before_llm`` of the orchestrator and of every sub-researcher: count the agent's new token usage into the run,
    and stop the agent once the run's token or time budget is spent (``stop_run`` becomes its ``exit_reason``).
    """

    allowed_hook_points = ("before_llm",)

    def run(self, state: State) -> None:
        """
        :param state: The agent's live State.
        """
        view = view_of(state)
        if view is None:
            return
        view.count_usage(state.data.get(TOKEN_USAGE))
        if (reason := view.spent()) is not None:
            state.set(STOP_RUN, reason)
