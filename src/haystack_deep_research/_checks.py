"""Argument checks shared by the factories, the tools and the value objects; each raises a ConfigurationError
that names the argument and what it must be."""

from __future__ import annotations

import inspect
import math
from typing import Any

from haystack.components.generators.chat.types import ChatGenerator

from haystack_deep_research.errors import ConfigurationError


def int_in_range(name: str, value: Any, low: int, high: int | None = None) -> int:
    """:returns: ``value``, an int (not a bool) in ``[low, high]``; else a ConfigurationError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        bounds = f"from {low} to {high}" if high is not None else f"of at least {low}"
        raise ConfigurationError(f"{name} must be an integer {bounds}; got {value!r}.")
    return value


def number_in_range(name: str, value: Any, low: float, high: float = math.inf, *, include_low: bool = False) -> float:
    """:returns: ``value`` as a float: a finite number in ``(low, high]`` (``[low, high]`` with ``include_low``)."""
    is_number = not isinstance(value, bool) and isinstance(value, int | float) and math.isfinite(value)
    if not is_number or not (low <= value if include_low else low < value) or value > high:
        lower = f"from {low}" if include_low else f"greater than {low}"
        upper = "" if math.isinf(high) else (f" to {high}" if include_low else f" and at most {high}")
        raise ConfigurationError(f"{name} must be a number {lower}{upper}; got {value!r}.")
    return float(value)


def chat_generator(name: str, value: Any, *, needs_tools: bool) -> ChatGenerator:
    """:returns: ``value``, which has a ``run(messages=...)`` (taking ``tools`` too when ``needs_tools``)."""
    run = getattr(value, "run", None)
    if not callable(run):
        raise ConfigurationError(
            f"{name} must be a Haystack chat generator (an object with run(messages=...)); got {type(value).__name__}."
        )
    parameters = inspect.signature(run).parameters
    if "messages" not in parameters:
        raise ConfigurationError(f"{name}.run must accept a 'messages' argument; {type(value).__name__}.run does not.")
    if needs_tools and "tools" not in parameters:
        raise ConfigurationError(
            f"{name} must support tool calling (its run method needs a 'tools' parameter); "
            f"{type(value).__name__} does not. Use a chat generator with tool support."
        )
    return value


def boolean(name: str, value: Any) -> bool:
    """:returns: ``value``, ``True`` or ``False``."""
    if not isinstance(value, bool):
        raise ConfigurationError(f"{name} must be True or False; got {value!r}.")
    return value


def output_schema(value: Any) -> Any:
    """:returns: A factory's ``output_schema``: a pydantic model class or ``None``."""
    from pydantic import BaseModel

    if value is not None and not (isinstance(value, type) and issubclass(value, BaseModel)):
        raise ConfigurationError(
            f"output_schema must be a pydantic BaseModel subclass, for example ResearchSummary, or None; got {value!r}."
        )
    return value
