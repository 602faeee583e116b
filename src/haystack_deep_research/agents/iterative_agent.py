"""
The iterative research agent: ``create_iterative_research_agent`` wires its Pipeline with a loop (the steps are in
``iterative``), and ``IterativeResearchAgent`` is that Pipeline as one component, run like every shape (see
``PipelineShape``); :meth:`IterativeResearchAgent.update` researches a finished run again.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from haystack import Pipeline, component
from haystack.components.generators.chat.types import ChatGenerator
from haystack.components.joiners import BranchJoiner
from haystack.dataclasses import ChatMessage, StreamingCallbackT

from haystack_deep_research import _checks
from haystack_deep_research.agents.deep_research import web_tools
from haystack_deep_research.agents.models import run_settings_of
from haystack_deep_research.agents.research_agent import AskMixin
from haystack_deep_research.errors import ConfigurationError, RunDirError
from haystack_deep_research.iterative.decide import DEFAULT_SIMILARITY, DecideStep, RoundRouter
from haystack_deep_research.iterative.iteration import OUTPUT_TYPES, IterationRun, IterativeFinishStep
from haystack_deep_research.iterative.search import SearchStep
from haystack_deep_research.iterative.update import StartStep
from haystack_deep_research.iterative.write import WriteStep
from haystack_deep_research.report import ReportStyle
from haystack_deep_research.report.ask import TopicResearcher
from haystack_deep_research.run import (
    Recording,
    RecordingChatGenerator,
    ReplayChatGenerator,
    ResearchCache,
    ResearchRun,
    RunInputs,
)
from haystack_deep_research.run._budget import model_name
from haystack_deep_research.run._cache import DEFAULT_CACHE_TTL, CacheStore, cache_of
from haystack_deep_research.run._journal import JOURNAL_FILE, JournalFile, check_run_dir
from haystack_deep_research.run._lifecycle import PipelineShape, run_inputs
from haystack_deep_research.settings import Budgets, Grounding, Sources
from haystack_deep_research.settings.grouped import refuse_fields
from haystack_deep_research.sources import datastore_tools
from haystack_deep_research.sources.selection import resolve_search
from haystack_deep_research.state import PHASE_ANALYZE, PHASE_GROUND, PHASE_SUMMARIZE, PHASE_WRITE

__all__ = ["IterativeResearchAgent", "create_iterative_research_agent", "journaled_question"]


def journaled_question(run_dir: str | os.PathLike[str]) -> str:
    """The question of the run journaled in ``run_dir``; ``RunDirError`` if it holds no journal of this library."""
    path = check_run_dir(run_dir) / JOURNAL_FILE
    records = JournalFile(path).read() if path.is_file() else []
    question = records[0].get("question") if records and records[0].get("type") == "start" else None
    if not isinstance(question, str) or not question.strip():
        raise RunDirError(f"{str(run_dir)!r} holds no journal of a run; pass the run directory of a finished run.")
    return question


@component
class IterativeResearchAgent(AskMixin, PipelineShape):
    """
    The iterative research Pipeline as one component; build it with ``create_iterative_research_agent``.

    :param pipeline: The Pipeline (its ``start`` step begins the rounds, its ``finish`` step gives the outputs).
    :param run_settings: What each run is opened with (see ``PipelineShape``).
    """

    def entry(self, run: ResearchRun, **inputs: Any) -> dict[str, dict[str, Any]]:
        return {"start": {"update": bool(inputs.get("update", False))}}

    @component.output_types(**OUTPUT_TYPES)
    def run(
        self,
        messages: list[ChatMessage],
        streaming_callback: StreamingCallbackT | None = None,
        *,
        hook_context: dict[str, Any] | None = None,
        inputs: RunInputs | None = None,
        update: bool = False,
    ) -> dict[str, Any]:
        """
        Research the question of the last user message.

        :param messages: The conversation; its last user message is the question.
        :param streaming_callback: A Haystack streaming callback every model of the run streams to, or ``None``.
        :param hook_context: Request-scoped resources; this shape has no hooks of its own, so they are kept as given.
        :param inputs: The run's inputs (:class:`~haystack_deep_research.RunInputs`: run directory, event subscriber,
            streaming callback, budgets, brief, ``on_run_opened``), or ``None``.
        :param update: Research the finished run in ``inputs.run_dir`` again.
        :returns: The shared outputs and the shape's own ``topics``, ``rounds`` and ``changes`` (see docs/iterative.md).
        :raises InvalidQuestionError: If ``messages`` is not a list of ``ChatMessage`` with a question, or the question
            is longer than ``MAX_QUESTION_CHARS``.
        :raises ConfigurationError: If ``hook_context`` is not a dict, or ``inputs`` not a ``RunInputs``.
        :raises RunDirError: If the run directory cannot be used.
        """
        return self.research(messages, streaming_callback, hook_context, inputs, update=update)

    @component.output_types(**OUTPUT_TYPES)
    async def run_async(
        self,
        messages: list[ChatMessage],
        streaming_callback: StreamingCallbackT | None = None,
        *,
        hook_context: dict[str, Any] | None = None,
        inputs: RunInputs | None = None,
        update: bool = False,
    ) -> dict[str, Any]:
        """Async variant of :meth:`run`: the same parameters, outputs and errors."""
        return await self.research_async(messages, streaming_callback, hook_context, inputs, update=update)

    def update(self, run_dir: str | os.PathLike[str], *, inputs: RunInputs | None = None) -> dict[str, Any]:
        """
        Research a finished run again: keep findings whose sources are fresh, search stale topics again, look for
        what is new, and write the report again with a "what changed" section (see ``iterative.update``).

        :param run_dir: The finished run's directory (its question is read from the journal).
        :param inputs: Other inputs of the run (event subscriber, budgets, ...); their ``run_dir`` is ``run_dir``.
        :returns: As for :meth:`run`; ``changes`` says what changed.
        :raises RunDirError: If the directory holds no finished run.
        """
        question = journaled_question(run_dir)
        given = replace(run_inputs(inputs), run_dir=Path(run_dir))
        return self.run(messages=[ChatMessage.from_user(question)], inputs=given, update=True)

    def _writer(self) -> Any:
        return self.step(WriteStep).chat_generator

    def _researcher(self) -> TopicResearcher:
        return self.step(SearchStep).research_topic


def _store(cache: ResearchCache | None, record_to: Any, replay_from: Any) -> tuple[CacheStore | None, Recording | None]:
    """The tools' cache: the cross-run cache, wrapped by a recording when one is made or replayed."""
    if replay_from is not None:
        recording = Recording(directory=replay_from, mode="replay")
        return recording, recording
    if record_to is not None:
        recording = Recording(directory=record_to, mode="record", cache=cache)
        return recording, recording
    return cache, None


def _models(given: dict[str, Any], grounding: Grounding | None, recording: Recording | None) -> dict[str, Any]:
    models = {
        "analysis": given["analysis_llm"],
        "writer": given["writer_llm"],
        "summarizer": given["summarizer_llm"] or given["analysis_llm"],
        "judge": (grounding.judge_llm or given["writer_llm"]) if grounding is not None else None,
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


def _phase_models(models: dict[str, Any]) -> dict[str, str]:
    return {
        PHASE_ANALYZE: model_name(models["analysis"]),
        PHASE_SUMMARIZE: model_name(models["summarizer"]),
        PHASE_WRITE: model_name(models["writer"]),
        PHASE_GROUND: model_name(models["judge"] or models["writer"]),
    }


def create_iterative_research_agent(
    *,
    analysis_llm: ChatGenerator,
    writer_llm: ChatGenerator,
    summarizer_llm: ChatGenerator | None = None,
    depth: int = 3,
    max_parallel_searches: int = 10,
    read_top_k: int = 3,
    max_search_results: int = 10,
    max_content_length: int = 50_000,
    topic_similarity: float = DEFAULT_SIMILARITY,
    sources: Sources | None = None,
    budgets: Budgets | None = None,
    grounding: Grounding | bool = False,
    style: ReportStyle | None = None,
    cache: ResearchCache | str | os.PathLike[str] | None = None,
    record_to: str | os.PathLike[str] | None = None,
    replay_from: str | os.PathLike[str] | None = None,
    hooks: dict[str, list[Any]] | None = None,
) -> IterativeResearchAgent:
    """
    Create an iterative research agent: ``depth`` rounds of analysis → search, then one comprehensive report.

    Each round the analysis model chooses the next topics (or stops), and they are searched with the query alone and
    their top results read; a topic is never searched twice. Then ``writer_llm`` writes the report, citing only pages
    the run read (see docs/iterative.md). Run it like every shape:
    ``agent.run(messages=[ChatMessage.from_user("...")])``.

    :param analysis_llm: Decides each round's topics (the seed's analysis model).
    :param writer_llm: Writes the final report, in parts (the seed's reasoning model).
    :param depth: Rounds of analysis and search, 1 to 50 (the seed's depth; default 3).
    :param max_parallel_searches: Topics one round may search at once, 1 to 10.
    :param summarizer_llm: Summarizes each page read toward its topic. Default: ``analysis_llm``.
    :param read_top_k: Results of each search that are read, 1 to 5.
    :param max_search_results: Results per search, 1 to 20.
    :param max_content_length: Page characters read and kept in the evidence ledger, 1,000 to 1,000,000.
    :param topic_similarity: From this similarity (0 to 1) on, a proposed topic repeats a searched one.
    :param sources: What each topic is searched in (:class:`~haystack_deep_research.Sources`, as for
        ``create_deep_research_agent``; MCP servers' query tools, one required text argument, are asked every topic).
    :param budgets: What one run may spend (:class:`~haystack_deep_research.Budgets`); once spent no round starts.
    :param grounding: Judge every cited claim against its source's stored text and mark unsupported claims: a
        :class:`~haystack_deep_research.Grounding` (``max_regenerations`` and ``max_replans`` are refused), ``True``
        or ``False`` (default).
    :param style: The report's form, tone and length (:class:`~haystack_deep_research.ReportStyle`).
    :param hooks: Refused (``None`` only): the iterative agent runs no Haystack Agent, so no Agent hook would ever
        run; follow its run with ``RunInputs(on_event=...)``.
    :param cache: The cross-run cache of searches, pages and summaries: a folder path, a ``ResearchCache``, or
        ``None``. Its ``ttl`` is also how long a source counts as fresh when a run is updated.
    :param record_to: Record every model exchange and tool result of each run in this directory.
    :param replay_from: Answer every model call and tool from a recording in this directory: no network, no model.
    :returns: The agent, a Haystack component. Its outputs: the shared ones and its own ``topics``, ``rounds`` and
        ``changes`` (see docs/iterative.md).
    :raises ConfigurationError: If a parameter is outside its allowed values; the message names it and the fix.
    :raises TypeError: For a keyword the factory does not know.
    """
    if hooks:
        raise ConfigurationError(
            "create_iterative_research_agent takes no hooks=: its steps are Pipeline components and it runs no "
            "Haystack Agent, so no Agent hook would run. Follow its runs with "
            "run(..., inputs=RunInputs(on_event=...)), or "
            "use create_research_workflow(hooks=...)."
        )
    given = {"analysis_llm": analysis_llm, "writer_llm": writer_llm, "summarizer_llm": summarizer_llm}
    for name, model in given.items():
        if model is not None or name != "summarizer_llm":
            _checks.chat_generator(name, model, needs_tools=False)
    _checks.int_in_range("depth", depth, 1, 50)
    _checks.int_in_range("max_parallel_searches", max_parallel_searches, 1, 10)
    _checks.int_in_range("max_search_results", max_search_results, 1, 20)
    if record_to is not None and replay_from is not None:
        raise ConfigurationError("pass record_to or replay_from, not both.")
    sources, budgets, grounded = Sources.of(sources), Budgets.of(budgets), Grounding.of(grounding)
    refuse_fields(
        grounded,
        ("threshold", "max_regenerations", "max_replans"),
        factory="create_iterative_research_agent",
        why="it marks unsupported claims and rewrites nothing",
    )
    style = ReportStyle.of(style)
    research_cache = cache_of(cache)
    store, recording = _store(research_cache, record_to, replay_from)
    models = _models(given, grounded, recording)
    run_settings = run_settings_of(budgets, _phase_models(models))
    web_search, read_url = None, None
    if sources.web:
        search = resolve_search(
            "auto" if sources.search is None else sources.search, max_results=max_search_results, scope=sources.scope
        )
        web_search, read_url = web_tools(sources, search, models["summarizer"], store, max_content_length)
    freshness = research_cache.ttl if research_cache is not None else DEFAULT_CACHE_TTL
    pipeline = Pipeline()
    pipeline.add_component("start", StartStep(depth=depth, freshness=freshness))
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
            datastores=datastore_tools(sources.datastores),
            mcp_servers=list(sources.mcp_servers or []),
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
