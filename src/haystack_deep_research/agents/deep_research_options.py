"""The options of ``create_deep_research_agent``: each role's model, the checks of every parameter, and what each
phase's model costs."""

from __future__ import annotations

from typing import Any

from haystack.components.generators.chat.types import ChatGenerator
from haystack.tools import Tool
from pydantic import BaseModel

from haystack_deep_research import _checks
from haystack_deep_research.agents.models import DEFAULT_MODEL, DEFAULT_SMALL_MODEL, default_chat_generator
from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.research.loop_guard import MAX_LOOP_THRESHOLD, MIN_LOOP_THRESHOLD
from haystack_deep_research.run import RunBudget, model_name
from haystack_deep_research.run.cost import CostMeter
from haystack_deep_research.state import (
    PHASE_GROUND,
    PHASE_ORCHESTRATOR,
    PHASE_RESEARCH,
    PHASE_SCOPE,
    PHASE_STRUCTURE,
    PHASE_SUMMARIZE,
    PHASE_WRITE,
)
from haystack_deep_research.tools.passages import passage_budget_value
from haystack_deep_research.web import FetchLimits, UrlPolicy

__all__ = ["ROLES", "check_options", "phase_models", "role_models"]

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


def check_options(options: dict[str, Any]) -> None:
    """Check every parameter under the factory's own name before any component is built."""
    _checks.int_in_range("max_subtopics", options["max_subtopics"], 1, 50)
    _checks.int_in_range("max_concurrent_researchers", options["max_concurrent_researchers"], 1, 50)
    _checks.int_in_range("max_orchestrator_steps", options["max_orchestrator_steps"], 1, 100)
    _checks.int_in_range("max_researcher_steps", options["max_researcher_steps"], 1, 200)
    _checks.int_in_range("max_search_results", options["max_search_results"], 1, 20)
    _checks.int_in_range("max_content_length", options["max_content_length"], 1_000, 1_000_000)
    passage_budget_value(options["passage_budget"])
    _checks.int_in_range("loop_threshold", options["loop_threshold"], MIN_LOOP_THRESHOLD, MAX_LOOP_THRESHOLD)
    _checks.number_in_range("grounding_threshold", options["grounding_threshold"], 0.0, 1.0, include_low=True)
    _checks.int_in_range("max_regenerations", options["max_regenerations"], 0, 5)
    _checks.int_in_range("max_replans", options["max_replans"], 0, 5)
    _checks.number_in_range("cache_ttl", options["cache_ttl"], 0.0)
    RunBudget(
        token_budget=options["token_budget"], time_budget=options["time_budget"], cost_budget=options["cost_budget"]
    )
    kinds = (("search_tool", Tool, "Haystack Tool"), ("url_policy", UrlPolicy, "UrlPolicy"))
    for name, kind, called in (*kinds, ("fetch_limits", FetchLimits, "FetchLimits")):
        value = options[name]
        if value is not None and not isinstance(value, kind):
            raise ConfigurationError(f"{name} must be a {called}; got {type(value).__name__}.")
    if not isinstance(options["grounding"], bool):
        raise ConfigurationError(f"grounding must be True or False; got {options['grounding']!r}.")
    if options["judge_llm"] is not None:
        if not options["grounding"]:
            raise ConfigurationError(
                "judge_llm is used only with grounding=True; pass grounding=True or drop judge_llm."
            )
        _checks.chat_generator("judge_llm", options["judge_llm"], needs_tools=False)
    _checks.boolean("clarify", options["clarify"])
    if not isinstance(options["web"], bool):
        raise ConfigurationError(f"web must be True or False; got {options['web']!r}.")
    if options["search"] is not None and options["search_tool"] is not None:
        raise ConfigurationError("pass either search or search_tool, not both (search_tool is the older name).")
    if not options["web"]:
        if options["search"] is not None or options["search_tool"] is not None:
            raise ConfigurationError("web=False has no web search: drop search / search_tool, or set web=True.")
        if not options["datastores"] and not options["mcp_servers"]:
            raise ConfigurationError(
                "web=False leaves the researchers nothing to search: pass datastores={...} (for example "
                "index_folder('./docs')) or mcp_servers=[MCPServer(...)], or set web=True."
            )
    schema = options["output_schema"]
    if schema is not None and not (isinstance(schema, type) and issubclass(schema, BaseModel)):
        raise ConfigurationError(
            f"output_schema must be a pydantic BaseModel subclass, for example ResearchSummary; got {schema!r}."
        )


def phase_models(models: dict[str, ChatGenerator], options: dict[str, Any]) -> dict[str, str]:
    """The model each phase calls (what its usage costs); checks that a cost budget can be priced."""
    writer = model_name(models["writer_llm"])
    phases = {
        PHASE_SCOPE: model_name(models["scope_llm"]),
        PHASE_ORCHESTRATOR: model_name(models["orchestrator_llm"]),
        PHASE_RESEARCH: model_name(models["researcher_llm"]),
        PHASE_SUMMARIZE: model_name(models["summarizer_llm"]),
        PHASE_WRITE: writer,
        PHASE_GROUND: model_name(options["judge_llm"]) if options["judge_llm"] is not None else writer,
        PHASE_STRUCTURE: writer,
    }
    if options["cost_budget"] is not None:
        unpriced = CostMeter(prices=options["prices"]).unpriced(phases)
        if unpriced:
            raise ConfigurationError(
                f"cost_budget needs the price of every model the run calls; none is known for {', '.join(unpriced)}. "
                f"Pass prices={{{unpriced[0]!r}: Price(input_per_mtok=..., output_per_mtok=...)}}."
            )
    return phases
