"""
Questions to a finished run: an answer from the evidence the run kept, cited and verified as its report is, and with
``research=True`` a question it does not answer researched as one sub-topic in the run directory (docs/evidence.md,
"Questions to a finished run", gives the rules; docs/safety.md the guards).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from haystack.components.agents import Agent
from haystack.components.generators.chat.types import ChatGenerator

from haystack_deep_research import _checks
from haystack_deep_research._prompts import ANSWER, ANSWER_WORDS, NOT_ANSWERED_REPLY, fence, render_chat
from haystack_deep_research.errors import (
    ConfigurationError,
    InvalidQuestionError,
    RunDirError,
    RunDirInUseError,
    UsageError,
)
from haystack_deep_research.evidence import EvidenceLedger, SourceEntry
from haystack_deep_research.evidence.entry import READ_KINDS
from haystack_deep_research.evidence.text import clean_text
from haystack_deep_research.evidence.verification import CitationCheck
from haystack_deep_research.report.assessment import uncited_claims
from haystack_deep_research.report.publish import citation_findings, verify_report
from haystack_deep_research.report.sections import SourceKeys
from haystack_deep_research.research.subtopic import ResearchSubtopicTool
from haystack_deep_research.run import ResearchRun
from haystack_deep_research.run._journal import (
    JOURNAL_FILE,
    LOCK_FILE,
    JournalFile,
    RunJournal,
    check_run_dir,
    restore_records,
    shown,
    unusable,
)
from haystack_deep_research.run._lifecycle import check_question
from haystack_deep_research.run._phases import Phase, Request, ask_twice, drive
from haystack_deep_research.state import EXIT_NO_EVIDENCE, EXIT_TEXT, EXIT_WRITER_FAILED, PHASE_RESEARCH, PHASE_WRITE
from haystack_deep_research.tools.passages import PASSAGE_CHARS, ranked_passages

__all__ = ["MAX_ANSWER_PASSAGES", "NOT_ANSWERED", "TopicResearcher", "ask_report", "subtopic_researcher"]

NOT_ANSWERED = "The evidence this run gathered does not answer this question."
"""The answer when the run's evidence does not answer the question (``answered`` is then ``False``)."""
MAX_ANSWER_PASSAGES = 8
"""The most passages of what the run read that one answer is written from."""

TopicResearcher = Callable[[ResearchRun, str], Phase[None]]
"""Researches one sub-topic into an open run (its note joins the run's notes and its journal): a shape's researcher."""

_EMPTY_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)]|>)?\s*$")


def _opened(question: str, brief: str, ledger: EvidenceLedger) -> ResearchRun:
    run = ResearchRun(question=question)
    run.brief, run.ledger = brief, ledger
    return run


def _read_unlocked(directory: Path, path: Path) -> list[dict[str, Any]]:
    """The journal's records, read while no run holds the directory's lock (never half-written)."""
    from filelock import FileLock, Timeout

    lock = FileLock(directory / LOCK_FILE, thread_local=False)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise RunDirInUseError(
            f"run_dir {shown(str(directory))} is in use by a run (its {LOCK_FILE} is locked); ask once that run ended."
        ) from None
    except OSError as error:
        raise unusable(directory, error) from error
    try:
        return JournalFile(path).read()
    except OSError as error:  # a link, a FIFO, a folder in its place, or unreadable
        why = f"{shown(str(path))} cannot be read ({error})"
        raise RunDirError(f"{why}; pass the directory of a finished run.") from None
    finally:
        lock.release(force=True)


def _from_run_dir(run_dir: str | os.PathLike[str]) -> tuple[ResearchRun, Path, str]:
    """A run holding what a run directory kept, the directory and the run's exit reason."""
    directory = check_run_dir(run_dir)
    path = directory / JOURNAL_FILE
    records = _read_unlocked(directory, path) if os.path.lexists(path) else []
    question = records[0].get("question") if records else None
    if not isinstance(question, str) or not question.strip():
        raise RunDirError(f"run_dir {shown(str(directory))} holds no journal of a run; pass the directory of a run.")
    restored = restore_records(records, path=path, directory=directory, question=question)
    ends = [record for record in records if record.get("type") == "end"]
    run = _opened(question, restored.brief or question, EvidenceLedger.from_list(restored.sources.values()))
    return run, directory, str(ends[-1].get("exit_reason") or "") if ends else ""


def _from_result(result: Mapping[str, Any]) -> tuple[ResearchRun, None, str]:
    sources = result.get("sources")
    if not isinstance(sources, list):
        raise ConfigurationError(
            "a result to ask must hold the run's `sources` (its ledger, as every shape returns it); pass the result "
            "of a run, or its run directory."
        )
    brief = str(result.get("brief") or "")
    return _opened(brief, brief, EvidenceLedger.from_list(sources)), None, str(result.get("exit_reason") or "")


def _passages(ledger: EvidenceLedger, question: str) -> list[tuple[SourceEntry, str]]:
    # In address order, not the order the run read them in: the same evidence gives the same prompt.
    entries = sorted((e for e in ledger.entries() if e.kind in READ_KINDS and e.text.strip()), key=lambda e: e.url)
    chosen: dict[str, tuple[SourceEntry, str]] = {}
    for number, passage in ranked_passages([entry.text for entry in entries], [question], size=PASSAGE_CHARS)[0]:
        chosen.setdefault(entries[number].url, (entries[number], passage.strip()))
        if len(chosen) == MAX_ANSWER_PASSAGES:
            break
    return list(chosen.values())


def _without(text: str, sentences: list[tuple[int, str]]) -> str:
    """The text without the given sentences (1-based line, sentence), and without the lines that leaves empty."""
    lines = text.split("\n")
    emptied: set[int] = set()
    for line, sentence in sentences:
        index = line - 1
        if 0 <= index < len(lines) and sentence in lines[index]:
            lines[index] = " ".join(lines[index].replace(sentence, "", 1).split(" ")).rstrip()
            if _EMPTY_ITEM.match(lines[index]):
                emptied.add(index)
    kept = [line for index, line in enumerate(lines) if index not in emptied]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()


def _answer(generator: ChatGenerator, run: ResearchRun, question: str) -> Phase[dict[str, Any]]:
    passages = _passages(run.ledger, question)
    if not passages:
        return _outcome(run, question, EXIT_NO_EVIDENCE)
    urls = [entry.url for entry, _ in passages]
    keys = SourceKeys(urls)
    numbered = [
        {"number": keys.number(entry.url), "title": fence(entry.title or entry.url), "text": fence(passage)}
        for entry, passage in passages
    ]
    messages = render_chat(
        ANSWER, question=fence(question), passages=numbered, urls=urls, keys=keys.numbers(urls), max_words=ANSWER_WORDS
    )
    [attempt] = yield from ask_twice(generator, [Request("the answer", messages)], run, phase=PHASE_WRITE)
    if not attempt.text:
        run.warn(PHASE_WRITE, f"the writer failed twice on the answer ({attempt.why})")
        return _outcome(run, question, EXIT_WRITER_FAILED)
    reply = keys.expand(attempt.text).strip()
    if reply.strip(" .`*\n") == NOT_ANSWERED_REPLY:
        return _outcome(run, question, EXIT_NO_EVIDENCE)
    reply, blocks = _prose(reply)
    first = verify_report(run, reply, urls)
    unsupported = uncited_claims(first.report, first.verified_urls)
    check = verify_report(run, _without(first.report, [(c.line, c.sentence) for c in unsupported]), urls)
    dropped = blocks + [claim.sentence for claim in unsupported]
    if dropped:
        run.warn(PHASE_WRITE, f"dropped {len(dropped)} sentence(s) of the answer that cite no source the run read")
    if not check.verified_urls:
        return _outcome(run, question, EXIT_NO_EVIDENCE, dropped)
    return _outcome(run, question, EXIT_TEXT, dropped, check)


_PROSE = ("paragraph_open", "bullet_list_open", "ordered_list_open")


def _prose(reply: str) -> tuple[str, list[str]]:
    """The answer's paragraphs and lists, and the other blocks dropped: a claim there would escape the check."""
    from markdown_it import MarkdownIt

    lines = reply.splitlines()
    kept: list[str] = []
    dropped: list[str] = []
    for token in MarkdownIt("commonmark").enable("table").parse(reply):
        if token.level != 0 or token.map is None or token.nesting == -1:
            continue
        start, end = token.map
        block = "\n".join(lines[start:end]).strip()
        (kept if token.type in _PROSE else dropped).append(block)
    return "\n\n".join(block for block in kept if block), [" ".join(block.split()) for block in dropped if block]


def _outcome(
    run: ResearchRun, question: str, exit_reason: str, dropped: Sequence[str] = (), check: CitationCheck | None = None
) -> dict[str, Any]:
    return {
        "question": question,
        "answer": NOT_ANSWERED if check is None else check.report,
        "answered": check is not None,
        "exit_reason": exit_reason,
        "citations": {} if check is None else citation_findings(check),
        "dropped": list(dropped),
        "researched": "",
        "warnings": run.warnings(),
        "usage_by_phase": run.usage_report(),
        "cost": run.cost(),
    }


def _research(run: ResearchRun, directory: Path, exit_reason: str, researcher: TopicResearcher, topic: str) -> None:
    """Research one sub-topic into the run directory, locked as a run locks it."""
    journal = RunJournal.open(directory, run.question)
    try:
        run.journal = journal
        run.brief = journal.brief or run.brief
        run.ledger = journal.ledger()
        run.add_notes(note.note for note in journal.notes())
        try:
            drive(researcher(run, topic))
        except UsageError:
            raise
        except Exception as error:  # a failing researcher: what it read is kept, and the answer says what it can
            run.warn(PHASE_RESEARCH, f"researching '{topic}' failed ({type(error).__name__}: {error})")
        journal.record_end(exit_reason=exit_reason, ledger=run.ledger)
        journal.write_ledger(run.ledger)
    finally:
        run.close()
        journal.close()
        run.journal = None


def ask_report(
    run_dir_or_result: str | os.PathLike[str] | Mapping[str, Any],
    question: str,
    *,
    chat_generator: ChatGenerator,
    research: bool = False,
    researcher: TopicResearcher | None = None,
) -> dict[str, Any]:
    """
    Answer a question from a finished run's evidence; every shape's ``ask`` calls this with its own writer and
    researcher.

    :param run_dir_or_result: The run's directory, or the result its ``run`` returned.
    :param question: The question.
    :param chat_generator: The model that writes the answer (a shape's ``ask`` uses its writer).
    :param research: Research the question as one sub-topic when the evidence does not answer it (a run directory
        only).
    :param researcher: What researches it (:func:`subtopic_researcher`; a shape's ``ask`` passes its own).
    :returns: ``question``; ``answer`` (Markdown citing as the report cites, with a Sources list, or
        :data:`NOT_ANSWERED`); ``answered`` (``bool``); ``exit_reason`` (``"text"``, ``"no_evidence"`` when the evidence
        does not answer, ``"writer_failed"``); ``citations`` (the findings of the verification, with ``passages``);
        ``dropped`` (the sentences dropped for citing nothing the run read); ``researched`` (the sub-topic researched,
        or ``""``); ``warnings``; ``usage_by_phase``; ``cost``.
    :raises InvalidQuestionError: If the question is blank or too long.
    :raises RunDirError: If the directory holds no run of this library, or is in use by a run (``research=True``).
    :raises ConfigurationError: If ``research=True`` is asked of a result or without a researcher, or a result holds
        no ledger.
    """
    text = check_question(clean_text(question).strip() if isinstance(question, str) else "")
    if not text:
        raise InvalidQuestionError(
            "No question to ask: pass it as a non-empty string, for example agent.ask(run_dir, 'What of storage?')."
        )
    _checks.chat_generator("chat_generator", chat_generator, needs_tools=False)
    kept = _from_result(run_dir_or_result) if isinstance(run_dir_or_result, Mapping) else None
    if research and (kept is not None or researcher is None):
        raise ConfigurationError(
            "research=True researches in the run's directory with its researcher: call agent.ask(run_dir, question, "
            "research=True) with the run directory, not a result."
        )
    run, directory, exit_reason = kept or _from_run_dir(run_dir_or_result)  # type: ignore[arg-type]
    answered = drive(_answer(chat_generator, run, text))
    if answered["answered"] or not research or researcher is None or directory is None:
        return answered
    _research(run, directory, exit_reason, researcher, text)
    again = drive(_answer(chat_generator, run, text))
    return {**again, "researched": text}


def subtopic_researcher(agent: Agent) -> TopicResearcher:
    """A researcher of one sub-topic with ``agent``, as the orchestrator's ``research_subtopic`` researches one."""
    tool = ResearchSubtopicTool(researcher=agent, max_subtopics=1)

    def research(run: ResearchRun, topic: str) -> Phase[None]:
        run.grant_subtopics(1)  # beyond the run's own limit: this sub-topic was asked for
        yield from tool.phase(run.view(PHASE_RESEARCH), topic)

    return research
