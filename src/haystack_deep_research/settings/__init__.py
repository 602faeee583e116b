"""
The grouped settings every factory takes under the same names: :class:`Budgets` (``budgets=``), :class:`Grounding`
(``grounding=``) and :class:`Sources` (``sources=``), frozen value objects checked when made; a shape that has no use
for one refuses it. docs/settings.md shows them in use.
"""

from haystack_deep_research.settings.grouped import DEFAULT_PRICES, PRICES_AS_OF, Budgets, Grounding, Price, Sources

__all__ = ["DEFAULT_PRICES", "PRICES_AS_OF", "Budgets", "Grounding", "Price", "Sources"]
