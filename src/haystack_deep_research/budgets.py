"""
Run budgets: a cap on the tokens a run spends across all its phases, and on its wall-clock time.

A budget is checked at step boundaries, never in the middle of a model call or a download:

- :class:`StartBudgetHook` (orchestrator ``before_run``, first of all hooks) starts the clock and puts the run's
  :class:`RunBudget` in ``hook_context``.
- :class:`EnforceBudgetHook` (orchestrator ``before_llm``) stops the orchestrator once a budget is spent; the write
  hook then writes the report from what was gathered, and ``exit_reason`` names the budget.
- :class:`ResearcherBudgetHook` (sub-researcher ``before_llm``) adds the researcher's new token usage to the run as
  it happens, and stops the researcher once a budget is spent; its final-summary hook then summarizes what it has.
- ``research_subtopic`` calls :func:`refuse_when_spent` before starting a researcher, so no new research starts.

The calls that close a run (a stopped researcher's final summary, the writer) still run after a budget is spent,
so the total can end a little above ``token_budget``.
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from haystack.components.agents.state import State
from haystack.components.agents.state.state_utils import replace_values
from haystack.core.serialization import default_from_dict, default_to_dict

from haystack_deep_research import _checks
from haystack_deep_research.errors import BudgetExceededError
from haystack_deep_research.hooks import StatelessHook
from haystack_deep_research.state import (
    BUDGET_KEY,
    EXIT_TIME_BUDGET,
    EXIT_TOKEN_BUDGET,
    HOOK_CONTEXT,
    PHASE_ORCHESTRATOR,
    PHASE_RESEARCH,
    STOP_RUN,
    TOKEN_USAGE,
    USAGE_RECORDED,
    ResearchRun,
    SharedContext,
    run_from_context,
)

MAX_TOKEN_BUDGET = 1_000_000_000
MAX_TIME_BUDGET_S = 7 * 24 * 3600.0
_INPUT_KEYS = ("prompt_tokens", "input_tokens")
_OUTPUT_KEYS = ("completion_tokens", "output_tokens")


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def total_tokens(usage: Mapping[str, Any] | None) -> int:
    """
    The total tokens of a usage dict: ``total_tokens`` when reported, else input plus output tokens.

    :param usage: A usage dict (OpenAI Chat or Responses naming), or ``None``.
    :returns: The total, 0 when nothing is known.
    """
    usage = usage or {}
    reported = _number(usage.get("total_tokens"))
    if reported:
        return int(reported)
    spent_in = next((_number(usage[key]) for key in _INPUT_KEYS if key in usage), 0.0)
    spent_out = next((_number(usage[key]) for key in _OUTPUT_KEYS if key in usage), 0.0)
    return int(spent_in + spent_out)


def usage_delta(current: Mapping[str, Any] | None, recorded: Mapping[str, Any] | None) -> dict[str, Any]:
    """
    What a usage dict holds beyond a part already recorded (numbers subtracted key by key, nested dicts too).

    :param current: The usage now.
    :param recorded: The part already counted, or ``None``.
    :returns: The numeric difference; keys with no difference are left out.
    """
    recorded = recorded or {}
    delta: dict[str, Any] = {}
    for key, value in (current or {}).items():
        before = recorded.get(key)
        if isinstance(value, Mapping):
            nested = usage_delta(value, before if isinstance(before, Mapping) else None)
            if nested:
                delta[key] = nested
        elif isinstance(value, int | float) and not isinstance(value, bool):
            difference = value - (before if isinstance(before, int | float) and not isinstance(before, bool) else 0)
            if difference:
                delta[key] = difference
    return delta


@dataclass(eq=False)
class RunBudget:
    """
    The live budget of one run, shared (never copied) by the orchestrator, its tools and the sub-researchers.

    :param token_budget: Total tokens the run may spend across all phases, or ``None`` for no cap.
    :param time_budget: Seconds of wall-clock time the run may take, or ``None`` for no cap.
    """

    token_budget: int | None = None
    time_budget: float | None = None
    started: float = field(default_factory=time.monotonic)
    _orchestrator_usage: dict[str, Any] = field(default_factory=dict, repr=False)
    _spent: str | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __deepcopy__(self, memo: dict[int, Any]) -> RunBudget:
        return self

    def note_orchestrator_usage(self, usage: Mapping[str, Any] | None) -> None:
        """
        Remember the orchestrator's usage so far (its Agent's ``token_usage``; it is added to the run at the end).

        :param usage: The orchestrator's ``token_usage``.
        """
        with self._lock:
            self._orchestrator_usage = copy.deepcopy(dict(usage or {}))

    def tokens_used(self, run: ResearchRun) -> int:
        """
        :param run: The run whose phases have recorded their usage.
        :returns: The tokens spent so far across all phases.
        """
        phases = run.usage_by_phase()
        with self._lock:
            orchestrator = max(total_tokens(self._orchestrator_usage), total_tokens(phases.get(PHASE_ORCHESTRATOR)))
        return orchestrator + sum(total_tokens(usage) for phase, usage in phases.items() if phase != PHASE_ORCHESTRATOR)

    def spent(self, run: ResearchRun) -> str | None:
        """
        Check both budgets; the first time one is found spent, a warning is added to the run.

        :param run: The run.
        :returns: ``"token_budget"`` or ``"time_budget"`` when that budget is spent, else ``None``.
        """
        reason, detail = None, ""
        if self.token_budget is not None and (used := self.tokens_used(run)) >= self.token_budget:
            reason, detail = EXIT_TOKEN_BUDGET, f"the token budget of {self.token_budget:,} tokens ({used:,} used)"
        elif self.time_budget is not None and (elapsed := time.monotonic() - self.started) >= self.time_budget:
            reason, detail = EXIT_TIME_BUDGET, f"the time budget of {self.time_budget:g} s ({elapsed:.1f} s elapsed)"
        if reason is None:
            return None
        with self._lock:
            first = self._spent is None
            self._spent = self._spent or reason
        if first:
            run.warn(
                PHASE_ORCHESTRATOR,
                f"{detail} is spent: no new research starts and the report is written from what was gathered",
            )
        return reason

    def describe(self, reason: str) -> str:
        """
        :param reason: ``"token_budget"`` or ``"time_budget"``.
        :returns: The budget in words, for messages.
        """
        if reason == EXIT_TOKEN_BUDGET:
            return f"token budget of {self.token_budget:,} tokens"
        return f"time budget of {self.time_budget:g} seconds"


def budget_from_context(hook_context: Mapping[str, Any] | None) -> RunBudget | None:
    """
    :param hook_context: The ``hook_context`` a hook or tool received.
    :returns: The run's :class:`RunBudget`, or ``None`` outside a run that started one.
    """
    budget = (hook_context or {}).get(BUDGET_KEY)
    return budget if isinstance(budget, RunBudget) else None


def refuse_when_spent(hook_context: Mapping[str, Any] | None, subtopic: str) -> None:
    """
    Refuse to start research on a sub-topic once the run's budget is spent.

    :param hook_context: The orchestrator's ``hook_context``.
    :param subtopic: The sub-topic that was asked for.
    :raises BudgetExceededError: If a budget is spent; the message names it and tells the model to finish.
    """
    budget, run = budget_from_context(hook_context), run_from_context(hook_context)
    if budget is None or run is None:
        return
    reason = budget.spent(run)
    if reason is not None:
        raise BudgetExceededError(
            f"the {budget.describe(reason)} for this run is spent, so '{subtopic}' was not researched. "
            "Do not delegate more; reply that research is complete."
        )


class StartBudgetHook:
    """
    Orchestrator ``before_run`` hook, registered first: start the run's clock and share its :class:`RunBudget`.

    :param token_budget: Total tokens the run may spend across all phases, 1 to 1,000,000,000, or ``None``.
    :param time_budget: Seconds of wall-clock time the run may take, up to 7 days, or ``None``.
    :raises ConfigurationError: If a budget is out of range.
    """

    def __init__(self, *, token_budget: int | None = None, time_budget: float | None = None) -> None:
        if token_budget is not None:
            _checks.int_in_range("token_budget", token_budget, 1, MAX_TOKEN_BUDGET)
        if time_budget is not None:
            time_budget = _checks.number_in_range("time_budget", time_budget, 0, MAX_TIME_BUDGET_S)
        self.token_budget = token_budget
        self.time_budget = time_budget

    def run(self, state: State) -> None:
        """
        Put a fresh :class:`RunBudget` in the run's ``hook_context``.

        :param state: The orchestrator's live State.
        """
        context = dict(state.data.get(HOOK_CONTEXT) or {})
        budget = RunBudget(token_budget=self.token_budget, time_budget=self.time_budget)
        state.set(HOOK_CONTEXT, SharedContext({**context, BUDGET_KEY: budget}), handler_override=replace_values)

    def to_dict(self) -> dict[str, Any]:
        """
        :returns: The serialized hook.
        """
        return default_to_dict(self, token_budget=self.token_budget, time_budget=self.time_budget)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StartBudgetHook:
        """
        :param data: What ``to_dict`` returned.
        :returns: The hook.
        """
        return default_from_dict(cls, data)


class EnforceBudgetHook(StatelessHook):
    """Orchestrator ``before_llm`` hook: stop the orchestrator once the run's token or time budget is spent."""

    allowed_hook_points = ("before_llm",)

    def run(self, state: State) -> None:
        """
        :param state: The orchestrator's live State.
        """
        context = state.data.get(HOOK_CONTEXT)
        budget, run = budget_from_context(context), run_from_context(context)
        if budget is None or run is None:
            return
        budget.note_orchestrator_usage(state.data.get(TOKEN_USAGE))
        if (reason := budget.spent(run)) is not None:
            state.set(STOP_RUN, reason)


class ResearcherBudgetHook(StatelessHook):
    """
    Sub-researcher ``before_llm`` hook: count the researcher's token usage as it happens, and stop the researcher
    once the run's budget is spent.

    The usage already counted is kept in the researcher's own State (``usage_recorded``), so ``research_subtopic``
    adds only the rest (the final summary) when the researcher finishes.
    """

    allowed_hook_points = ("before_llm",)

    def run(self, state: State) -> None:
        """
        :param state: The researcher's live State.
        """
        context = state.data.get(HOOK_CONTEXT)
        run = run_from_context(context)
        if run is None:
            return
        usage = state.data.get(TOKEN_USAGE) or {}
        run.record_usage(PHASE_RESEARCH, usage_delta(usage, state.data.get(USAGE_RECORDED)))
        state.set(USAGE_RECORDED, copy.deepcopy(dict(usage)))
        budget = budget_from_context(context)
        if budget is not None and (reason := budget.spent(run)) is not None:
            state.set(STOP_RUN, reason)
