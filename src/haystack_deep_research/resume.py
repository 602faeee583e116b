"""
Resuming a run: how the run journal is wired into a research run.

The run directory is a run-time input, so one agent serves many runs, each with its own directory::

    agent.run(messages=[ChatMessage.from_user(question)], hook_context={RUN_DIR_KEY: "runs/solar-2025"})

Run again with the same question and directory after a crash, and the run picks up where it stopped:

- :class:`OpenJournalHook` (``before_run``, before the scope hook) checks the directory and opens its journal; a
  journaled brief is handed to the scope hook, which then makes no model call.
- :class:`ResumeHook` (``before_run``, after the scope hook) journals the brief, restores the evidence ledger and
  the notes of completed sub-topics, and tells the orchestrator which sub-topics are already done.
- ``research_subtopic`` returns a journaled note without running a researcher when the orchestrator delegates a
  completed sub-topic again (:func:`resumed_note`, matched by :func:`~haystack_deep_research.journal.subtopic_key`),
  and journals every new note as soon as it is written (:func:`journal_note`).
- :class:`CloseJournalHook` (``after_run``, after the write hook) writes the report and the final ledger.

Without ``RUN_DIR_KEY`` in ``hook_context`` every hook here does nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from haystack.components.agents.state import State
from haystack.components.agents.state.state_utils import replace_values
from haystack.dataclasses import ChatMessage

from haystack_deep_research.hooks import StatelessHook, question_from
from haystack_deep_research.journal import RunJournal
from haystack_deep_research.prompts import RESUMED_SUBTOPICS, render_text
from haystack_deep_research.state import (
    BRIEF,
    BRIEF_KEY,
    EXIT_REASON,
    HOOK_CONTEXT,
    JOURNAL_KEY,
    MESSAGES,
    NOTES,
    PHASE_RESEARCH,
    PHASE_WRITE,
    REPORT,
    RUN_DIR_KEY,
    WARNINGS,
    ResearchRun,
    SharedContext,
    run_from_context,
)


def journal_from_context(hook_context: Mapping[str, Any] | None) -> RunJournal | None:
    """
    :param hook_context: The ``hook_context`` a hook or tool received.
    :returns: The run's open journal, or ``None`` when the run has no run directory.
    """
    journal = (hook_context or {}).get(JOURNAL_KEY)
    return journal if isinstance(journal, RunJournal) else None


def _journal_failed(run: ResearchRun | None, phase: str, what: str, error: OSError) -> None:
    if run is not None:
        run.warn(phase, f"could not write {what} to the run directory ({error}); a resumed run would redo it")


def resumed_note(hook_context: Mapping[str, Any] | None, subtopic: str) -> dict[str, Any] | None:
    """
    The journaled outcome of a sub-topic an earlier attempt of this run completed.

    :param hook_context: The orchestrator's ``hook_context``.
    :param subtopic: The sub-topic being delegated.
    :returns: ``research_subtopic``'s result for it (``note``, ``summary``, ``partial``), or ``None``.
    """
    journal = journal_from_context(hook_context)
    found = journal.find_note(subtopic) if journal is not None else None
    if found is None:
        return None
    run = run_from_context(hook_context)
    if run is not None:
        run.report(PHASE_RESEARCH, f"restored from the run directory, not researched again: {subtopic}")
    return {"note": found.note, "summary": found.summary, "partial": found.partial}


def journal_note(hook_context: Mapping[str, Any] | None, subtopic: str, outcome: Mapping[str, Any]) -> None:
    """
    Journal a completed sub-topic and snapshot the ledger. A failing write is a warning, never a lost note.

    :param hook_context: The orchestrator's ``hook_context``.
    :param subtopic: The sub-topic as delegated.
    :param outcome: ``research_subtopic``'s result (``note``, ``summary``, ``partial``).
    """
    journal, run = journal_from_context(hook_context), run_from_context(hook_context)
    if journal is None or run is None:
        return
    try:
        journal.record_note(
            subtopic=subtopic,
            note=str(outcome["note"]),
            summary=str(outcome.get("summary") or ""),
            partial=bool(outcome.get("partial")),
            ledger=run.ledger,
        )
    except OSError as error:
        _journal_failed(run, PHASE_RESEARCH, f"the note on '{subtopic}'", error)


class OpenJournalHook(StatelessHook):
    """
    ``before_run`` hook, registered before the scope hook: open the journal of the run directory, if one was given.

    :raises RunDirError: (from ``run``) If the run directory cannot be used; nothing has run yet.
    :raises InvalidQuestionError: (from ``run``) If the messages hold no question.
    """

    def run(self, state: State) -> None:
        """
        :param state: The orchestrator's live State.
        """
        context = dict(state.data.get(HOOK_CONTEXT) or {})
        if context.get(RUN_DIR_KEY) is None:
            return
        journal = RunJournal.open(context[RUN_DIR_KEY], question_from(state.data.get(MESSAGES)))
        context[JOURNAL_KEY] = journal
        if journal.brief:
            context[BRIEF_KEY] = journal.brief
        state.set(HOOK_CONTEXT, SharedContext(context), handler_override=replace_values)


class ResumeHook(StatelessHook):
    """
    ``before_run`` hook, registered after the scope hook: journal the brief and restore what earlier attempts did.
    """

    def run(self, state: State) -> None:
        """
        :param state: The orchestrator's live State.
        """
        context = state.data.get(HOOK_CONTEXT)
        journal, run = journal_from_context(context), run_from_context(context)
        if journal is None or run is None:
            return
        try:
            journal.record_brief(str(state.data.get(BRIEF) or ""))
        except OSError as error:
            _journal_failed(run, PHASE_RESEARCH, "the brief", error)
        restored = journal.ledger()
        if len(restored):
            run.ledger = restored
        notes = journal.notes()
        if not notes:
            return
        state.set(NOTES, [note.note for note in notes], handler_override=replace_values)
        done = render_text(RESUMED_SUBTOPICS, subtopics=[note.subtopic for note in notes])
        state.set(MESSAGES, [ChatMessage.from_user(done)])
        run.report(PHASE_RESEARCH, f"resumed: {len(notes)} sub-topic(s) and {len(restored)} source(s) restored")


class CloseJournalHook(StatelessHook):
    """``after_run`` hook, registered after the write hook: write the report and the final ledger to the run dir."""

    def run(self, state: State) -> None:
        """
        :param state: The orchestrator's live State.
        """
        context = state.data.get(HOOK_CONTEXT)
        journal, run = journal_from_context(context), run_from_context(context)
        if journal is None or run is None:
            return
        try:
            journal.record_end(
                report=str(state.data.get(REPORT) or ""), exit_reason=state.data.get(EXIT_REASON), ledger=run.ledger
            )
        except OSError as error:
            _journal_failed(run, PHASE_WRITE, "the report", error)
            state.set(WARNINGS, run.warnings(), handler_override=replace_values)
