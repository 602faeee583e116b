"""Token usage arithmetic: sums, differences and totals of the usage dicts that chat generators report."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["add_usage", "total_tokens", "usage_delta"]

_INPUT_KEYS = ("prompt_tokens", "input_tokens")
_OUTPUT_KEYS = ("completion_tokens", "output_tokens")


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def add_usage(total: Mapping[str, Any] | None, usage: Mapping[str, Any] | None) -> dict[str, Any]:
    """
    Sum two token-usage dicts key by key (nested dicts recursively, numbers added, anything else replaced).

    :param total: The usage so far, or ``None``.
    :param usage: The usage to add, or ``None``.
    :returns: A new dict holding the sum.
    """
    result: dict[str, Any] = dict(total or {})
    for key, value in (usage or {}).items():
        current = result.get(key)
        if isinstance(value, Mapping):
            result[key] = add_usage(current if isinstance(current, Mapping) else None, value)
        elif _number(value) is not None and _number(current) is not None:
            result[key] = current + value
        else:
            result[key] = value
    return result


def usage_delta(current: Mapping[str, Any] | None, recorded: Mapping[str, Any] | None) -> dict[str, Any]:
    """
    What a usage dict holds beyond a part already recorded (numbers subtracted key by key, nested dicts too).

    :param current: The usage now.
    :param recorded: The part already counted, or ``None``.
    :returns: The numeric difference; keys with no difference are left out.
    """
    recorded = recorded or {}
    delta: dict[str, Any] = {}
    for key, value in (current or {}).items():
        before = recorded.get(key)
        if isinstance(value, Mapping):
            nested = usage_delta(value, before if isinstance(before, Mapping) else None)
            if nested:
                delta[key] = nested
        elif _number(value) is not None:
            difference = value - (_number(before) or 0)
            if difference:
                delta[key] = difference
    return delta


def total_tokens(usage: Mapping[str, Any] | None) -> int:
    """
    The total tokens of a usage dict: ``total_tokens`` when reported, else input plus output tokens.

    :param usage: A usage dict (OpenAI Chat or Responses naming), or ``None``.
    :returns: The total, 0 when nothing is known.
    """
    usage = usage or {}
    reported = _number(usage.get("total_tokens"))
    if reported:
        return int(reported)
    spent_in = next((_number(usage[key]) or 0.0 for key in _INPUT_KEYS if key in usage), 0.0)
    spent_out = next((_number(usage[key]) or 0.0 for key in _OUTPUT_KEYS if key in usage), 0.0)
    return int(spent_in + spent_out)
