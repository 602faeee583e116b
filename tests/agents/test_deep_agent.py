"""create_deep_agent: a plain Haystack Agent whose loop ends when its exit conditions fire, and not before."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from haystack import Pipeline
from haystack.components.agents import Agent
from haystack.core.serialization_security import allow_deserialization_module
from haystack.dataclasses import ChatMessage
from haystack.tools import tool
from pydantic import BaseModel, Field

from haystack_deep_research import Budgets, ConfigurationError, Grounding, Sources, create_deep_agent
from haystack_deep_research.agents import ResearchAgent
from haystack_deep_research.research import MaxIterations, ToolUsed
from haystack_deep_research.testing import ScriptedChatGenerator
from haystack_deep_research.tools import MemoryBackend, SubAgentDef, TodoState

FINDING = "Acme leads the mid-market CRM segment with a 30 percent share."
QUESTION = [ChatMessage.from_user("Summarise the competitive landscape for mid-market CRM platforms.")]


class ResearchResult(BaseModel):
    summary: str
    sources: list[str]
    confidence: float = Field(ge=0.0, le=1.0)


SUBMITTED: list[dict[str, Any]] = []


@tool
def search_kb(query: str) -> str:
    """Search the knowledge base."""
    return f"Results for {query}: {FINDING}"


@tool
def submit_research(result: ResearchResult) -> str:
    """Submit the completed report."""
    if not result["sources"]:
        raise ValueError("a submission needs at least one source")
    SUBMITTED.append(result)
    return "submitted"


def call(tool_name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_name": tool_name, "arguments": arguments}


def search(query: str = "mid-market CRM") -> dict[str, Any]:
    return call("search_kb", query=query)


def submit(confidence: Any = 0.9, sources: tuple[str, ...] = ("kb",)) -> dict[str, Any]:
    return call("submit_research", result={"summary": FINDING, "sources": list(sources), "confidence": confidence})


def build(steps: list[Any], **options: Any) -> Agent:
    settings: dict[str, Any] = {
        "chat_generator": ScriptedChatGenerator(role="agent", steps=steps),
        "tools": [search_kb, submit_research],
        "system_prompt": "You are a market-research agent. Submit when confident.",
        "output_schema": ResearchResult,
        "submit_tool": "submit_research",
        "min_confidence": 0.85,
        "max_iterations": 20,
    }
    settings.update(options)
    return create_deep_agent(**settings)


def _texts(result: dict[str, Any]) -> str:
    return "\n".join(m.text or str(m.tool_call_result.result if m.tool_call_result else "") for m in result["messages"])


@pytest.fixture(autouse=True)
def _fresh_submissions() -> None:
    SUBMITTED.clear()


def test_a_successful_confident_submission_ends_the_loop_with_a_typed_result() -> None:
    result = build([search(), submit("0.9")]).run(messages=QUESTION)

    assert result["exit_reason"] == "submit_research"
    assert result["step_count"] == 2
    report: ResearchResult = result["structured"]
    assert isinstance(report, ResearchResult)
    assert (report.summary, report.confidence) == (FINDING, 0.9)  # "0.9" arrived as a number
    assert result["report"].startswith(FINDING)
    assert result["submission"]["result"]["confidence"] == 0.9


def test_a_submit_that_raises_does_not_end_the_loop_and_the_model_sees_the_rejection() -> None:
    result = build([search(), submit(sources=()), submit()]).run(messages=QUESTION)

    assert result["exit_reason"] == "submit_research"
    assert result["step_count"] == 3
    assert "a submission needs at least one source" in _texts(result)
    assert len(SUBMITTED) == 1


def test_a_submission_below_the_minimum_confidence_is_sent_back() -> None:
    result = build([search(), submit(0.5), search("CRM pricing"), submit(0.9)]).run(messages=QUESTION)

    assert result["exit_reason"] == "submit_research"
    assert result["structured"].confidence == 0.9
    assert "confidence 0.5 is below the 0.85 required" in _texts(result)
    assert len(SUBMITTED) == 2  # the tool ran both times; only the second submission ended the loop


def test_a_submission_that_does_not_match_the_schema_is_refused_before_the_tool_runs() -> None:
    result = build([search(), submit(1.5), submit(0.9)]).run(messages=QUESTION)

    assert result["exit_reason"] == "submit_research"
    assert "do not match the required schema ResearchResult" in _texts(result)
    assert "confidence: Input should be less than or equal to 1" in _texts(result)
    assert len(SUBMITTED) == 1  # the invalid one never reached the tool


def test_a_submission_nested_too_deeply_is_refused_and_the_next_one_ends_the_loop() -> None:
    result = build([search(), call("submit_research", result="[" * 1200), submit(0.9)]).run(messages=QUESTION)

    assert result["exit_reason"] == "submit_research"
    assert result["structured"].confidence == 0.9
    assert "do not match the required schema ResearchResult" in _texts(result)
    assert len(SUBMITTED) == 1  # the nested one never reached the tool


def test_the_token_limit_ends_the_loop() -> None:
    steps = [search(f"query {n}") for n in range(30)]

    result = build(steps, budgets=Budgets(tokens=400), reflexion=False).run(messages=QUESTION)

    assert result["exit_reason"] == "token_budget"
    assert sum(result["usage_by_phase"]["agent"].get(k, 0) for k in ("prompt_tokens", "completion_tokens")) >= 400
    assert result["step_count"] < 30


def test_max_iterations_ends_the_loop() -> None:
    steps = [search(f"query {n}") for n in range(30)]

    result = build(steps, max_iterations=4).run(messages=QUESTION)

    assert result["exit_reason"] == "max_iterations"
    assert result["step_count"] == 4
    assert result["structured"] is None  # no answer was given, so nothing could be structured
    assert (
        "the run ended (max_iterations) without an answer, so there is no structured output" in result["warnings"][-1]
    )


def test_without_a_submit_tool_a_plain_answer_ends_the_loop() -> None:
    agent = build([search(), FINDING], tools=[search_kb], submit_tool=None, output_schema=None, min_confidence=0.0)

    result = agent.run(messages=QUESTION)

    assert result["exit_reason"] == "text"
    assert result["report"] == FINDING


def test_with_a_submit_tool_a_plain_answer_is_not_the_end() -> None:
    result = build([search(), "I think I am done.", submit()]).run(messages=QUESTION)

    assert result["exit_reason"] == "submit_research"
    assert "You replied without calling submit_research" in _texts(result)


def test_exit_conditions_compose_into_a_custom_termination() -> None:
    agent = build([search(), search("more")], termination=ToolUsed("search_kb") | MaxIterations(5))

    result = agent.run(messages=QUESTION)

    assert result["exit_reason"] == "search_kb"
    assert result["step_count"] == 1


def test_an_unknown_keyword_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="unexpected keyword argument 'max_tokens'"):
        build([], max_tokens=512)
    with pytest.raises(TypeError, match="unexpected keyword argument 'temperature'"):
        build([], temperature=0.2)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"submit_tool": "submit"}, "submit_tool 'submit' is not among the tools"),
        ({"system_prompt": " "}, "system_prompt must be a non-empty string"),
        ({"min_confidence": 2}, "min_confidence must be a number from 0.0 to 1.0"),
        ({"max_iterations": 0}, "max_iterations must be an integer from 1 to 1000"),
        ({"backend": MemoryBackend()}, "pass enable_filesystem=True"),
        ({"todo_state": TodoState()}, "with enable_todos=True"),
        ({"output_schema": dict}, "output_schema must be a pydantic BaseModel subclass"),
        ({"tools": search_kb}, "tools must be a list of Haystack Tools and Toolsets"),
        ({"summarize_after_messages": 10, "summarize_keep_recent": 10}, "must be smaller than"),
        ({"max_output_tokens": 100}, "max_output_tokens is known for OpenAI's chat generators only"),
        (
            {"sources": Sources(datastores={"reports": {}})},
            r"datastores\['reports'\] must be a mapping with a 'retriever'",
        ),
        ({"sources": Sources(passage_budget=0)}, r"create_deep_agent does not use Sources\(passage_budget=\.\.\.\)"),
        ({"sources": Sources(summarize_over=0)}, r"create_deep_agent does not use Sources\(summarize_over=\.\.\.\)"),
        ({"grounding": Grounding(max_regenerations=2)}, r"does not use Grounding\(max_regenerations=\.\.\.\)"),
    ],
)
def test_bad_options_are_refused_at_once_naming_the_fix(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        build([], **options)


def test_the_agent_is_a_plain_haystack_agent_that_round_trips_through_yaml() -> None:
    analyst = SubAgentDef(
        name="analyst", description="Researches one competitor.", system_prompt="Research it.", tools=[search_kb]
    )
    agent = build(
        [search(), submit()],
        enable_filesystem=True,
        enable_todos=True,
        summarize_after_messages=30,
        subagents=[analyst],
        memory_files=["~/no-such-AGENTS.md"],
    )

    allow_deserialization_module(__name__)  # the tools of this test module
    restored = ResearchAgent.from_dict(yaml.safe_load(yaml.safe_dump(agent.to_dict())))

    assert isinstance(restored, Agent)
    assert restored.to_dict() == agent.to_dict()
    result = restored.run(messages=QUESTION)
    assert result["exit_reason"] == "submit_research"
    assert isinstance(result["structured"], ResearchResult)


def test_the_agent_runs_inside_a_pipeline() -> None:
    pipeline = Pipeline()
    pipeline.add_component("deep", build([search(), submit()]))

    result = pipeline.run({"deep": {"messages": QUESTION}})

    assert result["deep"]["exit_reason"] == "submit_research"


async def test_run_async_ends_the_same_way() -> None:
    result = await build([search(), submit(0.5), submit(0.95)]).run_async(messages=QUESTION)

    assert result["exit_reason"] == "submit_research"
    assert result["structured"].confidence == 0.95


def test_the_same_call_again_and_again_is_a_loop_but_new_arguments_are_progress() -> None:
    sweep = [search(f"vendor {n}") for n in range(6)]
    looping = [search("CRM")] * 6

    swept = build([*sweep, submit()]).run(messages=QUESTION)
    stuck = build(looping).run(messages=QUESTION)

    assert swept["exit_reason"] == "submit_research"
    assert "Not run" not in _texts(swept)
    assert stuck["exit_reason"] == "loop_detected"
    assert "Not run: you called search_kb with the same arguments 3 times in a row" in _texts(stuck)
    assert any("the agent kept calling search_kb with the same arguments" in w for w in stuck["warnings"])


def test_a_report_the_agent_writes_to_a_file_leaves_the_run_with_verified_citations(tmp_path: Any) -> None:
    from haystack_deep_research.tools import DiskBackend

    invented = "https://invented.example/crm-study"
    content = f"# CRM report\n\nMid-market CRM spend grew ([a study]({invented})).\n"
    steps = [call("write_file", path="report.md", content=content), "The report is in report.md."]
    agent = build(steps, enable_filesystem=True, backend=DiskBackend(root=tmp_path), output_schema=None)

    result = agent.run(messages=QUESTION)

    written = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert invented not in written  # a link the run never read does not survive in the deliverable
    assert "Mid-market CRM spend grew" in written  # the claim itself is kept
    assert any("report.md" in w and "never read" in w for w in result["warnings"])


def test_the_answer_leaves_the_run_with_verified_citations() -> None:
    from haystack.components.generators.chat import MockChatGenerator

    invented = "https://invented.example/asked-for-by-a-page"
    model = MockChatGenerator(responses=[f"CRM spend grew ([source]({invented}))."])
    result = build([], chat_generator=model, output_schema=None, submit_tool=None, reflexion=False).run(
        messages=QUESTION
    )

    assert invented not in result["report"]
    assert result["citations"]["unverified_urls"] == [invented]


def test_a_data_file_the_agent_writes_is_named_when_it_cites_what_the_run_never_read(tmp_path: Any) -> None:
    from haystack_deep_research.tools import DiskBackend

    invented = "https://invented.example/crm.json"
    content = '{"source": "' + invented + '"}'
    steps = [call("write_file", path="data.json", content=content), "Saved data.json."]
    agent = build(steps, enable_filesystem=True, backend=DiskBackend(root=tmp_path), output_schema=None)

    result = agent.run(messages=QUESTION)

    assert (tmp_path / "data.json").read_text(encoding="utf-8") == content  # its format is left whole
    assert any("data.json" in w and invented in w for w in result["warnings"])
