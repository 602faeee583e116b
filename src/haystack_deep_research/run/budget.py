"""
Run budgets: a cap on the tokens a run spends across all its phases, on what they cost, and on its wall-clock time.

A budget is checked at step boundaries (before every model call of the orchestrator and of each sub-researcher, and
before a sub-topic is delegated). The time budget is also a deadline: it caps every page download and every model
call in flight (see :mod:`.deadline`), so a run whose researchers are stuck in I/O or whose model server never
answers still ends on time. The calls that close a run (a stopped researcher's final summary, the writer) still run
after a token or cost budget is spent, so the total can end a little above ``token_budget`` (or ``cost_budget``);
once the time budget is spent they are not started, and the report is assembled from the notes gathered.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from haystack_deep_research.settings import MAX_COST_BUDGET, MAX_TIME_BUDGET_S, MAX_TOKEN_BUDGET, checked_limits
from haystack_deep_research.state import EXIT_COST_BUDGET, EXIT_TIME_BUDGET, EXIT_TOKEN_BUDGET

__all__ = ["MAX_COST_BUDGET", "MAX_TIME_BUDGET_S", "MAX_TOKEN_BUDGET", "RunBudget"]


@dataclass(frozen=True)
class RunBudget:
    """
    The budget of one run: its limits and its clock, which starts when the budget is made.

    :param token_budget: Total tokens the run may spend across all phases, 1 to 1,000,000,000, or ``None``.
    :param time_budget: Seconds of wall-clock time the run may take (more than 0, up to 7 days), or ``None``.
    :param cost_budget: US dollars the run's model calls may cost (more than 0, up to 1,000,000), or ``None``.
    :raises ConfigurationError: If a budget is out of range.
    """

    token_budget: int | None = None
    time_budget: float | None = None
    cost_budget: float | None = None
    started: float = field(default_factory=time.monotonic, compare=False)

    def __post_init__(self) -> None:
        names = ("token_budget", "time_budget", "cost_budget")
        _, seconds, dollars = checked_limits(self.token_budget, self.time_budget, self.cost_budget, names=names)
        object.__setattr__(self, "time_budget", seconds)
        object.__setattr__(self, "cost_budget", dollars)

    def time_left(self) -> float | None:
        """:returns: Seconds left of the time budget (0 when spent), or ``None`` without a time budget."""
        if self.time_budget is None:
            return None
        return max(self.time_budget - (time.monotonic() - self.started), 0.0)

    def check(self, tokens_used: int, cost: float | None = None) -> tuple[str, str] | None:
        """
        Check the budgets.

        :param tokens_used: The tokens the run has spent so far.
        :param cost: What the run has cost so far in US dollars, or ``None`` when unknown (then the cost budget
            cannot be checked).
        :returns: ``(reason, detail)`` when a budget is spent (``reason`` is ``"token_budget"``, ``"cost_budget"`` or
            ``"time_budget"``, ``detail`` says it in words), else ``None``.
        """
        if self.token_budget is not None and tokens_used >= self.token_budget:
            return EXIT_TOKEN_BUDGET, f"the token budget of {self.token_budget:,} tokens ({tokens_used:,} used)"
        if self.cost_budget is not None and cost is not None and cost >= self.cost_budget:
            return EXIT_COST_BUDGET, f"the cost budget of ${self.cost_budget:g} (${cost:.4f} spent)"
        left = self.time_left()
        if left is not None and left <= 0:
            elapsed = time.monotonic() - self.started
            return EXIT_TIME_BUDGET, f"the time budget of {self.time_budget:g} s ({elapsed:.1f} s elapsed)"
        return None

    def describe(self, reason: str) -> str:
        """
        :param reason: ``"token_budget"``, ``"cost_budget"`` or ``"time_budget"``.
        :returns: The budget in words, for messages.
        """
        if reason == EXIT_TOKEN_BUDGET:
            return f"token budget of {self.token_budget:,} tokens"
        if reason == EXIT_COST_BUDGET:
            return f"cost budget of ${self.cost_budget:g}"
        return f"time budget of {self.time_budget:g} seconds"
