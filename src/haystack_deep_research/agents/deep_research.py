"""``create_deep_research_agent``: the front door. Wiring only; every behaviour lives in the hooks and tools."""

from __future__ import annotations

import os
from typing import Any, TypeVar

from haystack.components.agents import Agent
from haystack.components.generators.chat.types import ChatGenerator
from haystack.hooks.human_in_the_loop.types import ConfirmationStrategy
from haystack.tools import Tool
from pydantic import BaseModel

from haystack_deep_research import _checks
from haystack_deep_research._prompts import (
    ORCHESTRATOR_SYSTEM,
    RESEARCHER_SYSTEM,
    RESEARCHER_SYSTEM_DOCUMENTS,
    render_text,
)
from haystack_deep_research.agents.models import (
    DEFAULT_MODEL,
    DEFAULT_SMALL_MODEL,
    default_chat_generator,
    run_settings_of,
)
from haystack_deep_research.agents.research_agent import ResearchAgent
from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.report import ReportStyle
from haystack_deep_research.report.grounding import GroundingStage
from haystack_deep_research.report.structured import StructuredOutputStage
from haystack_deep_research.report.writer import NoEvidenceStage, ReportStage, WriteHook
from haystack_deep_research.research.approval import plan_review_hooks
from haystack_deep_research.research.final_summary import PreservingChatGenerator
from haystack_deep_research.research.loop_guard import DEFAULT_LOOP_THRESHOLD, MAX_LOOP_THRESHOLD, MIN_LOOP_THRESHOLD
from haystack_deep_research.research.scope import ScopeHook
from haystack_deep_research.research.subtopic import (
    DelegationsDoneHook,
    PlanHook,
    ResearchSubtopicTool,
    researcher_agent,
)
from haystack_deep_research.research.tool_calls import ToolResultsHook
from haystack_deep_research.run import ResearchCache
from haystack_deep_research.run._budget import model_name
from haystack_deep_research.run._cache import cache_of
from haystack_deep_research.run._phases import with_hooks
from haystack_deep_research.settings import Budgets, Grounding, Sources
from haystack_deep_research.sources import datastore_tools, routing_prompt
from haystack_deep_research.sources.datastore import datastores_from
from haystack_deep_research.sources.mcp_servers import mcp_toolsets
from haystack_deep_research.sources.search import SearchTool
from haystack_deep_research.sources.selection import resolve_search
from haystack_deep_research.state import (
    PHASE_GROUND,
    PHASE_ORCHESTRATOR,
    PHASE_RESEARCH,
    PHASE_SCOPE,
    PHASE_STRUCTURE,
    PHASE_SUMMARIZE,
    PHASE_WRITE,
    orchestrator_state_schema,
)
from haystack_deep_research.tools import ReadUrlTool, ResearchTool, RunToolset
from haystack_deep_research.tools.think import create_think_tool

__all__ = ["MAX_WRITER_CONCURRENCY", "WRITER_CONCURRENCY", "create_deep_research_agent", "web_tools"]

WRITER_CONCURRENCY = 2
"""How many report parts are written at once per researcher allowed at once: research is over when the report is
written, and a part is one call of bounded length (docs/benchmarks.md: at 50 sub-topics and 10 at once, the writer's
rounds were what made the run grow more than 1.2 s per added sub-topic)."""
MAX_WRITER_CONCURRENCY = 50
SearchT = TypeVar("SearchT", bound=Tool)


def _web_search(sources: Sources, max_search_results: int) -> Tool:
    """The researchers' web search: a Tool of the library or of another shape as it is, every other choice through
    the one search path ("auto" by default)."""
    given = sources.search
    if (
        isinstance(given, Tool)
        and not isinstance(given, SearchTool)
        and (isinstance(given, ResearchTool) or "query" not in (given.parameters.get("properties") or {}))
    ):
        if sources.scope:
            raise ConfigurationError(
                f"Sources(include_domains=..., exclude_domains=..., since=...) apply to searches through the library's "
                f"search path; the tool {given.name!r} is used as it is. Give a search tool with a 'query' parameter, "
                "or filter in your tool."
            )
        return given
    return resolve_search("auto" if given is None else given, max_results=max_search_results, scope=sources.scope)


def _phase_models(models: dict[str, ChatGenerator], grounding: Grounding | None) -> dict[str, str]:
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


def web_tools(
    sources: Sources, search: SearchT, summarizer: ChatGenerator, cache: Any, max_length: int
) -> tuple[SearchT, ReadUrlTool]:
    """The web search and ``read_url`` of a shape's researchers, both with ``cache`` (a store, or ``None``)."""
    if cache is not None and isinstance(search, SearchTool):  # a copy: the caller's tool keeps its own cache
        search = search.spawn()
        search.cache = cache
    reader = ReadUrlTool(
        summarizer_llm=summarizer,
        max_content_length=max_length,
        passage_budget=sources.passage_budget,
        summarize_over=sources.summarize_over,
        url_policy=sources.read_policy,
        fetch_limits=sources.fetch_limits,
        cache=cache,
    )
    return search, reader


def _report_stages(
    grounding: Grounding | None, output_schema: Any, style: ReportStyle, max_concurrency: int
) -> list[ReportStage]:
    stages: list[ReportStage] = []
    if grounding is not None:
        stages.append(
            GroundingStage(
                judge_llm=grounding.judge_llm,
                threshold=grounding.threshold,
                max_regenerations=grounding.max_regenerations,
                max_replans=grounding.max_replans,
                max_concurrency=max_concurrency,
                style=style,
            )
        )
    stages.append(NoEvidenceStage())
    if output_schema is not None:
        stages.append(StructuredOutputStage(output_schema=output_schema))
    return stages


def create_deep_research_agent(
    *,
    scope_llm: ChatGenerator | None = None,
    orchestrator_llm: ChatGenerator | None = None,
    researcher_llm: ChatGenerator | None = None,
    summarizer_llm: ChatGenerator | None = None,
    writer_llm: ChatGenerator | None = None,
    max_subtopics: int = 5,
    max_concurrent_researchers: int = 5,
    max_orchestrator_steps: int = 8,
    max_researcher_steps: int = 20,
    max_search_results: int = 10,
    max_content_length: int = 50_000,
    sources: Sources | None = None,
    budgets: Budgets | None = None,
    grounding: Grounding | bool = False,
    style: ReportStyle | None = None,
    cache: ResearchCache | str | os.PathLike[str] | None = None,
    output_schema: type[BaseModel] | None = None,
    loop_threshold: int = DEFAULT_LOOP_THRESHOLD,
    clarify: bool = False,
    approve_plan: ConfirmationStrategy | None = None,
    hooks: dict[str, list[Any]] | None = None,
) -> Agent:
    """
    Create a deep research agent: question → research brief → parallel sub-researchers → cited Markdown report.

    The result is a :class:`~haystack_deep_research.agents.ResearchAgent`, a Haystack ``Agent``: run it with ``run`` or
    ``run_async`` (``messages=[ChatMessage.from_user("...")]``), put it in a Pipeline, serialize it. See
    docs/how-it-works.md and docs/configuration.md.

    :param scope_llm: Turns the question into a research brief. Default: OpenAI "gpt-5.4".
    :param orchestrator_llm: Plans, delegates sub-topics and checks coverage; must support tools. Default "gpt-5.4".
    :param researcher_llm: Each sub-researcher's search / read / think loop; must support tools.
        Default "gpt-5.4-mini".
    :param summarizer_llm: Summarizes each page read toward the researcher's question. Default "gpt-5.4-mini".
    :param writer_llm: Writes the report from the brief and the notes, in parts side by side. Default "gpt-5.4".
    :param max_subtopics: Sub-topics the orchestrator may delegate in one run, 1 to 50 (enforced in code).
    :param max_concurrent_researchers: Sub-researchers running at once, 1 to 50 (report parts: twice as many, at most
        50).
    :param max_orchestrator_steps: Orchestrator loop steps, 1 to 100.
    :param max_researcher_steps: Each sub-researcher's loop steps, 1 to 200.
    :param max_search_results: Results per web_search call, 1 to 20 (used by the default search tool).
    :param max_content_length: Page characters read and kept in the evidence ledger, 1,000 to 1,000,000.
    :param sources: What the researchers search and read (:class:`~haystack_deep_research.Sources`). Default: the web,
        searched with "auto".
    :param budgets: What one run may spend (:class:`~haystack_deep_research.Budgets`); once spent no new research
        starts, the report is written and ``exit_reason`` names the budget. A run may bring its own in ``RunInputs``.
    :param grounding: Judge every cited claim against its source's stored text and repair the report below the
        threshold: a :class:`~haystack_deep_research.Grounding`, ``True`` for its defaults, or ``False`` (default).
    :param style: The report's form, tone and length (:class:`~haystack_deep_research.ReportStyle`).
    :param cache: The cross-run cache of searches, pages and summaries: a folder path, a
        :class:`~haystack_deep_research.ResearchCache`, or ``None`` (see docs/caching.md).
    :param output_schema: A pydantic model class: the report is also turned into an instance of it, the
        ``structured`` output (``StructuredOutputError`` after one retry).
    :param loop_threshold: Identical tool calls in a row that make a researcher's loop, 2 to 20 (see docs/safety.md).
    :param clarify: Let the scope model ask one clarifying question instead of researching an ambiguous question
        (``exit_reason`` "clarification_needed"; see docs/clarify-and-report-types.md). Off by default.
    :param approve_plan: A Haystack confirmation strategy that shows each planned sub-topic to a person before any
        researcher starts (see docs/plan-approval.md); ``None`` (default) asks nobody.
    :param hooks: Your own Haystack hooks, by hook point (``{"after_run": [my_hook]}``), run after the library's.
    :returns: The orchestrator ``Agent``. Its run returns ``report``, ``brief``, ``notes``, ``sources``,
        ``citations``, ``warnings``, ``usage_by_phase``, ``cost``, ``grounding_score``, ``grounding``,
        ``regeneration_count``, ``replan_count``, ``structured``, ``clarification`` and the Agent's own ``messages``,
        ``last_message``, ``step_count``, ``token_usage``, ``tool_call_counts`` and ``exit_reason`` (see
        docs/quickstart.md).
    :raises ConfigurationError: If a parameter is outside its allowed values; the message names it and the fix.
    :raises TypeError: For a keyword the factory does not know.
    """
    for name, value, low, high in (
        ("max_subtopics", max_subtopics, 1, 50),
        ("max_concurrent_researchers", max_concurrent_researchers, 1, 50),
        ("max_orchestrator_steps", max_orchestrator_steps, 1, 100),
        ("max_researcher_steps", max_researcher_steps, 1, 200),
        ("max_search_results", max_search_results, 1, 20),
        ("max_content_length", max_content_length, 1_000, 1_000_000),
        ("loop_threshold", loop_threshold, MIN_LOOP_THRESHOLD, MAX_LOOP_THRESHOLD),
    ):
        _checks.int_in_range(name, value, low, high)
    sources, budgets, grounded = Sources.of(sources), Budgets.of(budgets), Grounding.of(grounding)
    style = ReportStyle.of(style)
    _checks.boolean("clarify", clarify)
    _checks.output_schema(output_schema)
    research_cache = cache_of(cache)
    models: dict[str, ChatGenerator] = {}  # each role's model, checked under the factory's parameter name
    for role, given, default, needs_tools in (
        ("scope_llm", scope_llm, DEFAULT_MODEL, False),
        ("orchestrator_llm", orchestrator_llm, DEFAULT_MODEL, True),
        ("researcher_llm", researcher_llm, DEFAULT_SMALL_MODEL, True),
        ("summarizer_llm", summarizer_llm, DEFAULT_SMALL_MODEL, False),
        ("writer_llm", writer_llm, DEFAULT_MODEL, False),
    ):
        model = default_chat_generator(default) if given is None else given
        models[role] = _checks.chat_generator(role, model, needs_tools=needs_tools)
    opened = run_settings_of(budgets, _phase_models(models, grounded))
    stores = datastores_from(sources.datastores)
    web: list[Tool] = []
    if sources.web:
        search = _web_search(sources, max_search_results)
        web = [*web_tools(sources, search, models["summarizer_llm"], research_cache, max_content_length)]
    budget, results = DelegationsDoneHook(), ToolResultsHook()  # the orchestrator's own
    base = RESEARCHER_SYSTEM if sources.web else RESEARCHER_SYSTEM_DOCUMENTS
    system = render_text(base, max_steps=max_researcher_steps)
    researcher = researcher_agent(
        chat_generator=models["researcher_llm"],
        tools=[
            *web,
            *datastore_tools(stores),
            create_think_tool(),
            *mcp_toolsets(list(sources.mcp_servers or []), sources.read_policy),
        ],
        system_prompt="\n\n".join(filter(None, [system, routing_prompt(stores, web=sources.web)])),
        max_steps=max_researcher_steps,
        loop_threshold=loop_threshold,
    )
    orchestrator_tools = [ResearchSubtopicTool(researcher=researcher, max_subtopics=max_subtopics), create_think_tool()]
    return ResearchAgent(
        chat_generator=PreservingChatGenerator(chat_generator=models["orchestrator_llm"]),
        tools=[RunToolset(tools=orchestrator_tools)],
        system_prompt=render_text(ORCHESTRATOR_SYSTEM, max_subtopics=max_subtopics),
        state_schema=orchestrator_state_schema(),
        max_agent_steps=max_orchestrator_steps,
        tool_concurrency_limit=max_concurrent_researchers,
        tool_streaming_callback_passthrough=True,
        hooks=with_hooks(
            {
                "before_run": [ScopeHook(chat_generator=models["scope_llm"], clarify=clarify, **opened)],
                "before_llm": [budget],
                "before_tool": [*plan_review_hooks(approve_plan), PlanHook()],
                "after_tool": [results],
                "after_run": [
                    WriteHook(
                        chat_generator=models["writer_llm"],
                        stages=_report_stages(grounded, output_schema, style, max_concurrent_researchers),
                        max_concurrency=min(MAX_WRITER_CONCURRENCY, WRITER_CONCURRENCY * max_concurrent_researchers),
                        style=style,
                    )
                ],
            },
            hooks,
            factory="create_deep_research_agent",
        ),
    )
