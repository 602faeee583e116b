"""
What an exit condition sees of one step of the deep agent's tool loop: its tool calls (:class:`StepCall`), the steps and
tokens spent so far (:class:`StepFacts`), and the ``confidence`` a call carries (:func:`confidence_of`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["StepCall", "StepFacts", "confidence_of"]


@dataclass(frozen=True)
class StepCall:
    """
    One tool call of the last step.

    :param tool: The tool's name.
    :param arguments: The arguments it ran with.
    :param succeeded: Whether it returned without an error.
    """

    tool: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    succeeded: bool = True


@dataclass(frozen=True)
class StepFacts:
    """
    What an exit condition sees.

    :param steps: Steps (model calls) the agent has taken, this one included.
    :param tokens: Tokens the run has spent so far.
    :param calls: The tool calls of the last step (none at a step boundary or after a text reply).
    :param text_reply: Whether the last reply had no tool calls.
    """

    steps: int = 0
    tokens: int = 0
    calls: tuple[StepCall, ...] = ()
    text_reply: bool = False


def confidence_of(arguments: Mapping[str, Any]) -> float | None:
    """
    :param arguments: A tool call's arguments.
    :returns: The ``confidence`` they carry (at the top level or in one nested object), as a number, or ``None``.
    """
    found = arguments.get("confidence")
    if found is None:
        nested = [value.get("confidence") for value in arguments.values() if isinstance(value, Mapping)]
        found = next((value for value in nested if value is not None), None)
    if isinstance(found, str):
        try:
            found = float(found.strip())
        except ValueError:
            return None
    if isinstance(found, bool) or not isinstance(found, int | float) or not math.isfinite(found):
        return None
    return float(found)
