"""
The grouped settings every factory takes under the same names: :class:`Budgets` (``budgets=``), :class:`Grounding`
(``grounding=``) and :class:`Sources` (``sources=``), beside ``style=``
(:class:`~haystack_deep_research.report.ReportStyle`).

Each is a small frozen value object, checked when it is made, so a bad value fails where it was written, with a
message that names it::

    from haystack_deep_research import Budgets, Grounding, Sources, create_deep_research_agent

    agent = create_deep_research_agent(
        budgets=Budgets(tokens=200_000, seconds=600),
        grounding=Grounding(threshold=0.7),
        sources=Sources(search="ddgs", datastores={"docs": index_folder("./docs")}),
    )

A shape that has no use for a setting refuses it with a ``ConfigurationError`` rather than ignoring it (the research
workflow and the deep agent search with the tools they are given, so ``Sources(search=...)`` means nothing to them).
``Budgets`` may also be passed per run, as ``RunInputs(budgets=...)``: its limits replace the factory's for that run.

The package holds the value objects and the fields a factory refuses (:mod:`.grouped`). The argument checks they
and every factory, tool and policy share sit below every package, in :mod:`haystack_deep_research._checks`.
"""

from haystack_deep_research.settings.grouped import DEFAULT_PRICES, PRICES_AS_OF, Budgets, Grounding, Price, Sources

__all__ = ["DEFAULT_PRICES", "PRICES_AS_OF", "Budgets", "Grounding", "Price", "Sources"]
