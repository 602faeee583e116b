"""The shared outputs a run holds, under their shared names: what every shape returns, and mirrors while it runs."""

from __future__ import annotations

from typing import Any

from haystack.components.agents.state import State
from haystack.components.agents.state.state_utils import replace_values

from haystack_deep_research.run.research_run import ResearchRun
from haystack_deep_research.state import (
    BRIEF,
    CONTRADICTIONS,
    COST,
    NOTES,
    SOURCES,
    TOKEN_USAGE,
    USAGE_BY_PHASE,
    WARNINGS,
)

__all__ = ["publish", "run_outputs"]


def run_outputs(run: ResearchRun) -> dict[str, Any]:
    """
    :param run: The run.
    :returns: ``brief``, ``notes``, ``sources`` (the ledger), ``warnings``, ``usage_by_phase`` (each phase's usage with
        its ``model`` and ``cost``), ``cost`` (US dollars, ``None`` when unknown), ``token_usage`` (all phases) and
        ``contradictions`` (what the report's contradiction check found, see
        :mod:`haystack_deep_research.report.contradictions`; ``[]`` before it ran).
    """
    usage = run.usage_report()  # may warn once of an unknown cost, so before the warnings are read
    return {
        BRIEF: run.brief,
        NOTES: run.notes(),
        SOURCES: run.ledger.to_list(),
        WARNINGS: run.warnings(),
        USAGE_BY_PHASE: usage,
        COST: run.cost(),
        TOKEN_USAGE: run.total_usage(),
        CONTRADICTIONS: list(run.resource(CONTRADICTIONS, list)),
    }


def publish(state: State, run: ResearchRun) -> None:
    """
    Set the outputs of :func:`run_outputs` that the agent's state schema declares.

    :param state: The orchestrator's live State.
    :param run: The run.
    """
    for key, value in run_outputs(run).items():
        if key in state.schema:  # an agent shape declares the outputs it has
            state.set(key, value, handler_override=replace_values)
