"""
The exit status of ``deep-research`` and of every subcommand, and how an error becomes one line on stderr.

One table for every subcommand (the main command, ``--mode iterative``, ``replay``, ``update``, ``scan``, ``mcp``,
``check``):

=====  ==========================================================================================================
code   meaning
=====  ==========================================================================================================
0      done: the research succeeded (``check``: every citation verified, and with ``--judge`` supported)
1      failed: an error ended the command before its work was done (a provider or network error before a report;
       ``check``: a citation of a URL that was never read, or a claim judged unsupported)
2      a usage error: a bad option, a missing key, an unusable path, a bad question; nothing was run
3      ``--clarify`` without a terminal: the clarifying question was printed; run again with the answer
4      ``check``: the report's citations cannot be read (a fence that never closes, markers with no reference list)
5      partial: the report was written from part of the research (a budget spent, the orchestrator failed after
       research began, grounding exhausted, claims not judged, no structured output); ``scan``: some items failed;
       ``check --judge``: some claims could not be judged
6      research failed: a report was written but the research behind it failed (no evidence, every researcher failed,
       the writer failed); ``scan``: every item failed
130    interrupted (Ctrl-C): what was gathered was saved as a partial report
143    terminated (SIGTERM, as ``timeout``, systemd and Kubernetes send): saved exactly as for Ctrl-C
=====  ==========================================================================================================
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from haystack_deep_research.errors import DeepResearchError, UsageError

__all__ = ["FAILED_RESEARCH", "PARTIAL_RESEARCH", "ExitCode", "error_line", "exit_code_of", "outcome_code"]

FAILED_RESEARCH = frozenset({"no_evidence", "writer_failed", "failed", "summary_failed"})
"""Exit reasons of a run whose report stands on failed research."""
PARTIAL_RESEARCH = frozenset(
    {
        "token_budget",
        "time_budget",
        "cost_budget",
        "orchestrator_failed",
        "loop_detected",
        "max_iterations",
        "grounding_exhausted",
        "not_judged",
        "structured_output_failed",
        "decision_failed",
    }
)
"""Exit reasons of a run whose report stands on part of the research it set out to do."""


class ExitCode(IntEnum):
    """The exit status of ``deep-research`` (see the module docstring)."""

    OK = 0
    RUN_FAILED = 1
    USAGE = 2
    CLARIFICATION_NEEDED = 3
    UNREADABLE = 4
    PARTIAL = 5
    RESEARCH_FAILED = 6
    INTERRUPTED = 130
    TERMINATED = 143


def exit_code_of(error: BaseException) -> ExitCode:
    """
    :param error: What ended the command.
    :returns: :attr:`ExitCode.USAGE` for a mistake the user can fix in the command, else :attr:`ExitCode.RUN_FAILED`.
    """
    return ExitCode.USAGE if isinstance(error, UsageError) else ExitCode.RUN_FAILED


def outcome_code(result: dict[str, Any]) -> ExitCode:
    """
    :param result: The outputs of a finished run (any shape).
    :returns: :attr:`ExitCode.OK`, :attr:`ExitCode.PARTIAL`, :attr:`ExitCode.RESEARCH_FAILED` or
        :attr:`ExitCode.CLARIFICATION_NEEDED`, from its ``exit_reason`` and its notes: a run that gathered no note
        (every researcher failed) failed, whatever its exit reason says.
    """
    reason = str(result.get("exit_reason") or "")
    if reason == "clarification_needed":
        return ExitCode.CLARIFICATION_NEEDED
    notes = result.get("notes")
    if reason in FAILED_RESEARCH or (isinstance(notes, list) and not notes):
        return ExitCode.RESEARCH_FAILED
    return ExitCode.PARTIAL if reason in PARTIAL_RESEARCH else ExitCode.OK


def error_line(error: BaseException, *, command: str = "deep-research") -> str:
    """
    :param error: What ended the command.
    :param command: The command's name, as the user typed it.
    :returns: The error as the one line the command prints: the library's own message for an error it raised on
        purpose, the error's type and message for a provider or network failure.
    """
    if isinstance(error, DeepResearchError):
        return f"{command}: error: {error}"
    return f"{command}: error: the run failed: {type(error).__name__}: {error}"
