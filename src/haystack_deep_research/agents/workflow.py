"""
The research workflow: ``create_research_workflow`` wires its Pipeline (the steps are in ``workflow``), and
``ResearchWorkflow`` is that Pipeline as one component, run like every shape (see ``PipelineShape``).
"""

from __future__ import annotations

from typing import Any

from haystack import Pipeline, component
from haystack.components.generators.chat.types import ChatGenerator
from haystack.components.joiners import BranchJoiner
from haystack.dataclasses import ChatMessage, StreamingCallbackT
from haystack.tools import Tool, Toolset
from pydantic import BaseModel

from haystack_deep_research import _checks
from haystack_deep_research.agents.models import run_settings_of
from haystack_deep_research.agents.research_agent import AskMixin
from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.report import ReportStyle
from haystack_deep_research.report.ask import TopicResearcher, subtopic_researcher
from haystack_deep_research.research.loop_guard import DEFAULT_LOOP_THRESHOLD, MAX_LOOP_THRESHOLD, MIN_LOOP_THRESHOLD
from haystack_deep_research.run import ResearchRun, RunInputs
from haystack_deep_research.run._budget import model_name
from haystack_deep_research.run._lifecycle import PipelineShape
from haystack_deep_research.settings import Budgets, Grounding, Sources
from haystack_deep_research.settings.grouped import WEB_FIELDS, refuse_fields
from haystack_deep_research.sources import datastore_tools, routing_prompt
from haystack_deep_research.sources.mcp_servers import mcp_toolsets
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
from haystack_deep_research.workflow import execute_agent
from haystack_deep_research.workflow.execute import ExecuteStep
from haystack_deep_research.workflow.finish import OUTPUT_TYPES, GroundingRouter, ReplanStep, WorkflowFinishStep
from haystack_deep_research.workflow.summary import CausalStep, GroundingEval, RegenerateStep, SummarizeStep
from haystack_deep_research.workflow.workflow_run import WorkflowRun

__all__ = ["ResearchWorkflow", "create_research_workflow"]


@component
class ResearchWorkflow(AskMixin, PipelineShape):
    """
    The research workflow as one component; build it with ``create_research_workflow``.

    :param pipeline: The Pipeline (its ``execute`` step takes the question, its ``finish`` step gives the outputs).
    :param run_settings: What each run is opened with (see ``PipelineShape``).
    """

    def entry(self, run: ResearchRun, **inputs: Any) -> dict[str, dict[str, Any]]:
        return {"execute": {"question": run.question}}

    @component.output_types(**OUTPUT_TYPES)
    def run(
        self,
        messages: list[ChatMessage],
        streaming_callback: StreamingCallbackT | None = None,
        *,
        hook_context: dict[str, Any] | None = None,
        inputs: RunInputs | None = None,
    ) -> dict[str, Any]:
        """
        Research the question of the last user message.

        :param messages: The conversation; its last user message is the question.
        :param streaming_callback: A Haystack streaming callback every model of the run streams to, or ``None``.
        :param hook_context: Request-scoped resources for the hooks of the Execute agent (yours among them).
        :param inputs: The run's inputs (:class:`~haystack_deep_research.RunInputs`: run directory, event subscriber,
            streaming callback, budgets, brief, ``on_run_opened``), or ``None``.
        :returns: The shared outputs and the workflow's own ``causal_chain``, ``regeneration_count`` and
            ``replan_count`` (see docs/workflow.md).
        :raises InvalidQuestionError: If ``messages`` is not a list of ``ChatMessage`` with a question.
        :raises ConfigurationError: If ``hook_context`` is not a dict, or ``inputs`` not a ``RunInputs``.
        :raises RunDirError: If the run directory cannot be used.
        """
        return self.research(messages, streaming_callback, hook_context, inputs)

    @component.output_types(**OUTPUT_TYPES)
    async def run_async(
        self,
        messages: list[ChatMessage],
        streaming_callback: StreamingCallbackT | None = None,
        *,
        hook_context: dict[str, Any] | None = None,
        inputs: RunInputs | None = None,
    ) -> dict[str, Any]:
        """Async variant of :meth:`run`: the same parameters, outputs and errors."""
        return await self.research_async(messages, streaming_callback, hook_context, inputs)

    def _writer(self) -> Any:
        return self.step(SummarizeStep).chat_generator

    def _researcher(self) -> TopicResearcher:
        return subtopic_researcher(self.step(ExecuteStep).agent)


def _phase_models(
    main: ChatGenerator, tools: Any, causal_llm: Any, writer: ChatGenerator, judge: ChatGenerator
) -> dict[str, str]:
    """The model each phase calls (what its usage costs)."""
    readers = [tool.summarizer_llm for tool in tools if isinstance(tool, ReadUrlTool)]
    return {
        PHASE_EXECUTE: model_name(main),
        PHASE_RESEARCH: model_name(main),
        PHASE_SUMMARIZE: model_name(readers[0] if readers else main),
        PHASE_CAUSAL: model_name(causal_llm or main),
        PHASE_SUMMARY: model_name(writer),
        PHASE_GROUND: model_name(judge),
        PHASE_STRUCTURE: model_name(writer),
    }


def create_research_workflow(
    *,
    chat_generator: ChatGenerator,
    tools: list[Tool | Toolset],
    output_schema: type[BaseModel] | None,
    causal_inference: bool = True,
    causal_llm: ChatGenerator | None = None,
    summary_llm: ChatGenerator | None = None,
    max_steps: int = 20,
    loop_threshold: int = DEFAULT_LOOP_THRESHOLD,
    sources: Sources | None = None,
    budgets: Budgets | None = None,
    grounding: Grounding | bool | None = None,
    style: ReportStyle | None = None,
    hooks: dict[str, list[Any]] | None = None,
) -> ResearchWorkflow:
    """
    Create a research workflow: a Pipeline that gathers evidence, summarizes it, and checks the summary's grounding.

    Execute → Causal inference (optional) → Summarize → Grounding eval → done when the score meets the threshold; below
    it, Regenerate (no tools) while rewrites are left, then Replan (back to Execute) while replans are left (see
    docs/workflow.md). Run it like every shape: ``workflow.run(messages=[ChatMessage.from_user("...")])``.

    :param chat_generator: The Execute agent's model (must support tools); also the model of every other step that
        has none of its own.
    :param tools: The Execute agent's tools: Haystack Tools and Toolsets (for example ``WebSearchTool()`` and
        ``ReadUrlTool(...)``, which record what they read in the run's evidence ledger).
    :param output_schema: A pydantic model class: the final summary becomes an instance of it, the
        ``structured`` output; ``None`` for none.
    :param causal_inference: Build a causal chain between Execute and Summarize.
    :param causal_llm: The causal-inference model. Default: ``chat_generator``.
    :param summary_llm: The model that writes the summary (in parts), rewrites it and structures it. Default:
        ``chat_generator``.
    :param max_steps: Steps of each Execute round's tool loop, 1 to 200.
    :param loop_threshold: Identical tool calls in a row that make a loop, 2 to 20 (see ``LoopGuardHook``).
    :param sources: Your datastores and MCP servers (:class:`~haystack_deep_research.Sources`), whose tools are added
        to ``tools``; its web settings are refused, as the web is searched with the tools you give.
    :param budgets: What one run may spend (:class:`~haystack_deep_research.Budgets`); once spent, no rewrite or
        replan starts and ``exit_reason`` names the budget.
    :param grounding: The grounding loop (:class:`~haystack_deep_research.Grounding`): judge (default
        ``chat_generator``), threshold, ``max_regenerations`` and ``max_replans``. Always on; ``None`` for its defaults.
    :param style: The summary's form, tone and length (:class:`~haystack_deep_research.ReportStyle`).
    :param hooks: Your own Haystack hooks for the Execute agent, by hook point (``{"after_tool": [my_hook]}``): they
        run after the library's at each point of every Execute round; the run's ``hook_context`` reaches them.
    :returns: The workflow, a Haystack component over its Pipeline (``workflow.pipeline``). Its outputs: the shared
        ones and its own ``causal_chain``, ``regeneration_count`` and ``replan_count`` (see docs/workflow.md).
    :raises ConfigurationError: If a parameter is outside its allowed values; the message names it and the fix.
    :raises TypeError: For a keyword the factory does not know.
    """
    for name, model in (("causal_llm", causal_llm), ("summary_llm", summary_llm)):
        if model is not None:
            _checks.chat_generator(name, model, needs_tools=False)
    _checks.output_schema(output_schema)
    if not isinstance(causal_inference, bool):
        raise ConfigurationError(f"causal_inference must be True or False; got {causal_inference!r}.")
    _checks.int_in_range("loop_threshold", loop_threshold, MIN_LOOP_THRESHOLD, MAX_LOOP_THRESHOLD)
    if grounding is False:
        raise ConfigurationError(
            "create_research_workflow always judges its summary (its loop routes on the score): pass a Grounding to "
            "tune it, or use create_deep_research_agent for a report without grounding."
        )
    chosen, budgets, grounded = Sources.of(sources), Budgets.of(budgets), Grounding.of(grounding) or Grounding()
    refuse_fields(chosen, WEB_FIELDS, factory="create_research_workflow", why="it searches with the tools you give")
    style = ReportStyle.of(style)
    datastores = chosen.datastores
    own: list[Tool | Toolset] = [*datastore_tools(datastores), *mcp_toolsets(list(chosen.mcp_servers or []))]
    every_tool = [*tools, *own] if isinstance(tools, list) else tools
    agent = execute_agent(
        routing=routing_prompt(datastores) if datastores else "",
        chat_generator=chat_generator,
        tools=every_tool,
        max_steps=max_steps,
        loop_threshold=loop_threshold,
        hooks=hooks,
    )
    router = GroundingRouter(
        threshold=grounded.threshold, max_regenerations=grounded.max_regenerations, max_replans=grounded.max_replans
    )
    writer = summary_llm or chat_generator
    judge = grounded.judge_llm or chat_generator
    run_settings = run_settings_of(budgets, _phase_models(chat_generator, tools, causal_llm, writer, judge))
    pipeline = Pipeline()
    pipeline.add_component("execute", ExecuteStep(agent=agent))
    if causal_inference:
        pipeline.add_component("causal", CausalStep(chat_generator=causal_llm or chat_generator))
    pipeline.add_component("summarize", SummarizeStep(chat_generator=writer, style=style))
    pipeline.add_component("to_grounding", BranchJoiner(WorkflowRun))
    pipeline.add_component("grounding", GroundingEval(judge_llm=judge))
    pipeline.add_component("router", router)
    pipeline.add_component("regenerate", RegenerateStep(chat_generator=writer, style=style))
    pipeline.add_component("replan", ReplanStep())
    pipeline.add_component(
        "finish", WorkflowFinishStep(chat_generator=writer, output_schema=output_schema, judge_llm=judge)
    )
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
    return ResearchWorkflow(pipeline=pipeline, run_settings=run_settings)
