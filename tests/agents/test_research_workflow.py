"""create_research_workflow: every route of the quality loop, with scripted models and the real tools on loopback."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any

import pytest
from haystack import Pipeline
from haystack.components.generators.chat import MockChatGenerator
from haystack.dataclasses import ChatMessage
from pydantic import BaseModel, Field
from tests.support import TRUE_CLAIM, VATICAN, plain_writer, truth_judge

from haystack_deep_research import (
    Budgets,
    ConfigurationError,
    Event,
    Grounding,
    InvalidQuestionError,
    ResearchSummary,
    RunInputs,
    Sources,
    create_research_workflow,
)
from haystack_deep_research.testing import LoopbackSearchServer, LoopbackWebServer, ScriptedChatGenerator

QUESTION = "How fast are solar power and grid storage growing?"
FALSE_CLAIM = "Global solar capacity fell by 90 percent in 2025"
MARK = "*(unsupported by the cited source)*"


def _run(pipeline: Pipeline, question: str = QUESTION, **inputs: Any) -> dict[str, Any]:
    return pipeline.run(messages=[ChatMessage.from_user(question)], **inputs)


def _stubborn(corrects: str) -> ScriptedChatGenerator:
    """A summarizer that states the false claim, and drops it by the given rule."""
    return ScriptedChatGenerator(role="summarize", unsupported_claims=[FALSE_CLAIM], corrects=corrects)  # type: ignore[arg-type]


def test_a_grounded_summary_passes_the_first_time(
    make_workflow: Callable[..., Pipeline], web: LoopbackWebServer, search: LoopbackSearchServer
) -> None:
    result = _run(make_workflow())

    assert result["exit_reason"] == "grounded"
    assert result["grounding_score"] == 1.0
    assert (result["regeneration_count"], result["replan_count"]) == (0, 0)
    # Execute read both pages; the summary cites exactly those, verified against the ledger.
    read = [web.url("/solar.html"), web.url("/storage.pdf")]
    assert sorted(s["url"] for s in result["sources"] if s["kind"] == "page") == sorted(read)
    assert sorted(result["citations"]["verified_urls"]) == sorted(read)
    assert "Global solar capacity grew by 450 gigawatts in 2025" in result["report"]
    assert [v["verdict"] for v in result["grounding"]] == ["supported", "supported"]
    # Causal inference ran between Execute and Summarize, and the summary was written along its chain.
    assert result["causal_chain"].startswith("1. ")
    assert "This summary follows a causal chain of 2 step(s)." in result["report"]
    structured = result["structured"]
    assert isinstance(structured, ResearchSummary)
    assert sorted(structured.sources) == sorted(read)
    assert len(search.requests) == 1
    assert len(result["notes"]) == 1
    assert {"execute", "causal", "summary", "ground", "structure"} <= set(result["usage_by_phase"])
    assert result["warnings"] == []


def test_a_low_score_is_fixed_by_regenerating_without_running_tools(
    make_workflow: Callable[..., Pipeline], search: LoopbackSearchServer
) -> None:
    result = _run(make_workflow(summary_llm=_stubborn("on_rewrite"), grounding=Grounding(threshold=0.9)))

    assert (result["regeneration_count"], result["replan_count"]) == (1, 0)
    assert result["exit_reason"] == "grounded"
    assert result["grounding_score"] == 1.0
    assert FALSE_CLAIM not in result["report"]
    assert len(search.requests) == 1  # the rewrite ran no tool
    assert len(result["notes"]) == 1


def test_when_regenerating_is_not_enough_a_replan_gathers_evidence_on_the_unsupported_claim(
    make_workflow: Callable[..., Pipeline], search: LoopbackSearchServer
) -> None:
    result = _run(make_workflow(summary_llm=_stubborn("on_new_evidence"), grounding=Grounding(threshold=0.9)))

    assert (result["regeneration_count"], result["replan_count"]) == (1, 1)
    assert result["exit_reason"] == "grounded"
    assert result["grounding_score"] == 1.0
    # Execute ran again on a task focused on exactly the unsupported claim; its findings became a second note.
    queries = [r.json_body["query"] for r in search.requests.snapshot()]
    assert len(queries) == 2
    assert FALSE_CLAIM in queries[1]
    assert QUESTION not in queries[1]
    assert len(result["notes"]) == 2
    assert result["notes"][1].startswith("## Evidence on claims checked again (round 1): " + FALSE_CLAIM)
    assert FALSE_CLAIM not in result["report"]


def test_without_regenerations_a_low_score_replans_at_once(
    make_workflow: Callable[..., Pipeline], search: LoopbackSearchServer
) -> None:
    workflow = make_workflow(
        summary_llm=_stubborn("on_new_evidence"), grounding=Grounding(threshold=0.9, max_regenerations=0)
    )
    result = _run(workflow)

    assert (result["regeneration_count"], result["replan_count"]) == (0, 1)
    assert result["grounding_score"] == 1.0
    assert len(search.requests) == 2


def test_when_both_are_used_up_the_run_ends_with_the_claim_marked(
    make_workflow: Callable[..., Pipeline], search: LoopbackSearchServer
) -> None:
    workflow = make_workflow(summary_llm=_stubborn("never"), grounding=Grounding(threshold=0.9, max_replans=2))
    result = _run(workflow)

    assert result["exit_reason"] == "grounding_exhausted"
    assert (result["regeneration_count"], result["replan_count"]) == (1, 2)
    # The summary is written in parts: each of the three notes' sections restates its two findings (supported), and
    # the opening states the false claim (unsupported).
    assert result["grounding_score"] == pytest.approx(6 / 7)
    assert len(search.requests) == 3  # the first round and two replans
    assert f"{FALSE_CLAIM} [source](" in result["report"]
    assert MARK in result["report"]
    marked = [v for v in result["grounding"] if v["marked"]]
    assert [v["claim"] for v in marked] == [f"{FALSE_CLAIM} source."]
    assert any("1 claim(s) stay unsupported" in w for w in result["warnings"])
    # The research is kept: the structured output is still written, from the marked summary.
    assert isinstance(result["structured"], ResearchSummary)


def test_with_causal_inference_off_execute_goes_straight_to_summarize(make_workflow: Callable[..., Pipeline]) -> None:
    workflow = make_workflow(causal_inference=False, causal_llm=ScriptedChatGenerator(role="causal", fail=True))
    result = _run(workflow)

    assert "causal" not in workflow.pipeline.graph.nodes
    assert result["causal_chain"] == ""
    assert "Causal chain" not in result["report"]
    assert "causal" not in result["usage_by_phase"]
    assert result["warnings"] == []
    assert result["grounding_score"] == 1.0


def test_a_summary_citing_a_url_never_read_loses_that_citation(
    make_workflow: Callable[..., Pipeline], web: LoopbackWebServer
) -> None:
    invented = "https://invented.example/report"
    result = _run(make_workflow(summary_llm=ScriptedChatGenerator(role="summarize", invented_urls=[invented])))

    assert invented not in result["report"]
    assert result["citations"]["unverified_urls"] == [invented]
    assert any("removed 1 citation(s) of URLs the run never retrieved" in w for w in result["warnings"])


def test_the_pipeline_round_trips_through_yaml_and_runs_the_same(make_workflow: Callable[..., Pipeline]) -> None:
    workflow = make_workflow(summary_llm=_stubborn("on_rewrite"), grounding=Grounding(threshold=0.9))
    outer = Pipeline()
    outer.add_component("research", workflow)
    loaded = Pipeline.loads(outer.dumps()).get_component("research")

    original, again = workflow.pipeline.to_dict(), loaded.pipeline.to_dict()
    assert again["components"] == original["components"]
    key = lambda c: (c["sender"], c["receiver"])  # noqa: E731
    assert sorted(again["connections"], key=key) == sorted(original["connections"], key=key)
    first, second = _run(workflow), _run(loaded)
    assert (second["regeneration_count"], second["replan_count"]) == (first["regeneration_count"], 0)
    assert second["report"] == first["report"]


async def test_one_pipeline_serves_concurrent_runs_without_mixing_them(
    make_workflow: Callable[..., Pipeline], web: LoopbackWebServer
) -> None:
    workflow = make_workflow()
    solar, storage = await asyncio.gather(
        workflow.run_async(messages=[ChatMessage.from_user("solar capacity installations worldwide")]),
        workflow.run_async(messages=[ChatMessage.from_user("grid battery storage doubled")]),
    )

    assert solar["notes"][0].startswith("## solar capacity installations worldwide")
    assert storage["notes"][0].startswith("## grid battery storage doubled")
    assert len(solar["notes"]) == len(storage["notes"]) == 1
    assert solar["exit_reason"] == storage["exit_reason"] == "grounded"


def test_events_open_and_close_the_run_and_name_every_step(make_workflow: Callable[..., Pipeline]) -> None:
    events: list[Event] = []
    result = _run(make_workflow(), inputs=RunInputs(on_event=events.append))

    assert events[0].kind == "run_started"
    assert events[-1].kind == "run_ended"
    assert events[-1].describe().startswith("run ended (grounded)")
    assert len({event.run_id for event in events}) == 1
    phases = {event.phase for event in events}
    assert {"execute", "research", "causal", "summary", "ground", "structure"} <= phases
    assert result["exit_reason"] == "grounded"


def test_a_spent_budget_ends_the_loop_without_repairing(
    make_workflow: Callable[..., Pipeline], search: LoopbackSearchServer
) -> None:
    unbounded = _run(make_workflow(summary_llm=_stubborn("never"), grounding=Grounding(threshold=0.9, max_replans=0)))
    enough_to_gather = int(unbounded["usage_by_phase"]["execute"]["total_tokens"]) + 1
    workflow = make_workflow(
        summary_llm=_stubborn("never"), budgets=Budgets(tokens=enough_to_gather), grounding=Grounding(threshold=0.9)
    )
    result = _run(workflow)

    assert result["exit_reason"] == "token_budget"
    assert (result["regeneration_count"], result["replan_count"]) == (0, 0)
    assert any("token budget" in w and "not repaired" in w for w in result["warnings"])
    assert MARK in result["report"]
    assert len(search.requests) == 2  # one Execute round per run


def test_failing_models_keep_the_research(make_workflow: Callable[..., Pipeline], web: LoopbackWebServer) -> None:
    workflow = make_workflow(
        causal_llm=ScriptedChatGenerator(role="causal", fail=True),
        summary_llm=ScriptedChatGenerator(role="summarize", fail=True),
        output_schema=None,
    )
    result = _run(workflow)

    # The summary was assembled from the notes, its citations verified; the chain is missing, with a warning each.
    assert web.url("/solar.html") in result["report"]
    assert result["causal_chain"] == ""
    assert any(w.startswith("causal: causal inference failed (ScriptedModelError") for w in result["warnings"])
    assert any(w.startswith("summary: the summary failed (ScriptedModelError") for w in result["warnings"])
    assert result["structured"] is None
    # The run says its writer failed, and a summary assembled from the notes is not graded.
    assert (result["exit_reason"], result["grounding_score"]) == ("writer_failed", None)


def test_a_failing_execute_agent_is_a_warning(make_workflow: Callable[..., Pipeline]) -> None:
    result = _run(make_workflow(chat_generator=ScriptedChatGenerator(role="researcher", fail=True)))

    assert result["notes"] == []
    assert any(w.startswith("execute: gathering evidence failed") for w in result["warnings"])


class Impossible(BaseModel):
    """A schema no summary fits."""

    count: int = Field(ge=100, le=10)


def test_structured_output_that_never_validates_keeps_the_summary(make_workflow: Callable[..., Pipeline]) -> None:
    result = _run(make_workflow(output_schema=Impossible))

    assert result["exit_reason"] == "structured_output_failed"
    assert result["structured"] is None
    assert result["grounding_score"] == 1.0
    assert "## Executive summary" in result["report"]
    assert "Global solar capacity grew by 450 gigawatts in 2025" in result["report"]
    assert any("did not validate after one retry" in w for w in result["warnings"])


def test_a_judge_reply_nested_too_deeply_is_malformed_and_the_summary_survives(
    make_workflow: Callable[..., Pipeline], web: LoopbackWebServer
) -> None:
    result = _run(
        make_workflow(grounding=Grounding(judge_llm=MockChatGenerator(response_fn=lambda messages: "[" * 1200)))
    )

    assert "Global solar capacity grew by 450 gigawatts in 2025" in result["report"]
    assert result["grounding"]
    assert {v["verdict"] for v in result["grounding"]} == {"unknown"}
    assert result["grounding_unjudged"] == [v["sentence"] for v in result["grounding"]]  # listed, never scored
    assert result["grounding_score"] is None
    assert result["exit_reason"] == "not_judged"  # a summary nobody judged is not called grounded
    assert any("was not the JSON asked for" in w for w in result["warnings"])


def test_an_empty_question_is_refused(make_workflow: Callable[..., Pipeline]) -> None:
    with pytest.raises(InvalidQuestionError):  # the typed error itself, not Haystack's PipelineRuntimeError around it
        _run(make_workflow(), question="  ")


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (lambda: {"grounding": Grounding(threshold=1.5)}, "Grounding(threshold=...) must be a number from 0.0 to 1.0"),
        (lambda: {"grounding": Grounding(max_replans=6)}, "Grounding(max_replans=...) must be an integer from 0 to 5"),
        (lambda: {"grounding": Grounding(max_regenerations=-1)}, "Grounding(max_regenerations=...) must be an integer"),
        (lambda: {"grounding": False}, "create_research_workflow always judges its summary"),
        (lambda: {"output_schema": dict}, "output_schema must be a pydantic BaseModel subclass"),
        (lambda: {"causal_inference": "yes"}, "causal_inference must be True or False"),
        (lambda: {"tools": "web_search"}, "tools must be a list of Haystack Tools or Toolsets"),
        (
            lambda: {"sources": Sources(datastores={"reports": object()})},
            "datastores['reports'] must be a mapping with a 'retriever'",
        ),
        (lambda: {"sources": Sources(search="ddgs")}, "create_research_workflow does not use Sources(search=...)"),
        (lambda: {"grounding": Grounding(judge_llm=object())}, "Grounding(judge_llm=...)"),
        (lambda: {"budgets": Budgets(tokens=0)}, "Budgets(tokens=...)"),
    ],
)
def test_bad_parameters_are_refused_at_once(overrides: Callable[[], dict[str, Any]], message: str) -> None:
    options: dict[str, Any] = {
        "chat_generator": ScriptedChatGenerator(role="researcher"),
        "tools": [],
        "output_schema": None,
    }
    with pytest.raises(ConfigurationError, match=re.escape(message)):
        create_research_workflow(**{**options, **overrides()})


def test_an_invented_sentence_that_cites_nothing_is_not_called_grounded(
    make_workflow: Callable[..., Pipeline], web: LoopbackWebServer
) -> None:
    summarizer = plain_writer(web.url("/solar.html"), f"{VATICAN}.")
    grounding = Grounding(judge_llm=truth_judge("Vatican"), max_regenerations=1, max_replans=0)

    result = _run(make_workflow(summary_llm=summarizer, output_schema=None, grounding=grounding))

    assert result["exit_reason"] == "grounding_exhausted"
    assert result["grounding_score"] is not None
    assert result["grounding_score"] < 1.0
    vatican_lines = [line for line in result["report"].split("\n") if VATICAN in line]
    assert vatican_lines
    assert all(f"{VATICAN} *(not supported by the sources read)*." in line for line in vatican_lines)
    judged = [g for g in result["grounding"] if VATICAN in g["sentence"]]
    assert judged
    assert all((g["verdict"], g["marked"]) == ("unsupported", True) for g in judged)
    assert result["grounding_unjudged"] == []


def test_a_summary_whose_only_uncited_sentences_are_signposts_is_grounded(
    make_workflow: Callable[..., Pipeline], web: LoopbackWebServer
) -> None:
    summarizer = plain_writer(
        web.url("/solar.html"), "This summary covers the solar market. Let us turn to the evidence."
    )

    grounding = Grounding(judge_llm=truth_judge("Vatican"))
    result = _run(make_workflow(summary_llm=summarizer, output_schema=None, grounding=grounding))

    assert result["exit_reason"] == "grounded"
    assert result["grounding_score"] == 1.0
    assert {g["sentence"].split(" [")[0] for g in result["grounding"]} == {TRUE_CLAIM}
    assert result["grounding_unjudged"] == []
    assert "*(" not in result["report"]
