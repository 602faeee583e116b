"""The research workflow's steps on their own: the router's table, the Execute seam, serialization."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from haystack.components.agents import Agent
from haystack.core.serialization import component_from_dict, component_to_dict

from haystack_deep_research import ReadUrlTool, ResearchRun, ResearchSummary, UrlPolicy, WebSearchTool
from haystack_deep_research.errors import UsageError
from haystack_deep_research.report.assessment import Claim, ClaimVerdict, Judgement
from haystack_deep_research.run._lifecycle import running
from haystack_deep_research.testing import LoopbackWebServer, ScriptedChatGenerator
from haystack_deep_research.tools import RunToolset
from haystack_deep_research.workflow import ExecuteStep, execute_agent
from haystack_deep_research.workflow.finish import GroundingRouter, ReplanStep, WorkflowFinishStep
from haystack_deep_research.workflow.summary import CausalStep, GroundingEval, RegenerateStep, SummarizeStep
from haystack_deep_research.workflow.workflow_run import WorkflowRun

LOOPBACK = UrlPolicy(allow_hosts=("127.0.0.1",))


def _judged(supported: int, unsupported: int, **fields: Any) -> WorkflowRun:
    def verdict(number: int, said: str) -> ClaimVerdict:
        claim = Claim(text=f"claim {number}", sentence=f"claim {number}", line=number, urls=("https://a.example/",))
        return ClaimVerdict(claim=claim, verdict=said, sources=())  # type: ignore[arg-type]

    verdicts = [verdict(n, "supported") for n in range(supported)]
    verdicts += [verdict(supported + n, "unsupported") for n in range(unsupported)]
    return WorkflowRun(judgement=Judgement(verdicts=verdicts), **fields)


@pytest.mark.parametrize(
    ("judged", "route", "counts", "exit_reason"),
    [
        (_judged(2, 1), "done", (0, 0), "grounded"),  # 0.67 meets 0.65
        (_judged(1, 1), "regenerate", (1, 0), ""),
        (_judged(1, 1, regenerations=1), "replan", (1, 1), ""),
        (_judged(1, 1, regenerations=1, replans=1), "replan", (1, 2), ""),
        (_judged(1, 1, regenerations=1, replans=2), "done", (1, 2), "grounding_exhausted"),
        (_judged(0, 0), "done", (0, 0), "no_evidence"),  # nothing judged, nothing read: never "grounded"
    ],
)
def test_the_router_spends_regenerations_first_then_replans_then_ends(
    judged: WorkflowRun, route: str, counts: tuple[int, int], exit_reason: str
) -> None:
    with running(ResearchRun(question="q")):
        routed = GroundingRouter(threshold=0.65, max_regenerations=1, max_replans=2).run(workflow=judged)

    assert list(routed) == [route]
    out = routed[route]
    assert (out.regenerations, out.replans) == counts
    assert out.exit_reason == exit_reason


def test_replan_focuses_the_next_round_on_the_unsupported_claims() -> None:
    judged = _judged(1, 2, replans=1)
    with running(ResearchRun(question="q")):
        task = ReplanStep().run(workflow=judged)["workflow"].task

    assert task is not None
    text = task.text or ""
    assert "- claim 1\n- claim 2\n" in text
    assert "claim 0" not in text


def test_what_travels_between_steps_is_plain_data_and_the_run_is_found_around_them() -> None:
    judged = _judged(1, 0)
    assert copy.deepcopy(judged) == judged  # Haystack's copy of an edge's value loses nothing
    run = ResearchRun(question="q")
    with running(run):
        assert copy.deepcopy(judged).run is run
    with pytest.raises(UsageError, match="runs inside a run of its shape"):
        _ = judged.run


def test_execute_runs_any_agent_inside_the_run(
    make_search_tool: Callable[..., WebSearchTool], web: LoopbackWebServer
) -> None:
    # The seam: a plain Agent, not built by execute_agent, still reads into the run's ledger through bound tools.
    read_url = ReadUrlTool(summarizer_llm=ScriptedChatGenerator(role="summarizer"), url_policy=LOOPBACK)
    agent = Agent(
        chat_generator=ScriptedChatGenerator(role="researcher"),
        tools=[RunToolset(tools=[make_search_tool(max_results=2), read_url])],
    )
    run = ResearchRun(question="solar capacity in 2025")
    with running(run):
        ExecuteStep(agent=agent).run(question=run.question)

    assert web.url("/solar.html") in run.ledger.read_urls()
    [note] = run.notes()
    assert note.startswith("## solar capacity in 2025\n\nFindings on solar capacity in 2025:")


def test_execute_refuses_what_is_not_an_agent() -> None:
    with pytest.raises(ValueError, match="agent must be a Haystack Agent"):
        ExecuteStep(agent=ScriptedChatGenerator(role="researcher"))  # type: ignore[arg-type]


def _steps() -> list[Any]:
    model = ScriptedChatGenerator(role="summarize")
    agent = execute_agent(chat_generator=ScriptedChatGenerator(role="researcher"), tools=[], max_steps=5)
    return [
        ExecuteStep(agent=agent),
        CausalStep(chat_generator=ScriptedChatGenerator(role="causal")),
        SummarizeStep(chat_generator=model),
        RegenerateStep(chat_generator=model),
        GroundingEval(judge_llm=ScriptedChatGenerator(role="judge"), max_concurrency=3),
        GroundingRouter(threshold=0.8, max_regenerations=2, max_replans=0),
        ReplanStep(),
        WorkflowFinishStep(chat_generator=model, output_schema=ResearchSummary),
        WorkflowFinishStep(chat_generator=model),
    ]


@pytest.mark.parametrize("step", _steps(), ids=lambda step: type(step).__name__)
def test_every_step_serializes_and_loads_back(step: Any) -> None:
    data = component_to_dict(step, "step")
    loaded = component_from_dict(type(step), copy.deepcopy(data), "step")

    assert type(loaded) is type(step)
    assert component_to_dict(loaded, "step") == data
