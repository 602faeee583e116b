"""
Exit conditions: when the deep agent's tool loop ends, as small objects that compose (``a & b``, ``a | b``) and test
without a model; the reason of the condition that fired is the run's ``exit_reason``. The deep agent's default::

    base = ToolUsed(submit_tool, require_success=True) & ConfidenceMet(min_confidence)   # or TextReply()
    termination = base | TokenLimit(budgets.tokens) | MaxIterations(max_iterations)      # with Budgets(tokens=...)

Each condition is described in docs/deep-agent.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from haystack_deep_research import _checks
from haystack_deep_research._serialization import Tagged
from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.state import EXIT_CONFIDENCE_MET, EXIT_MAX_ITERATIONS, EXIT_TEXT, EXIT_TOKEN_BUDGET

__all__ = [
    "AllOf",
    "AnyOf",
    "ConfidenceMet",
    "ExitCondition",
    "MaxIterations",
    "StepCall",
    "StepFacts",
    "TextReply",
    "TokenLimit",
    "ToolUsed",
]


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


class ExitCondition(Tagged):
    """
    A condition that ends the loop. Compose with ``&`` (both) and ``|`` (either). It serializes as ``{"type": tag,
    **its parameters}`` (see :func:`exit_condition_from_dict`).
    """

    def fired(self, facts: StepFacts) -> str | None:
        """
        :param facts: What the last step did.
        :returns: The exit reason when the condition fires, else ``None``.
        """
        raise NotImplementedError

    def describe(self) -> str:
        """:returns: The condition in words."""
        raise NotImplementedError

    def tools(self) -> set[str]:
        """:returns: The tools whose calls this condition looks for."""
        return set()

    def __and__(self, other: ExitCondition) -> ExitCondition:
        return AllOf((self, other))

    def __or__(self, other: ExitCondition) -> ExitCondition:
        return AnyOf((self, other))

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self.describe()}>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ExitCondition) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash(repr(self.to_dict()))


class ToolUsed(ExitCondition):
    """
    Fires when the last step called ``tool`` (and, with ``require_success``, the call succeeded).

    :param tool: The tool's name.
    :param require_success: Whether only a successful call counts (default: a submit tool that raises does not end
        the loop; the model reads the rejection and goes on).
    :raises ConfigurationError: If ``tool`` is not a non-empty string.
    """

    tag = "tool_used"

    def __init__(self, tool: str, *, require_success: bool = True) -> None:
        if not isinstance(tool, str) or not tool.strip():
            raise ConfigurationError(f"ToolUsed needs the name of a tool; got {tool!r}.")
        self.tool = tool
        self.require_success = bool(require_success)

    def fired(self, facts: StepFacts) -> str | None:
        called = [c for c in facts.calls if c.tool == self.tool and (c.succeeded or not self.require_success)]
        return self.tool if called else None

    def describe(self) -> str:
        return f"{self.tool} was called{' and succeeded' if self.require_success else ''}"

    def tools(self) -> set[str]:
        return {self.tool}


class ConfidenceMet(ExitCondition):
    """
    Fires when a call of the last step carries a ``confidence`` of at least ``minimum``.

    :param minimum: The lowest confidence that ends the loop, 0 to 1.
    :raises ConfigurationError: If ``minimum`` is outside 0 to 1.
    """

    tag = "confidence_met"

    def __init__(self, minimum: float) -> None:
        self.minimum = _checks.number_in_range("min_confidence", minimum, 0.0, 1.0, include_low=True)

    def fired(self, facts: StepFacts) -> str | None:
        carried = [confidence_of(call.arguments) for call in facts.calls if call.succeeded]
        known = [value for value in carried if value is not None]
        if known:
            return EXIT_CONFIDENCE_MET if max(known) >= self.minimum else None
        return EXIT_CONFIDENCE_MET if facts.calls and self.minimum <= 0 else None

    def describe(self) -> str:
        return f"confidence is at least {self.minimum:g}"


class TokenLimit(ExitCondition):
    """
    Fires once the run has spent ``tokens`` tokens.

    :param tokens: The limit, 1 to 1,000,000,000.
    :raises ConfigurationError: If it is out of range.
    """

    tag = "token_limit"

    def __init__(self, tokens: int) -> None:
        self.tokens = _checks.int_in_range("TokenLimit(tokens=...)", tokens, 1, 1_000_000_000)

    def fired(self, facts: StepFacts) -> str | None:
        return EXIT_TOKEN_BUDGET if facts.tokens >= self.tokens else None

    def describe(self) -> str:
        return f"{self.tokens:,} tokens are spent"


class MaxIterations(ExitCondition):
    """
    Fires once the agent has taken ``steps`` steps.

    :param steps: The limit, 1 to 1,000.
    :raises ConfigurationError: If it is out of range.
    """

    tag = "max_iterations"

    def __init__(self, steps: int) -> None:
        self.steps = _checks.int_in_range("max_iterations", steps, 1, 1_000)

    def fired(self, facts: StepFacts) -> str | None:
        return EXIT_MAX_ITERATIONS if facts.steps >= self.steps else None

    def describe(self) -> str:
        return f"{self.steps} steps are taken"


class TextReply(ExitCondition):
    """Fires when the model answered without calling a tool."""

    tag = "text_reply"

    def fired(self, facts: StepFacts) -> str | None:
        return EXIT_TEXT if facts.text_reply else None

    def describe(self) -> str:
        return "the model answered without calling a tool"


class _Composite(ExitCondition):
    joiner = ""

    def __init__(self, parts: tuple[ExitCondition, ...]) -> None:
        self.parts = _flatten(type(self), parts)

    def tools(self) -> set[str]:
        return set().union(*(part.tools() for part in self.parts))

    def describe(self) -> str:
        return f" {self.joiner} ".join(f"({part.describe()})" for part in self.parts)


class AllOf(_Composite):
    """
    Fires when every part fires; the reason is the first part's.

    :param parts: The conditions.
    """

    tag = "all_of"
    joiner = "and"

    def fired(self, facts: StepFacts) -> str | None:
        reasons = [part.fired(facts) for part in self.parts]
        return reasons[0] if all(reason is not None for reason in reasons) else None


class AnyOf(_Composite):
    """
    Fires when any part fires; the reason is that of the first part that fired.

    :param parts: The conditions.
    """

    tag = "any_of"
    joiner = "or"

    def fired(self, facts: StepFacts) -> str | None:
        return next((reason for part in self.parts if (reason := part.fired(facts)) is not None), None)


def _flatten(kind: type[_Composite], parts: tuple[ExitCondition, ...]) -> tuple[ExitCondition, ...]:
    flat: list[ExitCondition] = []
    for part in parts:
        if not isinstance(part, ExitCondition):
            raise ConfigurationError(f"exit conditions compose only with exit conditions; got {type(part).__name__}.")
        flat.extend(part.parts if isinstance(part, kind) else (part,))
    return tuple(flat)


def exit_condition_from_dict(data: Mapping[str, Any]) -> ExitCondition:
    """
    :param data: What :meth:`ExitCondition.to_dict` returned.
    :returns: The condition.
    :raises ConfigurationError: If ``data`` is not a serialized condition.
    """
    if isinstance(data, Mapping) and data.get("type") in (AllOf.tag, AnyOf.tag):
        data = {**data, "parts": tuple(exit_condition_from_dict(part) for part in data.get("parts") or [])}
    return ExitCondition.tagged_from_dict(data, "exit condition")
