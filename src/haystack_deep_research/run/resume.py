"""
Resuming a run: how the run directory's journal is wired into a research run.

The run directory is a run-time input, so one agent serves many runs, each with its own directory::

    agent.run(messages=[ChatMessage.from_user(question)], inputs=RunInputs(run_dir="runs/solar-2025"))

Run again with the same question and directory after a crash, and the run picks up where it stopped:

- opening the run opens the journal (:func:`open_journal`); a journaled brief is used without calling the scope model;
- once the brief is known, :func:`restore` journals it, restores the evidence ledger and the notes of completed
  sub-topics, and tells the orchestrator which sub-topics are already done;
- ``research_subtopic`` answers a completed sub-topic from the journal (:func:`resumed_note`, matched by
  :func:`~haystack_deep_research.run.journal.subtopic_key`) and journals every new note (:func:`journal_note`);
- closing the run journals its end and writes the report and the final ledger (:func:`write_outcome`); the run's one
  closer (``run.lifecycle.close_run``) then releases the directory.

Without a run directory nothing here does anything. A write that fails is a warning that says what
it costs, never a lost result.
"""

from __future__ import annotations

import os

from haystack.components.agents.state import State

from haystack_deep_research._prompts import RESUMED_SUBTOPICS, render_user
from haystack_deep_research.events import Notice
from haystack_deep_research.run.journal import LEDGER_FILE, REPORT_FILE, JournaledNote, RunJournal
from haystack_deep_research.run.phases import Phase, blocking
from haystack_deep_research.run.research_run import ResearchRun
from haystack_deep_research.run.view import RunView
from haystack_deep_research.state import MESSAGES, PHASE_RESEARCH, PHASE_WRITE

__all__ = ["journal_note", "open_journal", "restore", "resumed_note", "write_outcome"]

_END_LOST = "a resumed run would not restore the sources found after the last note"


def open_journal(run_dir: str | os.PathLike[str] | None, question: str) -> Phase[RunJournal | None]:
    """
    Open the journal of the run directory, if any.

    :param run_dir: The run's directory, or ``None``.
    :param question: The run's question.
    :returns: The phase; it returns the journal, or ``None`` without a run directory.
    :raises RunDirError: (from the phase) If the directory cannot be used.
    """
    if run_dir is None:
        return None
    [opened] = yield [blocking(RunJournal.open, run_dir, question)]
    if opened.error is not None:
        raise opened.error
    return opened.value


def _failed(run: ResearchRun, phase: str, what: str, error: Exception | None, consequence: str) -> None:
    if error is not None:
        run.warn(phase, f"could not write {what} to the run directory ({error}); {consequence}")


def restore(state: State, run: ResearchRun) -> Phase[None]:
    """
    Journal the brief, and restore the ledger and the notes an earlier attempt completed.

    :param state: The orchestrator's live State.
    :param run: The run, whose brief is set.
    :returns: The phase.
    """
    journal = run.journal
    if journal is None:
        return
    [written] = yield [blocking(journal.record_brief, run.brief)]
    _failed(run, PHASE_RESEARCH, "the brief", written.error, "a resumed run would write it again")
    restored = journal.ledger()
    if len(restored):
        run.ledger = restored
    notes = journal.notes()
    if not notes:
        return
    run.add_notes(note.note for note in notes)
    state.set(MESSAGES, [render_user(RESUMED_SUBTOPICS, subtopics=[note.subtopic for note in notes])])
    run.events.emit(
        Notice(
            phase=PHASE_RESEARCH,
            text=f"resumed: {len(notes)} sub-topic(s) and {len(restored)} source(s) restored",
        )
    )


def resumed_note(view: RunView, subtopic: str) -> JournaledNote | None:
    """
    :param view: The orchestrator's view of the run.
    :param subtopic: The sub-topic being delegated.
    :returns: The journaled note of that sub-topic when an earlier attempt of this run completed it, else ``None``.
    """
    journal = view.run.journal
    return journal.find_note(subtopic) if journal is not None else None


def journal_note(view: RunView, subtopic: str, note: JournaledNote) -> Phase[None]:
    """
    Journal a completed sub-topic with its evidence, as one record. A failing write is a warning, never a lost note:
    nothing of the record is on disk then, so a resumed run researches the sub-topic again.

    :param view: The orchestrator's view of the run.
    :param subtopic: The sub-topic as delegated.
    :param note: What the researcher returned.
    :returns: The phase.
    """
    journal = view.run.journal
    if journal is None:
        return
    record = blocking(
        journal.record_note,
        subtopic=subtopic,
        note=note.note,
        summary=note.summary,
        partial=note.partial,
        ledger=view.ledger,
        position=view.run.place_of(note.note),
    )
    [written] = yield [record]
    _failed(
        view.run, PHASE_RESEARCH, f"the note on '{subtopic}'", written.error, "a resumed run would research it again"
    )


def write_outcome(run: ResearchRun, *, report: str, exit_reason: str) -> Phase[None]:
    """
    Journal the end of the attempt (with the sources not journaled yet), and write ``ledger.json`` and ``report.md``.
    Each write that fails is a warning saying what it costs; the others are still made. Every shape ends its run
    directory this way.

    :param run: The run.
    :param report: The report.
    :param exit_reason: Why the run ended.
    :returns: The phase.
    """
    journal = run.journal
    if journal is None:
        return
    [ended] = yield [blocking(journal.record_end, exit_reason=exit_reason, ledger=run.ledger)]
    _failed(run, PHASE_WRITE, "the end of the run", ended.error, _END_LOST)
    [ledger] = yield [blocking(journal.write_ledger, run.ledger)]
    _failed(run, PHASE_WRITE, LEDGER_FILE, ledger.error, "the sources are in the result and in the journal")
    [written] = yield [blocking(journal.write_report, report)]
    _failed(run, PHASE_WRITE, REPORT_FILE, written.error, "the report is in the result")
