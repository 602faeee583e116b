"""``create_deep_research_agent``: the front door. Wiring only; every behaviour lives in the hooks and tools."""

from __future__ import annotations

from typing import Any

from haystack.components.agents import Agent
from haystack.components.generators.chat import OpenAIResponsesChatGenerator
from haystack.tools import Tool
from pydantic import BaseModel

from haystack_deep_research import _checks
from haystack_deep_research.budgets import EnforceBudgetHook, ResearcherBudgetHook, StartBudgetHook
from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.grounding import GroundingStage
from haystack_deep_research.hooks import ScopeHook, WriteHook
from haystack_deep_research.loop_guard import DEFAULT_LOOP_THRESHOLD, LoopGuardHook
from haystack_deep_research.preserve import PreservingChatGenerator
from haystack_deep_research.prompts import ORCHESTRATOR_SYSTEM, RESEARCHER_SYSTEM, render_text
from haystack_deep_research.researcher import FinalSummaryHook, ResearchSubtopicTool
from haystack_deep_research.resume import CloseJournalHook, OpenJournalHook, ResumeHook
from haystack_deep_research.state import orchestrator_state_schema, researcher_state_schema
from haystack_deep_research.steps import ReportStage
from haystack_deep_research.structured import StructuredOutputStage
from haystack_deep_research.tools.read_url import ReadUrlTool
from haystack_deep_research.tools.think import create_think_tool
from haystack_deep_research.tools.web_search import WebSearchTool
from haystack_deep_research.web import FetchLimits, UrlPolicy

DEFAULT_MODEL = "gpt-5.4"
DEFAULT_SMALL_MODEL = "gpt-5.4-mini"
DEFAULT_TIMEOUT_S = 120.0
DEFAULT_MAX_RETRIES = 3


def default_chat_generator(model: str) -> OpenAIResponsesChatGenerator:
    """
    The default chat generator for a role: OpenAI's Responses API with a timeout and retries.

    Building it needs no API key; the key (``OPENAI_API_KEY``) is read when the first request is made.

    :param model: The OpenAI model name.
    :returns: A chat generator.
    """
    return OpenAIResponsesChatGenerator(model=model, timeout=DEFAULT_TIMEOUT_S, max_retries=DEFAULT_MAX_RETRIES)


def _report_stages(
    *,
    grounding: bool,
    judge_llm: Any | None,
    threshold: float,
    max_regenerations: int,
    max_replans: int,
    max_concurrency: int,
    output_schema: type[BaseModel] | None,
) -> list[ReportStage]:
    """The write hook's stages; every parameter is validated, also those of a stage that is off."""
    if not isinstance(grounding, bool):
        raise ConfigurationError(f"grounding must be True or False; got {grounding!r}.")
    if judge_llm is not None and not grounding:
        raise ConfigurationError("judge_llm is used only with grounding=True; pass grounding=True or drop judge_llm.")
    grounding_stage = GroundingStage(
        judge_llm=judge_llm,
        threshold=threshold,
        max_regenerations=max_regenerations,
        max_replans=max_replans,
        max_concurrency=max_concurrency,
    )
    stages: list[ReportStage] = [grounding_stage] if grounding else []
    if output_schema is not None:
        stages.append(StructuredOutputStage(output_schema=output_schema))
    return stages


def create_deep_research_agent(
    *,
    scope_llm: Any | None = None,
    orchestrator_llm: Any | None = None,
    researcher_llm: Any | None = None,
    summarizer_llm: Any | None = None,
    writer_llm: Any | None = None,
    max_subtopics: int = 5,
    max_concurrent_researchers: int = 5,
    max_orchestrator_steps: int = 8,
    max_researcher_steps: int = 20,
    max_search_results: int = 10,
    max_content_length: int = 50_000,
    search_tool: Tool | None = None,
    url_policy: UrlPolicy | None = None,
    fetch_limits: FetchLimits | None = None,
    token_budget: int | None = None,
    time_budget: float | None = None,
    loop_threshold: int = DEFAULT_LOOP_THRESHOLD,
    grounding: bool = False,
    judge_llm: Any | None = None,
    grounding_threshold: float = 0.65,
    max_regenerations: int = 1,
    max_replans: int = 2,
    output_schema: type[BaseModel] | None = None,
) -> Agent:
    """
    Create a deep research agent: question → research brief → parallel sub-researchers → cited Markdown report.

    The result is a plain Haystack ``Agent``: run it with ``run`` or ``run_async``, put it in a Pipeline, serialize it
    with ``to_dict`` / ``from_dict``. Pass the question as ``messages=[ChatMessage.from_user("...")]``.

    :param scope_llm: Turns the question into a research brief. Default: OpenAI "gpt-5.4".
    :param orchestrator_llm: Plans, delegates sub-topics and checks coverage; must support tools. Default "gpt-5.4".
    :param researcher_llm: Each sub-researcher's search / read / think loop; must support tools.
        Default "gpt-5.4-mini".
    :param summarizer_llm: Summarizes each page read toward the researcher's question. Default "gpt-5.4-mini".
    :param writer_llm: Turns the brief and the notes into the report. Default "gpt-5.4".
    :param max_subtopics: Sub-topics the orchestrator may delegate in one run, 1 to 50 (enforced in code).
    :param max_concurrent_researchers: Sub-researchers running at once, 1 to 50.
    :param max_orchestrator_steps: Orchestrator loop steps, 1 to 100.
    :param max_researcher_steps: Each sub-researcher's loop steps, 1 to 200.
    :param max_search_results: Results per web_search call, 1 to 20 (used by the default search tool).
    :param max_content_length: Page characters given to the summarizer, 1,000 to 1,000,000.
    :param search_tool: The researchers' search tool. Default: the library's ``WebSearchTool`` (Tavily,
        ``TAVILY_API_KEY``). Another tool should return titles, exact URLs and snippets.
    :param url_policy: Which URLs ``read_url`` may fetch. Default: public http(s) addresses only.
    :param fetch_limits: Download cap, timeouts, redirects and PDF pages for ``read_url``.
    :param token_budget: Total tokens one run may spend across all phases, 1 to 1,000,000,000, or ``None``. Once
        spent, no new research starts, running researchers summarize what they have, the report is written and
        ``exit_reason`` is "token_budget".
    :param time_budget: Seconds of wall-clock time one run may take (up to 7 days), or ``None``; when spent the run
        ends the same way with ``exit_reason`` "time_budget".
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
    :returns: The orchestrator ``Agent``. Its run returns ``report``, ``brief``, ``notes``, ``sources``,
        ``citations``, ``warnings``, ``usage_by_phase``, ``grounding_score`` (``None`` without grounding),
        ``grounding`` (per-claim verdicts), ``regeneration_count``, ``replan_count``, ``structured`` (``None``
        without a schema) and the Agent's own ``messages``, ``last_message``, ``step_count``, ``token_usage``
        (all phases), ``tool_call_counts`` and ``exit_reason``.
    :raises ConfigurationError: If a parameter is outside its allowed values; the message names it and the range.
    """
    _checks.int_in_range("max_concurrent_researchers", max_concurrent_researchers, 1, 50)
    _checks.int_in_range("max_orchestrator_steps", max_orchestrator_steps, 1, 100)
    _checks.int_in_range("max_researcher_steps", max_researcher_steps, 1, 200)
    _checks.int_in_range("max_search_results", max_search_results, 1, 20)
    if search_tool is not None and not isinstance(search_tool, Tool):
        raise ConfigurationError(f"search_tool must be a Haystack Tool; got {type(search_tool).__name__}.")
    if url_policy is not None and not isinstance(url_policy, UrlPolicy):
        raise ConfigurationError(f"url_policy must be a UrlPolicy; got {type(url_policy).__name__}.")
    if fetch_limits is not None and not isinstance(fetch_limits, FetchLimits):
        raise ConfigurationError(f"fetch_limits must be a FetchLimits; got {type(fetch_limits).__name__}.")
    budget = StartBudgetHook(token_budget=token_budget, time_budget=time_budget)
    loop_guard = LoopGuardHook(threshold=loop_threshold)
    stages = _report_stages(
        grounding=grounding,
        judge_llm=judge_llm,
        threshold=grounding_threshold,
        max_regenerations=max_regenerations,
        max_replans=max_replans,
        max_concurrency=max_concurrent_researchers,
        output_schema=output_schema,
    )

    scope = _checks.chat_generator("scope_llm", scope_llm or default_chat_generator(DEFAULT_MODEL), needs_tools=False)
    orchestrator = _checks.chat_generator(
        "orchestrator_llm", orchestrator_llm or default_chat_generator(DEFAULT_MODEL), needs_tools=True
    )
    researcher_model = _checks.chat_generator(
        "researcher_llm", researcher_llm or default_chat_generator(DEFAULT_SMALL_MODEL), needs_tools=True
    )
    summarizer = _checks.chat_generator(
        "summarizer_llm", summarizer_llm or default_chat_generator(DEFAULT_SMALL_MODEL), needs_tools=False
    )
    writer = _checks.chat_generator(
        "writer_llm", writer_llm or default_chat_generator(DEFAULT_MODEL), needs_tools=False
    )

    researcher = Agent(
        chat_generator=researcher_model,
        tools=[
            search_tool or WebSearchTool(max_results=max_search_results),
            ReadUrlTool(
                summarizer_llm=summarizer,
                max_content_length=max_content_length,
                url_policy=url_policy,
                fetch_limits=fetch_limits,
            ),
            create_think_tool(),
        ],
        system_prompt=render_text(RESEARCHER_SYSTEM, max_steps=max_researcher_steps),
        state_schema=researcher_state_schema(),
        max_agent_steps=max_researcher_steps,
        hooks={
            "before_llm": [ResearcherBudgetHook()],
            "before_tool": [loop_guard],
            "after_run": [FinalSummaryHook(chat_generator=researcher_model)],
        },
    )
    return Agent(
        chat_generator=PreservingChatGenerator(chat_generator=orchestrator),
        tools=[ResearchSubtopicTool(researcher=researcher, max_subtopics=max_subtopics), create_think_tool()],
        system_prompt=render_text(ORCHESTRATOR_SYSTEM, max_subtopics=max_subtopics),
        state_schema=orchestrator_state_schema(),
        max_agent_steps=max_orchestrator_steps,
        tool_concurrency_limit=max_concurrent_researchers,
        hooks={
            "before_run": [budget, OpenJournalHook(), ScopeHook(chat_generator=scope), ResumeHook()],
            "before_llm": [EnforceBudgetHook()],
            "after_run": [WriteHook(chat_generator=writer, stages=stages), CloseJournalHook()],
        },
    )
