"""
A run's door and lifecycle, for every shape: its inputs and the current run, the checks at its door, the one opener
(:meth:`OpenRunHook.open_run`) and the one closer (:func:`close_run`), the door of the Pipeline shapes, resuming from a
run directory, and iterating a run's events. docs/how-it-works.md ("The run contract") gives the reasons; each agent
has exactly one hook of the library at each hook point, so nothing depends on the order of a hook list.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import os
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, Protocol, TypeVar

from haystack import Pipeline, logging
from haystack.components.agents.state import State
from haystack.components.agents.state.state_utils import replace_values
from haystack.core.errors import PipelineRuntimeError, SerializationError
from haystack.core.serialization import default_from_dict, default_to_dict
from haystack.dataclasses import ChatMessage, ChatRole, StreamingCallbackT
from haystack.utils.callable_serialization import deserialize_callable, serialize_callable

from haystack_deep_research._prompts import RESUMED_SUBTOPICS, render_user
from haystack_deep_research._serialization import InitSerialized
from haystack_deep_research.errors import ConfigurationError, DeepResearchError, InvalidQuestionError, UsageError
from haystack_deep_research.events import Notice, RunEnded, RunStarted, Subscriber
from haystack_deep_research.events.bus import EventBus
from haystack_deep_research.events.types import Event
from haystack_deep_research.evidence.text import clean_text
from haystack_deep_research.run._budget import CostMeter, RunBudget, bind
from haystack_deep_research.run._journal import LEDGER_FILE, REPORT_FILE, JournaledNote, RunJournal
from haystack_deep_research.run._phases import Phase, PhaseHook, RunBound, blocking, drive, drive_async
from haystack_deep_research.run._research_run import ResearchRun, RunGuard, RunView, publish, run_outputs
from haystack_deep_research.settings import Budgets
from haystack_deep_research.settings.grouped import Price
from haystack_deep_research.state import (
    EXIT_REASON,
    HOOK_CONTEXT,
    INPUTS_KEY,
    MESSAGES,
    NOTES,
    PHASE_ORCHESTRATOR,
    PHASE_RESEARCH,
    PHASE_RUN,
    PHASE_WRITE,
    REPORT,
    RUN_GUARD_KEY,
    RUN_KEY,
    STOP_RUN,
    TOKEN_USAGE,
    TOOLS,
    WARNINGS,
)
from haystack_deep_research.web._pool import start as start_parsers

logger = logging.getLogger(__name__)

_EXAMPLE = "messages=[ChatMessage.from_user('your question')]"

MAX_QUESTION_CHARS = 20_000
"""The longest research question, in characters (after stripping): longer text is material, not a question."""


def check_question(question: str) -> str:
    """:raises InvalidQuestionError: If ``question`` is longer than :data:`MAX_QUESTION_CHARS`."""
    if len(question) > MAX_QUESTION_CHARS:
        raise InvalidQuestionError(
            f"The question is {len(question):,} characters long; the limit is {MAX_QUESTION_CHARS:,}. Ask a shorter "
            "question, and give long material as documents instead (Sources(datastores=...))."
        )
    return question


def check_messages(messages: Any) -> list[ChatMessage]:
    """:raises InvalidQuestionError: If ``messages`` is not a list of ``ChatMessage``; the message names the fix."""
    if isinstance(messages, ChatMessage):
        raise InvalidQuestionError("messages must be a list of ChatMessage; wrap the message: messages=[message].")
    if isinstance(messages, str):
        raise InvalidQuestionError(f"messages must be a list of ChatMessage, not a string; pass {_EXAMPLE}.")
    if not isinstance(messages, list):
        raise InvalidQuestionError(
            f"messages must be a list of ChatMessage, for example {_EXAMPLE}; got {type(messages).__name__}."
        )
    for index, message in enumerate(messages):
        if isinstance(message, ChatMessage):
            continue
        fix = "ChatMessage.from_dict(...)" if isinstance(message, dict) else "ChatMessage.from_user(...)"
        raise InvalidQuestionError(
            f"messages[{index}] is a {type(message).__name__}, not a ChatMessage; build each message with {fix}, "
            f"for example {_EXAMPLE}."
        )
    return messages


_MOVED_KEYS = {
    "haystack_deep_research.run_dir": "run_dir=...",
    "haystack_deep_research.on_event": "on_event=...",
    "haystack_deep_research.progress": "on_event=progress_view(progress)",
    "haystack_deep_research.streaming_callback": "streaming_callback=...",
    "haystack_deep_research.budgets": "budgets=...",
    "haystack_deep_research.brief": "brief=...",
    "haystack_deep_research.on_run_opened": "on_run_opened=...",
}
"""The ``hook_context`` keys a run read before its inputs became one ``RunInputs``, and the field each became."""


def check_hook_context(hook_context: Any) -> dict[str, Any]:
    """
    :returns: ``hook_context``, or ``{}`` for ``None``.
    :raises ConfigurationError: If it is not a dict, or holds a key a run used to read its inputs from (refused,
        naming the ``RunInputs`` field to pass instead, never ignored).
    """
    if hook_context is None:
        return {}
    if not isinstance(hook_context, dict):
        raise ConfigurationError(
            f"hook_context must be a dict, for example {{'request_id': 7}}; got {type(hook_context).__name__}."
        )
    if moved := sorted(hook_context.keys() & _MOVED_KEYS.keys()):
        key = moved[0]
        raise ConfigurationError(
            f"hook_context[{key!r}] is not read any more: pass inputs=RunInputs({_MOVED_KEYS[key]}) to run instead."
        )
    return hook_context


def _callable(name: str, value: Any, shape: str) -> None:
    if value is not None and not callable(value):
        raise ConfigurationError(f"RunInputs({name}=...) must be a callable {shape}; got {type(value).__name__}.")


@dataclass(frozen=True)
class RunInputs:
    """
    What one run is given besides its question, the same for every shape. Each field is honoured by every shape, or
    refused with a :class:`~haystack_deep_research.errors.ConfigurationError` naming it.

    :param run_dir: A directory to journal the run in and resume it from after a crash (see docs/safety.md), or
        ``None``.
    :param on_event: A callable ``on_event(event)`` receiving every typed event of the run (after the shape's own
        ``on_event=``); a ``progress(phase, message)`` callback takes part as ``events.progress_view(progress)``.
    :param streaming_callback: A Haystack streaming callback: every model of the run streams to it, each chunk tagged
        with its role. ``run(messages, streaming_callback=...)`` sets the same thing.
    :param budgets: A :class:`~haystack_deep_research.Budgets` for this run: its limits replace the shape's, its
        prices go on top of the shape's.
    :param brief: The research brief, used as it is (no scope call; the writer frames the report by it). The deep
        agent answers its conversation and refuses a brief.
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
        """The run's budgets: this run's over ``own`` (the shape's), or ``own``."""
        return own if self.budgets is None else self.budgets.over(own)


@dataclass(frozen=True)
class OpenRun:
    """
    The current run, as the steps, hooks and tools inside it see it.

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
    """Make ``run`` the current run until the returned callable is called, in the same context."""
    token = _CURRENT.set(OpenRun(run=run, context=dict(context or {})))
    return lambda: _CURRENT.reset(token)


@contextmanager
def running(run: ResearchRun, context: dict[str, Any] | None = None) -> Iterator[OpenRun]:
    """Make ``run`` the current run for the block (a Pipeline shape's, or a step's used on its own); opens nothing."""
    done = make_current(run, context)
    try:
        yield current_run()
    finally:
        done()


def run_inputs(inputs: Any, streaming_callback: Any = None) -> RunInputs:
    """:raises ConfigurationError: If ``inputs`` is not a ``RunInputs``, or the callback is not callable."""
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
    """The per-run inputs an Agent shape's ``run`` put in its ``hook_context`` (empty outside such a run)."""
    given = context.get(INPUTS_KEY)
    return given if isinstance(given, RunInputs) else RunInputs()


def question_from(messages: Any) -> str:
    """:raises InvalidQuestionError: Unless the last user message of ``messages`` holds a question (cleaned)."""
    for message in reversed(check_messages(messages)):
        if message.is_from(ChatRole.USER):
            text = clean_text(message.text or "").strip()
            if text:
                return check_question(text)
            break
    raise InvalidQuestionError(f"No research question: pass {_EXAMPLE} with a non-empty question.")


def view_of(state: State) -> RunView | None:
    """The agent's view of its run, or ``None`` when it runs outside a run of this library."""
    context = state.data.get(HOOK_CONTEXT)
    view = context.get(RUN_KEY) if isinstance(context, dict) else None
    return view if isinstance(view, RunView) else None


def counted_view(state: State) -> RunView | None:
    """:func:`view_of` the state, with the tokens the agent has spent so far counted toward its run."""
    view = view_of(state)
    if view is not None:
        view.count_usage(state.data.get(TOKEN_USAGE))
    return view


class OpenRunHook(PhaseHook):
    """
    ``before_run``: open the run (see docs/how-it-works.md). The budgets are those of :class:`RunBudget`,
    ``phase_models`` and ``prices`` those of :class:`CostMeter`.

    :param on_event: A callable receiving every event of every run of the agent (before a run's own
        ``RunInputs(on_event=...)``), or ``None``. A module-level function serializes with the hook; a lambda does not.
    :raises ConfigurationError: If a budget or ``prices`` is invalid, or ``on_event`` is not callable.
    """

    allowed_hook_points = ("before_run",)
    run_phase = PHASE_ORCHESTRATOR
    """The phase the run's own agent counts its model calls toward."""
    takes_brief = True
    """Whether a run takes a brief of the caller's (``RunInputs(brief=...)``); a shape that uses none refuses it."""

    def __init__(
        self,
        *,
        token_budget: int | None = None,
        time_budget: float | None = None,
        cost_budget: float | None = None,
        phase_models: dict[str, str] | None = None,
        prices: dict[str, Price] | None = None,
        on_event: Subscriber | None = None,
    ) -> None:
        budget = RunBudget(token_budget=token_budget, time_budget=time_budget, cost_budget=cost_budget)
        CostMeter(phase_models=phase_models, prices=prices)
        if on_event is not None and not callable(on_event):
            raise ConfigurationError(f"on_event must be a callable on_event(event); got {type(on_event).__name__}.")
        self.token_budget = budget.token_budget
        self.time_budget = budget.time_budget
        self.cost_budget = budget.cost_budget
        self.phase_models = dict(phase_models or {})
        self.prices = dict(prices or {})
        self.on_event = on_event

    def run_parameters(self) -> dict[str, Any]:
        """:returns: The run's parameters, serialized (a subclass adds them to its own ``to_dict``)."""
        parameters: dict[str, Any] = {
            "token_budget": self.token_budget,
            "time_budget": self.time_budget,
            "cost_budget": self.cost_budget,
            "phase_models": self.phase_models,
            "prices": {model: price.to_dict() for model, price in self.prices.items()},
        }
        if self.on_event is not None:
            try:
                parameters["on_event"] = serialize_callable(self.on_event)
            except SerializationError as error:
                raise ConfigurationError(
                    f"on_event cannot be serialized ({error}); pass a module-level function, or pass the subscriber "
                    "per run: run(..., inputs=RunInputs(on_event=...))."
                ) from error
        return parameters

    @staticmethod
    def run_parameters_from_dict(init_parameters: dict[str, Any]) -> None:
        """Turn serialized prices and ``on_event`` back into objects, in place."""
        prices = init_parameters.get("prices")
        if isinstance(prices, dict):
            init_parameters["prices"] = {model: Price.from_dict(price) for model, price in prices.items()}
        if isinstance(init_parameters.get("on_event"), str):
            init_parameters["on_event"] = deserialize_callable(init_parameters["on_event"])

    def phase(self, state: State) -> Phase[None]:
        question = self.question_of(state.data.get(MESSAGES))
        context = check_hook_context(state.data.get(HOOK_CONTEXT))
        run = yield from self.open_run(question, inputs_of(context))
        if isinstance(guard := context.get(RUN_GUARD_KEY), RunGuard):  # a ResearchAgent's run: it closes the guard
            guard.on_close(lambda: _release(run))
            guard.on_close(make_current(run, context))  # the current run until the agent's run returns
        try:
            yield from self._open(state, context, run)
        except BaseException:
            _release(run)
            raise

    def question_of(self, messages: Any) -> str:
        """A subclass may read the conversation otherwise."""
        return question_from(messages)

    def open_run(self, question: str, inputs: RunInputs) -> Phase[ResearchRun]:
        """
        Open the run of one question, for every shape (see docs/how-it-works.md); the caller closes it.

        :raises RunDirError: (from the phase) If the run directory cannot be used.
        :raises ConfigurationError: (from the phase) If the shape refuses one of the inputs, or a run's dollar budget
            lacks a price.
        """
        if inputs.brief is not None and not self.takes_brief:
            raise ConfigurationError(
                "this shape takes no RunInputs(brief=...): it answers the conversation it is given; put the brief in "
                "the messages."
            )
        own = Budgets(
            tokens=self.token_budget, seconds=self.time_budget, dollars=self.cost_budget, prices=self.prices or None
        )
        budgets = inputs.budgets_over(own)
        if budgets is not own:
            budgets.check_priced(self.phase_models)
        start_parsers()  # parsers load while the run makes its first model calls, not when its first page arrives
        journal = None
        if inputs.run_dir is not None:
            [opened] = yield [blocking(RunJournal.open, inputs.run_dir, question)]
            if opened.error is not None:
                raise opened.error
            journal = opened.value
        subscribers = [given for given in (self.on_event, inputs.on_event) if given is not None]
        run = ResearchRun(
            question=question,
            budget=RunBudget(token_budget=budgets.tokens, time_budget=budgets.seconds, cost_budget=budgets.dollars),
            journal=journal,
            events=EventBus(uuid.uuid4().hex, subscribers),
            streaming_callback=inputs.streaming_callback,
            phase_models=self.phase_models,
            prices=dict(budgets.prices or {}),
        )
        run.brief = inputs.brief.strip() if inputs.brief is not None else question
        try:
            if inputs.on_run_opened is not None:
                inputs.on_run_opened(run)
        except BaseException:
            _release(run)
            raise
        run.events.emit(RunStarted(phase=PHASE_RUN, question=run.question))
        return run

    def _open(self, state: State, context: dict[str, Any], run: ResearchRun) -> Phase[None]:
        view = run.view(self.run_phase)
        state.set(HOOK_CONTEXT, {**context, RUN_KEY: view}, handler_override=replace_values)
        shared = [
            getattr(tool, "name", repr(tool))
            for tool in state.data.get(TOOLS) or []
            if isinstance(tool, RunBound) and not tool.attach_run(view)
        ]
        if shared:
            logger.warning(
                "The tools {tools} are shared by every run of this agent, so they work without the run (nothing they "
                "read is recorded). Put them in a RunToolset.",
                tools=shared,
            )
        yield from self.begin(state, run)
        publish(state, run)

    def begin(self, state: State, run: ResearchRun) -> Phase[None]:
        """A subclass's opening work, once the run is open."""
        yield from ()

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(self, **self.run_parameters())

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Any:
        cls.run_parameters_from_dict(data.get("init_parameters") or {})
        return default_from_dict(cls, data)


class CloseRunHook(PhaseHook, InitSerialized):
    """``after_run``: close the run (see docs/how-it-works.md); nothing happens outside a run of this library."""

    allowed_hook_points = ("after_run",)

    def phase(self, state: State) -> Phase[None]:
        view = counted_view(state)
        if view is None:
            return
        run = view.run
        failure: Exception | None = None
        try:
            yield from self.finish(state, run)
        except Exception as error:  # the run is closed first; then the error propagates
            failure = error
        report, exit_reason = str(state.data.get(REPORT) or ""), str(state.data.get(EXIT_REASON) or "")
        outputs = yield from close_run(run, report=report, exit_reason=exit_reason)
        publish(state, run, outputs)
        if failure is not None:
            raise failure

    def finish(self, state: State, run: ResearchRun) -> Phase[None]:
        """Closing work of a subclass, before the run is closed."""
        yield from ()


class BudgetHook(InitSerialized):
    """
    ``before_llm`` of every library Agent: count its usage into the run, stop it once a budget is spent, else bind the
    run's budget to the step's model call (``run_async`` runs on the event loop, so the binding reaches it).
    """

    allowed_hook_points = ("before_llm",)

    def run(self, state: State) -> None:
        view = counted_view(state)
        bind(view.run.budget if view is not None else None)
        if view is not None and (reason := view.spent()) is not None:
            state.set(STOP_RUN, reason)

    async def run_async(self, state: State) -> None:
        self.run(state)


def close_run(run: ResearchRun, *, report: str, exit_reason: str) -> Phase[dict[str, Any]]:
    """Close a run, whatever its shape (see docs/how-it-works.md); the phase returns its outputs."""
    run.close()
    journal = run.journal
    if journal is not None:
        try:
            [ended] = yield [blocking(journal.record_end, exit_reason=exit_reason, ledger=run.ledger)]
            lost = "a resumed run would not restore the sources found after the last note"
            _failed(run, PHASE_WRITE, "the end of the run", ended.error, lost)
            [ledger] = yield [blocking(journal.write_ledger, run.ledger)]
            _failed(run, PHASE_WRITE, LEDGER_FILE, ledger.error, "the sources are in the result and in the journal")
            [written] = yield [blocking(journal.write_report, report)]
            _failed(run, PHASE_WRITE, REPORT_FILE, written.error, "the report is in the result")
        finally:
            journal.close()
    outputs = {**run_outputs(run), REPORT: report, EXIT_REASON: exit_reason}
    run.events.emit(
        RunEnded(
            phase=PHASE_RUN,
            exit_reason=exit_reason,
            notes=len(outputs[NOTES]),
            sources=len(run.ledger),
            warnings=len(outputs[WARNINGS]),
        )
    )
    return outputs


def _release(run: ResearchRun) -> None:
    run.close()
    if run.journal is not None:
        run.journal.close()


T = TypeVar("T")


class PipelineShape:
    """
    The run contract of a Pipeline shape (see docs/how-it-works.md). A subclass is a Haystack component whose ``run``
    and ``run_async`` call :meth:`research` and :meth:`research_async`.

    :param pipeline: The shape's Pipeline.
    :param run_settings: What each run is opened with: the parameters of ``OpenRunHook``.
    :param finish: The Pipeline component whose outputs are the shape's outputs.
    """

    def __init__(
        self, *, pipeline: Pipeline, run_settings: dict[str, Any] | None = None, finish: str = "finish"
    ) -> None:
        self.pipeline = pipeline
        self.opener = OpenRunHook(**(run_settings or {}))
        self.finish = finish

    def warm_up(self) -> None:
        self.pipeline.warm_up()

    def to_dict(self) -> dict[str, Any]:
        """:returns: The serialized shape: its Pipeline and run settings."""
        return default_to_dict(self, pipeline=self.pipeline.to_dict(), run_settings=self.opener.run_parameters())

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Any:
        parameters = data["init_parameters"]
        parameters["pipeline"] = Pipeline.from_dict(parameters["pipeline"])
        OpenRunHook.run_parameters_from_dict(parameters.get("run_settings") or {})
        return default_from_dict(cls, data)

    def step(self, kind: type[T]) -> T:
        """:raises ConfigurationError: If the Pipeline holds no step of class ``kind`` (it was rebuilt without it)."""
        for _, instance in self.pipeline.walk():
            if isinstance(instance, kind):
                return instance
        raise ConfigurationError(f"this Pipeline has no {kind.__name__}; build it with the library's factory.")

    def entry(self, run: ResearchRun, **inputs: Any) -> dict[str, dict[str, Any]]:
        """The Pipeline's input data for the open run and the shape's own inputs (besides ``messages``)."""
        raise NotImplementedError

    def _open(
        self, messages: Any, streaming_callback: Any, hook_context: Any, inputs: RunInputs | None
    ) -> tuple[str, dict[str, Any], RunInputs]:
        question = question_from(messages)
        return question, check_hook_context(hook_context), run_inputs(inputs, streaming_callback)

    @contextmanager
    def _current(self, run: ResearchRun, context: dict[str, Any]) -> Iterator[None]:
        try:
            with running(run, context):
                yield
        except PipelineRuntimeError as error:
            cause = error.__cause__
            raise (cause if isinstance(cause, DeepResearchError) else error) from cause
        finally:
            _release(run)

    def research(
        self,
        messages: Any,
        streaming_callback: Any = None,
        hook_context: Any = None,
        inputs: RunInputs | None = None,
        **own: Any,
    ) -> dict[str, Any]:
        """
        Open the run, run the Pipeline in it (with the shape's ``own`` inputs, see :meth:`entry`), close the run.

        :returns: The outputs of the ``finish`` component.
        :raises InvalidQuestionError: If ``messages`` holds no question; nothing has run.
        :raises ConfigurationError: If ``hook_context`` or ``inputs`` has the wrong type.
        :raises RunDirError: If the run directory cannot be used.
        """
        question, context, given = self._open(messages, streaming_callback, hook_context, inputs)
        run = drive(self.opener.open_run(question, given))
        with self._current(run, context):
            return dict(self.pipeline.run(self.entry(run, **own))[self.finish])

    async def research_async(
        self,
        messages: Any,
        streaming_callback: Any = None,
        hook_context: Any = None,
        inputs: RunInputs | None = None,
        **own: Any,
    ) -> dict[str, Any]:
        """Async variant of :meth:`research`."""
        question, context, given = self._open(messages, streaming_callback, hook_context, inputs)
        run = await drive_async(self.opener.open_run(question, given))
        with self._current(run, context):
            return dict((await self.pipeline.run_async(self.entry(run, **own)))[self.finish])


def _failed(run: ResearchRun, phase: str, what: str, error: Exception | None, consequence: str) -> None:
    if error is not None:
        run.warn(phase, f"could not write {what} to the run directory ({error}); {consequence}")


def restore(state: State, run: ResearchRun) -> Phase[None]:
    """Journal the brief, and restore the ledger and the notes an earlier attempt completed."""
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
    """The journaled note of that sub-topic when an earlier attempt of this run completed it, else ``None``."""
    journal = view.run.journal
    return journal.find_note(subtopic) if journal is not None else None


def journal_note(view: RunView, subtopic: str, note: JournaledNote) -> Phase[None]:
    """Journal a completed sub-topic with its evidence, as one record; a failing write is a warning."""
    journal = view.run.journal
    if journal is None:
        return
    placed = replace(note, subtopic=subtopic, position=view.run.place_of(note.note))
    [written] = yield [blocking(journal.record_note, placed, view.ledger)]
    _failed(
        view.run, PHASE_RESEARCH, f"the note on '{subtopic}'", written.error, "a resumed run would research it again"
    )


class _AsyncRunnable(Protocol):
    async def run_async(self, **kwargs: Any) -> dict[str, Any]: ...


class EventStream:
    """
    Run an agent asynchronously and iterate its events as they happen (``async for event in EventStream(agent,
    messages=[...])``, as docs/deep-agent.md shows). The iteration ends when the run ends; then :attr:`result` holds
    the run's result. A run that fails raises its error from the ``async for``. Leaving the loop early cancels the run.

    :param agent: A shape of this library (anything whose ``run_async`` takes ``inputs=RunInputs(...)``).
    :param run_kwargs: The arguments of ``run_async`` (``messages``, ``streaming_callback``, ``inputs``, ...). A
        subscriber already in ``inputs`` (``RunInputs(on_event=...)``) still receives every event.
    """

    def __init__(self, agent: _AsyncRunnable, **run_kwargs: Any) -> None:
        self._agent = agent
        self._kwargs = run_kwargs
        self.result: dict[str, Any] | None = None

    async def __aiter__(self) -> AsyncIterator[Event]:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Event] = asyncio.Queue()
        given = run_inputs(self._kwargs.get("inputs"))
        chained = given.on_event

        def deliver(event: Event) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, event)
            if callable(chained):
                chained(event)

        inputs = dataclasses.replace(given, on_event=deliver)
        task = asyncio.ensure_future(self._agent.run_async(**{**self._kwargs, "inputs": inputs}))
        try:
            while True:
                getter = asyncio.ensure_future(queue.get())
                done, _ = await asyncio.wait({getter, task}, return_when=asyncio.FIRST_COMPLETED)
                if getter in done:
                    yield getter.result()
                    continue
                getter.cancel()
                await asyncio.sleep(0)  # deliveries scheduled from worker threads before the run ended
                while not queue.empty():
                    yield queue.get_nowait()
                self.result = task.result()
                return
        finally:
            if not task.done():
                task.cancel()
