"""
The few lines the command prints when a run is over: how it ended, what it gathered, what it cost, where it went.

:class:`RunSummary` is built from the run's result (the numbers the run itself published) and what the tracker saw
(its time and sub-topics); both displays print it, as ``[done]`` / ``[warning]`` lines or as a rich panel.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from haystack_deep_research.cli.exit_codes import in_words
from haystack_deep_research.cli.tracker import PARTIAL, RunProgress
from haystack_deep_research.run._budget import total_tokens
from haystack_deep_research.state import EXIT_FAILED, EXIT_INTERRUPTED

__all__ = ["RunSummary", "money"]

_READ_KINDS = ("page", "document")


def money(cost: float | None) -> str:
    """
    :param cost: US dollars, or ``None``.
    :returns: The amount as the command shows it (``$0.0123``, ``$1.25``), or ``unknown``.
    """
    if cost is None:
        return "unknown"
    return f"${cost:.2f}" if cost >= 1 else f"${cost:.4f}"


@dataclass(frozen=True)
class RunSummary:
    """
    How a run ended.

    :param exit_reason: The run's exit reason (``interrupted`` or ``failed`` when it never finished).
    :param seconds: Wall-clock time of the run.
    :param planned: Sub-topics planned (in the iterative mode: topics its rounds chose).
    :param done: Sub-topics with a note.
    :param partial: Of those, notes of a researcher that stopped early.
    :param failed: Sub-topics whose researcher failed.
    :param found: Sources in the evidence ledger (search results included).
    :param read: Pages and documents really read.
    :param verified: Citations verified in the report (``None`` when no report was written).
    :param removed: Citations removed from it.
    :param tokens: Tokens spent, all phases.
    :param cost: Estimated cost in US dollars, or ``None`` when unknown.
    :param warnings: The run's warnings.
    :param saved: Where the outputs went, one entry each (``report: report.md``).
    :param terminated: Whether SIGTERM, not Ctrl-C, interrupted the run.
    :param rounds: Search rounds done (the iterative mode; 0 otherwise).
    :param depth: The rounds the run could make (the iterative mode; 0 otherwise).
    """

    exit_reason: str
    seconds: float
    planned: int
    done: int
    partial: int
    failed: int
    found: int
    read: int
    verified: int | None
    removed: int
    tokens: int
    cost: float | None
    warnings: tuple[str, ...]
    saved: tuple[str, ...] = ()
    terminated: bool = False
    rounds: int = 0
    depth: int = 0

    @classmethod
    def of(
        cls,
        result: Mapping[str, Any],
        progress: RunProgress,
        *,
        saved: tuple[str, ...] = (),
        terminated: bool = False,
    ) -> RunSummary:
        """
        :param result: The run's result (or the partial result of a run that never finished).
        :param progress: What the tracker saw.
        :param saved: Where the outputs went.
        :param terminated: Whether SIGTERM interrupted the run.
        :returns: The summary.
        """
        sources = list(result.get("sources") or [])
        citations = result.get("citations") or {}
        usage = result.get("usage_by_phase") or {}
        tokens = sum(total_tokens(phase) for phase in usage.values()) if usage else progress.tokens
        return cls(
            exit_reason=str(result.get("exit_reason") or ""),
            seconds=progress.seconds,
            planned=progress.planned,
            done=progress.done,
            partial=sum(r.state == PARTIAL for r in progress.researchers),
            failed=progress.failed,
            found=len(sources),
            read=sum(source.get("kind") in _READ_KINDS for source in sources),
            verified=len(citations["verified"]) if "verified" in citations else None,
            removed=len(citations.get("unverified") or []),
            tokens=tokens,
            cost=result.get("cost") if usage else progress.cost,
            warnings=tuple(in_words(warning) for warning in result.get("warnings") or progress.warnings),
            saved=saved,
            terminated=terminated,
            rounds=progress.rounds,
            depth=progress.depth,
        )

    def headline(self) -> str:
        """:returns: How the run ended, in one line."""
        if self.exit_reason == EXIT_INTERRUPTED:
            return f"{'terminated (SIGTERM)' if self.terminated else 'interrupted (Ctrl-C)'} after {self.seconds:.1f}s"
        if self.exit_reason == EXIT_FAILED:
            return f"failed after {self.seconds:.1f}s"
        return f"finished in {self.seconds:.1f}s (exit reason: {self.exit_reason})"

    def lines(self) -> list[str]:
        """:returns: The summary without its warnings, one fact per line."""
        extra = [f"{self.partial} partial"] if self.partial else []
        extra += [f"{self.failed} failed"] if self.failed else []
        if self.depth:  # the iterative mode: topics chosen round by round
            rounds = f"{self.rounds} round{'' if self.rounds == 1 else 's'} of at most {self.depth}"
            subtopics = f"topics: {self.done} searched of {self.planned} chosen, in {rounds}"
        else:
            subtopics = f"sub-topics: {self.done} done of {self.planned} planned"
        subtopics += f" ({', '.join(extra)})" if extra else ""
        citations = (
            f"citations: {self.verified} verified, {self.removed} removed"
            if self.verified is not None
            else "citations: no report was checked"
        )
        lines = [
            self.headline(),
            subtopics,
            f"sources: {self.read} read, {self.found} found; {citations}",
            f"tokens: {self.tokens:,}; cost: {money(self.cost)}{' (estimated)' if self.cost is not None else ''}",
        ]
        return lines + list(self.saved)
