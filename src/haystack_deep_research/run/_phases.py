"""
How the library's work meets its models: work written once as a phase and driven sync or async, the hooks written
with it, every model call streamed to the run's callback, and the wrappers that bound the Agent's own model calls
(the time budget's deadline, a per-completion output cap, named by :data:`API_TABLE`).

A phase is a generator: it yields a batch of :class:`Call`, receives one :class:`Outcome` per call in the same order,
and returns its result. :func:`drive` runs a batch in worker threads, :func:`drive_async` on the event loop; a call
that raises never ends the phase, its outcome carries the error. Blocking work is a :func:`blocking` call, run in a
worker thread on the async path. :func:`ask_counted` and :func:`ask_twice` (which tries failed calls once more and
says when a failure was a timeout) are the run's ways to ask. Streamed chunks are tagged with their model's role
(docs/configuration.md); a plain callback reaches every call, a coroutine one async model calls only, since the sync
path cannot await it (as in Haystack's own ``run``).
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import inspect
import itertools
import sys
from collections.abc import Awaitable, Callable, Generator, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, Protocol, TypeVar, cast, runtime_checkable
from urllib.parse import urlsplit

from haystack import component, tracing
from haystack.components.agents.state import State
from haystack.components.generators.chat.types import ChatGenerator
from haystack.dataclasses import ChatMessage, StreamingChunk
from haystack.hooks import VALID_HOOK_POINTS

from haystack_deep_research import _checks
from haystack_deep_research._serialization import InitSerialized
from haystack_deep_research.errors import ConfigurationError, DeadlineExceededError
from haystack_deep_research.run._budget import (
    RunBudget,
    bound_budget,
    call_sync_within_async,
    call_within,
    call_within_async,
    model_name,
)
from haystack_deep_research.state import PHASE_WRITE
from haystack_deep_research.web._pool import waiting_threads

if TYPE_CHECKING:
    from haystack_deep_research.run._research_run import ResearchRun, RunView

T = TypeVar("T")

MODEL_CALL_SPAN = "haystack_deep_research.model_call"
"""The name of the tracing span around every model call the library makes itself."""


@dataclass(frozen=True)
class Call:
    """One call a phase asks for, in both forms: ``run`` makes it synchronously, ``run_async`` on the event loop."""

    run: Callable[[], Any]
    run_async: Callable[[], Awaitable[Any]]


@dataclass(frozen=True)
class Outcome:
    """What one call gave: its ``value`` (``None`` after an error), or the ``error`` it raised."""

    value: Any = None
    error: Exception | None = None

    @property
    def reply(self) -> ChatMessage | None:
        """:returns: The value when it is a chat message (the outcome of :func:`ask`), else ``None``."""
        return self.value if isinstance(self.value, ChatMessage) else None

    @property
    def text(self) -> str:
        """:returns: The stripped text of :attr:`reply`; ``""`` when there is none."""
        reply = self.reply
        return ((reply.text if reply is not None else None) or "").strip()


Phase = Generator[list[Call], list[Outcome], T]


def failure(error: Exception | None) -> str:
    """A short reason why a model call produced no text."""
    return f"{type(error).__name__}: {error}" if error is not None else "the model returned no text"


@contextmanager
def _model_span(generator: Any, role: str, messages: list[ChatMessage]) -> Iterator[Any]:
    tags = {"haystack_deep_research.role": role, "haystack_deep_research.model": model_name(generator)}
    with tracing.tracer.trace(MODEL_CALL_SPAN, tags=tags) as span:
        if tracing.tracer.is_content_tracing_enabled:
            span.set_content_tag("haystack_deep_research.input", [m.to_dict() for m in messages])
        yield span


def _first_reply(result: dict[str, Any], span: Any) -> ChatMessage | None:
    replies = result.get("replies") or []
    reply = replies[0] if replies else None
    if reply is not None and tracing.tracer.is_content_tracing_enabled:
        span.set_content_tag("haystack_deep_research.output", reply.to_dict())
    return reply


def ask(
    generator: ChatGenerator,
    messages: list[ChatMessage],
    *,
    role: str,
    streaming_callback: Any = None,
    generation_kwargs: dict[str, Any] | None = None,
    agent: str = "",
    keep_alive: bool = False,
    budget: RunBudget | None = None,
) -> Call:
    """
    A call to a chat generator, without tools, inside a tracing span named :data:`MODEL_CALL_SPAN`; a generator
    without ``run_async`` runs in a worker thread on the async path.

    :param role: The role of the call (``scope``, ``summarizer``, ``writer``, ``judge``, ...), a span tag.
    :param streaming_callback: The run's streaming callback, or ``None``: the generator streams to it (when its
        ``run`` takes one), each chunk tagged with ``role``.
    :param generation_kwargs: Generation settings for this call only (for example a strict ``response_format``).
    :param agent: The sub-researcher's sub-topic or subagent's name the call works for, tagged on streamed chunks.
    :param keep_alive: Ask for the reply as a stream even without a streaming callback (its chunks are dropped), so
        that a client's read timeout applies to the wait between two chunks, not to the whole reply. A generator
        with a streaming callback of its own keeps it.
    :param budget: The run's budget: the call waits no longer than its time budget has left and then fails with
        :class:`~haystack_deep_research.errors.DeadlineExceededError`; ``None`` for no bound.
    :returns: A call whose value is the first reply or ``None``.
    """
    own = getattr(generator, "streaming_callback", None) is not None
    if streaming_callback is None and keep_alive and not own:
        streaming_callback = drop_chunk
    streams = streaming_callback is not None and accepts_streaming(generator)
    settings = {**(generation_kwargs or {}), **(stream_usage_kwargs(generator) if streams or own else {})}
    extra: dict[str, Any] = {"generation_kwargs": settings} if settings else {}

    def inputs(wrap: Callable[..., Any]) -> dict[str, Any]:
        callback = wrap(streaming_callback, role, agent) if streams else None
        return {**extra, **({"streaming_callback": callback} if callback is not None else {})}

    def run() -> ChatMessage | None:
        given = inputs(for_sync)
        with _model_span(generator, role, messages) as span:
            return _first_reply(call_within(lambda: generator.run(messages=messages, **given), budget), span)

    async def run_async() -> ChatMessage | None:
        # a sync run in a worker thread streams through a plain callback
        given = inputs(for_async if hasattr(generator, "run_async") else for_sync)
        with _model_span(generator, role, messages) as span:
            return _first_reply(await _generate_async(generator, messages, given, budget), span)

    return Call(run, run_async)


def ask_counted(
    run: ResearchRun, phase: str, generator: Any, messages: list[ChatMessage], researcher: str = "", **options: Any
) -> Phase[Outcome]:
    """:func:`ask`, given ``options``, with the run's streaming callback and budget; its usage counts to ``phase``."""
    [outcome] = yield [_run_ask(run, generator, messages, **options)]
    if outcome.reply is not None:
        run.record_usage(phase, outcome.reply.meta.get("usage"), researcher=researcher)
    return outcome


def _run_ask(run: ResearchRun, generator: Any, messages: list[ChatMessage], **options: Any) -> Call:
    return ask(generator, messages, streaming_callback=run.streaming_callback, budget=run.budget, **options)


_CHAIN_DEPTH = 5
_TIMEOUTS = (("httpx", "TimeoutException"), ("openai", "APITimeoutError"))
TIMEOUT_ADVICE = (
    "it timed out after the chat generator's client had retried it; pass a longer `timeout` or a smaller "
    "`max_retries` to the generator (for example `OpenAIChatGenerator(timeout=120, max_retries=1)`) to wait longer "
    "per try or give up sooner"
)


def is_timeout(error: BaseException | None) -> bool:
    """Whether a model call failed on a timeout: the error, or one it was raised from, is one by type."""
    # httpx and openai are looked at only when already imported: an error of theirs cannot exist otherwise.
    found = [getattr(sys.modules[name], kind) for name, kind in _TIMEOUTS if name in sys.modules]
    kinds = (TimeoutError, *found)
    for _ in range(_CHAIN_DEPTH):
        if error is None:
            return False
        if isinstance(error, kinds):
            return True
        error = error.__cause__ or error.__context__
    return False


@dataclass(frozen=True)
class Request:
    """One call of a batch: ``what`` it writes, for warnings, and its prompt."""

    what: str
    messages: list[ChatMessage]


@dataclass(frozen=True)
class Attempt:
    """A request's text after at most two tries (``""`` when both failed), and why the last try failed."""

    text: str
    why: str = ""


def _attempt_of(run: ResearchRun, request: Request, outcome: Outcome, phase: str) -> Attempt:
    reply = outcome.reply
    if reply is not None:
        run.record_usage(phase, reply.meta.get("usage"))
    if not outcome.text:
        why = failure(outcome.error)
        return Attempt("", f"{why}; {TIMEOUT_ADVICE}" if is_timeout(outcome.error) else why)
    if reply is not None and reply.meta.get("finish_reason") == "length":  # kept: asked again, it would stop there too
        run.warn(phase, f"the writer's reply for {request.what} hit the model's output limit and may be cut off")
    return Attempt(outcome.text)


def ask_twice(
    generator: ChatGenerator,
    requests: Sequence[Request],
    run: ResearchRun,
    *,
    role: str = "writer",
    phase: str = PHASE_WRITE,
) -> Phase[list[Attempt]]:
    """Make every request side by side, then the failed ones once more; one :class:`Attempt` per request."""
    outcomes = yield [_run_ask(run, generator, request.messages, role=role, agent=request.what) for request in requests]
    attempts = [_attempt_of(run, request, outcome, phase) for request, outcome in zip(requests, outcomes, strict=True)]
    failed = [index for index, attempt in enumerate(attempts) if not attempt.text]
    if not failed:
        return attempts
    again = yield [
        _run_ask(run, generator, requests[index].messages, role=role, agent=requests[index].what) for index in failed
    ]
    for index, outcome in zip(failed, again, strict=True):
        first, attempts[index] = attempts[index].why, _attempt_of(run, requests[index], outcome, phase)
        if attempts[index].text:
            what = requests[index].what
            run.warn(phase, f"the writer's call for {what} failed ({first}); it succeeded when tried once more")
    return attempts


async def _generate_async(generator: Any, messages: list[ChatMessage], inputs: dict[str, Any], budget: Any) -> Any:
    """One without ``run_async`` runs in a daemon thread."""
    if hasattr(generator, "run_async"):
        return await call_within_async(lambda: generator.run_async(messages=messages, **inputs), budget)
    return await call_sync_within_async(lambda: generator.run(messages=messages, **inputs), budget)


def blocking(function: Callable[..., T], *args: Any, **kwargs: Any) -> Call:
    """A blocking call: run inline on the sync path, in a worker thread on the async path."""
    return Call(lambda: function(*args, **kwargs), lambda: asyncio.to_thread(function, *args, **kwargs))


def subphase(factory: Callable[[], Phase[T]], *, max_concurrency: int = 5) -> Call:
    """A nested phase as one call of a batch (its value is what the phase returns), so phases run side by side."""
    return Call(
        lambda: drive(factory(), max_concurrency=max_concurrency),
        lambda: drive_async(factory(), max_concurrency=max_concurrency),
    )


def _attempt(call: Call) -> Outcome:
    try:
        return Outcome(value=call.run())
    except Exception as error:  # handed to the phase, which decides what the failure means
        return Outcome(error=error)


async def _attempt_async(call: Call, limit: asyncio.Semaphore) -> Outcome:
    async with limit:
        try:
            return Outcome(value=await call.run_async())
        except Exception as error:  # handed to the phase, which decides what the failure means
            return Outcome(error=error)


_CALL_THREADS = 1 << 16  # never reached: a nested batch never waits for a thread its caller holds


def _run_batch(batch: Sequence[Call], max_concurrency: int) -> list[Outcome]:
    """Each call in a copy of the caller's context, at most ``max_concurrency`` at once, in the batch's order."""
    outcomes: list[Outcome | None] = [None] * len(batch)
    waiting = iter(range(len(batch)))
    running: dict[Future[Outcome], int] = {}
    # Threads kept from batch to batch (starting one while others hold the GIL costs up to a switch interval): an
    # idle one is reused, a new one starts when none is idle, and the process keeps as many as ever ran at once.
    pool = waiting_threads("haystack-deep-research-call", _CALL_THREADS)

    def start(count: int) -> None:
        for index in itertools.islice(waiting, count):
            running[pool.submit(contextvars.copy_context().run, _attempt, batch[index])] = index

    start(max(1, max_concurrency))
    try:
        while running:
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                outcomes[running.pop(future)] = future.result()
            start(len(done))
    finally:
        wait(running)  # interrupted (KeyboardInterrupt here), the calls already running end first; no other starts
    return cast(list[Outcome], outcomes)


def drive(phase: Phase[T], *, max_concurrency: int = 5) -> T:
    """
    Run a phase synchronously and return its result; the calls of a batch run in worker threads, at most
    ``max_concurrency`` at once, each in a copy of the caller's context (so tracing spans nest under the caller's).
    """
    try:
        batch = next(phase)
        while True:
            outcomes = [_attempt(call) for call in batch] if len(batch) <= 1 else _run_batch(batch, max_concurrency)
            batch = phase.send(outcomes)
    except StopIteration as stop:
        return stop.value


async def drive_async(phase: Phase[T], *, max_concurrency: int = 5) -> T:
    """Run a phase on the event loop and return its result; a batch's calls run concurrently (``max_concurrency``)."""
    limit = asyncio.Semaphore(max_concurrency)
    try:
        batch = next(phase)
        while True:
            outcomes = list(await asyncio.gather(*(_attempt_async(call, limit) for call in batch)))
            batch = phase.send(outcomes)
    except StopIteration as stop:
        return stop.value


ROLE_META = "haystack_deep_research.role"
"""The ``StreamingChunk.meta`` key naming the role of the model that streamed the chunk."""
AGENT_META = "haystack_deep_research.agent"
"""The ``StreamingChunk.meta`` key naming the sub-researcher's sub-topic or the subagent that streamed the chunk."""

SyncCallback = Callable[[StreamingChunk], None]
AsyncCallback = Callable[[StreamingChunk], Awaitable[None]]


def _is_async(callback: Any) -> bool:
    method = getattr(type(callback), "__call__", None)  # noqa: B004 - the call method of a callable object
    return inspect.iscoroutinefunction(callback) or inspect.iscoroutinefunction(method)


def tag_chunk(chunk: StreamingChunk, role: str, agent: str = "") -> StreamingChunk:
    """A copy of the chunk whose meta names the role (a role already there, from a nested agent, is kept)."""
    meta = {ROLE_META: role, **({AGENT_META: agent} if agent else {}), **chunk.meta}
    return dataclasses.replace(chunk, meta=meta)


def for_sync(callback: Any, role: str, agent: str = "") -> SyncCallback | None:
    """A plain callback tagging each chunk, or ``None`` (no callback, or a coroutine one)."""
    if callback is None or _is_async(callback):
        return None

    def tagged(chunk: StreamingChunk) -> None:
        callback(tag_chunk(chunk, role, agent))

    return tagged


def for_async(callback: Any, role: str, agent: str = "") -> AsyncCallback | None:
    """A coroutine callback tagging each chunk, or ``None`` without a callback."""
    if callback is None:
        return None
    is_async = _is_async(callback)

    async def tagged(chunk: StreamingChunk) -> None:
        result = callback(tag_chunk(chunk, role, agent))
        if is_async:
            await result

    return tagged


def accepts_streaming(generator: Any) -> bool:
    """Whether its ``run`` takes a ``streaming_callback`` (by name or through ``**kwargs``)."""
    try:
        parameters = inspect.signature(generator.run).parameters
    except (TypeError, ValueError):
        return False
    return "streaming_callback" in parameters or any(p.kind is p.VAR_KEYWORD for p in parameters.values())


def drop_chunk(chunk: StreamingChunk) -> None:
    """A streaming callback that keeps nothing: the generator still assembles the whole reply."""


_OPENAI_CHAT = ("haystack.components.generators.chat.openai", "OpenAIChatGenerator")


def stream_usage_kwargs(generator: Any) -> dict[str, Any]:
    """
    The settings that make a streamed reply carry its token usage: Haystack's ``OpenAIChatGenerator`` (and subclasses
    such as Azure's) leaves it out unless its own ``generation_kwargs`` set ``stream_options``.
    """
    own = getattr(generator, "generation_kwargs", None) or {}
    if "stream_options" not in own and _is_loaded_instance(generator, *_OPENAI_CHAT):
        return {"stream_options": {"include_usage": True}}
    return {}


def _is_loaded_instance(generator: Any, module_name: str, class_name: str) -> bool:
    """Looked up only when its module is already imported, so nothing is imported here."""
    module = sys.modules.get(module_name)
    kind = getattr(module, class_name, None) if module is not None else None
    return isinstance(kind, type) and isinstance(generator, kind)


class UsesModels:
    """A mixin forwarding the lifecycle calls of Haystack components to the models and agents it uses."""

    _model_attributes: ClassVar[tuple[str, ...]] = ()
    """The attributes holding the chat generators and agents this object calls (``None`` when unset)."""

    def _used_models(self) -> Iterable[Any]:
        """:returns: The chat generators and agents this object calls."""
        return [model for name in self._model_attributes if (model := getattr(self, name)) is not None]

    def _forward(self, name: str) -> None:
        for model in self._used_models():
            if hasattr(model, name):
                getattr(model, name)()

    async def _forward_async(self, name: str) -> None:
        for model in self._used_models():
            if hasattr(model, f"{name}_async"):
                await getattr(model, f"{name}_async")()
            elif hasattr(model, name):
                getattr(model, name)()

    def warm_up(self) -> None:
        self._forward("warm_up")

    async def warm_up_async(self) -> None:
        """Warm up every model this object uses, on the serving event loop."""
        await self._forward_async("warm_up")

    def close(self) -> None:
        self._forward("close")

    async def close_async(self) -> None:
        """Release the resources of every model this object uses, on the serving event loop."""
        await self._forward_async("close")


class PhaseHook(UsesModels):
    """
    A hook written once as a phase: :meth:`phase` holds the logic, ``run`` and ``run_async`` drive it.
    ``max_concurrency`` (a class attribute) bounds the calls of one batch of the phase running at once.
    """

    max_concurrency: int = 5

    def phase(self, state: State) -> Phase[None]:
        raise NotImplementedError

    def run(self, state: State) -> None:
        drive(self.phase(state), max_concurrency=self.max_concurrency)

    async def run_async(self, state: State) -> None:
        await drive_async(self.phase(state), max_concurrency=self.max_concurrency)


@runtime_checkable
class RunBound(Protocol):
    """A tool that works inside a run: the run's ``before_run`` hook hands it the run's view."""

    def attach_run(self, view: RunView) -> bool:
        """Take the run's view; ``False`` when the tool is shared by several runs and did not take it."""
        ...


def with_hooks(library: Mapping[Any, list[Any]], given: Any, *, factory: str) -> dict[Any, list[Any]]:
    """
    The hooks of an agent a factory builds: the library's, with the caller's own after them at each hook point (the
    library's open the run first and close it first, so the caller's see it open, and see its report).

    :raises ConfigurationError: If ``given`` is not such a dict, names an unknown hook point, or holds something that
        is not a hook of that point.
    """
    if not given:
        return dict(library)
    if not isinstance(given, Mapping):
        raise ConfigurationError(
            f"{factory}(hooks=...) must be a dict of hook point to a list of Haystack hooks, for example "
            f"{{'after_run': [my_hook]}}; got {type(given).__name__}."
        )
    merged = {point: list(hooks) for point, hooks in library.items()}
    for point, hooks in given.items():
        if point not in VALID_HOOK_POINTS:
            raise ConfigurationError(
                f"{factory}(hooks=...) names the hook point {point!r}; Haystack's hook points are "
                f"{', '.join(VALID_HOOK_POINTS)}."
            )
        listed = list(hooks) if isinstance(hooks, list | tuple) else [hooks]
        for hook in listed:
            allowed = getattr(hook, "allowed_hook_points", None)
            if not callable(getattr(hook, "run", None)) or (allowed is not None and point not in allowed):
                raise ConfigurationError(
                    f"{factory}(hooks={{{point!r}: ...}}) holds {type(hook).__name__}, which is not a Haystack hook "
                    f"of {point!r} (an object with run(state), or a function decorated with haystack.hooks.hook)."
                )
        merged[point] = [*merged.get(point, []), *listed]
    return merged


DEADLINE_META = "haystack_deep_research.deadline"
"""The ``meta`` key of the empty reply that stands in for a call cut at the deadline; its value says why."""


def deadline_reply(error: DeadlineExceededError) -> dict[str, Any]:
    """The result that stands in for the call: one empty reply whose ``meta[DEADLINE_META]`` says why."""
    return {"replies": [ChatMessage.from_assistant("", meta={DEADLINE_META: str(error)})]}


@component
class DeadlineChatGenerator(UsesModels, InitSerialized):
    """Wrap an Agent's chat generator so that no call outlives the run's time budget. :param chat_generator: It."""

    _model_attributes = ("chat_generator",)

    def __init__(self, *, chat_generator: Any) -> None:
        self.chat_generator = chat_generator

    @property
    def model(self) -> Any:
        """:returns: The wrapped generator's model name (``None`` when it has none)."""
        return getattr(self.chat_generator, "model", None)

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        """The wrapped generator's replies, or :func:`deadline_reply` when the run's time budget ran out first."""
        inputs = {**kwargs, **({"tools": tools} if tools is not None else {})}
        try:
            return call_within(lambda: self.chat_generator.run(messages=messages, **inputs), bound_budget())
        except DeadlineExceededError as error:
            return deadline_reply(error)

    @component.output_types(replies=list[ChatMessage])
    async def run_async(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        """Async variant of :meth:`run`; a wrapped generator without ``run_async`` runs in a daemon thread."""
        inputs = {**kwargs, **({"tools": tools} if tools is not None else {})}
        try:
            return await _generate_async(self.chat_generator, messages, inputs, bound_budget())
        except DeadlineExceededError as error:
            return deadline_reply(error)


class Api(NamedTuple):
    """
    What one OpenAI API is, for every caller that builds, caps or probes a model on it: its name in messages, where a
    server serves it after the base URL, and the per-completion token cap's name in OpenAI's and in another server's
    requests (``base_url``).
    """

    title: str
    path: str
    cap: str
    compatible_cap: str


API_TABLE: dict[str, Api] = {
    # OpenAI's reasoning models refuse max_tokens; local servers' Chat Completions know only it.
    "chat": Api("Chat Completions", "/chat/completions", "max_completion_tokens", "max_tokens"),
    "responses": Api("Responses", "/responses", "max_output_tokens", "max_output_tokens"),
}
"""The APIs a model may be called through (``api="chat"`` or ``"responses"``), with what differs between them."""
_OPENAI_HOST = "api.openai.com"


def output_cap_kwargs(generator: Any, tokens: int) -> dict[str, int] | None:
    """
    The generation settings that cap one completion (the name :data:`API_TABLE` gives its API: OpenAI's, or another
    server's when the generator calls one at its ``api_base_url``), or ``None`` for a generator without a known cap.
    """
    for module_name, class_name, api in (
        (*_OPENAI_CHAT, "chat"),
        ("haystack.components.generators.chat.openai_responses", "OpenAIResponsesChatGenerator", "responses"),
    ):
        if _is_loaded_instance(generator, module_name, class_name):
            base_url = str(getattr(generator, "api_base_url", None) or "")
            other = bool(base_url) and urlsplit(base_url).hostname != _OPENAI_HOST
            return {API_TABLE[api].compatible_cap if other else API_TABLE[api].cap: tokens}
    return None


@component
class OutputCappedChatGenerator(UsesModels, InitSerialized):
    """
    A chat generator whose every completion is capped at ``max_output_tokens`` tokens.

    :param chat_generator: The model (an OpenAI Chat Completions or Responses generator).
    :param max_output_tokens: The cap, 1 to 1,000,000.
    :raises ConfigurationError: If the model has no known cap, or the cap is out of range.
    """

    _model_attributes = ("chat_generator",)

    def __init__(self, *, chat_generator: Any, max_output_tokens: int) -> None:
        # Any: Haystack's ChatGenerator protocol declares run(messages) only; this one is checked to take tools.
        self.chat_generator: Any = _checks.chat_generator("chat_generator", chat_generator, needs_tools=True)
        self.max_output_tokens = _checks.int_in_range("max_output_tokens", max_output_tokens, 1, 1_000_000)
        cap = output_cap_kwargs(chat_generator, self.max_output_tokens)
        if cap is None:
            raise ConfigurationError(
                f"max_output_tokens is known for OpenAI's chat generators only; {type(chat_generator).__name__} "
                "takes its own cap in its generation_kwargs (for example max_tokens=...). Set it there instead."
            )
        self._cap = cap

    def _inputs(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        return {**kwargs, "generation_kwargs": {**(kwargs.get("generation_kwargs") or {}), **self._cap}}

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        return dict(self.chat_generator.run(messages=messages, tools=tools, **self._inputs(kwargs)))

    @component.output_types(replies=list[ChatMessage])
    async def run_async(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        return dict(await self.chat_generator.run_async(messages=messages, tools=tools, **self._inputs(kwargs)))
