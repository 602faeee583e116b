"""
One run, one lifecycle, for every shape: one opener and one closer.

- :meth:`OpenRunHook.open_run` opens every run (the Agent shapes in their ``before_run`` hook, the Pipeline shapes
  before their Pipeline runs): it checks the per-run inputs (:class:`~haystack_deep_research.run.context.RunInputs`),
  opens the run directory's journal, makes the :class:`~haystack_deep_research.run.ResearchRun` with its default brief
  (the brief given, else the question), hands it to ``on_run_opened`` and emits ``RunStarted``.
- :func:`close_run` closes every run (the Agent shapes in their ``after_run`` hook, the Pipeline shapes in their
  finish step): it closes the run's resources (its MCP connections), writes the run directory's outcome and releases
  it, counts the usage, emits ``RunEnded`` and returns the shared outputs.
- :class:`OpenRunHook` (``before_run``) opens the run of an Agent shape, makes it the current run
  (:func:`~haystack_deep_research.run.context.current_run`) until the agent's run returns, puts the agent's view of it
  in ``hook_context`` (under ``RUN_KEY``), hands it to the run's tools, then runs :meth:`OpenRunHook.begin` (a subclass
  adds its own opening work there: the deep research agent writes its brief, the deep agent reads its memory files).
- :class:`CloseRunHook` (``after_run``) runs :meth:`CloseRunHook.finish` (the deep research agent writes its report
  there), then :func:`close_run` — also when ``finish`` raised, before the error propagates.
- :class:`BudgetHook` (``before_llm`` of the orchestrator and of every sub-researcher) counts the agent's token usage
  into the run as it grows, stops the agent once the run's budget is spent, and bounds the step's model call by what
  is left of the time budget.

Each agent has exactly one hook of the library at each of these points, so nothing depends on the order of a hook
list (a user's own hooks run after the library's).
"""

from __future__ import annotations

import uuid
from typing import Any

from haystack import logging
from haystack.components.agents.state import State
from haystack.components.agents.state.state_utils import replace_values
from haystack.core.errors import SerializationError
from haystack.core.serialization import default_from_dict, default_to_dict
from haystack.utils.callable_serialization import deserialize_callable, serialize_callable

from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.events import EventBus, RunEnded, RunStarted, Subscriber
from haystack_deep_research.run.budget import RunBudget
from haystack_deep_research.run.context import (
    RunInputs,
    context_of,
    counted_view,
    inputs_of,
    make_current,
    question_from,
)
from haystack_deep_research.run.cost import CostMeter
from haystack_deep_research.run.deadline import bind
from haystack_deep_research.run.door import RunGuard
from haystack_deep_research.run.hooks import PhaseHook, RunBound, StatelessHook
from haystack_deep_research.run.outputs import publish, run_outputs
from haystack_deep_research.run.phases import Phase
from haystack_deep_research.run.research_run import ResearchRun
from haystack_deep_research.run.resume import open_journal, write_outcome
from haystack_deep_research.settings import Budgets
from haystack_deep_research.settings.grouped import Price
from haystack_deep_research.state import (
    EXIT_REASON,
    HOOK_CONTEXT,
    MESSAGES,
    NOTES,
    PHASE_ORCHESTRATOR,
    PHASE_RUN,
    REPORT,
    RUN_GUARD_KEY,
    RUN_KEY,
    STOP_RUN,
    TOOLS,
    WARNINGS,
)
from haystack_deep_research.web import start_parsers

__all__ = ["BudgetHook", "CloseRunHook", "OpenRunHook", "close_run"]

logger = logging.getLogger(__name__)


class OpenRunHook(PhaseHook):
    """
    ``before_run``: open the run (see the module docstring).

    :param token_budget: Total tokens one run may spend across all phases, 1 to 1,000,000,000, or ``None``.
    :param time_budget: Seconds of wall-clock time one run may take (up to 7 days), or ``None``.
    :param on_event: A callable receiving every event of every run of the agent (before a run's own
        ``RunInputs(on_event=...)``), or ``None``. A module-level function serializes with the hook; a lambda does not.
    :param cost_budget: US dollars one run's model calls may cost (more than 0, up to 1,000,000), or ``None``.
    :param phase_models: The model each phase of the run calls, by phase name: what each phase's usage costs.
    :param prices: Model prices on top of the defaults (see :mod:`haystack_deep_research.run.cost`).
    :raises ConfigurationError: If a budget is out of range, ``prices`` is not a dict of ``Price``, or ``on_event``
        is not callable.
    """

    allowed_hook_points = ("before_run",)
    run_phase = PHASE_ORCHESTRATOR
    """The phase the run's own agent counts its model calls toward."""
    takes_brief = True
    """Whether a run takes a brief of the caller's (``RunInputs(brief=...)``); a shape that uses none refuses it."""

    def __init__(
        self,
        *,
        token_budget: int | None = None,
        time_budget: float | None = None,
        cost_budget: float | None = None,
        phase_models: dict[str, str] | None = None,
        prices: dict[str, Price] | None = None,
        on_event: Subscriber | None = None,
    ) -> None:
        budget = RunBudget(token_budget=token_budget, time_budget=time_budget, cost_budget=cost_budget)
        CostMeter(phase_models=phase_models, prices=prices)
        if on_event is not None and not callable(on_event):
            raise ConfigurationError(f"on_event must be a callable on_event(event); got {type(on_event).__name__}.")
        self.token_budget = budget.token_budget
        self.time_budget = budget.time_budget
        self.cost_budget = budget.cost_budget
        self.phase_models = dict(phase_models or {})
        self.prices = dict(prices or {})
        self.on_event = on_event

    def run_parameters(self) -> dict[str, Any]:
        """:returns: The run's parameters, serialized (a subclass adds them to its own ``to_dict``)."""
        parameters: dict[str, Any] = {
            "token_budget": self.token_budget,
            "time_budget": self.time_budget,
            "cost_budget": self.cost_budget,
            "phase_models": self.phase_models,
            "prices": {model: price.to_dict() for model, price in self.prices.items()},
        }
        if self.on_event is not None:
            try:
                parameters["on_event"] = serialize_callable(self.on_event)
            except SerializationError as error:
                raise ConfigurationError(
                    f"on_event cannot be serialized ({error}); pass a module-level function, or pass the subscriber "
                    "per run: run(..., inputs=RunInputs(on_event=...))."
                ) from error
        return parameters

    @staticmethod
    def run_parameters_from_dict(init_parameters: dict[str, Any]) -> None:
        """
        Turn serialized prices and ``on_event`` back into objects, in place.

        :param init_parameters: The ``init_parameters`` of a serialized hook.
        """
        prices = init_parameters.get("prices")
        if isinstance(prices, dict):
            init_parameters["prices"] = {model: Price.from_dict(price) for model, price in prices.items()}
        if isinstance(init_parameters.get("on_event"), str):
            init_parameters["on_event"] = deserialize_callable(init_parameters["on_event"])

    def phase(self, state: State) -> Phase[None]:
        """
        :param state: The agent's live State.
        :returns: The phase.
        :raises InvalidQuestionError: (from the phase) If the messages hold no question; nothing has run yet.
        :raises RunDirError: (from the phase) If the run directory cannot be used.
        :raises ConfigurationError: (from the phase) If ``hook_context`` is not a dict, or the shape refuses an input.
        """
        question = self.question_of(state.data.get(MESSAGES))
        context = context_of(state)
        run = yield from self.open_run(question, inputs_of(context))
        journal = run.journal
        if isinstance(guard := context.get(RUN_GUARD_KEY), RunGuard):  # a ResearchAgent's run: it closes the guard
            guard.on_close(run.close)
            if journal is not None:
                guard.on_close(journal.close)
            guard.on_close(make_current(run, context))  # the current run until the agent's run returns
        try:
            yield from self._open(state, context, run)
        except BaseException:
            run.close()
            if journal is not None:
                journal.close()
            raise

    def question_of(self, messages: Any) -> str:
        """
        The run's question: the last user message (a subclass may read the conversation otherwise).

        :param messages: The messages passed to ``run``.
        :returns: The question.
        :raises InvalidQuestionError: If the messages hold no question.
        """
        return question_from(messages)

    def open_run(self, question: str, inputs: RunInputs) -> Phase[ResearchRun]:
        """
        Open the run of one question (see the module docstring). Every shape opens its run here: the agents in this
        hook, the Pipeline shapes before their Pipeline runs.

        :param question: The run's question.
        :param inputs: The run's inputs.
        :returns: The phase; it returns the open run (its journal, if any, is open: the caller closes it).
        :raises RunDirError: (from the phase) If the run directory cannot be used.
        :raises ConfigurationError: (from the phase) If the shape refuses one of the inputs, or a run's dollar budget
            lacks a price.
        """
        if inputs.brief is not None and not self.takes_brief:
            raise ConfigurationError(
                "this shape takes no RunInputs(brief=...): it answers the conversation it is given; put the brief in "
                "the messages."
            )
        own = Budgets(
            tokens=self.token_budget, seconds=self.time_budget, dollars=self.cost_budget, prices=self.prices or None
        )
        budgets = inputs.budgets_over(own)
        if budgets is not own:
            budgets.check_priced(self.phase_models)
        start_parsers()  # parsers load while the run makes its first model calls, not when its first page arrives
        journal = yield from open_journal(inputs.run_dir, question)
        subscribers = [given for given in (self.on_event, inputs.on_event) if given is not None]
        run = ResearchRun(
            question=question,
            budget=RunBudget(token_budget=budgets.tokens, time_budget=budgets.seconds, cost_budget=budgets.dollars),
            journal=journal,
            events=EventBus(uuid.uuid4().hex, subscribers),
            streaming_callback=inputs.streaming_callback,
            phase_models=self.phase_models,
            prices=dict(budgets.prices or {}),
        )
        run.brief = inputs.brief.strip() if inputs.brief is not None else question
        try:
            if inputs.on_run_opened is not None:
                inputs.on_run_opened(run)
        except BaseException:
            run.close()
            if journal is not None:
                journal.close()
            raise
        run.events.emit(RunStarted(phase=PHASE_RUN, question=run.question))
        return run

    def _open(self, state: State, context: dict[str, Any], run: ResearchRun) -> Phase[None]:
        view = run.view(self.run_phase)
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
        return default_to_dict(self, **self.run_parameters())

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Any:
        """
        :param data: What ``to_dict`` returned.
        :returns: The hook.
        """
        cls.run_parameters_from_dict(data.get("init_parameters") or {})
        return default_from_dict(cls, data)


class CloseRunHook(PhaseHook):
    """``after_run``: close the run (see the module docstring); nothing happens outside a run of this library."""

    allowed_hook_points = ("after_run",)

    def phase(self, state: State) -> Phase[None]:
        """
        :param state: The agent's live State.
        :returns: The phase.
        """
        view = counted_view(state)
        if view is None:
            return
        run = view.run
        failure: Exception | None = None
        try:
            yield from self.finish(state, run)
        except Exception as error:  # the run is closed first; then the error propagates
            failure = error
        report, exit_reason = str(state.data.get(REPORT) or ""), str(state.data.get(EXIT_REASON) or "")
        outputs = yield from close_run(run, report=report, exit_reason=exit_reason)
        for key, value in outputs.items():
            if key in state.schema:
                state.set(key, value, handler_override=replace_values)
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
    stop the agent once the run's token or time budget is spent (``stop_run`` becomes its ``exit_reason``), and else
    bind the run's budget to the step's model call, which :class:`~haystack_deep_research.run.deadline.
    DeadlineChatGenerator` cuts at the deadline. ``run_async`` runs on the event loop, so the binding reaches the call.
    """

    allowed_hook_points = ("before_llm",)

    def run(self, state: State) -> None:
        """
        :param state: The agent's live State.
        """
        view = counted_view(state)
        bind(view.run.budget if view is not None else None)
        if view is None:
            return
        if (reason := view.spent()) is not None:
            state.set(STOP_RUN, reason)

    async def run_async(self, state: State) -> None:
        """
        :param state: The agent's live State.
        """
        self.run(state)


def close_run(run: ResearchRun, *, report: str, exit_reason: str) -> Phase[dict[str, Any]]:
    """
    Close a run, whatever its shape (see the module docstring): its resources, the run directory (outcome written,
    lock released), ``RunEnded``.

    :param run: The run.
    :param report: Its report, as it leaves the library.
    :param exit_reason: Why it ended.
    :returns: The phase; it returns the shared outputs the run holds (:func:`~haystack_deep_research.run.outputs.
        run_outputs`) with ``report`` and ``exit_reason``.
    """
    run.close()
    journal = run.journal
    try:
        yield from write_outcome(run, report=report, exit_reason=exit_reason)
    finally:
        if journal is not None:
            journal.close()
    outputs = {**run_outputs(run), REPORT: report, EXIT_REASON: exit_reason}
    run.events.emit(
        RunEnded(
            phase=PHASE_RUN,
            exit_reason=exit_reason,
            notes=len(outputs[NOTES]),
            sources=len(run.ledger),
            warnings=len(outputs[WARNINGS]),
        )
    )
    return outputs
