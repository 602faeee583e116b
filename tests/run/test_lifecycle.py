"""
One run, one lifecycle: the run's hooks and tools are Haystack citizens. Every model the library holds is warmed up
and closed with the agent, every model call the library makes itself is traced, and each agent has one hook per
hook point, so nothing depends on the order of a hook list.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from haystack import component, tracing
from haystack.components.agents import Agent
from haystack.dataclasses import ChatMessage
from haystack.tools import flatten_tools_or_toolsets
from haystack.tracing import Span, Tracer
from tests.support import SUMMARIZE_EVERY_PAGE

from haystack_deep_research import Grounding, ResearchSummary
from haystack_deep_research._prompts import prompt_of
from haystack_deep_research.research.subtopic import ResearchSubtopicTool
from haystack_deep_research.run._phases import MODEL_CALL_SPAN, Phase, blocking, drive, subphase
from haystack_deep_research.testing import ScriptedChatGenerator

ROLE_MODELS = ("scope_llm", "orchestrator_llm", "researcher_llm", "summarizer_llm", "writer_llm", "judge_llm")


class Lifecycled(ScriptedChatGenerator):
    """A scripted generator that records the lifecycle calls it receives."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.calls: list[str] = []

    def warm_up(self) -> None:
        self.calls.append("warm_up")

    async def warm_up_async(self) -> None:
        self.calls.append("warm_up_async")

    def close(self) -> None:
        self.calls.append("close")

    async def close_async(self) -> None:
        self.calls.append("close_async")


def _models() -> dict[str, Lifecycled]:
    roles = {"judge_llm": "judge"}
    return {name: Lifecycled(role=roles.get(name, name.removesuffix("_llm"))) for name in ROLE_MODELS}


async def test_warm_up_and_close_reach_every_model_of_the_run(make_agent: Callable[..., Agent]) -> None:
    models = _models()
    judge = models.pop("judge_llm")
    agent = make_agent(**models, grounding=Grounding(judge_llm=judge))

    agent.warm_up()
    await agent.warm_up_async()
    agent.close()
    await agent.close_async()

    for name, model in models.items():
        assert {"warm_up", "warm_up_async", "close", "close_async"} <= set(model.calls), name


class _Recording(Span):
    def __init__(self, name: str, tags: dict[str, Any]) -> None:
        self.name, self.tags = name, dict(tags)

    def set_tag(self, key: str, value: Any) -> None:
        self.tags[key] = value


class RecordingTracer(Tracer):
    def __init__(self) -> None:
        self.spans: list[_Recording] = []

    @contextlib.contextmanager
    def trace(
        self, operation_name: str, tags: dict[str, Any] | None = None, parent_span: Span | None = None
    ) -> Iterator[Span]:
        span = _Recording(operation_name, tags or {})
        self.spans.append(span)
        yield span

    def current_span(self) -> Span | None:
        return None


@pytest.fixture
def tracer() -> Iterator[RecordingTracer]:
    recording = RecordingTracer()
    tracing.enable_tracing(recording)
    try:
        yield recording
    finally:
        tracing.disable_tracing()


class StructuredWriter:
    """The scripted writer, answering the structured-output prompt with a valid ResearchSummary."""

    def __init__(self) -> None:
        self.writer = ScriptedChatGenerator(role="writer")

    def run(self, messages: list[ChatMessage]) -> dict[str, list[ChatMessage]]:
        found = prompt_of(messages[-1])
        if found is not None and found[0] == "structured":
            summary = ResearchSummary(summary="s", key_findings=[], sources=[], confidence=0.5)
            return {"replies": [ChatMessage.from_assistant(summary.model_dump_json())]}
        return self.writer.run(messages)


def test_every_model_call_the_library_makes_is_traced_with_its_role(
    make_agent: Callable[..., Agent], tracer: RecordingTracer
) -> None:
    agent = make_agent(
        sources=SUMMARIZE_EVERY_PAGE,
        grounding=Grounding(judge_llm=ScriptedChatGenerator(role="judge")),
        writer_llm=StructuredWriter(),
        output_schema=ResearchSummary,
    )

    agent.run(messages=[ChatMessage.from_user("How fast is solar growing?")])

    roles = {span.tags["haystack_deep_research.role"] for span in tracer.spans if span.name == MODEL_CALL_SPAN}
    assert roles >= {"scope", "summarizer", "writer", "judge", "structure"}


def test_each_agent_has_one_hook_per_hook_point(make_agent: Callable[..., Agent]) -> None:
    agent = make_agent(grounding=True)
    [delegate] = [t for t in flatten_tools_or_toolsets(agent.tools) if isinstance(t, ResearchSubtopicTool)]

    for hooks in (agent.hooks, delegate.researcher.hooks):
        assert all(len(registered) == 1 for registered in hooks.values()), hooks


class SyncOnly:
    """A scripted model without ``run_async`` that records the threads it was called on."""

    def __init__(self, role: str, threads: set[int]) -> None:
        self.inner = ScriptedChatGenerator(role=role)  # type: ignore[arg-type]
        self.threads = threads

    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, list[ChatMessage]]:
        self.threads.add(threading.get_ident())
        return self.inner.run(messages, tools, **kwargs)


async def test_run_async_never_calls_a_sync_only_model_on_the_event_loop(make_agent: Callable[..., Agent]) -> None:
    threads: set[int] = set()
    models = {name: SyncOnly(name.removesuffix("_llm"), threads) for name in ROLE_MODELS if name != "judge_llm"}

    result = await make_agent(**models).run_async(messages=[ChatMessage.from_user("How fast is solar growing?")])

    assert "## Sources" in result["report"]
    assert threads
    assert threading.get_ident() not in threads


@pytest.fixture
def no_parsers(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This test process's parser pool, as in a fresh interpreter: no parser process yet."""
    from haystack_deep_research.web import _pool

    monkeypatch.setattr(_pool, "_current", None)
    yield
    _pool._pool().close()


@component
class ParsersSeen:
    """The scripted scope model, noting whether a parser process was there when the run's first model call came."""

    def __init__(self) -> None:
        self.inner = ScriptedChatGenerator(role="scope")
        self.started: list[bool] = []

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], **kwargs: Any) -> dict[str, list[ChatMessage]]:
        from haystack_deep_research.web import _pool

        self.started.append(_pool.started())
        return self.inner.run(messages=messages)


@pytest.mark.usefixtures("no_parsers")
def test_a_parser_process_is_starting_before_the_first_model_call_of_a_run(make_agent: Callable[..., Agent]) -> None:
    scope = ParsersSeen()

    result = make_agent(scope_llm=scope).run(messages=[ChatMessage.from_user("How fast is solar capacity growing?")])

    assert scope.started == [True]  # started when the run opened, not when the first page arrived
    assert result["exit_reason"] == "text"
    assert len(result["sources"]) >= 1  # the pages were parsed by it (or its replacement)


def test_nested_batches_never_wait_for_threads_their_callers_hold() -> None:
    # Nine leaf calls, three batches of three under one batch of three, meet at one barrier: it opens only if all
    # nine run at once while the three calls above them wait, so no batch waits for a thread another batch holds.
    meet = threading.Barrier(9, timeout=10)

    def leaf(number: int) -> int:
        meet.wait()
        return number

    def inner(first: int) -> Phase[list[int]]:
        outcomes = yield [blocking(leaf, first + n) for n in range(3)]
        return [outcome.value for outcome in outcomes]

    def outer() -> Phase[list[list[int]]]:
        outcomes = yield [subphase(lambda first=3 * n: inner(first), max_concurrency=3) for n in range(3)]
        return [outcome.value for outcome in outcomes]

    assert drive(outer(), max_concurrency=3) == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
