"""Argument checks shared by the factory, the tools and the value objects; each raises ConfigurationError."""

from __future__ import annotations

import inspect
from typing import Any

from haystack_deep_research.errors import ConfigurationError


def int_in_range(name: str, value: Any, low: int, high: int) -> int:
    """
    Check that ``value`` is an int (not a bool) in ``[low, high]``.

    :param name: The parameter name, quoted in the error.
    :param value: The value to check.
    :param low: Smallest allowed value.
    :param high: Largest allowed value.
    :returns: The value.
    :raises ConfigurationError: If the value is not an int in range.
    """
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ConfigurationError(f"{name} must be an integer from {low} to {high}; got {value!r}.")
    return value


def number_in_range(name: str, value: Any, low: float, high: float) -> float:
    """
    Check that ``value`` is a real number in ``(low, high]`` (``low`` excluded).

    :param name: The parameter name, quoted in the error.
    :param value: The value to check.
    :param low: The exclusive lower bound.
    :param high: The inclusive upper bound.
    :returns: The value as a float.
    :raises ConfigurationError: If the value is not a number in range.
    """
    if isinstance(value, bool) or not isinstance(value, int | float) or not low < value <= high:
        raise ConfigurationError(f"{name} must be a number greater than {low} and at most {high}; got {value!r}.")
    return float(value)


def number_between(name: str, value: Any, low: float, high: float) -> float:
    """
    Check that ``value`` is a real number in ``[low, high]`` (both included).

    :param name: The parameter name, quoted in the error.
    :param value: The value to check.
    :param low: The smallest allowed value.
    :param high: The largest allowed value.
    :returns: The value as a float.
    :raises ConfigurationError: If the value is not a number in range.
    """
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise ConfigurationError(f"{name} must be a number from {low} to {high}; got {value!r}.")
    return float(value)


def chat_generator(name: str, value: Any, *, needs_tools: bool) -> Any:
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
