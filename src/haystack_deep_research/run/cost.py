"""
What a run's token usage costs: the cost of a usage dict at a price, and the meter that adds a run's costs up.

The prices themselves are settings (:class:`~haystack_deep_research.settings.grouped.Price`, with the default models'
table :data:`~haystack_deep_research.settings.grouped.DEFAULT_PRICES` read on ``PRICES_AS_OF``). Pass prices of other
models to a factory as ``budgets=Budgets(prices={"model-name": Price(input_per_mtok=..., output_per_mtok=...)})``; a
price given for a default model replaces the one there. A model with no known price gives no cost (``None``), never a
guess.

Costs are in US dollars at the standard rates for prompts under 272K tokens; OpenAI bills longer prompts, Batch, Flex
and regional processing at other rates, which this table does not model.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

from haystack_deep_research.run.usage import total_tokens
from haystack_deep_research.settings.grouped import DEFAULT_PRICES, PRICES_AS_OF, Price, merge_prices, price_of

__all__ = ["DEFAULT_PRICES", "PRICES_AS_OF", "CostMeter", "Price", "merge_prices", "price_of", "usage_cost"]

_INPUT_KEYS = ("input_tokens", "prompt_tokens")
_OUTPUT_KEYS = ("output_tokens", "completion_tokens")
_DETAIL_KEYS = ("input_tokens_details", "prompt_tokens_details")


def _count(usage: Mapping[str, Any], keys: tuple[str, ...]) -> float | None:
    for key in keys:
        value = usage.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    return None


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


class CostMeter:
    """
    Prices a run's usage per phase, by the model each phase calls; says when a cost cannot be known: once for all the
    models without a price (naming each, and how to give one), once per model whose usage cannot be priced, once per
    phase with no model.

    :param phase_models: The model each phase calls, by phase name (``{"scope": "gpt-5.4", ...}``).
    :param prices: Prices on top of :data:`DEFAULT_PRICES`, or ``None``.
    :param warn: Called as ``warn(phase, message)`` the first time a cost is unknown (see above).
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
        """
        :param usage_by_phase: Token usage per phase.
        :returns: US dollars per phase; ``None`` for a phase whose cost is unknown.
        """
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
        """
        :param usage_by_phase: Token usage per phase.
        :returns: The sum in US dollars, or ``None`` when some phase's cost is unknown.
        """
        costs = self.by_phase(usage_by_phase).values()
        return None if any(cost is None for cost in costs) else sum(cost or 0.0 for cost in costs)

    def estimate(self, usage_by_phase: Mapping[str, Mapping[str, Any]]) -> float | None:
        """
        The total as :meth:`total` gives it, without any warning: for progress displays while the run goes on.

        :param usage_by_phase: Token usage per phase.
        :returns: The sum in US dollars, or ``None`` when some phase's cost is unknown.
        """
        costs = self._priced(usage_by_phase, warn=False).values()
        return None if any(cost is None for cost in costs) else sum(cost or 0.0 for cost in costs)

    def report(self, usage_by_phase: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
        """
        :param usage_by_phase: Token usage per phase.
        :returns: Each phase's usage with its ``model`` (or ``None``) and ``cost`` (US dollars, or ``None``).
        """
        costs = self.by_phase(usage_by_phase)
        return {
            phase: {**usage, "model": self.phase_models.get(phase), "cost": costs[phase]}
            for phase, usage in usage_by_phase.items()
        }

    def unpriced(self, models: Mapping[str, str]) -> list[str]:
        """
        :param models: Model names by phase.
        :returns: The model names among them with no known price, each once, in order.
        """
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
