"""
The grounding repair policy, one for every shape that repairs what its judge found unsupported.

After each judgement: a score at the threshold is done; a spent budget stops the repair (no further model call starts);
below the threshold the text is first rewritten from the same evidence, without tools (``max_regenerations`` times
over the whole run), then the unsupported claims are researched again and the text rewritten (``max_replans`` times);
once both are used up the repair is exhausted. The deep research agent's grounding stage runs this policy inside its
write hook; the research workflow's router runs it as the branches of its Pipeline.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from haystack_deep_research import _checks

__all__ = ["RepairPolicy", "RepairStep"]

RepairStep = Literal["done", "spent", "regenerate", "replan", "exhausted"]
"""What the repair does next."""


@dataclass(frozen=True)
class RepairPolicy:
    """
    :param threshold: The lowest acceptable grounding score, 0 to 1.
    :param max_regenerations: Rewrites without tools in one run, 0 to 5.
    :param max_replans: Rounds of researching the unsupported claims again, 0 to 5.
    :raises ConfigurationError: If a value is out of its range (the message names the parameter).
    """

    threshold: float = 0.65
    max_regenerations: int = 1
    max_replans: int = 2

    def __post_init__(self) -> None:
        _checks.number_in_range("threshold", self.threshold, 0.0, 1.0, include_low=True)
        _checks.int_in_range("max_regenerations", self.max_regenerations, 0, 5)
        _checks.int_in_range("max_replans", self.max_replans, 0, 5)

    def next_step(self, score: float, *, regenerations: int, replans: int, spent: str | None) -> RepairStep:
        """
        :param score: The grounding score of the current text.
        :param regenerations: Rewrites made so far in the run.
        :param replans: Replans made so far in the run.
        :param spent: The budget the run has spent (its name), or ``None``.
        :returns: What the repair does next.
        """
        if score >= self.threshold:
            return "done"
        if spent is not None:
            return "spent"
        if regenerations < self.max_regenerations:
            return "regenerate"
        if replans < self.max_replans:
            return "replan"
        return "exhausted"
