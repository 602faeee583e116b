"""
What a run reads: the question, the caller's per-run inputs (one :class:`RunInputs`), and the agent's view of its run.

Every shape is called the same way, ``run(messages, streaming_callback=None, *, hook_context=None, inputs=None)``
(and ``run_async``), and takes the same per-run inputs as one typed value::

    agent.run(messages=[ChatMessage.from_user(question)], inputs=RunInputs(run_dir="runs/one", on_event=print))

An Agent shape carries them to its hooks in ``hook_context`` (under one private key; :func:`inputs_of` reads them); a
Pipeline shape opens its run with them before its Pipeline runs. ``hook_context`` itself stays the caller's: what is
in it reaches the caller's own hooks untouched.

Once open, a run is the *current run* until its shape returns, in every shape: :func:`current_run` (a context
variable, so concurrent runs of one object never mix) is the one carrier of the run. Each agent's own view of it (the
orchestrator's, a sub-researcher's) travels in that agent's ``hook_context`` (:func:`view_of`).
"""

from __future__ import annotations

import contextvars
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from haystack.components.agents.state import State
from haystack.dataclasses import ChatRole, StreamingCallbackT

from haystack_deep_research.errors import ConfigurationError, InvalidQuestionError, UsageError
from haystack_deep_research.evidence.text import clean_text
from haystack_deep_research.run.door import check_hook_context, check_messages, check_question
from haystack_deep_research.run.view import RunView
from haystack_deep_research.settings import Budgets
from haystack_deep_research.state import HOOK_CONTEXT, INPUTS_KEY, RUN_KEY, TOKEN_USAGE

if TYPE_CHECKING:
    from haystack_deep_research.events import Subscriber
    from haystack_deep_research.run.research_run import ResearchRun

__all__ = [
    "OpenRun",
    "RunInputs",
    "context_of",
    "counted_view",
    "current_run",
    "inputs_of",
    "make_current",
    "question_from",
    "run_inputs",
    "running",
    "view_of",
]


def _callable(name: str, value: Any, shape: str) -> None:
    if value is not None and not callable(value):
        raise ConfigurationError(f"RunInputs({name}=...) must be a callable {shape}; got {type(value).__name__}.")


@dataclass(frozen=True)
class RunInputs:
    """
    What one run is given besides its question, the same for every shape. Each field is honoured by every shape, or
    refused with a :class:`~haystack_deep_research.errors.ConfigurationError` naming it.

    :param run_dir: A directory to journal the run in and resume it from after a crash (see docs/resume.md), or
        ``None``.
    :param on_event: A callable ``on_event(event)`` receiving every typed event of the run (after the shape's own
        ``on_event=``). A ``progress(phase, message)`` callback takes part through
        ``haystack_deep_research.events.progress_view(progress)``.
    :param streaming_callback: A Haystack streaming callback: every model of the run streams to it, each chunk tagged
        with its role. ``run(messages, streaming_callback=...)`` sets the same thing.
    :param budgets: A :class:`~haystack_deep_research.Budgets` for this run: its limits replace the shape's, its
        prices go on top of the shape's.
    :param brief: The research brief, used as it is: the deep research agent calls no scope model, and the writer of
        every shape that writes a report frames it by this brief. The deep agent answers its conversation and refuses
        a brief.
    :param on_run_opened: A callable ``on_run_opened(run)`` called with the
        :class:`~haystack_deep_research.ResearchRun` once it is open, so a caller keeps what the run gathered when the
        run itself never returns (the command line saves a partial report on Ctrl-C).
    :raises ConfigurationError: If a field has the wrong type; the message names the field. (A ``run_dir`` that
        cannot be used is a ``RunDirError`` when the run opens it.)
    """

    run_dir: str | os.PathLike[str] | None = None
    on_event: Subscriber | None = None
    streaming_callback: StreamingCallbackT | None = None
    budgets: Budgets | None = None
    brief: str | None = None
    on_run_opened: Callable[[ResearchRun], Any] | None = None

    def __post_init__(self) -> None:
        _callable("on_event", self.on_event, "on_event(event)")
        _callable("streaming_callback", self.streaming_callback, "taking a StreamingChunk")
        _callable("on_run_opened", self.on_run_opened, "on_run_opened(run)")
        if self.budgets is not None and not isinstance(self.budgets, Budgets):
            raise ConfigurationError(
                f"RunInputs(budgets=...) must be a Budgets, for example Budgets(tokens=50_000); got "
                f"{type(self.budgets).__name__}."
            )
        if self.brief is not None and (not isinstance(self.brief, str) or not self.brief.strip()):
            raise ConfigurationError("RunInputs(brief=...) must be a non-empty string, or None to write one.")

    def budgets_over(self, own: Budgets) -> Budgets:
        """
        :param own: The budgets the shape was built with.
        :returns: The run's budgets: this run's over ``own``, or ``own``.
        """
        return own if self.budgets is None else self.budgets.over(own)


@dataclass(frozen=True)
class OpenRun:
    """
    The current run, as what runs inside it sees it: the steps of a Pipeline shape, the hooks and tools of an Agent
    shape (yours too).

    :param run: The run.
    :param context: The caller's ``hook_context`` (request-scoped inputs that nested agents' hooks may read).
    """

    run: ResearchRun
    context: dict[str, Any]


_CURRENT: contextvars.ContextVar[OpenRun | None] = contextvars.ContextVar("haystack_deep_research_run", default=None)


def current_run() -> OpenRun:
    """
    :returns: The run the enclosing shape opened: every shape makes its open run the current run until it returns.
    :raises UsageError: If no run is open: a step of a Pipeline shape was run outside the shape that built it, or
        the code runs outside any run of this library.
    """
    opened = _CURRENT.get()
    if opened is None:
        raise UsageError(
            "this step runs inside a run of its shape: run the agent or workflow that create_iterative_research_agent "
            "or create_research_workflow built (agent.run(messages=[...])), not its Pipeline directly."
        )
    return opened


def make_current(run: ResearchRun, context: dict[str, Any] | None = None) -> Callable[[], None]:
    """
    Make ``run`` the current run (see :func:`current_run`) until the returned callable is called, in the same context.

    :param run: The run.
    :param context: The caller's ``hook_context``, or ``None``.
    :returns: What makes the run current no more (the current run before it is current again).
    """
    token = _CURRENT.set(OpenRun(run=run, context=dict(context or {})))
    return lambda: _CURRENT.reset(token)


@contextmanager
def running(run: ResearchRun, context: dict[str, Any] | None = None) -> Iterator[OpenRun]:
    """
    Make ``run`` the current run for the block: what a Pipeline shape does around its Pipeline (and, for a step used
    on its own, a test or a Pipeline of the caller's own). Nothing is opened or closed.

    :param run: The run.
    :param context: The caller's ``hook_context``, or ``None``.
    :returns: The current run, as the steps see it.
    """
    done = make_current(run, context)
    try:
        yield current_run()
    finally:
        done()


def run_inputs(inputs: Any, streaming_callback: Any = None) -> RunInputs:
    """
    The per-run inputs a shape's ``run`` was given, checked.

    :param inputs: What was passed as ``inputs``: a :class:`RunInputs`, or ``None`` for none.
    :param streaming_callback: What was passed as ``streaming_callback``, or ``None``; it wins over the inputs' own.
    :returns: The inputs.
    :raises ConfigurationError: If ``inputs`` is not a ``RunInputs``, or the callback is not callable.
    """
    if inputs is None:
        inputs = RunInputs()
    if not isinstance(inputs, RunInputs):
        raise ConfigurationError(
            f"inputs must be a RunInputs, for example inputs=RunInputs(run_dir='runs/one'); "
            f"got {type(inputs).__name__}."
        )
    if streaming_callback is None or streaming_callback is inputs.streaming_callback:
        return inputs
    return replace(inputs, streaming_callback=streaming_callback)


def inputs_of(context: dict[str, Any]) -> RunInputs:
    """
    :param context: An Agent shape's ``hook_context``.
    :returns: The per-run inputs its ``run`` put there (none outside a run of a shape of this library).
    """
    given = context.get(INPUTS_KEY)
    return given if isinstance(given, RunInputs) else RunInputs()


def question_from(messages: Any) -> str:
    """
    Find the research question: the text of the last user message, cleaned (see
    :func:`~haystack_deep_research.evidence.clean_text`).

    :param messages: The messages passed to ``run``.
    :returns: The question, stripped.
    :raises InvalidQuestionError: If ``messages`` is not a list of ``ChatMessage``, holds no user message with text, or
        the question is longer than ``MAX_QUESTION_CHARS``.
    """
    for message in reversed(check_messages(messages)):
        if message.is_from(ChatRole.USER):
            text = clean_text(message.text or "").strip()
            if text:
                return check_question(text)
            break
    raise InvalidQuestionError(
        "No research question: pass messages=[ChatMessage.from_user('your question')] with a non-empty question."
    )


def view_of(state: State) -> RunView | None:
    """
    :param state: An agent's live State.
    :returns: The agent's view of its run, or ``None`` when it runs outside a run of this library.
    """
    context = state.data.get(HOOK_CONTEXT)
    view = context.get(RUN_KEY) if isinstance(context, dict) else None
    return view if isinstance(view, RunView) else None


def counted_view(state: State) -> RunView | None:
    """
    :param state: An agent's live State, at a step boundary.
    :returns: :func:`view_of` the state, with the tokens the agent has spent so far counted toward its run; ``None``
        outside a run of this library.
    """
    view = view_of(state)
    if view is not None:
        view.count_usage(state.data.get(TOKEN_USAGE))
    return view


def context_of(state: State) -> dict[str, Any]:
    """
    :param state: An agent's live State.
    :returns: Its ``hook_context`` (``{}`` when none was given).
    :raises ConfigurationError: If the ``hook_context`` given is not a dict.
    """
    return check_hook_context(state.data.get(HOOK_CONTEXT))
