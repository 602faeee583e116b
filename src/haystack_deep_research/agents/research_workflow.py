"""``create_research_workflow``: a Haystack Pipeline with a quality loop. Wiring only; the steps are in ``workflow``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from haystack import Pipeline
from haystack.components.generators.chat.types import ChatGenerator
from haystack.components.joiners import BranchJoiner
from haystack.tools import Tool, Toolset
from pydantic import BaseModel

from haystack_deep_research import _checks
from haystack_deep_research.agents.workflow import ResearchWorkflow
from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.report import ReportStyle
from haystack_deep_research.research.loop_guard import DEFAULT_LOOP_THRESHOLD, MAX_LOOP_THRESHOLD, MIN_LOOP_THRESHOLD
from haystack_deep_research.run import Price, RunBudget, model_name
from haystack_deep_research.run.cost import CostMeter
from haystack_deep_research.sources import MCPServer, datastore_tools, mcp_toolsets, routing_prompt
from haystack_deep_research.state import (
    PHASE_CAUSAL,
    PHASE_EXECUTE,
    PHASE_GROUND,
    PHASE_RESEARCH,
    PHASE_STRUCTURE,
    PHASE_SUMMARIZE,
    PHASE_SUMMARY,
)
from haystack_deep_research.tools import ReadUrlTool
from haystack_deep_research.workflow import (
    CausalStep,
    ExecuteStep,
    GroundingEval,
    GroundingRouter,
    RegenerateStep,
    ReplanStep,
    SummarizeStep,
    WorkflowFinishStep,
    WorkflowRun,
    execute_agent,
)

__all__ = ["create_research_workflow"]


def _check(options: dict[str, Any]) -> None:
    for name in ("causal_llm", "summary_llm", "judge_llm"):
        if options[name] is not None:
            _checks.chat_generator(name, options[name], needs_tools=False)
    schema = options["output_schema"]
    if schema is not None and not (isinstance(schema, type) and issubclass(schema, BaseModel)):
        raise ConfigurationError(
            f"output_schema must be a pydantic BaseModel subclass (for example ResearchSummary) or None; "
            f"got {schema!r}."
        )
    if not isinstance(options["causal_inference"], bool):
        raise ConfigurationError(f"causal_inference must be True or False; got {options['causal_inference']!r}.")
    _checks.int_in_range("loop_threshold", options["loop_threshold"], MIN_LOOP_THRESHOLD, MAX_LOOP_THRESHOLD)
    RunBudget(
        token_budget=options["token_budget"], time_budget=options["time_budget"], cost_budget=options["cost_budget"]
    )


def _phase_models(options: dict[str, Any], writer: ChatGenerator) -> dict[str, str]:
    """The model each phase calls (what its usage costs); checks that a cost budget can be priced."""
    main = options["chat_generator"]
    readers = [tool.summarizer_llm for tool in options["tools"] if isinstance(tool, ReadUrlTool)]
    phases = {
        PHASE_EXECUTE: model_name(main),
        PHASE_RESEARCH: model_name(main),
        PHASE_SUMMARIZE: model_name(readers[0] if readers else main),
        PHASE_CAUSAL: model_name(options["causal_llm"] or main),
        PHASE_SUMMARY: model_name(writer),
        PHASE_GROUND: model_name(options["judge_llm"] or main),
        PHASE_STRUCTURE: model_name(writer),
    }
    if options["cost_budget"] is not None and (unpriced := CostMeter(prices=options["prices"]).unpriced(phases)):
        raise ConfigurationError(
            f"cost_budget needs the price of every model the run calls; none is known for {', '.join(unpriced)}. "
            f"Pass prices={{{unpriced[0]!r}: Price(input_per_mtok=..., output_per_mtok=...)}}."
        )
    return phases


def create_research_workflow(
    *,
    chat_generator: ChatGenerator,
    tools: list[Tool | Toolset],
    output_schema: type[BaseModel] | None,
    datastores: Mapping[str, Any] | None = None,
    mcp_servers: list[MCPServer] | None = None,
    causal_inference: bool = True,
    grounding_threshold: float = 0.65,
    max_regenerations: int = 1,
    max_replans: int = 2,
    causal_llm: ChatGenerator | None = None,
    summary_llm: ChatGenerator | None = None,
    judge_llm: ChatGenerator | None = None,
    max_steps: int = 20,
    loop_threshold: int = DEFAULT_LOOP_THRESHOLD,
    token_budget: int | None = None,
    time_budget: float | None = None,
    cost_budget: float | None = None,
    prices: dict[str, Price] | None = None,
    report_type: str = "research_report",
    tone: str = "objective",
    report_length: int | str | None = None,
) -> ResearchWorkflow:
    """
    Create a research workflow: a Pipeline that gathers evidence, summarizes it, and checks the summary's grounding.

    Execute (a tool loop gathers evidence) → Causal inference (a causal chain from the evidence; optional) →
    Summarize (a summary citing only sources really read, written in parts side by side as every shape's report is)
    → Grounding eval (a judge scores each cited claim against the stored text of its source) → done when the score
    meets ``grounding_threshold``. Below it, Regenerate (rewrite the parts of the summary that hold unsupported
    claims, without tools) while rewrites are left, then Replan (a task focused on the unsupported
    claims, back to Execute) while replans are left; the run ends when both are used up. Run it like every shape:
    ``workflow.run(messages=[ChatMessage.from_user("...")])`` (or ``run_async``), with the same ``hook_context``
    inputs (event subscribers, streaming callback, run directory).

    :param chat_generator: The Execute agent's model (must support tools); also the model of every other step that
        has none of its own.
    :param tools: The Execute agent's tools: Haystack Tools and Toolsets (for example ``WebSearchTool()`` and
        ``ReadUrlTool(...)``, which record what they read in the run's evidence ledger).
    :param output_schema: A pydantic model class: the final summary becomes an instance of it, the
        ``structured`` output; ``None`` for none.
    :param datastores: Named document stores whose search tools are added to ``tools`` (needs
        ``haystack_deep_research.sources.datastore_tools``; a clear error until it is available).
    :param mcp_servers: MCP servers whose tools the Execute agent may call, as for ``create_deep_research_agent``
        (one connection per run and server, closed with the run; results cited as ``mcp://`` or the URL they give).
    :param causal_inference: Build a causal chain between Execute and Summarize.
    :param grounding_threshold: The lowest acceptable grounding score, 0 to 1.
    :param max_regenerations: Rewrites of the summary in one run, without tools, 0 to 5.
    :param max_replans: Focused Execute rounds in one run, 0 to 5.
    :param causal_llm: The causal-inference model. Default: ``chat_generator``.
    :param summary_llm: The model that writes the summary (in parts), rewrites it and structures it. Default:
        ``chat_generator``.
    :param judge_llm: The grounding judge. Default: ``chat_generator``.
    :param max_steps: Steps of each Execute round's tool loop, 1 to 200.
    :param loop_threshold: Identical tool calls in a row that make a loop, 2 to 20 (see ``LoopGuardHook``).
    :param token_budget: Total tokens one run may spend across all steps, or ``None``; once spent, no rewrite or
        replan starts and ``exit_reason`` is ``token_budget``.
    :param time_budget: Seconds of wall-clock time one run may take, or ``None`` (``exit_reason`` ``time_budget``).
    :param cost_budget: US dollars one run may cost, or ``None`` (every model's price must be known).
    :param prices: Prices of models the library has no price for (see ``Price``).
    :param report_type: The summary's form: "research_report" (default), "detailed_report", "outline",
        "resource_list" or "executive_brief" (as for ``create_deep_research_agent``).
    :param tone: "objective" (default), "formal", "analytical", "informal", or a short description of a tone.
    :param report_length: The summary's target length in words (100 to 20,000), "short", "medium" or "long".
    :returns: The workflow, a Haystack component over its Pipeline (``workflow.pipeline``). Its outputs: the shared
        ones (``report``, ``brief``, ``notes``, ``sources``, ``citations``, ``warnings``, ``exit_reason``,
        ``usage_by_phase``, ``cost``, ``token_usage``, ``structured``, ``grounding_score``, ``grounding``) and its own
        ``causal_chain``, ``regeneration_count`` and ``replan_count`` (see ``WorkflowFinishStep``).
    :raises ConfigurationError: If a parameter is outside its allowed values; the message names it and the range.
    """
    options = dict(locals())
    _check(options)
    style = ReportStyle(report_type=report_type, tone=tone, report_length=report_length)
    sources: list[Tool | Toolset] = [*datastore_tools(datastores), *mcp_toolsets(mcp_servers)]
    every_tool = [*tools, *sources] if isinstance(tools, list) else tools
    agent = execute_agent(
        routing=routing_prompt(datastores) if datastores else "",
        chat_generator=chat_generator,
        tools=every_tool,
        max_steps=max_steps,
        loop_threshold=loop_threshold,
    )
    router = GroundingRouter(
        threshold=grounding_threshold, max_regenerations=max_regenerations, max_replans=max_replans
    )
    writer = summary_llm or chat_generator
    pipeline = Pipeline()
    pipeline.add_component("execute", ExecuteStep(agent=agent))
    if causal_inference:
        pipeline.add_component("causal", CausalStep(chat_generator=causal_llm or chat_generator))
    pipeline.add_component("summarize", SummarizeStep(chat_generator=writer, style=style))
    pipeline.add_component("to_grounding", BranchJoiner(WorkflowRun))
    pipeline.add_component("grounding", GroundingEval(judge_llm=judge_llm or chat_generator))
    pipeline.add_component("router", router)
    pipeline.add_component("regenerate", RegenerateStep(chat_generator=writer, style=style))
    pipeline.add_component("replan", ReplanStep())
    pipeline.add_component("finish", WorkflowFinishStep(chat_generator=writer, output_schema=output_schema))
    if causal_inference:
        pipeline.connect("execute.workflow", "causal.workflow")
        pipeline.connect("causal.workflow", "summarize.workflow")
    else:
        pipeline.connect("execute.workflow", "summarize.workflow")
    pipeline.connect("summarize.workflow", "to_grounding.value")
    pipeline.connect("regenerate.workflow", "to_grounding.value")
    pipeline.connect("to_grounding.value", "grounding.workflow")
    pipeline.connect("grounding.workflow", "router.workflow")
    pipeline.connect("router.done", "finish.workflow")
    pipeline.connect("router.regenerate", "regenerate.workflow")
    pipeline.connect("router.replan", "replan.workflow")
    pipeline.connect("replan.workflow", "execute.workflow")
    run_settings = {
        "token_budget": token_budget,
        "time_budget": time_budget,
        "cost_budget": cost_budget,
        "phase_models": _phase_models(options, writer),
        "prices": prices,
    }
    return ResearchWorkflow(pipeline=pipeline, run_settings=run_settings)
