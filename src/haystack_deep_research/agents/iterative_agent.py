"""
``IterativeResearchAgent``: the iterative research Pipeline as one Haystack component, called like every shape and
honouring the run contract of :class:`~haystack_deep_research.run._lifecycle.PipelineShape`. It serializes as itself
(the Pipeline nested, as YAML shows it) and nests in other Pipelines; :meth:`IterativeResearchAgent.update` researches
a finished run again.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from haystack import component
from haystack.dataclasses import ChatMessage, StreamingCallbackT

from haystack_deep_research.agents.research_agent import AskMixin
from haystack_deep_research.errors import RunDirError
from haystack_deep_research.iterative.iteration import OUTPUT_TYPES
from haystack_deep_research.iterative.search import SearchStep
from haystack_deep_research.iterative.write import WriteStep
from haystack_deep_research.report.ask import TopicResearcher
from haystack_deep_research.run import ResearchRun, RunInputs
from haystack_deep_research.run._journal import JOURNAL_FILE, JournalFile, check_run_dir
from haystack_deep_research.run._lifecycle import PipelineShape, run_inputs

__all__ = ["IterativeResearchAgent", "journaled_question"]


def journaled_question(run_dir: str | os.PathLike[str]) -> str:
    """
    :param run_dir: A run directory.
    :returns: The question of the run journaled there.
    :raises RunDirError: If the directory holds no journal of this library.
    """
    path = check_run_dir(run_dir) / JOURNAL_FILE
    records = JournalFile(path).read() if path.is_file() else []
    question = records[0].get("question") if records and records[0].get("type") == "start" else None
    if not isinstance(question, str) or not question.strip():
        raise RunDirError(f"{str(run_dir)!r} holds no journal of a run; pass the run directory of a finished run.")
    return question


@component
class IterativeResearchAgent(AskMixin, PipelineShape):
    """
    The iterative research Pipeline as one component (see the module docstring). Build it with
    ``create_iterative_research_agent``.

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
        :returns: The shared outputs (``report``, ``brief``, ``notes``, ``sources``, ``citations``, ``warnings``,
            ``exit_reason``, ``usage_by_phase``, ``cost``, ``token_usage``, ``structured``, ``grounding_score``,
            ``grounding``) and the shape's own ``topics``, ``rounds`` and ``changes`` (see ``IterativeFinishStep``).
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
