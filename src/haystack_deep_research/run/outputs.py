"""The outputs of an agent's State that mirror its run, set from the run whenever it changes."""

from __future__ import annotations

from haystack.components.agents.state import State
from haystack.components.agents.state.state_utils import replace_values

from haystack_deep_research.run.research_run import ResearchRun
from haystack_deep_research.state import BRIEF, COST, NOTES, SOURCES, TOKEN_USAGE, USAGE_BY_PHASE, WARNINGS

__all__ = ["publish"]


def publish(state: State, run: ResearchRun) -> None:
    """
    Set the outputs that mirror the run: ``brief``, ``notes``, ``sources``, ``warnings``, ``usage_by_phase`` (each
    phase's usage with its ``model`` and ``cost``), ``cost`` (US dollars, ``None`` when unknown) and ``token_usage``
    (all phases), those the agent's state schema declares.

    :param state: The orchestrator's live State.
    :param run: The run.
    """
    usage = run.usage_report()  # may warn once of an unknown cost, so before the warnings are published
    outputs = {
        BRIEF: run.brief,
        NOTES: run.notes(),
        SOURCES: run.ledger.to_list(),
        WARNINGS: run.warnings(),
        USAGE_BY_PHASE: usage,
        COST: run.cost(),
        TOKEN_USAGE: run.total_usage(),
    }
    for key, value in outputs.items():
        if key in state.schema:  # an agent shape declares the outputs it has
            state.set(key, value, handler_override=replace_values)
