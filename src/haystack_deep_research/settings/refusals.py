"""
The fields of a grouped setting a shape has no use for, which its factory refuses (:func:`refuse_fields`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from haystack_deep_research.errors import ConfigurationError

__all__ = ["WEB_FIELDS", "given_fields", "refuse_fields"]

WEB_FIELDS = (
    "web",
    "search",
    "url_policy",
    "fetch_limits",
    "passage_budget",
    "summarize_over",
    "include_domains",
    "exclude_domains",
    "since",
)
"""The fields of :class:`Sources` a shape that searches with the caller's own tools has no use for."""


def given_fields(settings: Any) -> list[str]:
    """The names of its fields set to something other than their default, in field order."""
    return [
        field.name
        for field in dataclasses.fields(settings)
        if getattr(settings, field.name) != (field.default if field.default is not dataclasses.MISSING else None)
    ]


def refuse_fields(settings: Any, names: Iterable[str], *, factory: str, why: str) -> None:
    """
    Refuse the fields of ``settings`` a factory has no use for, when they are set.

    :raises ConfigurationError: If one of them is set.
    """
    if settings is None:
        return
    unused = [name for name in given_fields(settings) if name in set(names)]
    if unused:
        kind = type(settings).__name__
        raise ConfigurationError(f"{factory} does not use {kind}({unused[0]}=...): {why}. Drop it.")
