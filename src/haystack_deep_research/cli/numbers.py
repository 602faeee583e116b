"""
The argparse ``type`` readers of the command's numeric options: a bad value is a usage error in the option's own
terms (``argument --max-subtopics: must be an integer from 1 to 50``).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

__all__ = ["bounded_int", "bounded_number"]


def bounded_int(low: int, high: int) -> Callable[[str], int]:
    """
    :param low: The smallest value accepted.
    :param high: The largest value accepted.
    :returns: An argparse ``type`` reading an integer from ``low`` to ``high``; anything else is a one-line error.
    """

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = low - 1
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be an integer from {low} to {high}; got {text!r}")
        return value

    return parse


def bounded_number(high: float) -> Callable[[str], float]:
    """
    :param high: The largest value accepted.
    :returns: An argparse ``type`` reading a number above 0 and at most ``high``; anything else is a one-line error.
    """

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = -1.0
        if not 0 < value <= high:  # NaN fails both comparisons
            raise argparse.ArgumentTypeError(f"must be a number above 0 and at most {high:g}; got {text!r}")
        return value

    return parse
