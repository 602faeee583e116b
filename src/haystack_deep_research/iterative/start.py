"""
The iterative agent's first step: open the run.

:class:`StartStep` takes the question from ``messages`` (the last user message, as the other shapes do) and the
run-time inputs from ``hook_context`` (event subscribers, progress callback, streaming callback, run directory),
opens the run directory's journal and the :class:`~haystack_deep_research.run.ResearchRun`, and emits ``RunStarted``.

With a run directory that holds earlier work, the run continues it:

- **resume** (``update=False``): the findings the journal holds are restored with their sources and their topics
  are never searched again; each restored topic counts as one of the ``depth`` rounds;
- **update** (``update=True``): a finished run is researched again (see :mod:`.update`): fresh findings are kept,
  stale topics are searched again first, and all ``depth`` rounds look for what is new.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from haystack import component
from haystack.core.serialization import default_from_dict, default_to_dict
from haystack.dataclasses import ChatMessage

from haystack_deep_research import _checks
from haystack_deep_research.errors import RunDirError, UsageError
from haystack_deep_research.events import Notice, RunStarted
from haystack_deep_research.iterative.iteration import IterationRun
from haystack_deep_research.iterative.update import plan_update
from haystack_deep_research.run import (
    DEFAULT_CACHE_TTL,
    REPORT_FILE,
    OpenRunHook,
    Phase,
    ResearchRun,
    RunBudget,
    RunGuard,
    RunJournal,
    blocking,
    check_hook_context,
    drive,
    drive_async,
    event_bus,
    question_from,
)
from haystack_deep_research.run.resume import open_journal
from haystack_deep_research.state import PHASE_ORCHESTRATOR, PHASE_RUN, RUN_DIR_KEY, RUN_GUARD_KEY, STREAMING_KEY

__all__ = ["StartStep"]


def _read_report(journal: RunJournal) -> str:
    path = Path(journal.directory) / REPORT_FILE
    return path.read_text(encoding="utf-8") if path.is_file() else ""


@component
class StartStep:
    """
    Open the run (see the module docstring).

    :param depth: The rounds of the run (a resumed run counts its restored topics against them).
    :param freshness: Seconds a source stays fresh when a run is updated (the agent's ``cache_ttl``).
    :param token_budget: Total tokens one run may spend, or ``None``.
    :param time_budget: Seconds of wall-clock time one run may take, or ``None``.
    :param cost_budget: US dollars one run's model calls may cost, or ``None``.
    :param phase_models: The model each phase calls, by phase name (what its usage costs).
    :param prices: Model prices on top of the defaults.
    :raises ConfigurationError: If a parameter is invalid.
    """

    def __init__(
        self,
        *,
        depth: int = 3,
        freshness: float = DEFAULT_CACHE_TTL,
        token_budget: int | None = None,
        time_budget: float | None = None,
        cost_budget: float | None = None,
        phase_models: dict[str, str] | None = None,
        prices: dict[str, Any] | None = None,
    ) -> None:
        self.depth = _checks.int_in_range("depth", depth, 1, 50)
        self.freshness = _checks.number_in_range("cache_ttl", freshness, 0.0)
        self._hook = OpenRunHook(
            token_budget=token_budget,
            time_budget=time_budget,
            cost_budget=cost_budget,
            phase_models=phase_models,
            prices=prices,
        )

    @component.output_types(iteration=IterationRun)
    def run(
        self, messages: list[ChatMessage], hook_context: dict[str, Any] | None = None, update: bool = False
    ) -> dict[str, IterationRun]:
        """
        :param messages: The question, as the last user message.
        :param hook_context: Run-time inputs: ``EVENTS_KEY``, ``PROGRESS_KEY``, ``STREAMING_KEY``, ``RUN_DIR_KEY``.
        :param update: Research a finished run in ``RUN_DIR_KEY`` again (see :mod:`.update`).
        :returns: ``iteration``: the open run.
        :raises InvalidQuestionError: If the messages hold no question.
        :raises RunDirError: If the run directory cannot be used, or holds no run to update.
        """
        return {"iteration": drive(self.phase(messages, hook_context, update))}

    @component.output_types(iteration=IterationRun)
    async def run_async(
        self, messages: list[ChatMessage], hook_context: dict[str, Any] | None = None, update: bool = False
    ) -> dict[str, IterationRun]:
        """
        Async variant of :meth:`run`.

        :param messages: The question, as the last user message.
        :param hook_context: Run-time inputs.
        :param update: Research a finished run again.
        :returns: ``iteration``: the open run.
        """
        return {"iteration": await drive_async(self.phase(messages, hook_context, update))}

    def phase(self, messages: Any, hook_context: Any, update: bool) -> Phase[IterationRun]:
        """
        :param messages: The question, as the last user message.
        :param hook_context: Run-time inputs.
        :param update: Whether to update a finished run.
        :returns: The phase; it returns the open run.
        """
        question = question_from(messages)
        context = check_hook_context(hook_context)
        if update and context.get(RUN_DIR_KEY) is None:
            raise UsageError(f"update=True needs the finished run's directory in hook_context[{RUN_DIR_KEY!r}].")
        bus = event_bus(uuid.uuid4().hex, context, own=self._hook.on_event)
        journal = yield from open_journal(context, question)
        if journal is not None and isinstance(guard := context.get(RUN_GUARD_KEY), RunGuard):
            guard.on_close(journal.close)
        hook = self._hook
        run = ResearchRun(
            question=question,
            budget=RunBudget(
                token_budget=hook.token_budget, time_budget=hook.time_budget, cost_budget=hook.cost_budget
            ),
            journal=journal,
            events=bus,
            streaming_callback=context.get(STREAMING_KEY),
            phase_models=hook.phase_models,
            prices=hook.prices,
        )
        run.brief = question
        run.events.emit(RunStarted(phase=PHASE_RUN, question=question))
        iteration = IterationRun(run=run)
        if journal is None or not journal.notes():
            if update:
                raise RunDirError(f"{str(context[RUN_DIR_KEY])!r} holds no finished run to update.")
            return iteration
        if len(restored := journal.ledger()):
            run.ledger = restored
        if not update:
            notes = journal.notes()
            run.add_notes(note.note for note in notes)
            topics = tuple(note.subtopic for note in notes)
            run.events.emit(Notice(phase=PHASE_ORCHESTRATOR, text=f"resumed: {len(topics)} topic(s) restored"))
            return iteration.but(topics=topics, rounds=min(len(topics), self.depth))
        [previous] = yield [blocking(_read_report, journal)]
        plan, kept = plan_update(
            journal.notes(), run.ledger, ttl=self.freshness, previous_report=str(previous.value or "")
        )
        run.add_notes(note.note for note in kept)
        run.events.emit(
            Notice(
                phase=PHASE_ORCHESTRATOR,
                text=f"updating the run of {plan.since}: {len(plan.kept)} topic(s) still fresh, "
                f"{len(plan.stale)} to check again",
            )
        )
        return iteration.but(topics=plan.kept, recheck=plan.stale, update=plan)

    def to_dict(self) -> dict[str, Any]:
        """:returns: The serialized step."""
        return default_to_dict(self, depth=self.depth, freshness=self.freshness, **self._hook.run_parameters())

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StartStep:
        """
        :param data: What ``to_dict`` returned.
        :returns: The step.
        """
        OpenRunHook.run_parameters_from_dict(data["init_parameters"])
        return default_from_dict(cls, data)
