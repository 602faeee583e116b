"""
Running the agent for the command, and what a run that never finished leaves behind: Ctrl-C (and SIGTERM, which
``timeout``, systemd and Kubernetes send, through :func:`sigterm_interrupts`) cancels the run's task and every
researcher, and :func:`unfinished_result` turns the run it opened into a result as the write hook's fallback does, its
citations verified against the pages really read.
"""

from __future__ import annotations

import asyncio
import dataclasses
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from types import FrameType
from typing import Any

from haystack.dataclasses import ChatMessage

from haystack_deep_research.report import citation_findings, verify_report
from haystack_deep_research.report.publish import allowed_urls
from haystack_deep_research.report.sections import fallback_report
from haystack_deep_research.run import ResearchRun, RunInputs
from haystack_deep_research.state import EXIT_FAILED, EXIT_INTERRUPTED, PHASE_RUN

__all__ = ["RunOutcome", "Termination", "run_research", "sigterm_interrupts", "unfinished_result"]


@dataclass
class Termination:
    """Whether a SIGTERM arrived while the command ran."""

    received: bool = False


_CURRENT: ContextVar[Termination | None] = ContextVar("termination", default=None)


def _terminated() -> bool:
    current = _CURRENT.get()
    return current is not None and current.received


@contextmanager
def sigterm_interrupts() -> Iterator[Termination]:
    """
    Turn SIGTERM into the interruption Ctrl-C causes while the block runs (a handler in the main thread that calls the
    current SIGINT handler); yields its :class:`Termination`.
    """
    termination = Termination()

    def interrupt(signum: int, frame: FrameType | None) -> None:
        termination.received = True
        on_sigint = signal.getsignal(signal.SIGINT)
        if callable(on_sigint):  # asyncio's own handler (cancels the run's task) or Python's (KeyboardInterrupt)
            on_sigint(signal.SIGINT, frame)
        else:  # SIGINT ignored or left to the system: interrupt all the same
            raise KeyboardInterrupt

    handles = threading.current_thread() is threading.main_thread()  # signal handlers belong to the main thread
    previous = signal.signal(signal.SIGTERM, interrupt) if handles else None
    token = _CURRENT.set(termination)
    try:
        yield termination
    finally:
        _CURRENT.reset(token)
        if handles:
            signal.signal(signal.SIGTERM, previous)


@dataclass(frozen=True)
class RunOutcome:
    """How a run of the command ended."""

    result: dict[str, Any] | None  # None when it never finished
    run: ResearchRun | None  # None when it was stopped before it opened
    interrupted: bool = False  # by Ctrl-C or SIGTERM
    error: Exception | None = None
    terminated: bool = False  # the interruption was a SIGTERM

    def stopped_by(self) -> str:
        """:returns: What interrupted the run, as its lines say it: ``SIGTERM`` or ``Ctrl-C``."""
        return "SIGTERM" if self.terminated else "Ctrl-C"


def run_research(
    agent: Any,
    question: str,
    inputs: RunInputs,
    *,
    messages: list[ChatMessage] | None = None,
    **run_options: bool,
) -> RunOutcome:
    """
    Run the agent (``run_async``) on the question, or on ``messages`` (a clarifying question answered), until it
    finishes, fails or is interrupted; ``run_options`` go to ``run_async`` (``update=True``).
    """
    opened: list[ResearchRun] = []
    given = dataclasses.replace(inputs, on_run_opened=opened.append)
    messages = messages or [ChatMessage.from_user(question)]
    try:
        result = asyncio.run(agent.run_async(messages=messages, inputs=given, **run_options))
    except KeyboardInterrupt:
        return RunOutcome(None, opened[0] if opened else None, interrupted=True, terminated=_terminated())
    except Exception as error:  # a provider or network failure: the caller keeps what was gathered and says why
        return RunOutcome(None, opened[0] if opened else None, error=error)
    return RunOutcome(result, opened[0] if opened else None)


def unfinished_result(outcome: RunOutcome) -> dict[str, Any]:
    """The result of a run that was interrupted or failed, with the notes it gathered as a verified partial report."""
    exit_reason = EXIT_INTERRUPTED if outcome.interrupted else EXIT_FAILED
    run = outcome.run
    if run is None:
        return {
            "report": "",
            "brief": "",
            "notes": [],
            "sources": [],
            "citations": {},
            "warnings": [],
            "exit_reason": exit_reason,
            "usage_by_phase": {},
            "cost": None,
            "token_usage": {},
        }
    error = outcome.error
    what = f"was interrupted ({outcome.stopped_by()})" if outcome.interrupted else f"failed ({type(error).__name__})"
    notes = run.notes()
    kept = "the report holds the notes gathered" if notes else "no note was gathered, so there is no report"
    run.warn(PHASE_RUN, f"the run {what} before its report was written; {kept}")
    report, citations = "", {}
    if notes:
        urls = allowed_urls(notes, run)
        cause = (
            f"was interrupted with {outcome.stopped_by()}"
            if outcome.interrupted
            else f"failed with {type(error).__name__}: {error}"
        )
        check = verify_report(run, fallback_report(run, f"it never ran: the run {cause}", notes, urls), urls)
        report, citations = check.report, citation_findings(check)
    return {
        "report": report,
        "brief": run.brief,
        "notes": notes,
        "sources": run.ledger.to_list(),
        "citations": citations,
        "warnings": run.warnings(),
        "exit_reason": exit_reason,
        "usage_by_phase": run.usage_report(),
        "cost": run.cost(),
        "token_usage": run.total_usage(),
    }
