"""The options of ``create_deep_research_agent``: each role's model, the checks of its own parameters (the grouped
settings check themselves), and what each phase's model is."""

from __future__ import annotations

from typing import Any

from haystack.components.generators.chat.types import ChatGenerator

from haystack_deep_research import _checks
from haystack_deep_research.agents.models import DEFAULT_MODEL, DEFAULT_SMALL_MODEL, default_chat_generator
from haystack_deep_research.research.loop_guard import MAX_LOOP_THRESHOLD, MIN_LOOP_THRESHOLD
from haystack_deep_research.run._phases import model_name
from haystack_deep_research.settings import Grounding
from haystack_deep_research.state import (
    PHASE_GROUND,
    PHASE_ORCHESTRATOR,
    PHASE_RESEARCH,
    PHASE_SCOPE,
    PHASE_STRUCTURE,
    PHASE_SUMMARIZE,
    PHASE_WRITE,
)

__all__ = ["ROLES", "check_choices", "check_limits", "phase_models", "role_models"]

ROLES = {
    "scope_llm": (DEFAULT_MODEL, False),
    "orchestrator_llm": (DEFAULT_MODEL, True),
    "researcher_llm": (DEFAULT_SMALL_MODEL, True),
    "summarizer_llm": (DEFAULT_SMALL_MODEL, False),
    "writer_llm": (DEFAULT_MODEL, False),
}


def role_models(given: dict[str, ChatGenerator | None]) -> dict[str, ChatGenerator]:
    """Each role's model: the one given (checked under the factory's parameter name) or the role's default."""
    models = {}
    for role, (default, needs_tools) in ROLES.items():
        model = given[role] if given[role] is not None else default_chat_generator(default)
        models[role] = _checks.chat_generator(role, model, needs_tools=needs_tools)
    return models


def check_limits(**limits: int) -> dict[str, int]:
    """
    Check the factory's counts under their own names before any component is built.

    :param limits: ``max_subtopics``, ``max_concurrent_researchers``, ``max_orchestrator_steps``,
        ``max_researcher_steps``, ``max_search_results``, ``max_content_length`` and ``loop_threshold``.
    :returns: The limits.
    :raises ConfigurationError: If one is out of range; the message names it and the range.
    """
    _checks.int_in_range("max_subtopics", limits["max_subtopics"], 1, 50)
    _checks.int_in_range("max_concurrent_researchers", limits["max_concurrent_researchers"], 1, 50)
    _checks.int_in_range("max_orchestrator_steps", limits["max_orchestrator_steps"], 1, 100)
    _checks.int_in_range("max_researcher_steps", limits["max_researcher_steps"], 1, 200)
    _checks.int_in_range("max_search_results", limits["max_search_results"], 1, 20)
    _checks.int_in_range("max_content_length", limits["max_content_length"], 1_000, 1_000_000)
    _checks.int_in_range("loop_threshold", limits["loop_threshold"], MIN_LOOP_THRESHOLD, MAX_LOOP_THRESHOLD)
    return limits


def check_choices(*, clarify: Any, output_schema: Any) -> None:
    """
    :param clarify: The factory's ``clarify``.
    :param output_schema: The factory's ``output_schema``.
    :raises ConfigurationError: If ``clarify`` is not a bool or ``output_schema`` not a pydantic model class.
    """
    _checks.boolean("clarify", clarify)
    _checks.output_schema(output_schema)


def phase_models(models: dict[str, ChatGenerator], grounding: Grounding | None) -> dict[str, str]:
    """The model each phase calls (what its usage costs)."""
    writer = model_name(models["writer_llm"])
    judge = grounding.judge_llm if grounding is not None else None
    return {
        PHASE_SCOPE: model_name(models["scope_llm"]),
        PHASE_ORCHESTRATOR: model_name(models["orchestrator_llm"]),
        PHASE_RESEARCH: model_name(models["researcher_llm"]),
        PHASE_SUMMARIZE: model_name(models["summarizer_llm"]),
        PHASE_WRITE: writer,
        PHASE_GROUND: model_name(judge) if judge is not None else writer,
        PHASE_STRUCTURE: writer,
    }
