"""
``IterativeResearchAgent``: the iterative research Pipeline as one Haystack component, run like the main agent.

It is a Haystack ``SuperComponent`` over the Pipeline that ``create_iterative_research_agent`` builds, with the
main agent's interface (``run(messages=[ChatMessage.from_user(...)], hook_context={...})``) and its two guarantees:
malformed input is refused with a typed error before anything runs, and what a run opened (its run directory's lock)
is closed however the run ends, also when a step raises. It serializes as itself (the Pipeline nested, as YAML
shows it) and nests in other Pipelines. :meth:`IterativeResearchAgent.update` researches a finished run again.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from haystack import Pipeline, component
from haystack.core.serialization import default_from_dict, default_to_dict
from haystack.core.super_component import SuperComponent
from haystack.core.super_component.utils import _delegate_default
from haystack.dataclasses import ChatMessage

from haystack_deep_research.errors import RunDirError
from haystack_deep_research.run import JOURNAL_FILE, RunGuard, check_hook_context, question_from
from haystack_deep_research.run.run_dir import JournalFile, check_run_dir
from haystack_deep_research.state import RUN_DIR_KEY, RUN_GUARD_KEY

__all__ = ["INPUTS", "OUTPUTS", "IterativeResearchAgent", "journaled_question"]

INPUTS = {"messages": ["start.messages"], "hook_context": ["start.hook_context"], "update": ["start.update"]}
"""The agent's inputs, mapped onto its Pipeline."""
OUTPUTS = {
    f"finish.{name}": name
    for name in (
        "report",
        "topics",
        "findings",
        "sources",
        "citations",
        "warnings",
        "exit_reason",
        "rounds",
        "usage_by_phase",
        "cost",
        "token_usage",
        "grounding_score",
        "grounding",
        "changes",
    )
}
"""The agent's outputs, taken from its Pipeline's last step."""


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
class IterativeResearchAgent(SuperComponent):
    """
    The iterative research Pipeline as one component (see the module docstring). Build it with
    ``create_iterative_research_agent``.

    :param pipeline: The Pipeline.
    :param input_mapping: Its inputs (default :data:`INPUTS`).
    :param output_mapping: Its outputs (default :data:`OUTPUTS`).
    """

    def __init__(
        self,
        *,
        pipeline: Pipeline,
        input_mapping: dict[str, list[str]] | None = None,
        output_mapping: dict[str, str] | None = None,
    ) -> None:
        SuperComponent.__init__(
            self, pipeline=pipeline, input_mapping=input_mapping or INPUTS, output_mapping=output_mapping or OUTPUTS
        )

    def run(self, **kwargs: Any) -> dict[str, Any]:
        """
        Research the question of the last user message.

        :param kwargs: ``messages`` (a list of ``ChatMessage``), ``hook_context`` (run-time inputs: ``EVENTS_KEY``,
            ``PROGRESS_KEY``, ``STREAMING_KEY``, ``RUN_DIR_KEY``) and ``update`` (research the finished run in
            ``RUN_DIR_KEY`` again).
        :returns: ``report``, ``topics``, ``findings``, ``sources``, ``citations``, ``warnings``, ``exit_reason``,
            ``rounds``, ``usage_by_phase``, ``cost``, ``token_usage``, ``grounding_score``, ``grounding`` and
            ``changes`` (see ``FinishStep``).
        :raises InvalidQuestionError: If ``messages`` is not a list of ``ChatMessage`` with a question, or the question
            is longer than ``MAX_QUESTION_CHARS``.
        :raises ConfigurationError: If ``hook_context`` is not a dict.
        """
        guard, inputs = _guarded(kwargs)
        try:
            return SuperComponent.run(self, **inputs)
        finally:
            guard.close()

    async def run_async(self, **kwargs: Any) -> dict[str, Any]:
        """
        Async variant of :meth:`run`.

        :param kwargs: As for :meth:`run`.
        :returns: As for :meth:`run`.
        """
        guard, inputs = _guarded(kwargs)
        try:
            return await SuperComponent.run_async(self, **inputs)
        finally:
            guard.close()

    def update(self, run_dir: str | os.PathLike[str], *, hook_context: dict[str, Any] | None = None) -> dict[str, Any]:
        """
        Research a finished run again: keep findings whose sources are fresh, search stale topics again, look for
        what is new, and write the report again with a "what changed" section (see ``iterative.update``).

        :param run_dir: The finished run's directory (its question is read from the journal).
        :param hook_context: Other run-time inputs (event subscribers, progress).
        :returns: As for :meth:`run`; ``changes`` says what changed.
        :raises RunDirError: If the directory holds no finished run.
        """
        question = journaled_question(run_dir)
        context = {**check_hook_context(hook_context), RUN_DIR_KEY: Path(run_dir)}
        return self.run(messages=[ChatMessage.from_user(question)], hook_context=context, update=True)

    def to_dict(self) -> dict[str, Any]:
        """:returns: The serialized agent: its Pipeline and mappings."""
        return default_to_dict(
            self,
            pipeline=self.pipeline.to_dict(),
            input_mapping=self._original_input_mapping,
            output_mapping=self._original_output_mapping,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> IterativeResearchAgent:
        """
        :param data: What ``to_dict`` returned.
        :returns: The agent.
        """
        data["init_parameters"]["pipeline"] = Pipeline.from_dict(data["init_parameters"]["pipeline"])
        return default_from_dict(cls, data)


def _guarded(given: dict[str, Any]) -> tuple[RunGuard, dict[str, Any]]:
    # Inside a Pipeline, an input left unconnected arrives as Haystack's "use the default" marker.
    inputs = {name: value for name, value in given.items() if value is not _delegate_default}
    question_from(inputs.get("messages"))  # a malformed input or a bad question is refused before the Pipeline runs
    guard = RunGuard()
    context = {**check_hook_context(inputs.get("hook_context")), RUN_GUARD_KEY: guard}
    return guard, {**inputs, "hook_context": context}
