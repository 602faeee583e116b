"""
What a run spends and the limits on it: token usage arithmetic, what usage costs (docs/cost.md), the run's budget
(checked at step boundaries), and the time budget as a deadline for the model calls in flight (docs/safety.md).

Every model call of a run is bounded by what is left of its time budget: :func:`call_within` runs it in a daemon
thread, :func:`call_within_async` awaits it with :func:`asyncio.wait_for`; a call cut at the deadline raises
:class:`~haystack_deep_research.errors.DeadlineExceededError` and is abandoned, not awaited; one asked for once the
budget is spent is not started. The library's own calls get the budget through
:func:`~haystack_deep_research.run._phases.ask`; an Agent's through
:class:`~haystack_deep_research.run._phases.DeadlineChatGenerator`, which its ``before_llm`` hook binds (:func:`bind`).
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any, TypeVar

from haystack_deep_research.errors import DeadlineExceededError
from haystack_deep_research.settings.grouped import Price, checked_limits, merge_prices, price_of
from haystack_deep_research.state import EXIT_COST_BUDGET, EXIT_TIME_BUDGET, EXIT_TOKEN_BUDGET


@dataclass(frozen=True)
class RunBudget:
    """
    The budget of one run: its limits (as ``Budgets`` checks them: tokens, seconds, US dollars, each ``None`` for no
    limit) and its clock, which starts when the budget is made.

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
        """:returns: ``(reason, detail)`` when a budget is spent (``detail`` says it in words), else ``None``."""
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
        """The budget in words, for messages."""
        if reason == EXIT_TOKEN_BUDGET:
            return f"token budget of {self.token_budget:,} tokens"
        if reason == EXIT_COST_BUDGET:
            return f"cost budget of ${self.cost_budget:g}"
        return f"time budget of {self.time_budget:g} seconds"


T = TypeVar("T")

_BUDGET: contextvars.ContextVar[RunBudget | None] = contextvars.ContextVar(
    "haystack_deep_research.run_budget", default=None
)


def bind(budget: RunBudget | None) -> None:
    """Name the budget that bounds the model calls an Agent makes next in this context."""
    _BUDGET.set(budget)


def bound_budget() -> RunBudget | None:
    return _BUDGET.get()


def _cut(budget: RunBudget) -> DeadlineExceededError:
    return DeadlineExceededError(
        f"the time budget of {budget.time_budget:g} s ran out while a model call was in flight; the call was "
        "abandoned. Pass a larger Budgets(seconds=...), or give the chat generator a smaller timeout so a stuck server "
        "fails sooner."
    )


def _in_daemon_thread(function: Callable[[], T]) -> Future[T]:
    """Run ``function`` in a daemon thread (in a copy of the caller's context): an abandoned call never blocks exit."""
    future: Future[T] = Future()
    context = contextvars.copy_context()

    def target() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(context.run(function))
        except BaseException as error:  # handed to whoever waits; dropped once the call was abandoned
            future.set_exception(error)

    threading.Thread(target=target, name="haystack-deep-research-model-call", daemon=True).start()
    return future


def call_within(function: Callable[[], T], budget: RunBudget | None) -> T:
    """:raises DeadlineExceededError: If the time budget ran out first (the call is abandoned in its daemon thread)."""
    left = budget.time_left() if budget is not None else None
    if budget is None or left is None:
        return function()
    if left <= 0:
        raise _cut(budget)
    future = _in_daemon_thread(function)
    try:
        return future.result(timeout=left)
    except FutureTimeout:
        raise _cut(budget) from None


async def call_within_async(start: Callable[[], Awaitable[T]], budget: RunBudget | None) -> T:
    """:raises DeadlineExceededError: If the time budget ran out first (the call is cancelled)."""
    left = budget.time_left() if budget is not None else None
    if budget is None or left is None:
        return await start()
    if left <= 0:
        raise _cut(budget)
    try:
        return await asyncio.wait_for(start(), timeout=left)
    except TimeoutError:
        raise _cut(budget) from None


def call_sync_within_async(function: Callable[[], T], budget: RunBudget | None) -> Awaitable[T]:
    """A sync call on the async path, in a daemon thread (an abandoned one never holds up the loop's shutdown)."""
    return call_within_async(lambda: asyncio.wrap_future(_in_daemon_thread(function)), budget)


_INPUT_KEYS = ("input_tokens", "prompt_tokens")
_OUTPUT_KEYS = ("output_tokens", "completion_tokens")
_DETAIL_KEYS = ("input_tokens_details", "prompt_tokens_details")


def model_name(generator: Any) -> str:
    """Its model name when it has one, else its class name."""
    name = getattr(generator, "model", None)
    return name if isinstance(name, str) and name else type(generator).__name__


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def add_usage(total: Mapping[str, Any] | None, usage: Mapping[str, Any] | None) -> dict[str, Any]:
    """Summed key by key (nested dicts recursively, anything else replaced)."""
    result: dict[str, Any] = dict(total or {})
    for key, value in (usage or {}).items():
        current = result.get(key)
        if isinstance(value, Mapping):
            result[key] = add_usage(current if isinstance(current, Mapping) else None, value)
        elif _number(value) is not None and _number(current) is not None:
            result[key] = current + value
        else:
            result[key] = value
    return result


def usage_delta(current: Mapping[str, Any] | None, recorded: Mapping[str, Any] | None) -> dict[str, Any]:
    """What ``current`` holds beyond ``recorded``, key by key; keys with no difference are left out."""
    recorded = recorded or {}
    delta: dict[str, Any] = {}
    for key, value in (current or {}).items():
        before = recorded.get(key)
        if isinstance(value, Mapping):
            nested = usage_delta(value, before if isinstance(before, Mapping) else None)
            if nested:
                delta[key] = nested
        elif _number(value) is not None:
            difference = value - (_number(before) or 0)
            if difference:
                delta[key] = difference
    return delta


def total_tokens(usage: Mapping[str, Any] | None) -> int:
    """``total_tokens`` when reported, else input plus output tokens; 0 when nothing is known."""
    usage = usage or {}
    reported = _number(usage.get("total_tokens"))
    if reported:
        return int(reported)
    return int((_count(usage, _INPUT_KEYS) or 0.0) + (_count(usage, _OUTPUT_KEYS) or 0.0))


def _count(usage: Mapping[str, Any], keys: tuple[str, ...]) -> float | None:
    return next((number for key in keys if (number := _number(usage.get(key))) is not None), None)


def usage_cost(usage: Mapping[str, Any] | None, price: Price) -> float | None:
    """
    The cost of a usage dict (OpenAI Chat or Responses naming) at a price.

    :param usage: The usage, as chat generators report it in ``meta["usage"]`` (summed over calls), or ``None``.
    :param price: The model's price.
    :returns: The cost in US dollars; 0 for no usage; ``None`` when the usage does not say how many input and output
        tokens it holds, or counts prompt caching in a way this function does not know, so no number would be right.
    """
    usage = usage or {}
    if not usage:
        return 0.0
    if any("cache" in key for key in usage):  # provider-specific cache accounting (not OpenAI's)
        return None
    spent_in, spent_out = _count(usage, _INPUT_KEYS), _count(usage, _OUTPUT_KEYS)
    if spent_in is None and spent_out is None:
        return None
    spent_in, spent_out = spent_in or 0.0, spent_out or 0.0
    cached = 0.0
    for key in _DETAIL_KEYS:
        details = usage.get(key)
        if isinstance(details, Mapping):
            cached = min(_count(details, ("cached_tokens",)) or 0.0, spent_in)
    cached_price = price.input_per_mtok if price.cached_input_per_mtok is None else price.cached_input_per_mtok
    dollars = (spent_in - cached) * price.input_per_mtok + cached * cached_price + spent_out * price.output_per_mtok
    return dollars / 1_000_000


def _sum(costs: Iterable[float | None]) -> float | None:
    known = list(costs)
    return None if any(cost is None for cost in known) else sum(cost or 0.0 for cost in known)


class CostMeter:
    """
    Prices a run's usage per phase, by the model each phase calls (``phase_models``), at ``prices`` on top of the
    defaults. ``warn(phase, message)`` says when a cost cannot be known: once for all the models without a price
    (naming each, and how to give one), once per model whose usage cannot be priced, once per phase with no model.

    :raises ConfigurationError: If ``prices`` is not a mapping of model names to :class:`Price`.
    """

    def __init__(
        self,
        *,
        phase_models: Mapping[str, str] | None = None,
        prices: Mapping[str, Price] | None = None,
        warn: Callable[[str, str], None] | None = None,
    ) -> None:
        self.phase_models = dict(phase_models or {})
        self.prices = merge_prices(prices)
        self._warn = warn
        self._said: set[str] = set()
        self._lock = threading.Lock()

    def by_phase(self, usage_by_phase: Mapping[str, Mapping[str, Any]]) -> dict[str, float | None]:
        """US dollars per phase; ``None`` for a phase whose cost is unknown."""
        return self._priced(usage_by_phase, warn=True)

    def _priced(self, usage_by_phase: Mapping[str, Mapping[str, Any]], *, warn: bool) -> dict[str, float | None]:
        costs: dict[str, float | None] = {}
        for phase, usage in usage_by_phase.items():
            model = self.phase_models.get(phase)
            price = price_of(model, self.prices) if model else None
            costs[phase] = usage_cost(usage, price) if price is not None else None
            if warn and costs[phase] is None and total_tokens(usage):
                self._unknown(phase, model, price)
        return costs

    def total(self, usage_by_phase: Mapping[str, Mapping[str, Any]]) -> float | None:
        """The sum in US dollars, or ``None`` when some phase's cost is unknown."""
        return _sum(self.by_phase(usage_by_phase).values())

    def estimate(self, usage_by_phase: Mapping[str, Mapping[str, Any]]) -> float | None:
        """:meth:`total` without any warning: for progress displays while the run goes on."""
        return _sum(self._priced(usage_by_phase, warn=False).values())

    def report(self, usage_by_phase: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
        """Each phase's usage with its ``model`` (or ``None``) and ``cost`` (US dollars, or ``None``)."""
        costs = self.by_phase(usage_by_phase)
        return {
            phase: {**usage, "model": self.phase_models.get(phase), "cost": costs[phase]}
            for phase, usage in usage_by_phase.items()
        }

    def unpriced(self, models: Mapping[str, str]) -> list[str]:
        """The model names among them with no known price, each once, in order."""
        return list(dict.fromkeys(model for model in models.values() if price_of(model, self.prices) is None))

    def _unknown(self, phase: str, model: str | None, price: Price | None) -> None:
        unpriced = model is not None and price is None
        key = "no price" if unpriced else model or f"phase {phase}"  # every unpriced model is named at once
        with self._lock:
            first = key not in self._said
            self._said.add(key)
        if not first or self._warn is None:
            return
        if model is None:
            why = f"the model of the {phase} phase is not known"
        elif unpriced:
            names = list(dict.fromkeys([model, *self.unpriced(self.phase_models)]))
            which = f"model {model!r}" if len(names) == 1 else f"models {', '.join(map(repr, names))}"
            why = (
                f"no price is known for {which}; pass budgets=Budgets(prices={{{model!r}: Price(...)}}) (US dollars "
                "per million tokens)"
            )
        else:
            why = f"the usage that model {model!r} reports does not say its input and output tokens"
        self._warn(phase, f"the run's cost is unknown: {why}")
