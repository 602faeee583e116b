"""
The iterative agent's first step: continue earlier work, if the run directory holds any.

The run itself (question, event subscribers, progress and streaming callbacks, the run directory's journal, budget) is
opened by the agent before its Pipeline runs (see :mod:`haystack_deep_research.run._lifecycle`). :class:`StartStep` then
looks at what the run directory holds:

- **resume** (``update=False``): the findings the journal holds are restored with their sources and their topics
  are never searched again; each restored topic counts as one of the ``depth`` rounds;
- **update** (``update=True``): a finished run is researched again (see :mod:`.update`): fresh findings are kept,
  stale topics are searched again first, and all ``depth`` rounds look for what is new.
"""

from __future__ import annotations

from pathlib import Path

from haystack import component

from haystack_deep_research import _checks
from haystack_deep_research._serialization import InitSerialized
from haystack_deep_research.errors import RunDirError, UsageError
from haystack_deep_research.events import Notice
from haystack_deep_research.iterative.iteration import IterationRun
from haystack_deep_research.iterative.update import plan_update
from haystack_deep_research.run._cache import DEFAULT_CACHE_TTL
from haystack_deep_research.run._journal import REPORT_FILE, RunJournal
from haystack_deep_research.run._lifecycle import current_run
from haystack_deep_research.run._phases import Phase, blocking, drive, drive_async
from haystack_deep_research.state import PHASE_ORCHESTRATOR

__all__ = ["StartStep"]


def _read_report(journal: RunJournal) -> str:
    path = Path(journal.directory) / REPORT_FILE
    return path.read_text(encoding="utf-8") if path.is_file() else ""


@component
class StartStep(InitSerialized):
    """
    Start the rounds (see the module docstring).

    :param depth: The rounds of the run (a resumed run counts its restored topics against them).
    :param freshness: Seconds a source stays fresh when a run is updated (the ``ttl`` of the agent's cache).
    :raises ConfigurationError: If a parameter is invalid.
    """

    def __init__(self, *, depth: int = 3, freshness: float = DEFAULT_CACHE_TTL) -> None:
        self.depth = _checks.int_in_range("depth", depth, 1, 50)
        self.freshness = _checks.number_in_range("freshness", freshness, 0.0)

    @component.output_types(iteration=IterationRun)
    def run(self, update: bool = False) -> dict[str, IterationRun]:
        """
        :param update: Research the finished run of the run directory again (see :mod:`.update`).
        :returns: ``iteration``: the first round's input.
        :raises UsageError: If ``update`` is set without a run directory.
        :raises RunDirError: If the run directory holds no run to update.
        """
        return {"iteration": drive(self.phase(update))}

    @component.output_types(iteration=IterationRun)
    async def run_async(self, update: bool = False) -> dict[str, IterationRun]:
        """As :meth:`run`, on the event loop."""
        return {"iteration": await drive_async(self.phase(update))}

    def phase(self, update: bool) -> Phase[IterationRun]:
        run = current_run().run
        journal = run.journal
        if update and journal is None:
            raise UsageError("update=True needs the finished run's directory: inputs=RunInputs(run_dir=...).")
        iteration = IterationRun()
        if journal is None or not journal.notes():
            if update:
                raise RunDirError(f"{str(journal.directory)!r} holds no finished run to update.")  # type: ignore[union-attr]
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
