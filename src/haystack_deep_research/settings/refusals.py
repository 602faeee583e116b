"""
Keywords a factory refuses: those that moved into a grouped setting (:data:`MOVED`, named with their new home), those
it never had, and the fields of a grouped setting a shape has no use for (:func:`refuse_fields`).
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from haystack_deep_research.errors import ConfigurationError

__all__ = ["MOVED", "WEB_FIELDS", "given_fields", "refuse_fields", "refuse_moved"]

WEB_FIELDS = (
    "web",
    "search",
    "url_policy",
    "fetch_limits",
    "passage_budget",
    "include_domains",
    "exclude_domains",
    "since",
)
"""The fields of :class:`Sources` a shape that searches with the caller's own tools has no use for."""

MOVED: dict[str, str] = {
    "token_budget": "budgets=Budgets(tokens=...)",
    "total_token_budget": "budgets=Budgets(tokens=...)",
    "time_budget": "budgets=Budgets(seconds=...)",
    "cost_budget": "budgets=Budgets(dollars=...)",
    "prices": "budgets=Budgets(prices=...)",
    "judge_llm": "grounding=Grounding(judge_llm=...)",
    "grounding_threshold": "grounding=Grounding(threshold=...)",
    "max_regenerations": "grounding=Grounding(max_regenerations=...)",
    "max_replans": "grounding=Grounding(max_replans=...)",
    "max_grounding_rounds": "grounding=Grounding(max_replans=...)",
    "search": "sources=Sources(search=...)",
    "search_tool": "sources=Sources(search=...)",
    "datastores": "sources=Sources(datastores=...)",
    "mcp_servers": "sources=Sources(mcp_servers=...)",
    "web": "sources=Sources(web=...)",
    "url_policy": "sources=Sources(url_policy=...)",
    "fetch_limits": "sources=Sources(fetch_limits=...)",
    "passage_budget": "sources=Sources(passage_budget=...)",
    "report_type": "style=ReportStyle(report_type=...)",
    "tone": "style=ReportStyle(tone=...)",
    "report_length": "style=ReportStyle(report_length=...)",
    "outline": "style=ReportStyle(outline=...)",
    "instructions": "style=ReportStyle(instructions=...)",
    "cache_dir": "cache=... (a folder path, or ResearchCache(directory=..., ttl=...))",
    "cache_ttl": "cache=ResearchCache(directory=..., ttl=...)",
}
"""Parameters that moved into a grouped setting, and where each went."""


def refuse_moved(factory: Callable[..., Any], given: Mapping[str, Any]) -> None:
    """
    Refuse keywords a factory does not take, naming the new home of one that moved into a grouped setting.

    :param factory: The factory, whose name and parameters the error uses.
    :param given: The keywords left over after the factory's own.
    :raises ConfigurationError: If one of them moved to a parameter the factory has (``token_budget=`` is now
        ``budgets=Budgets(tokens=...)``).
    :raises TypeError: If one of them was never a parameter of this factory, as Python says of an unknown keyword
        (with where a moved one went where the factory has no such setting).
    """
    name, parameters = factory.__name__, inspect.signature(factory).parameters
    for keyword in sorted(given):
        home = MOVED.get(keyword)
        if home is not None and home.split("=", 1)[0] in parameters:
            raise ConfigurationError(f"{name}() takes {home} in place of {keyword}=; see docs/settings.md.")
    if given:
        keyword = sorted(given)[0]
        home = MOVED.get(keyword)
        why = f" (elsewhere it is {home}, which {name} does not take)" if home is not None else ""
        raise TypeError(f"{name}() got an unexpected keyword argument {keyword!r}{why}.")


def given_fields(settings: Any) -> list[str]:
    """
    :param settings: A value object of this module.
    :returns: The names of its fields set to something other than their default, in field order.
    """
    return [
        field.name
        for field in dataclasses.fields(settings)
        if getattr(settings, field.name) != (field.default if field.default is not dataclasses.MISSING else None)
    ]


def refuse_fields(settings: Any, names: Iterable[str], *, factory: str, why: str) -> None:
    """
    Refuse the fields of ``settings`` a factory has no use for, when they are set.

    :param settings: A value object of this module, or ``None``.
    :param names: The fields the factory does not use.
    :param factory: The factory's name, quoted in the error.
    :param why: What the factory does instead, quoted in the error.
    :raises ConfigurationError: If one of them is set.
    """
    if settings is None:
        return
    unused = [name for name in given_fields(settings) if name in set(names)]
    if unused:
        kind = type(settings).__name__
        raise ConfigurationError(f"{factory} does not use {kind}({unused[0]}=...): {why}. Drop it.")
