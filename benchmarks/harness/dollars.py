"""
What a run would cost in US dollars at the default models, priced with the library's own table.

The roles run on the models the library's factories default to: ``gpt-5.4`` for scope, orchestrator and writer,
``gpt-5.4-mini`` for researchers and summarizer; :data:`~haystack_deep_research.settings.grouped.DEFAULT_PRICES`
gives their prices. Every input token is priced as uncached (the simulator has no prompt cache), so the figures are
an upper bound for a provider that caches repeated prompt prefixes.
"""

from __future__ import annotations

from benchmarks.harness.metrics import RoleUsage, RunMetrics
from haystack_deep_research.settings.grouped import DEFAULT_PRICES, PRICES_AS_OF

__all__ = ["PRICES_AS_OF", "ROLE_MODELS", "role_cost", "run_cost"]

ROLE_MODELS = {
    "scope": "gpt-5.4",
    "orchestrator": "gpt-5.4",
    "researcher": "gpt-5.4-mini",
    "summarizer": "gpt-5.4-mini",
    "writer": "gpt-5.4",
}
"""The model each role runs on by default."""


def role_cost(role: str, usage: RoleUsage) -> float:
    """
    :param role: A simulated role.
    :param usage: Its tokens in one run.
    :returns: Their price in US dollars.
    """
    price = DEFAULT_PRICES[ROLE_MODELS[role]]
    return (usage.input_tokens * price.input_per_mtok + usage.output_tokens * price.output_per_mtok) / 1_000_000


def run_cost(metrics: RunMetrics) -> float:
    """
    :param metrics: One run's figures.
    :returns: The price of all its answered calls in US dollars.
    """
    return sum(role_cost(role, usage) for role, usage in metrics.roles.items() if role in ROLE_MODELS)
