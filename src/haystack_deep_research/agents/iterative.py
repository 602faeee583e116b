"""``create_iterative_research_agent``: the depth workflow as a Pipeline with a loop. Wiring only; the steps are in
``iterative``."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from haystack import Pipeline
from haystack.components.generators.chat.types import ChatGenerator
from haystack.components.joiners import BranchJoiner

from haystack_deep_research import _checks
from haystack_deep_research.agents.iterative_agent import IterativeResearchAgent
from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.iterative import (
    DecideStep,
    IterativeFinishStep,
    RoundRouter,
    SearchStep,
    StartStep,
    WriteStep,
)
from haystack_deep_research.iterative.iteration import IterationRun
from haystack_deep_research.iterative.topics import DEFAULT_SIMILARITY
from haystack_deep_research.report import ReportStyle
from haystack_deep_research.run import (
    CacheStore,
    Price,
    Recording,
    RecordingChatGenerator,
    ReplayChatGenerator,
    ResearchCache,
    RunBudget,
    model_name,
)
from haystack_deep_research.run.cache import DEFAULT_CACHE_TTL
from haystack_deep_research.run.cost import CostMeter
from haystack_deep_research.sources import MCPServer, datastore_tools, resolve_search
from haystack_deep_research.state import PHASE_ANALYZE, PHASE_GROUND, PHASE_SUMMARIZE, PHASE_WRITE
from haystack_deep_research.tools import ReadUrlTool
from haystack_deep_research.web import FetchLimits, UrlPolicy

__all__ = ["create_iterative_research_agent"]


def _check(options: dict[str, Any]) -> None:
    for name in ("analysis_llm", "writer_llm"):
        _checks.chat_generator(name, options[name], needs_tools=False)
    for name in ("summarizer_llm", "judge_llm"):
        if options[name] is not None:
            _checks.chat_generator(name, options[name], needs_tools=False)
    _checks.int_in_range("depth", options["depth"], 1, 50)
    _checks.int_in_range("max_parallel_searches", options["max_parallel_searches"], 1, 10)
    _checks.int_in_range("max_search_results", options["max_search_results"], 1, 20)
    _checks.number_in_range("cache_ttl", options["cache_ttl"], 0.0)
    for name in ("grounding", "web"):
        if not isinstance(options[name], bool):
            raise ConfigurationError(f"{name} must be True or False; got {options[name]!r}.")
    if options["judge_llm"] is not None and not options["grounding"]:
        raise ConfigurationError("judge_llm is used only with grounding=True; pass grounding=True or drop judge_llm.")
    if not options["web"] and not options["datastores"] and not options["mcp_servers"]:
        raise ConfigurationError(
            "web=False leaves nothing to search: pass datastores={...} or mcp_servers=[...], or set web=True."
        )
    if options["record_to"] is not None and options["replay_from"] is not None:
        raise ConfigurationError("pass record_to or replay_from, not both.")
    RunBudget(
        token_budget=options["token_budget"], time_budget=options["time_budget"], cost_budget=options["cost_budget"]
    )
    for name, kind in (("url_policy", UrlPolicy), ("fetch_limits", FetchLimits)):
        if options[name] is not None and not isinstance(options[name], kind):
            raise ConfigurationError(f"{name} must be a {kind.__name__}; got {type(options[name]).__name__}.")


def _store(options: dict[str, Any]) -> tuple[CacheStore | None, Recording | None]:
    """The tools' cache: the cross-run cache, wrapped by a recording when one is made or replayed."""
    directory: str | os.PathLike[str] | None = options["cache_dir"]
    cache = ResearchCache(directory=directory, ttl=options["cache_ttl"]) if directory is not None else None
    if options["replay_from"] is not None:
        recording = Recording(directory=options["replay_from"], mode="replay")
        return recording, recording
    if options["record_to"] is not None:
        recording = Recording(directory=options["record_to"], mode="record", cache=cache)
        return recording, recording
    return cache, None


def _models(options: dict[str, Any], recording: Recording | None) -> dict[str, Any]:
    models = {
        "analysis": options["analysis_llm"],
        "writer": options["writer_llm"],
        "summarizer": options["summarizer_llm"] or options["analysis_llm"],
        "judge": (options["judge_llm"] or options["writer_llm"]) if options["grounding"] else None,
    }
    if recording is None:
        return models
    if recording.mode == "replay":
        return {
            role: model
            if model is None or isinstance(model, ReplayChatGenerator)
            else ReplayChatGenerator(recording=recording, model=model_name(model))
            for role, model in models.items()
        }
    return {
        role: None if model is None else RecordingChatGenerator(chat_generator=model, recording=recording)
        for role, model in models.items()
    }


def _phase_models(models: dict[str, Any], options: dict[str, Any]) -> dict[str, str]:
    phases = {
        PHASE_ANALYZE: model_name(models["analysis"]),
        PHASE_SUMMARIZE: model_name(models["summarizer"]),
        PHASE_WRITE: model_name(models["writer"]),
        PHASE_GROUND: model_name(models["judge"] or models["writer"]),
    }
    if options["cost_budget"] is not None and (unpriced := CostMeter(prices=options["prices"]).unpriced(phases)):
        raise ConfigurationError(
            f"cost_budget needs the price of every model the run calls; none is known for {', '.join(unpriced)}. "
            f"Pass prices={{{unpriced[0]!r}: Price(input_per_mtok=..., output_per_mtok=...)}}."
        )
    return phases


def create_iterative_research_agent(
    *,
    analysis_llm: ChatGenerator,
    writer_llm: ChatGenerator,
    depth: int = 3,
    max_parallel_searches: int = 10,
    search: Any = "auto",
    datastores: Mapping[str, Any] | None = None,
    mcp_servers: Sequence[MCPServer] | None = None,
    web: bool = True,
    summarizer_llm: ChatGenerator | None = None,
    read_top_k: int = 3,
    max_search_results: int = 10,
    max_content_length: int = 50_000,
    url_policy: UrlPolicy | None = None,
    fetch_limits: FetchLimits | None = None,
    topic_similarity: float = DEFAULT_SIMILARITY,
    grounding: bool = False,
    judge_llm: ChatGenerator | None = None,
    token_budget: int | None = None,
    time_budget: float | None = None,
    cost_budget: float | None = None,
    prices: dict[str, Price] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    cache_ttl: float = DEFAULT_CACHE_TTL,
    record_to: str | os.PathLike[str] | None = None,
    replay_from: str | os.PathLike[str] | None = None,
    report_type: str = "research_report",
    tone: str = "objective",
    report_length: int | str | None = None,
) -> IterativeResearchAgent:
    """
    Create an iterative research agent: ``depth`` rounds of analysis → search, then one comprehensive report.

    Each round the analysis model reads the question, the findings so far and the topics already searched, and
    answers ``{"nextSearchTopic": ..., "shouldContinue": ...}``; when it continues, the topic (or up to
    ``max_parallel_searches`` topics at once) is searched with the query alone, the top results are read, and the
    findings are added; a topic is never searched twice (near repeats are refused). Then ``writer_llm`` writes the
    report in the question's language, citing only pages the run read, in parts side by side as every shape's report
    is (the opening and one section per topic's finding, each call tried twice). Run it like the main agent:
    ``agent.run(messages=[ChatMessage.from_user("...")])``.

    :param analysis_llm: Decides each round's topics (the seed's analysis model).
    :param writer_llm: Writes the final report, in parts (the seed's reasoning model).
    :param depth: Rounds of analysis and search, 1 to 50 (the seed's depth; default 3).
    :param max_parallel_searches: Topics one round may search at once, 1 to 10.
    :param search: The web search: "auto", "tavily", "ddgs", a search backend, component or Tool (see
        ``resolve_search``).
    :param datastores: Your own documents (as for ``create_deep_research_agent``), searched with every topic.
    :param mcp_servers: MCP servers (see ``MCPServer``) whose query tools (one required text argument) are asked
        every topic; what they return is read and cited like documents.
    :param web: ``False`` searches the datastores only.
    :param summarizer_llm: Summarizes each page read toward its topic. Default: ``analysis_llm``.
    :param read_top_k: Results of each search that are read, 1 to 5.
    :param max_search_results: Results per search, 1 to 20.
    :param max_content_length: Page characters given to the summarizer, 1,000 to 1,000,000.
    :param url_policy: Which URLs may be read. Default: public http(s) addresses only.
    :param fetch_limits: Download cap, timeouts, redirects and PDF pages.
    :param topic_similarity: From this similarity (0 to 1) on, a proposed topic repeats a searched one.
    :param grounding: Judge every cited claim against its source's stored text and mark unsupported claims.
    :param judge_llm: The judge; only with ``grounding=True``. Default: ``writer_llm``.
    :param token_budget: Total tokens one run may spend, or ``None``; once spent no round starts.
    :param time_budget: Seconds one run may take, or ``None``.
    :param cost_budget: US dollars one run may cost, or ``None`` (every model's price must be known).
    :param prices: Prices of models the library has no price for.
    :param cache_dir: A directory for the cross-run cache of searches, pages and summaries, or ``None``.
    :param cache_ttl: Seconds a cached entry is used, and a source counts as fresh when a run is updated.
    :param record_to: Record every model exchange and tool result of each run in this directory.
    :param replay_from: Answer every model call and tool from a recording in this directory: no network, no model.
    :param report_type: The report's form: "research_report" (default), "detailed_report", "outline",
        "resource_list" or "executive_brief" (as for ``create_deep_research_agent``).
    :param tone: "objective" (default), "formal", "analytical", "informal", or a short description of a tone.
    :param report_length: The report's target length in words (100 to 20,000), "short", "medium" or "long".
    :returns: The agent, a Haystack component. Its outputs: the shared ones (``report``, ``brief``, ``notes``,
        ``sources``, ``citations``, ``warnings``, ``exit_reason``, ``usage_by_phase``, ``cost``, ``token_usage``,
        ``structured``, ``grounding_score``, ``grounding``) and its own ``topics``, ``rounds`` and ``changes``.
    :raises ConfigurationError: If a parameter is outside its allowed values; the message names it and the range.
    """
    options = dict(locals())
    _check(options)
    style = ReportStyle(report_type=report_type, tone=tone, report_length=report_length)
    store, recording = _store(options)
    models = _models(options, recording)
    web_search, read_url = None, None
    if web:
        web_search = resolve_search(search, max_results=max_search_results)
        if store is not None:  # a copy: a SearchTool the caller passed keeps its own cache
            web_search = web_search.spawn()
            web_search.cache = store
        read_url = ReadUrlTool(
            summarizer_llm=models["summarizer"],
            max_content_length=max_content_length,
            url_policy=url_policy,
            fetch_limits=fetch_limits,
            cache=store,
        )
    run_settings = {
        "token_budget": token_budget,
        "time_budget": time_budget,
        "cost_budget": cost_budget,
        "phase_models": _phase_models(models, options),
        "prices": prices,
    }
    pipeline = Pipeline()
    pipeline.add_component("start", StartStep(depth=depth, freshness=cache_ttl))
    pipeline.add_component("next_round", BranchJoiner(IterationRun))
    pipeline.add_component("router", RoundRouter(depth=depth))
    pipeline.add_component(
        "decide",
        DecideStep(
            chat_generator=models["analysis"],
            depth=depth,
            max_parallel_searches=max_parallel_searches,
            similarity=topic_similarity,
        ),
    )
    pipeline.add_component(
        "search",
        SearchStep(
            search=web_search,
            read_url=read_url,
            datastores=datastore_tools(datastores),
            mcp_servers=list(mcp_servers or []),
            read_top_k=read_top_k,
            max_parallel_searches=max_parallel_searches,
            depth=depth,
        ),
    )
    pipeline.add_component("to_search", BranchJoiner(IterationRun))
    pipeline.add_component("to_write", BranchJoiner(IterationRun))
    pipeline.add_component("write", WriteStep(chat_generator=models["writer"], judge_llm=models["judge"], style=style))
    pipeline.add_component("finish", IterativeFinishStep())
    pipeline.connect("start.iteration", "next_round.value")
    pipeline.connect("search.iteration", "next_round.value")
    pipeline.connect("next_round.value", "router.iteration")
    pipeline.connect("router.decide", "decide.iteration")
    pipeline.connect("router.search", "to_search.value")
    pipeline.connect("decide.search", "to_search.value")
    pipeline.connect("to_search.value", "search.iteration")
    pipeline.connect("router.done", "to_write.value")
    pipeline.connect("decide.done", "to_write.value")
    pipeline.connect("to_write.value", "write.iteration")
    pipeline.connect("write.iteration", "finish.iteration")
    return IterativeResearchAgent(pipeline=pipeline, run_settings=run_settings)
