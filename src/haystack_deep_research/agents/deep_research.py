"""``create_deep_research_agent``: the front door. Wiring only; every behaviour lives in the hooks and tools."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from haystack.components.agents import Agent
from haystack.components.generators.chat.types import ChatGenerator
from haystack.hooks.human_in_the_loop.types import ConfirmationStrategy
from haystack.tools import Tool
from pydantic import BaseModel

from haystack_deep_research.agents.deep_research_options import ROLES, check_options, phase_models, role_models
from haystack_deep_research.agents.research_agent import ResearchAgent
from haystack_deep_research.prompts import (
    ORCHESTRATOR_SYSTEM,
    RESEARCHER_SYSTEM,
    RESEARCHER_SYSTEM_DOCUMENTS,
    render_text,
)
from haystack_deep_research.report import (
    GroundingStage,
    NoEvidenceStage,
    ReportStage,
    ReportStyle,
    StructuredOutputStage,
    WriteHook,
)
from haystack_deep_research.research import ResearchSubtopicTool, ScopeHook
from haystack_deep_research.research.approval import plan_review_hooks
from haystack_deep_research.research.delegated import DelegationsDoneHook
from haystack_deep_research.research.loop_guard import DEFAULT_LOOP_THRESHOLD
from haystack_deep_research.research.plan import PlanHook
from haystack_deep_research.research.preserve import PreservingChatGenerator
from haystack_deep_research.research.researcher import researcher_agent
from haystack_deep_research.research.tool_calls import ToolResultsHook
from haystack_deep_research.run import Price, ResearchCache
from haystack_deep_research.run.cache import DEFAULT_CACHE_TTL
from haystack_deep_research.sources import (
    MCPServer,
    ToolSearch,
    datastore_tools,
    datastores_from,
    mcp_toolsets,
    resolve_search,
    routing_prompt,
)
from haystack_deep_research.sources.search import SearchTool
from haystack_deep_research.state import (
    orchestrator_state_schema,
)
from haystack_deep_research.tools import ReadUrlTool, ResearchTool, RunToolset, create_think_tool
from haystack_deep_research.tools.passages import DEFAULT_PASSAGE_BUDGET
from haystack_deep_research.web import FetchLimits, UrlPolicy

__all__ = ["create_deep_research_agent"]


def _web_search(options: dict[str, Any]) -> Tool:
    """The researchers' web search: ``search_tool`` as given (a plain Tool with a query goes through the one search
    path), else the ``search`` choice ("auto" by default)."""
    given = options["search_tool"]
    if given is None:
        return resolve_search(options["search"] or "auto", max_results=options["max_search_results"])
    if isinstance(given, ResearchTool) or "query" not in (given.parameters.get("properties") or {}):
        return given  # the library's own tools, or a tool of another shape, as they are
    return SearchTool(backend=ToolSearch(tool=given), max_results=options["max_search_results"])


def _researcher_tools(options: dict[str, Any], models: dict[str, ChatGenerator], stores: list[Any]) -> list[Tool]:
    tools: list[Tool] = []
    if options["web"]:
        cache_dir = options["cache_dir"]
        cache = None if cache_dir is None else ResearchCache(directory=cache_dir, ttl=options["cache_ttl"])
        search = _web_search(options)
        if cache is not None and isinstance(search, SearchTool):  # a copy: the caller's tool keeps its own cache
            search = search.spawn()
            search.cache = cache
        tools.append(search)
        tools.append(
            ReadUrlTool(
                summarizer_llm=models["summarizer_llm"],
                max_content_length=options["max_content_length"],
                passage_budget=options["passage_budget"],
                url_policy=options["url_policy"],
                fetch_limits=options["fetch_limits"],
                cache=cache,
            )
        )
    return [*tools, *datastore_tools(stores), create_think_tool()]


def _researcher_prompt(options: dict[str, Any], stores: list[Any]) -> str:
    base = RESEARCHER_SYSTEM if options["web"] else RESEARCHER_SYSTEM_DOCUMENTS
    system = render_text(base, max_steps=options["max_researcher_steps"])
    routing = routing_prompt(stores, web=options["web"])
    return f"{system}\n\n{routing}" if routing else system


def _report_stages(options: dict[str, Any]) -> list[ReportStage]:
    stages: list[ReportStage] = []
    if options["grounding"]:
        stages.append(
            GroundingStage(
                judge_llm=options["judge_llm"],
                threshold=options["grounding_threshold"],
                max_regenerations=options["max_regenerations"],
                max_replans=options["max_replans"],
                max_concurrency=options["max_concurrent_researchers"],
                style=options["style"],
            )
        )
    stages.append(NoEvidenceStage())
    if options["output_schema"] is not None:
        stages.append(StructuredOutputStage(output_schema=options["output_schema"]))
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
    passage_budget: int = DEFAULT_PASSAGE_BUDGET,
    search_tool: Tool | None = None,
    url_policy: UrlPolicy | None = None,
    fetch_limits: FetchLimits | None = None,
    token_budget: int | None = None,
    time_budget: float | None = None,
    cost_budget: float | None = None,
    prices: dict[str, Price] | None = None,
    loop_threshold: int = DEFAULT_LOOP_THRESHOLD,
    grounding: bool = False,
    judge_llm: ChatGenerator | None = None,
    grounding_threshold: float = 0.65,
    max_regenerations: int = 1,
    max_replans: int = 2,
    output_schema: type[BaseModel] | None = None,
    search: Any = None,
    datastores: Mapping[str, Any] | None = None,
    mcp_servers: list[MCPServer] | None = None,
    web: bool = True,
    cache_dir: str | os.PathLike[str] | None = None,
    cache_ttl: float = DEFAULT_CACHE_TTL,
    clarify: bool = False,
    report_type: str = "research_report",
    tone: str = "objective",
    report_length: int | str | None = None,
    approve_plan: ConfirmationStrategy | None = None,
) -> Agent:
    """
    Create a deep research agent: question → research brief → parallel sub-researchers → cited Markdown report.

    The result is a Haystack ``Agent``: run it with ``run`` or ``run_async``, put it in a Pipeline, serialize it
    with ``to_dict`` / ``from_dict``. Pass the question as ``messages=[ChatMessage.from_user("...")]``. It is a
    :class:`~haystack_deep_research.agents.ResearchAgent`, which refuses malformed run input with typed errors and
    closes a run that fails; it serializes as a plain ``Agent``.

    :param scope_llm: Turns the question into a research brief. Default: OpenAI "gpt-5.4".
    :param orchestrator_llm: Plans, delegates sub-topics and checks coverage; must support tools. Default "gpt-5.4".
    :param researcher_llm: Each sub-researcher's search / read / think loop; must support tools.
        Default "gpt-5.4-mini".
    :param summarizer_llm: Summarizes each page read toward the researcher's question. Default "gpt-5.4-mini".
    :param writer_llm: Turns the brief and the notes into the report, written in parts side by side (the opening
        and one section per note), so no call's output grows with the research. Default "gpt-5.4".
    :param max_subtopics: Sub-topics the orchestrator may delegate in one run, 1 to 50 (enforced in code).
    :param max_concurrent_researchers: Sub-researchers running at once, 1 to 50; also the writer's calls at once.
    :param max_orchestrator_steps: Orchestrator loop steps, 1 to 100.
    :param max_researcher_steps: Each sub-researcher's loop steps, 1 to 200.
    :param max_search_results: Results per web_search call, 1 to 20 (used by the default search tool).
    :param max_content_length: Page characters read and kept in the evidence ledger, 1,000 to 1,000,000.
    :param passage_budget: Characters of a page's passages most relevant to the researcher's question that the
        summarizer reads (ranked with BM25 and by the figures, dates and names they hold), 500 to 1,000,000, or 0
        for the whole page.
    :param search_tool: The researchers' search tool, as a Haystack Tool (the older form of ``search``). A Tool with
        a ``query`` parameter goes through the library's search path (results recorded in the ledger and fenced);
        the library's own tools and tools of another shape are used as they are.
    :param url_policy: Which URLs ``read_url`` may fetch. Default: public http(s) addresses only.
    :param fetch_limits: Download cap, timeouts, redirects and PDF pages for ``read_url``.
    :param token_budget: Total tokens one run may spend across all phases, 1 to 1,000,000,000, or ``None``. Once
        spent, no new research starts, running researchers summarize what they have, the report is written and
        ``exit_reason`` is "token_budget".
    :param time_budget: Seconds of wall-clock time one run may take (more than 0, up to 7 days), or ``None``; when
        spent the run ends the same way with ``exit_reason`` "time_budget".
    :param cost_budget: US dollars one run's model calls may cost (more than 0, up to 1,000,000), or ``None``; when
        spent the run ends the same way with ``exit_reason`` "cost_budget". Every model's price must be known.
    :param prices: Prices of models the library has no price for, by model name, for example
        ``{"my-model": Price(input_per_mtok=1.0, output_per_mtok=4.0)}``; a given price replaces a default one.
    :param loop_threshold: Identical tool calls in a row (same tool, same arguments) that make a researcher's loop,
        2 to 20: that call is answered with an error telling the model to change course, and the next identical one
        stops the researcher, whose note is then marked partial.
    :param grounding: Judge every cited claim against the stored text of its source and repair the report when the
        grounding score is below ``grounding_threshold`` (see docs/evidence.md). Off by default.
    :param judge_llm: The grounding judge; only with ``grounding=True``. Default: the writer model.
    :param grounding_threshold: The lowest acceptable grounding score, 0 to 1.
    :param max_regenerations: With grounding: rewrites from the same notes, without tools, 0 to 5.
    :param max_replans: With grounding: rounds of researching unsupported claims again, then rewriting, 0 to 5.
    :param output_schema: A pydantic model class (for example ``ResearchSummary``): the final report is also turned
        into an instance of it, the ``structured`` output. Fails with ``StructuredOutputError`` after one retry.
    :param search: The web search: "auto" (default: Tavily when ``TAVILY_API_KEY`` is set, else the keyless ddgs
        search, which the run says once in its warnings), "tavily", "ddgs", a search backend, any Haystack
        web-search component with a ``query`` input, or a Haystack Tool with a ``query`` parameter. Every choice is
        normalized to title, exact URL and snippet, limited to ``max_search_results``, recorded in the evidence
        ledger and fenced as untrusted.
    :param datastores: Your own documents: a mapping of name to ``{"retriever": <Haystack retriever or component
        with a query input>, "description": "...", "top_k": 6, "min_score": None}``. Each store becomes a
        ``search_<name>`` tool for the researchers, and the descriptions a routing block in their system prompt.
        Retrieved documents count as read and may be cited (see docs/sources.md).
    :param mcp_servers: MCP servers whose tools the researchers may call (a list of :class:`MCPServer`): each tool
        becomes ``<server>_<tool>``, each run connects once on first use and closes with the run, and what the tools
        return counts as read, cited as ``mcp://<server>/<tool>/<id>`` or the URL it gives (needs the ``[mcp]`` extra;
        see docs/sources.md). A server that does not start is a warning; the run goes on.
    :param web: ``False`` researches the datastores and MCP servers only: no ``web_search`` and no ``read_url``.
    :param cache_dir: A directory for the cross-run cache of searches, page texts and page summaries (see
        docs/caching.md), or ``None`` for none: researching the same question again searches and fetches nothing.
    :param cache_ttl: Seconds a cached entry is used (default one day).
    :param clarify: Let the scope model ask one clarifying question when the question is too ambiguous to research:
        the run then ends after that one call with ``exit_reason`` "clarification_needed" and the question in the
        ``clarification`` output (and as the last of ``messages``). Run again with the user's answer appended to
        those messages to research. Off by default.
    :param report_type: The report's form: "research_report" (default), "detailed_report", "outline",
        "resource_list" or "executive_brief". Every form's citations are verified the same way.
    :param tone: "objective" (default), "formal", "analytical", "informal", or a short description of a tone.
    :param report_length: The report's target length in words (100 to 20,000), "short", "medium" or "long";
        ``None`` (default) for the writer's usual length (each part bounded, whatever the number of sub-topics).
    :param approve_plan: A Haystack confirmation strategy (for example ``BlockingConfirmationStrategy`` with
        ``AlwaysAskPolicy`` and ``RichConsoleUI``) that shows each sub-topic the orchestrator plans to a person before
        any researcher starts: accepted, edited (the new text is researched) or dropped (the orchestrator reads the
        feedback). Decisions are ``PlanReviewed`` events and, with a run directory, journaled: a resumed run does not
        ask again (see docs/plan-approval.md). ``None`` (default) asks nobody.
    :returns: The orchestrator ``Agent``. Its run returns ``report``, ``brief``, ``notes``, ``sources``,
        ``citations``, ``warnings``, ``usage_by_phase`` (per phase: token counts, ``model`` and ``cost``), ``cost``
        (US dollars; ``None`` when a model's price is unknown, which a warning says), ``grounding_score`` (``None``
        without grounding), ``grounding`` (per-claim verdicts), ``regeneration_count``, ``replan_count``,
        ``structured`` (``None`` without a schema), ``clarification`` (``""`` unless the run asked one) and the
        Agent's own ``messages``, ``last_message``, ``step_count``, ``token_usage`` (all phases),
        ``tool_call_counts`` and ``exit_reason``.
    :raises ConfigurationError: If a parameter is outside its allowed values; the message names it and the range.
    """
    options = dict(locals())
    check_options(options)
    options["style"] = style = ReportStyle(report_type=report_type, tone=tone, report_length=report_length)
    models = role_models({role: options[role] for role in ROLES})
    models_by_phase = phase_models(models, options)
    stores = datastores_from(datastores)
    researcher_tools = _researcher_tools(options, models, stores)
    budget, results = DelegationsDoneHook(), ToolResultsHook()  # the orchestrator's own
    researcher = researcher_agent(
        chat_generator=models["researcher_llm"],
        tools=[*researcher_tools, *mcp_toolsets(mcp_servers)],
        system_prompt=_researcher_prompt(options, stores),
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
        hooks={
            "before_run": [
                ScopeHook(
                    chat_generator=models["scope_llm"],
                    token_budget=token_budget,
                    time_budget=time_budget,
                    cost_budget=cost_budget,
                    phase_models=models_by_phase,
                    prices=prices,
                    clarify=clarify,
                )
            ],
            "before_llm": [budget],
            "before_tool": [*plan_review_hooks(approve_plan), PlanHook()],
            "after_tool": [results],
            "after_run": [
                WriteHook(
                    chat_generator=models["writer_llm"],
                    stages=_report_stages(options),
                    max_concurrency=max_concurrent_researchers,
                    style=style,
                )
            ],
        },
    )
