"""
``ResearchWorkflow``: the research workflow's Pipeline as one Haystack component, called like every shape and
honouring the run contract of :class:`~haystack_deep_research.run._lifecycle.PipelineShape`. It serializes as itself
(the Pipeline nested) and nests in other Pipelines; its Pipeline is ``workflow.pipeline``.
"""

from __future__ import annotations

from typing import Any

from haystack import component
from haystack.dataclasses import ChatMessage, StreamingCallbackT

from haystack_deep_research.agents.research_agent import AskMixin
from haystack_deep_research.report.ask import TopicResearcher, subtopic_researcher
from haystack_deep_research.run import ResearchRun, RunInputs
from haystack_deep_research.run._lifecycle import PipelineShape
from haystack_deep_research.workflow.execute import ExecuteStep
from haystack_deep_research.workflow.finish import OUTPUT_TYPES
from haystack_deep_research.workflow.summary import SummarizeStep

__all__ = ["ResearchWorkflow"]


@component
class ResearchWorkflow(AskMixin, PipelineShape):
    """
    The research workflow as one component (see the module docstring). Build it with ``create_research_workflow``.

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
        :returns: The shared outputs (``report``, ``brief``, ``notes``, ``sources``, ``citations``, ``warnings``,
            ``exit_reason``, ``usage_by_phase``, ``cost``, ``token_usage``, ``structured``, ``grounding_score``,
            ``grounding``) and the workflow's own ``causal_chain``, ``regeneration_count`` and ``replan_count``.
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
