"""Argument checks shared by the factory, the tools and the value objects; each raises ConfigurationError."""

from __future__ import annotations

import inspect
import math
from typing import Any

from haystack.components.generators.chat.types import ChatGenerator

from haystack_deep_research.errors import ConfigurationError


def int_in_range(name: str, value: Any, low: int, high: int | None = None) -> int:
    """
    Check that ``value`` is an int (not a bool) in ``[low, high]``.

    :returns: The value.
    :raises ConfigurationError: If the value is not an int in range.
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        bounds = f"from {low} to {high}" if high is not None else f"of at least {low}"
        raise ConfigurationError(f"{name} must be an integer {bounds}; got {value!r}.")
    return value


def number_in_range(name: str, value: Any, low: float, high: float = math.inf, *, include_low: bool = False) -> float:
    """
    Check that ``value`` is a finite real number in ``(low, high]``, or ``[low, high]`` with ``include_low``.

    :returns: The value as a float.
    :raises ConfigurationError: If the value is not a number in range.
    """
    is_number = not isinstance(value, bool) and isinstance(value, int | float) and math.isfinite(value)
    if not is_number or not (low <= value if include_low else low < value) or value > high:
        lower = f"from {low}" if include_low else f"greater than {low}"
        upper = "" if math.isinf(high) else (f" to {high}" if include_low else f" and at most {high}")
        raise ConfigurationError(f"{name} must be a number {lower}{upper}; got {value!r}.")
    return float(value)


def chat_generator(name: str, value: Any, *, needs_tools: bool) -> ChatGenerator:
    """
    Check that ``value`` looks like a Haystack chat generator.

    :param name: The parameter name, quoted in the error.
    :param value: The object to check.
    :param needs_tools: Whether the generator's ``run`` must accept ``tools``.
    :returns: The value.
    :raises ConfigurationError: If it has no ``run(messages=...)``, or cannot take tools when it must.
    """
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
    """
    Check that ``value`` is ``True`` or ``False``.

    :returns: The value.
    :raises ConfigurationError: If it is not a bool.
    """
    if not isinstance(value, bool):
        raise ConfigurationError(f"{name} must be True or False; got {value!r}.")
    return value


def output_schema(value: Any) -> Any:
    """
    Check a factory's ``output_schema``.

    :returns: The value.
    :raises ConfigurationError: If it is anything else.
    """
    from pydantic import BaseModel

    if value is not None and not (isinstance(value, type) and issubclass(value, BaseModel)):
        raise ConfigurationError(
            f"output_schema must be a pydantic BaseModel subclass, for example ResearchSummary, or None; got {value!r}."
        )
    return value
