"""
The grouped settings every factory takes under the same names: :class:`Budgets` (``budgets=``), :class:`Grounding`
(``grounding=``) and :class:`Sources` (``sources=``), beside ``style=``
(:class:`~haystack_deep_research.report.ReportStyle`); docs/settings.md shows them in use.

Each is a small frozen value object, checked when it is made, so a bad value fails where it was written. A shape that
has no use for a setting refuses it with a ``ConfigurationError`` rather than ignoring it. The value objects and the
fields a factory refuses are in :mod:`.grouped`; the argument checks they and every factory, tool and policy share
sit below every package, in :mod:`haystack_deep_research._checks`.
"""

from haystack_deep_research.settings.grouped import DEFAULT_PRICES, PRICES_AS_OF, Budgets, Grounding, Price, Sources

__all__ = ["DEFAULT_PRICES", "PRICES_AS_OF", "Budgets", "Grounding", "Price", "Sources"]
