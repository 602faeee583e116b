"""
What a shape adds to the report written in parts (:class:`Framing`: its outline, topics, causal chain, phase), and
what writing gave (:class:`Written`); the writing itself is in :mod:`.sections`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from haystack_deep_research._prompts import fence
from haystack_deep_research.report.draft import Outline
from haystack_deep_research.state import PHASE_WRITE

__all__ = ["Framing", "Written"]


@dataclass(frozen=True)
class Framing:
    """
    What a shape adds to the report written in parts (see the module docstring).

    :param outline: The headings around the sections.
    :param topics: The topics searched, which the opening reads.
    :param causal_chain: A causal chain built from the notes, which the opening explains the answer along (``""``:
        none).
    :param phase: The phase the calls' usage and warnings count toward.
    :param role: The calls' role, a tracing tag.
    """

    outline: Outline = field(default_factory=Outline)
    topics: Sequence[str] = ()
    causal_chain: str = ""
    phase: str = PHASE_WRITE
    role: str = "writer"

    def opening_variables(self) -> dict[str, Any]:
        """:returns: The opening prompt's variables that come from the framing."""
        outline = self.outline
        return {
            "summary": outline.summary,
            "findings": outline.findings,
            "closing": list(outline.closing),
            "translate": outline.translate,
            "topics": [fence(topic) for topic in self.topics],
            "causal_chain": fence(self.causal_chain),
            "title_only": False,
        }


@dataclass(frozen=True)
class Written:
    """
    What writing the report gave.

    :param report: The report, or ``""`` when no part could be written.
    :param parts: How many parts were asked for.
    :param failed: How many of them the writer could not write.
    :param why: Why the first failed part failed, or ``""``.
    """

    report: str
    parts: int
    failed: int = 0
    why: str = ""
