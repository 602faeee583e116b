"""
The run contract, the same cases for all four shapes, driven by plain Haystack fakes written for this file.

None of the models here follows the library's prompts (the testing kit's scripted roles do): each is a Haystack
``@component`` with ``run(messages, tools=None)`` that answers the same text whatever it is asked, or fails, or
Haystack's own ``MockChatGenerator``. What every shape must do with them is the contract: the same shared outputs
under the same names and types, events delivered to any callable, typed errors unwrapped, a run directory written,
usage and cost, streaming to every model, and a report with an honest ``exit_reason`` when the model fails.
"""

from __future__ import annotations

import asyncio
import inspect
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest
from haystack import Document, Pipeline, component
from haystack.components.agents.state import State
from haystack.components.generators.chat import MockChatGenerator
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
from haystack.core.serialization_security import allow_deserialization_module
from haystack.dataclasses import ChatMessage, StreamingChunk, ToolCall
from haystack.document_stores.in_memory import InMemoryDocumentStore
from haystack.hooks import hook
from haystack.tools import Tool

from haystack_deep_research import (
    Budgets,
    ConfigurationError,
    InvalidQuestionError,
    Price,
    ReportStyle,
    RunDirError,
    RunInputs,
    Sources,
    create_deep_agent,
    create_deep_research_agent,
    create_iterative_research_agent,
    create_research_workflow,
)
from haystack_deep_research.errors import UsageError
from haystack_deep_research.events import Event, RunEnded, RunStarted
from haystack_deep_research.run import current_run
from haystack_deep_research.state import SHARED_OUTPUTS

QUESTION = "Why do tides rise twice a day?"
ANSWER = "Tides rise twice a day because the moon's pull bulges the oceans on both sides of the earth."
USAGE = {"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19}


@component
class PlainModel:
    """Answers every call with the same text and usage; streams it when given a callback; counts its calls."""

    def __init__(self, text: str = ANSWER) -> None:
        self.text = text
        self.calls = 0
        self.streamed = 0

    @component.output_types(replies=list[ChatMessage])
    def run(
        self, messages: list[ChatMessage], tools: Any = None, streaming_callback: Any = None, **kwargs: Any
    ) -> dict[str, Any]:
        self.calls += 1
        if streaming_callback is not None:
            self.streamed += 1
            streaming_callback(StreamingChunk(content=self.text))
        return {"replies": [ChatMessage.from_assistant(self.text, meta={"model": "mock-model", "usage": USAGE})]}

    @component.output_types(replies=list[ChatMessage])
    async def run_async(
        self, messages: list[ChatMessage], tools: Any = None, streaming_callback: Any = None, **kwargs: Any
    ) -> dict[str, Any]:
        self.calls += 1
        if streaming_callback is not None:
            self.streamed += 1
            if inspect.isawaitable(delivered := streaming_callback(StreamingChunk(content=self.text))):
                await delivered
        return {"replies": [ChatMessage.from_assistant(self.text, meta={"model": "mock-model", "usage": USAGE})]}


@component
class FailingModel:
    """Every call fails, as a provider outage would."""

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        raise ConnectionError("the model server is down")


def _search(query: str) -> list[dict[str, str]]:
    return []


SEARCH = Tool(
    name="web_search",
    description="Search the web.",
    parameters={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    function=_search,
)


def deep_research(model: Any) -> Any:
    return create_deep_research_agent(
        scope_llm=model,
        orchestrator_llm=model,
        researcher_llm=model,
        summarizer_llm=model,
        writer_llm=model,
        sources=Sources(search=SEARCH),
    )


def deep_agent(model: Any) -> Any:
    return create_deep_agent(chat_generator=model, tools=[SEARCH], system_prompt="Answer the question.")


def workflow(model: Any) -> Any:
    return create_research_workflow(chat_generator=model, tools=[SEARCH], output_schema=None)


def iterative(model: Any) -> Any:
    return create_iterative_research_agent(analysis_llm=model, writer_llm=model, sources=Sources(search=SEARCH))


SHAPES: dict[str, Callable[[Any], Any]] = {
    "deep_research_agent": deep_research,
    "deep_agent": deep_agent,
    "research_workflow": workflow,
    "iterative_agent": iterative,
}

TYPES: dict[str, Any] = {
    "report": str,
    "brief": str,
    "notes": list,
    "sources": list,
    "citations": dict,
    "warnings": list,
    "exit_reason": str,
    "usage_by_phase": dict,
    "cost": (float, type(None)),
    "token_usage": dict,
    "grounding": list,
    "grounding_score": (float, type(None)),
    "grounding_unjudged": list,
    "contradictions": list,
}

shapes = pytest.mark.parametrize("build", SHAPES.values(), ids=SHAPES.keys())


def _ask(agent: Any, **inputs: Any) -> dict[str, Any]:
    return agent.run(messages=[ChatMessage.from_user(QUESTION)], **inputs)


@shapes
def test_every_shape_returns_the_shared_outputs_under_the_shared_names(build: Callable[[Any], Any]) -> None:
    result = _ask(build(PlainModel()))

    missing = [name for name in SHARED_OUTPUTS if name not in result]
    assert missing == []
    for name, kind in TYPES.items():
        assert isinstance(result[name], kind), (name, type(result[name]).__name__)
    assert result["brief"]
    assert result["exit_reason"]
    assert result["citations"]["passages"] == []  # the shared verification ran; this run read nothing to quote


@shapes
def test_every_shape_runs_on_haystacks_own_mock_generator(build: Callable[[Any], Any]) -> None:
    result = _ask(build(MockChatGenerator(responses=ANSWER)))

    assert isinstance(result["report"], str)
    assert result["usage_by_phase"]
    assert result["cost"] == 0.0  # the mock model bills nothing: the cost is known, not unknown
    assert not any("cost is unknown" in warning for warning in result["warnings"])


class Collector:
    """An event subscriber that is an object, not a function or a bound list method."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def __call__(self, event: Event) -> None:
        self.events.append(event)


@shapes
def test_an_object_subscriber_receives_the_runs_events(build: Callable[[Any], Any]) -> None:
    collector = Collector()
    _ask(build(PlainModel()), inputs=RunInputs(on_event=collector))

    kinds = [type(event) for event in collector.events]
    assert kinds[0] is RunStarted
    assert RunEnded in kinds
    assert len({event.run_id for event in collector.events}) == 1


@shapes
async def test_an_object_subscriber_receives_the_runs_events_async(build: Callable[[Any], Any]) -> None:
    collector = Collector()
    await build(PlainModel()).run_async(
        messages=[ChatMessage.from_user(QUESTION)], inputs=RunInputs(on_event=collector)
    )

    assert [type(event) for event in collector.events][:1] == [RunStarted]
    assert RunEnded in [type(event) for event in collector.events]


@shapes
@pytest.mark.parametrize(
    ("inputs", "error"),
    [
        ({"messages": QUESTION}, InvalidQuestionError),
        ({"messages": [ChatMessage.from_user("   ")]}, InvalidQuestionError),
        ({"messages": [{"role": "user", "content": QUESTION}]}, InvalidQuestionError),
        ({"messages": [ChatMessage.from_user(QUESTION)], "hook_context": 5}, ConfigurationError),
        ({"messages": [ChatMessage.from_user(QUESTION)], "inputs": {"on_event": print}}, ConfigurationError),
    ],
)
def test_bad_input_gets_the_typed_error_itself(
    build: Callable[[Any], Any], inputs: dict[str, Any], error: type[Exception]
) -> None:
    model = PlainModel()
    with pytest.raises(error):
        build(model).run(**inputs)
    assert model.calls == 0  # refused at the door: nothing was paid for


@shapes
def test_an_unusable_run_directory_is_a_run_dir_error_unwrapped(build: Callable[[Any], Any], tmp_path: Path) -> None:
    taken = tmp_path / "a-file"
    taken.write_text("not a directory", encoding="utf-8")
    with pytest.raises(RunDirError):
        _ask(build(PlainModel()), inputs=RunInputs(run_dir=taken))
    with pytest.raises(RunDirError):
        asyncio.run(
            build(PlainModel()).run_async(messages=[ChatMessage.from_user(QUESTION)], inputs=RunInputs(run_dir=taken))
        )


@shapes
def test_the_run_directory_holds_the_report_and_is_released(build: Callable[[Any], Any], tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    first = _ask(build(PlainModel()), inputs=RunInputs(run_dir=run_dir))

    assert (run_dir / "report.md").read_text(encoding="utf-8") == first["report"]
    assert (run_dir / "ledger.json").is_file()
    again = _ask(build(PlainModel()), inputs=RunInputs(run_dir=run_dir))  # the lock was released
    assert again["exit_reason"]


@shapes
@pytest.mark.parametrize("how", ["argument", "inputs"])
def test_streaming_reaches_every_model_call(build: Callable[[Any], Any], how: str) -> None:
    model = PlainModel()
    chunks: list[StreamingChunk] = []
    if how == "argument":  # the same call on every shape: run(messages, streaming_callback)
        build(model).run([ChatMessage.from_user(QUESTION)], chunks.append)
    else:
        _ask(build(model), inputs=RunInputs(streaming_callback=chunks.append))

    assert model.calls > 0
    assert model.streamed == model.calls
    assert len(chunks) == model.calls


@shapes
async def test_streaming_reaches_every_model_call_of_an_async_run(build: Callable[[Any], Any]) -> None:
    model = PlainModel()
    chunks: list[StreamingChunk] = []

    await build(model).run_async([ChatMessage.from_user(QUESTION)], chunks.append, hook_context={"request": 7})

    assert model.calls > 0
    assert len(chunks) == model.streamed == model.calls


@shapes
def test_a_failing_model_still_yields_a_report_with_an_honest_exit_reason(build: Callable[[Any], Any]) -> None:
    result = _ask(build(FailingModel()))

    assert isinstance(result["report"], str)
    assert result["exit_reason"] not in {"", "grounded", "confidence_met", "text", "depth_reached"}
    assert result["warnings"]


@component
class OnceFailingWriter:
    """Fails its first call, as a provider's passing hiccup does; answers every later one."""

    def __init__(self) -> None:
        self.calls = 0

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        self.calls += 1
        if self.calls == 1:
            raise ConnectionError("the model server hiccuped")
        return {"replies": [ChatMessage.from_assistant(ANSWER, meta={"model": "mock-model", "usage": USAGE})]}


WRITERS: dict[str, Callable[[Any], Any]] = {
    "deep_research_agent": lambda writer: create_deep_research_agent(
        scope_llm=PlainModel(),
        orchestrator_llm=PlainModel(),
        researcher_llm=PlainModel(),
        summarizer_llm=PlainModel(),
        writer_llm=writer,
        sources=Sources(search=SEARCH),
    ),
    "research_workflow": lambda writer: create_research_workflow(
        chat_generator=PlainModel(), tools=[SEARCH], output_schema=None, summary_llm=writer, causal_inference=False
    ),
    "iterative_agent": lambda writer: create_iterative_research_agent(
        analysis_llm=PlainModel(), writer_llm=writer, sources=Sources(search=SEARCH)
    ),
}


@pytest.mark.parametrize("build", WRITERS.values(), ids=WRITERS.keys())
def test_the_writer_of_every_shape_that_writes_is_tried_twice(build: Callable[[Any], Any]) -> None:
    writer = OnceFailingWriter()
    result = _ask(build(writer))

    assert ANSWER in result["report"]  # the model's text, not the fallback assembled from the notes
    assert result["exit_reason"] != "writer_failed"
    assert any("succeeded when tried once more" in warning for warning in result["warnings"])


FACTORIES = {
    "deep_research_agent": create_deep_research_agent,
    "deep_agent": create_deep_agent,
    "research_workflow": create_research_workflow,
    "iterative_agent": create_iterative_research_agent,
}
factories = pytest.mark.parametrize("factory", FACTORIES.values(), ids=FACTORIES.keys())


FIVE_MODELS = {role: PlainModel() for role in ("scope", "orchestrator", "researcher", "summarizer", "writer")}

REQUIRED: dict[str, dict[str, Any]] = {
    "deep_research_agent": {},
    "deep_agent": {"chat_generator": PlainModel(), "tools": [SEARCH], "system_prompt": "Answer."},
    "research_workflow": {"chat_generator": PlainModel(), "tools": [SEARCH], "output_schema": None},
    "iterative_agent": {"analysis_llm": PlainModel(), "writer_llm": PlainModel()},
}


@pytest.mark.parametrize("name", FACTORIES)
def test_every_factory_takes_the_grouped_settings_under_the_same_names(name: str) -> None:
    opened: list[Any] = []
    settings: dict[str, Any] = {"budgets": Budgets(tokens=1_000_000, seconds=600.0)}
    if name != "deep_agent":  # the deep agent answers; the other three write a report, in the form asked for
        settings["style"] = ReportStyle(report_type="outline")
    if name in ("deep_research_agent", "iterative_agent"):
        settings["sources"] = Sources(search=SEARCH)

    required = {f"{role}_llm": model for role, model in FIVE_MODELS.items()} if name == "deep_research_agent" else {}
    agent = FACTORIES[name](**(required or REQUIRED[name]), **settings)

    result = _ask(agent, inputs=RunInputs(on_run_opened=opened.append))

    [run] = opened
    assert (run.budget.token_budget, run.budget.time_budget) == (1_000_000, 600.0)
    assert result["exit_reason"]


@pytest.mark.parametrize("name", FACTORIES)
def test_an_unknown_keyword_is_python_s_own_type_error(name: str) -> None:
    """The real signatures are the contract: no keyword is taken only to be refused."""
    with pytest.raises(TypeError, match="unexpected keyword argument 'token_budget'"):
        FACTORIES[name](**REQUIRED[name], token_budget=1_000)
    with pytest.raises(TypeError, match="unexpected keyword argument 'max_topics'"):
        FACTORIES[name](**REQUIRED[name], max_topics=3)


@shapes
def test_a_runs_own_budgets_replace_the_shapes_own(build: Callable[[Any], Any]) -> None:
    opened: list[Any] = []
    price = Price(input_per_mtok=2.0, output_per_mtok=4.0)
    own = Budgets(tokens=1, seconds=600.0, prices={"PlainModel": price})  # the name its usage is counted under

    result = _ask(build(PlainModel()), inputs=RunInputs(budgets=own, on_run_opened=opened.append))

    [run] = opened
    assert (run.budget.token_budget, run.budget.time_budget, run.budget.cost_budget) == (1, 600.0, None)
    usage = result["token_usage"]
    assert result["cost"] == pytest.approx((usage["prompt_tokens"] * 2.0 + usage["completion_tokens"] * 4.0) / 1e6)
    assert isinstance(result["report"], str)


def test_a_runs_own_token_budget_ends_the_main_agent_the_way_the_factorys_does() -> None:
    result = _ask(deep_research(PlainModel()), inputs=RunInputs(budgets=Budgets(tokens=1)))

    assert result["exit_reason"] == "token_budget"
    assert any("the token budget of 1 tokens" in warning for warning in result["warnings"])


@shapes
def test_a_runs_dollar_budget_needs_the_price_of_every_model(build: Callable[[Any], Any]) -> None:
    agent = build(PlainModel())  # its model, counted as "PlainModel", has no price

    with pytest.raises(ConfigurationError, match=r"Budgets\(dollars=...\) needs the price of every model"):
        _ask(agent, inputs=RunInputs(budgets=Budgets(dollars=1.0)))
    priced = Budgets(dollars=1.0, prices={"PlainModel": Price(input_per_mtok=1.0, output_per_mtok=1.0)})
    assert _ask(agent, inputs=RunInputs(budgets=priced))["cost"] is not None


@shapes
def test_a_budgets_entry_that_is_not_a_budgets_is_a_typed_error(build: Callable[[Any], Any]) -> None:
    with pytest.raises(ConfigurationError, match="must be a Budgets"):
        _ask(build(PlainModel()), inputs=RunInputs(budgets={"tokens": 1}))  # type: ignore[arg-type]


@component
class Searcher:
    """Calls web_search with a new query six times, then answers; 100 tokens a call."""

    def __init__(self) -> None:
        self.calls = 0

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        self.calls += 1
        usage = {"prompt_tokens": 80, "completion_tokens": 20, "total_tokens": 100}
        if self.calls <= 6 and tools:
            call = ToolCall(tool_name="web_search", arguments={"query": f"tides {self.calls}"})
            return {"replies": [ChatMessage.from_assistant("", tool_calls=[call], meta={"usage": usage})]}
        return {"replies": [ChatMessage.from_assistant(ANSWER, meta={"usage": usage})]}


@pytest.mark.parametrize(("factory", "run", "reason"), [(150, 1_000_000, "text"), (None, 150, "token_budget")])
def test_a_runs_own_token_budget_raises_or_lowers_the_deep_agents(factory: int | None, run: int, reason: str) -> None:
    model = Searcher()
    budgets = Budgets(tokens=factory) if factory is not None else None
    agent = create_deep_agent(
        chat_generator=model, tools=[SEARCH], system_prompt="Answer.", budgets=budgets, grounding=False, reflexion=False
    )

    result = _ask(agent, inputs=RunInputs(budgets=Budgets(tokens=run)))

    assert result["exit_reason"] == reason
    assert model.calls == (7 if reason == "text" else 2)


# One lifecycle: every run is opened once and closed once, and what it closes with is what it returns.


@shapes
def test_every_run_is_opened_once_and_closed_once_with_what_it_returns(build: Callable[[Any], Any]) -> None:
    collector = Collector()
    result = _ask(build(PlainModel()), inputs=RunInputs(on_event=collector))

    started = [e for e in collector.events if isinstance(e, RunStarted)]
    [ended] = [e for e in collector.events if isinstance(e, RunEnded)]
    assert len(started) == 1
    assert collector.events[0] is started[0]
    assert collector.events[-1] is ended
    assert ended.exit_reason == result["exit_reason"]
    assert (ended.notes, ended.sources, ended.warnings) == (
        len(result["notes"]),
        len(result["sources"]),
        len(result["warnings"]),
    )


# Per-run inputs: one typed value, every field honoured or refused by name.

BRIEF = "Explain the two daily tides: the moon's pull, the earth's rotation, and the bulge opposite the moon."


@pytest.mark.parametrize("name", ["deep_research_agent", "research_workflow", "iterative_agent"])
def test_a_runs_brief_is_the_brief_of_every_shape_that_writes_a_report(name: str) -> None:
    result = _ask(SHAPES[name](PlainModel()), inputs=RunInputs(brief=f"  {BRIEF}\n"))

    assert result["brief"] == BRIEF


def test_the_deep_agent_refuses_a_brief_by_its_name_before_any_model_call() -> None:
    model = PlainModel()
    with pytest.raises(ConfigurationError, match=r"RunInputs\(brief=\.\.\.\)"):
        _ask(deep_agent(model), inputs=RunInputs(brief=BRIEF))
    assert model.calls == 0


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("on_event", "print"),
        ("streaming_callback", 3),
        ("on_run_opened", []),
        ("budgets", {"tokens": 1}),
        ("brief", " "),
    ],
)
def test_a_run_input_of_the_wrong_type_is_refused_by_its_name(field: str, value: Any) -> None:
    with pytest.raises(ConfigurationError, match=rf"RunInputs\({field}=\.\.\.\)"):
        RunInputs(**{field: value})


# Serialization keeps the shape, and with it the door.

allow_deserialization_module(__name__)  # the fakes of this file are restored by their import path


@component
class CountedModel:
    """Answers every call; counts every call of every instance (a restored copy is another instance)."""

    calls = 0

    def __init__(self, text: str = ANSWER) -> None:
        self.text = text

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        CountedModel.calls += 1
        return {"replies": [ChatMessage.from_assistant(self.text, meta={"model": "mock-model", "usage": USAGE})]}


def _round_trips(agent: Any) -> list[Any]:
    restored = type(agent).from_dict(agent.to_dict())
    pipeline = Pipeline()
    pipeline.add_component("shape", agent)
    loaded = Pipeline.loads(pipeline.dumps()).get_component("shape")
    return [restored, loaded]


@shapes
@pytest.mark.parametrize("messages", [[], [ChatMessage.from_user("   ")]], ids=["no-messages", "blank"])
def test_a_round_trip_gives_back_the_shape_and_its_door(build: Callable[[Any], Any], messages: Any) -> None:
    agent = build(CountedModel())

    for restored in _round_trips(agent):
        assert type(restored) is type(agent)
        CountedModel.calls = 0
        with pytest.raises(InvalidQuestionError):
            restored.run(messages)
        assert CountedModel.calls == 0  # refused at the door: nothing was paid for


@shapes
def test_a_restored_shape_runs_as_the_one_it_was(build: Callable[[Any], Any], tmp_path: Path) -> None:
    agent = build(CountedModel())
    original = _ask(agent)
    [restored, loaded] = _round_trips(agent)

    result = _ask(restored, inputs=RunInputs(run_dir=tmp_path / "run"))
    again = _ask(loaded, inputs=RunInputs(run_dir=tmp_path / "loaded"))

    assert (result["report"], result["exit_reason"]) == (original["report"], original["exit_reason"])
    assert (again["report"], again["exit_reason"]) == (original["report"], original["exit_reason"])
    assert (tmp_path / "run" / "report.md").read_text(encoding="utf-8") == original["report"]


# A model that fails after the tools read something: the report is what was read.

SURVEY_URL = "https://survey.example/tides-2024"


def _survey() -> Sources:
    store = InMemoryDocumentStore()
    store.write_documents(
        [
            Document(
                content="The 2024 survey measured spring tides of 4.2 metres at the northern gauge, twice a day.",
                meta={"url": SURVEY_URL, "title": "Tide survey 2024 — Nordküste"},
            )
        ]
    )
    retriever = InMemoryBM25Retriever(document_store=store)
    return Sources(datastores={"survey": {"retriever": retriever, "description": "tide surveys", "top_k": 1}})


@component
class FailsAfterOneSearch:
    """Searches the survey once, then fails on every later call, as a provider outage in mid-run would."""

    def __init__(self) -> None:
        self.calls = 0

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        self.calls += 1
        if self.calls > 1:
            raise ConnectionError("the model server went away")
        call = ToolCall(tool_name="search_survey", arguments={"query": "spring tides"})
        return {"replies": [ChatMessage.from_assistant("", tool_calls=[call], meta={"usage": USAGE})]}


@pytest.mark.parametrize("reflexion", [True, False])
def test_the_deep_agent_whose_model_fails_after_a_tool_round_reports_what_was_read(reflexion: bool) -> None:
    agent = create_deep_agent(
        chat_generator=FailsAfterOneSearch(), tools=[], system_prompt="Answer.", sources=_survey(), reflexion=reflexion
    )

    result = _ask(agent)

    assert result["exit_reason"] == "failed"
    assert f"]({SURVEY_URL})" in result["report"]
    assert "4.2 metres" in result["report"]
    assert result["citations"]["unverified_urls"] == []
    assert any("the agent's model failed" in warning for warning in result["warnings"])


# The caller's own hooks, merged with the library's.

SEEN: list[tuple[str, Any]] = []


@hook
def saw_the_report(state: State) -> None:
    SEEN.append(("after_run", state.data.get("report")))


@hook
def saw_a_model_call(state: State) -> None:
    context = state.data.get("hook_context") or {}
    SEEN.append(("before_llm", context.get("request")))


@pytest.mark.parametrize("name", ["deep_research_agent", "deep_agent"])
def test_the_agent_shapes_run_the_callers_hooks_after_their_own(name: str) -> None:
    SEEN.clear()
    required = {f"{role}_llm": model for role, model in FIVE_MODELS.items()} if name == "deep_research_agent" else {}
    agent = FACTORIES[name](
        **(required or REQUIRED[name]),
        **OWN_SOURCES.get(name, {}),
        hooks={"after_run": [saw_the_report], "before_llm": [saw_a_model_call]},
    )

    result = _ask(agent, hook_context={"request": "r-17"})

    assert ("after_run", result["report"]) in SEEN  # it ran after the library's close: the report was written
    assert ("before_llm", "r-17") in SEEN  # the caller's hook_context reaches the caller's hooks


def test_the_workflow_runs_the_callers_hooks_in_its_execute_agent() -> None:
    SEEN.clear()
    workflow = create_research_workflow(**REQUIRED["research_workflow"], hooks={"before_llm": [saw_a_model_call]})

    _ask(workflow, hook_context={"request": "r-18"})

    assert ("before_llm", "r-18") in SEEN


def test_a_shape_without_agent_hooks_refuses_them_by_name() -> None:
    with pytest.raises(ConfigurationError, match="takes no hooks="):
        create_iterative_research_agent(**REQUIRED["iterative_agent"], hooks={"after_run": [saw_the_report]})


@pytest.mark.parametrize("name", ["deep_research_agent", "deep_agent", "research_workflow"])
@pytest.mark.parametrize("hooks", [{"after_dinner": [saw_the_report]}, {"after_run": ["print"]}, ["x"]])
def test_hooks_that_are_not_haystack_hooks_are_refused(name: str, hooks: Any) -> None:
    with pytest.raises(ConfigurationError, match=r"hooks"):
        FACTORIES[name](**REQUIRED[name], hooks=hooks)


OWN_SOURCES: dict[str, dict[str, Any]] = {"deep_research_agent": {"sources": Sources(search=SEARCH)}}


# One carrier of the current run: whatever runs inside a run of any shape finds it the same way.

CURRENT: list[str] = []


@hook
def saw_the_current_run(state: State) -> None:
    CURRENT.append(current_run().run.question)


def _search_in_the_run(query: str) -> list[dict[str, str]]:
    CURRENT.append(current_run().run.question)
    return []


SEARCH_IN_THE_RUN = Tool(
    name="web_search",
    description="Search the web.",
    parameters={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    function=_search_in_the_run,
)


@component
class SearchesOnce:
    """Calls web_search once, then answers."""

    def __init__(self) -> None:
        self.calls = 0

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        self.calls += 1
        if self.calls == 1 and tools:
            call = ToolCall(tool_name="web_search", arguments={"query": "tides"})
            return {"replies": [ChatMessage.from_assistant("", tool_calls=[call], meta={"usage": USAGE})]}
        return {"replies": [ChatMessage.from_assistant(ANSWER, meta={"usage": USAGE})]}


CARRIED: dict[str, Callable[[], Any]] = {
    "deep_agent": lambda: create_deep_agent(
        chat_generator=SearchesOnce(),
        tools=[SEARCH_IN_THE_RUN],
        system_prompt="Answer.",
        hooks={"before_llm": [saw_the_current_run]},
    ),
    "research_workflow": lambda: create_research_workflow(
        chat_generator=SearchesOnce(),
        tools=[SEARCH_IN_THE_RUN],
        output_schema=None,
        hooks={"before_llm": [saw_the_current_run]},
    ),
    "deep_research_agent": lambda: create_deep_research_agent(
        **{f"{role}_llm": PlainModel() for role in ("scope", "orchestrator", "summarizer", "writer")},
        researcher_llm=SearchesOnce(),
        sources=Sources(search=SEARCH_IN_THE_RUN),
        hooks={"before_llm": [saw_the_current_run]},
    ),
    "iterative_agent": lambda: create_iterative_research_agent(
        analysis_llm=PlainModel('{"nextSearchTopic": "tides", "shouldContinue": true}'),
        writer_llm=PlainModel(),
        sources=Sources(search=SEARCH_IN_THE_RUN),
        depth=1,
    ),
}


@pytest.mark.parametrize("name", CARRIED)
def test_the_current_run_is_found_the_same_way_in_every_shape(name: str) -> None:
    CURRENT.clear()
    question = f"Warum steigen die Gezeiten zweimal am Tag? ({name})"

    CARRIED[name]().run([ChatMessage.from_user(question)])

    assert CURRENT
    assert set(CURRENT) == {question}
    with pytest.raises(UsageError):  # and no run is current once the shape returned
        current_run()


@shapes
@pytest.mark.parametrize(
    ("key", "field"),
    [("haystack_deep_research.run_dir", "run_dir"), ("haystack_deep_research.progress", "on_event=progress_view")],
)
def test_a_key_a_run_used_to_read_from_hook_context_is_refused_not_ignored(
    build: Callable[[Any], Any], key: str, field: str
) -> None:
    model = PlainModel()
    with pytest.raises(ConfigurationError, match=re.escape(f"inputs=RunInputs({field}")):
        _ask(build(model), hook_context={key: "runs/one"})
    assert model.calls == 0


# Instructions are text: a store's description or a caller's instructions reach the model as written.

BRACES = 'surveys of {{ tides }}, {% raw %} and {# notes #}, as JSON {"gauge": 4.2}'


@component
class DelegatesOnce:
    """
    Delegates one sub-topic when it is offered the tool and has not yet, answers every other call; keeps each system
    message, in the class, so a copy restored from a dict keeps them too.
    """

    systems: ClassVar[list[str]] = []

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        DelegatesOnce.systems += [m.text or "" for m in messages if m.role.value == "system"]
        names = {getattr(tool, "name", "") for tool in tools or []}
        if "research_subtopic" in names and not any(m.tool_call_result for m in messages):
            call = ToolCall(tool_name="research_subtopic", arguments={"subtopic": "tides"})
            return {"replies": [ChatMessage.from_assistant("", tool_calls=[call], meta={"usage": USAGE})]}
        return {"replies": [ChatMessage.from_assistant(ANSWER, meta={"model": "mock-model", "usage": USAGE})]}


def _braced_store() -> dict[str, Any]:
    retriever = InMemoryBM25Retriever(document_store=InMemoryDocumentStore())
    return {"survey": {"retriever": retriever, "description": BRACES}}


INSTRUCTED: dict[str, Callable[[Any], Any]] = {
    "deep_research_agent": lambda model: create_deep_research_agent(
        **{f"{role}_llm": model for role in FIVE_MODELS}, sources=Sources(search=SEARCH, datastores=_braced_store())
    ),
    "deep_agent": lambda model: create_deep_agent(
        chat_generator=model,
        tools=[SEARCH],
        system_prompt=f"Answer from {BRACES}.",
        sources=Sources(datastores=_braced_store()),
    ),
    "research_workflow": lambda model: create_research_workflow(
        chat_generator=model, tools=[SEARCH], output_schema=None, sources=Sources(datastores=_braced_store())
    ),
}


@pytest.mark.parametrize("build", INSTRUCTED.values(), ids=INSTRUCTED.keys())
def test_braces_in_an_agents_instructions_reach_the_model_as_written(build: Callable[[Any], Any]) -> None:
    # The iterative agent has no instructions of the caller's: its store descriptions are not part of a prompt.
    agent = build(DelegatesOnce())

    for shape in [agent, *_round_trips(agent)]:
        DelegatesOnce.systems.clear()
        result = _ask(shape)

        assert result["report"]
        assert any(f"search_survey: {BRACES}" in text for text in DelegatesOnce.systems)
