"""The iterative research agent through its public API: scripted models, real tools against loopback servers."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from haystack import Pipeline, component
from haystack.components.generators.chat import MockChatGenerator
from haystack.dataclasses import ChatMessage
from tests.support import loopback_sources

from haystack_deep_research import (
    Budgets,
    ConfigurationError,
    Grounding,
    InvalidQuestionError,
    ResearchCache,
    RunDirError,
    RunInputs,
    Sources,
    UrlPolicy,
    WebSearchTool,
    create_iterative_research_agent,
)
from haystack_deep_research.agents import IterativeResearchAgent
from haystack_deep_research.events import Event, PageRead, SearchDone, SearchRoundDone, TopicRefused
from haystack_deep_research.testing import LoopbackSearchServer, LoopbackWebServer, ScriptedChatGenerator

LOOPBACK = UrlPolicy(allow_hosts=("127.0.0.1",))


class Interrupted(ScriptedChatGenerator):
    """A model whose call is interrupted (Ctrl-C), which no step catches."""

    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        raise KeyboardInterrupt

    async def run_async(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, Any]:
        raise KeyboardInterrupt


QUESTION = "How fast are solar capacity and battery storage growing?"


@pytest.fixture
def make_iterative(make_search_tool: Callable[..., WebSearchTool]) -> Callable[..., IterativeResearchAgent]:
    """An iterative agent whose models are scripted and whose search and reading run against the loopback servers."""

    def build(steps: list[Any] | None = None, **overrides: Any) -> IterativeResearchAgent:
        options: dict[str, Any] = {
            "analysis_llm": ScriptedChatGenerator(role="analysis", steps=steps or []),
            "writer_llm": ScriptedChatGenerator(role="writer"),
            "summarizer_llm": ScriptedChatGenerator(role="summarizer"),
            "read_top_k": 1,
        }
        options.update(overrides)
        options["sources"] = loopback_sources(make_search_tool(max_results=2), overrides.get("sources"))
        return create_iterative_research_agent(**options)

    return build


def research(agent: IterativeResearchAgent, question: str = QUESTION, **inputs: Any) -> dict[str, Any]:
    return agent.run(messages=[ChatMessage.from_user(question)], **inputs)


def test_each_round_searches_the_decided_topic_and_the_report_cites_the_pages_read(
    make_iterative: Callable[..., IterativeResearchAgent], web: LoopbackWebServer
) -> None:
    events: list[Event] = []
    agent = make_iterative(["solar capacity", "battery storage", None], depth=3)

    result = research(agent, inputs=RunInputs(on_event=events.append))

    assert result["topics"] == ["solar capacity", "battery storage"]
    assert (result["rounds"], result["exit_reason"]) == (2, "analysis_stopped")
    assert [e.describe() for e in events if isinstance(e, SearchRoundDone)] == [
        "search round 1 of 3 done (1 topic)",
        "search round 2 of 3 done (1 topic)",
    ]
    assert len(result["notes"]) == 2
    assert result["notes"][0].startswith("## solar capacity")
    assert web.url("/solar.html") in result["report"]
    assert web.url("/storage.pdf") in result["report"]
    assert result["citations"]["unverified"] == []
    texts = {source["url"]: source["text"] for source in result["sources"]}
    passages = result["citations"]["passages"]
    assert {passage["url"] for passage in passages} == {web.url("/solar.html"), web.url("/storage.pdf")}
    assert all(passage["passage"] and passage["passage"] in texts[passage["url"]] for passage in passages)
    assert result["warnings"] == []
    for heading in ("## Executive summary", "## Main findings", "## Conclusions and recommendations"):
        assert heading in result["report"]
    assert {"analyze", "write"} <= set(result["usage_by_phase"])
    assert "summarize" not in result["usage_by_phase"]  # pages this short are read as they are, not summarized
    assert result["usage_by_phase"]["analyze"]["total_tokens"] > 0


def test_depth_ends_the_rounds_without_another_analysis_call(
    make_iterative: Callable[..., IterativeResearchAgent],
) -> None:
    analysis = ScriptedChatGenerator(role="analysis")  # without steps it searches one aspect per round, forever
    calls: list[int] = []
    original = analysis.run
    analysis.run = lambda messages, **kw: (calls.append(1), original(messages, **kw))[1]  # type: ignore[method-assign]

    result = research(make_iterative(analysis_llm=analysis, depth=2))

    assert (result["rounds"], result["exit_reason"], len(calls)) == (2, "depth_reached", 2)
    assert len(result["topics"]) == 2


def test_a_repeated_topic_is_refused_and_the_model_asked_for_another(
    make_iterative: Callable[..., IterativeResearchAgent],
) -> None:
    events: list[Event] = []
    steps = ["solar capacity", {"topic": "Solar Capacity!", "instead": "battery storage"}, None]

    result = research(make_iterative(steps), inputs=RunInputs(on_event=events.append))

    assert result["topics"] == ["solar capacity", "battery storage"]
    assert [e.topic for e in events if isinstance(e, TopicRefused)] == ["Solar Capacity!"]


@pytest.mark.parametrize(
    "paraphrase",
    ["capacity of solar: the latest", "Latest solar-capacity!", "the LATEST solar capacities"],
)
def test_paraphrases_that_only_repeat_a_topic_end_the_search(
    make_iterative: Callable[..., IterativeResearchAgent], paraphrase: str
) -> None:
    result = research(make_iterative(["latest solar capacity", paraphrase, "battery storage"]))

    assert result["topics"] == ["latest solar capacity"]
    assert result["exit_reason"] == "no_new_topics"
    assert any("only topics already searched" in warning for warning in result["warnings"])
    assert result["report"].startswith("# ")


def test_a_topic_with_other_numbers_is_not_a_repeat(make_iterative: Callable[..., IterativeResearchAgent]) -> None:
    result = research(make_iterative(["solar capacity 2024", "solar capacity 2025", None]))

    assert result["topics"] == ["solar capacity 2024", "solar capacity 2025"]


def test_a_fenced_chatty_reply_is_read(make_iterative: Callable[..., IterativeResearchAgent]) -> None:
    decision = '{"nextSearchTopic": "solar capacity", "shouldContinue": true}'
    chatty = f"Looking at the findings, I suggest:\n```json\n{decision}\n```\nGood luck!"

    result = research(make_iterative([{"reply": chatty}, None]))

    assert result["topics"] == ["solar capacity"]
    assert result["warnings"] == []


def test_a_malformed_reply_is_retried_once_with_its_errors(
    make_iterative: Callable[..., IterativeResearchAgent],
) -> None:
    steps = [{"reply": "{'nextSearchTopic': 'solar', shouldContinue: yes}", "retry": "solar capacity"}, None]

    result = research(make_iterative(steps))

    assert result["topics"] == ["solar capacity"]
    assert result["exit_reason"] == "analysis_stopped"


def test_a_reply_invalid_twice_stops_the_search_with_a_warning_and_keeps_the_findings(
    make_iterative: Callable[..., IterativeResearchAgent], web: LoopbackWebServer
) -> None:
    steps = ["solar capacity", {"reply": '{"nextSearchTopic": null, "shouldContinue": true}'}]

    result = research(make_iterative(steps))

    assert result["exit_reason"] == "decision_failed"
    assert any("no valid decision" in w and "nextSearchTopic must name" in w for w in result["warnings"])
    assert web.url("/solar.html") in result["report"]


def test_a_failing_analysis_model_stops_the_search_not_the_run(
    make_iterative: Callable[..., IterativeResearchAgent],
) -> None:
    result = research(make_iterative(analysis_llm=ScriptedChatGenerator(role="analysis", fail=True)))

    assert result["exit_reason"] == "no_evidence"
    assert any("ScriptedModelError" in warning for warning in result["warnings"])
    assert "No evidence" in result["report"]


def test_a_round_searches_several_topics_at_once_in_the_proposed_order(
    make_iterative: Callable[..., IterativeResearchAgent], search: LoopbackSearchServer
) -> None:
    events: list[Event] = []
    agent = make_iterative([["battery storage", "solar capacity"], None], max_parallel_searches=2)

    result = research(agent, inputs=RunInputs(on_event=events.append))

    assert result["topics"] == ["battery storage", "solar capacity"]
    assert result["rounds"] == 1
    assert [f.splitlines()[0] for f in result["notes"]] == ["## battery storage", "## solar capacity"]
    assert [e.topics for e in events if isinstance(e, SearchRoundDone)] == [("battery storage", "solar capacity")]
    assert len(search.requests.wait_for(2)) == 2


def test_more_topics_than_max_parallel_searches_are_cut_with_a_warning(
    make_iterative: Callable[..., IterativeResearchAgent],
) -> None:
    result = research(make_iterative([["solar capacity", "battery storage"], None], max_parallel_searches=1))

    assert result["topics"] == ["solar capacity"]
    assert any("max_parallel_searches" in warning for warning in result["warnings"])


def test_a_chinese_question_gets_a_chinese_report_structure(
    make_iterative: Callable[..., IterativeResearchAgent],
) -> None:
    result = research(make_iterative(["solar capacity", None]), question="太阳能装机容量和储能增长有多快?")

    for heading in (
        "## 执行摘要",
        "## 主要发现",
        "## 结论与建议",
        "## 尚存的不确定性",
        "## 未来研究方向",
        "## 参考来源",
    ):
        assert heading in result["report"]
    assert "Executive summary" not in result["report"]


def test_a_spent_token_budget_ends_the_rounds_and_still_writes_the_report(
    make_iterative: Callable[..., IterativeResearchAgent],
) -> None:
    result = research(make_iterative(["solar capacity", "battery storage", None], budgets=Budgets(tokens=1)))

    assert result["exit_reason"] == "token_budget"
    assert result["topics"] == ["solar capacity"]
    assert result["report"].startswith("# ")


def test_grounding_judges_the_cited_claims(make_iterative: Callable[..., IterativeResearchAgent]) -> None:
    agent = make_iterative(["solar capacity", None], grounding=Grounding(judge_llm=ScriptedChatGenerator(role="judge")))

    result = research(agent)

    assert result["grounding_score"] == 1.0
    assert result["grounding"]
    assert all(verdict["verdict"] == "supported" for verdict in result["grounding"])
    assert "ground" in result["usage_by_phase"]


def test_grounding_judges_a_sentence_that_cites_nothing_and_lists_what_it_could_not_decide(
    make_iterative: Callable[..., IterativeResearchAgent], web: LoopbackWebServer
) -> None:
    vatican = "The Vatican discovered tides in 1850"
    cited = f"Global solar capacity grew by 450 gigawatts in 2025 [Solar capacity 2025]({web.url('/solar.html')})."
    writer = MockChatGenerator(responses=f"## Solar\n\n{vatican}. {cited}\n")

    def judge(messages: list[ChatMessage]) -> str:  # a judge of our own: it knows the Vatican claim is false
        claims = dict(re.findall(r"^(\d+)\. (.*)$", messages[-1].text or "", re.MULTILINE))
        said = [{"id": int(n), "verdict": "unsupported" if "Vatican" in c else "supported"} for n, c in claims.items()]
        return json.dumps({"verdicts": said})

    grounding = Grounding(judge_llm=MockChatGenerator(response_fn=judge))
    result = research(make_iterative(["solar capacity", None], writer_llm=writer, grounding=grounding))

    assert result["grounding_score"] < 1.0
    assert f"{vatican} *(not supported by the sources read)*." in result["report"]
    assert result["grounding_unjudged"] == []
    refused = research(
        make_iterative(["solar capacity", None], writer_llm=writer, grounding=Grounding(judge_llm=writer))
    )
    assert f"{vatican}." in refused["grounding_unjudged"]  # a judge that never answers JSON decides nothing


def test_it_runs_async(make_iterative: Callable[..., IterativeResearchAgent]) -> None:
    agent = make_iterative(["solar capacity", None])

    result = asyncio.run(agent.run_async(messages=[ChatMessage.from_user(QUESTION)]))

    assert result["topics"] == ["solar capacity"]
    assert result["citations"]["verified_urls"]


def test_it_round_trips_through_yaml_and_runs_inside_a_pipeline(
    make_iterative: Callable[..., IterativeResearchAgent],
) -> None:
    agent = make_iterative(["solar capacity", None])
    pipeline = Pipeline()
    pipeline.add_component("research", agent)

    loaded = Pipeline.loads(pipeline.dumps())
    again = IterativeResearchAgent.from_dict(agent.to_dict())
    result = loaded.run({"research": {"messages": [ChatMessage.from_user(QUESTION)]}})["research"]

    assert isinstance(loaded.get_component("research"), IterativeResearchAgent)
    assert again.to_dict() == agent.to_dict()
    assert yaml.safe_load(pipeline.dumps())["components"]["research"]["type"].endswith("IterativeResearchAgent")
    assert result["topics"] == ["solar capacity"]


def test_bad_input_and_bad_options_are_typed_errors(make_iterative: Callable[..., IterativeResearchAgent]) -> None:
    agent = make_iterative()
    with pytest.raises(InvalidQuestionError):
        agent.run(messages="what?")
    with pytest.raises(ConfigurationError, match="depth"):
        make_iterative(depth=0)
    with pytest.raises(ConfigurationError, match="max_parallel_searches"):
        make_iterative(max_parallel_searches=11)
    with pytest.raises(ConfigurationError, match="record_to or replay_from"):
        make_iterative(record_to="a", replay_from="b")


def test_the_same_question_twice_with_a_cache_searches_and_fetches_nothing_the_second_time(
    make_iterative: Callable[..., IterativeResearchAgent],
    search: LoopbackSearchServer,
    web: LoopbackWebServer,
    tmp_path: Path,
) -> None:
    steps = [["solar capacity", "battery storage"], None]
    first = research(make_iterative(steps, cache=tmp_path / "cache"))
    searched, fetched = len(search.requests.wait_for(2)), len(web.requests.wait_for(2))
    events: list[Event] = []

    second = research(make_iterative(steps, cache=tmp_path / "cache"), inputs=RunInputs(on_event=events.append))

    with pytest.raises(TimeoutError):
        search.requests.wait_for(searched + 1, timeout=0.3)
    with pytest.raises(TimeoutError):
        web.requests.wait_for(fetched + 1, timeout=0.3)
    assert (searched, fetched) == (2, 2)
    assert second["report"] == first["report"]
    assert [e.cached for e in events if isinstance(e, SearchDone)] == [True, True]
    assert [e.cached for e in events if isinstance(e, PageRead)] == [True, True]
    assert "summarize" not in second["usage_by_phase"]  # the summaries came from the cache too


def test_an_expired_cache_entry_is_searched_again(
    make_iterative: Callable[..., IterativeResearchAgent], search: LoopbackSearchServer, tmp_path: Path
) -> None:
    research(make_iterative(["solar capacity", None], cache=ResearchCache(directory=tmp_path, ttl=1e-9)))
    research(make_iterative(["solar capacity", None], cache=ResearchCache(directory=tmp_path, ttl=1e-9)))

    assert len(search.requests.wait_for(2)) == 2


def test_a_recorded_run_replays_identically_with_no_network_and_no_model(
    make_search_tool: Callable[..., WebSearchTool], web: LoopbackWebServer, search: LoopbackSearchServer, tmp_path: Path
) -> None:
    def build(**recording: Any) -> IterativeResearchAgent:
        return create_iterative_research_agent(
            analysis_llm=ScriptedChatGenerator(role="analysis", steps=[["solar capacity", "battery storage"], None]),
            writer_llm=ScriptedChatGenerator(role="writer"),
            summarizer_llm=ScriptedChatGenerator(role="summarizer"),
            sources=Sources(search=make_search_tool(max_results=2), url_policy=LOOPBACK),
            grounding=Grounding(judge_llm=ScriptedChatGenerator(role="judge")),
            **recording,
        )

    recorded = research(build(record_to=tmp_path / "tape"))
    requests = len(search.requests.wait_for(2)) + len(web.requests.wait_for(2))
    replaying = build(replay_from=tmp_path / "tape")
    failing = ScriptedChatGenerator(role="writer", fail=True)  # replaying calls no model: even a failing one is fine
    replaying_failing = create_iterative_research_agent(
        analysis_llm=failing,
        writer_llm=failing,
        sources=Sources(search=make_search_tool(max_results=2), url_policy=LOOPBACK),
        replay_from=tmp_path / "tape",
    )
    search.stop()
    web.stop()

    replayed = research(replaying)

    assert replayed["report"] == recorded["report"]
    assert replayed["warnings"] == []
    assert replayed["grounding_score"] == recorded["grounding_score"]
    assert {s["url"] for s in replayed["sources"]} == {s["url"] for s in recorded["sources"]}
    assert research(replaying_failing)["report"] == recorded["report"]
    assert requests == len(search.requests) + len(web.requests)


def test_a_replay_that_asks_something_new_says_so_in_its_warnings(
    make_iterative: Callable[..., IterativeResearchAgent], tmp_path: Path
) -> None:
    research(make_iterative(["solar capacity", None], record_to=tmp_path))

    replayed = research(make_iterative(["battery storage", None], replay_from=tmp_path), question="Another question?")

    assert any("holds no model for this request" in warning for warning in replayed["warnings"])


def test_an_update_keeps_fresh_findings_and_looks_for_what_is_new(
    make_iterative: Callable[..., IterativeResearchAgent], search: LoopbackSearchServer, tmp_path: Path
) -> None:
    run_dir = tmp_path / "run"
    first = research(make_iterative(["solar capacity", None]), inputs=RunInputs(run_dir=run_dir))
    searched = len(search.requests.wait_for(1))

    updated = make_iterative(["battery storage", None]).update(run_dir)

    assert updated["topics"] == ["solar capacity", "battery storage"]
    assert len(search.requests.wait_for(searched + 1)) == searched + 1  # only the new topic was searched
    assert updated["changes"]["kept_topics"] == ["solar capacity"]
    assert updated["changes"]["rechecked_topics"] == []
    assert updated["changes"]["new_topics"] == ["battery storage"]
    assert "## What changed since the last run" in updated["report"]
    assert (run_dir / "report.md").read_text(encoding="utf-8") == updated["report"]
    assert (run_dir / "report.previous.md").read_text(encoding="utf-8") == first["report"]


def test_an_update_checks_stale_sources_again_and_says_which_pages_changed(
    make_iterative: Callable[..., IterativeResearchAgent], web: LoopbackWebServer, tmp_path: Path
) -> None:
    run_dir = tmp_path / "run"
    research(make_iterative(["solar capacity", "battery storage", None]), inputs=RunInputs(run_dir=run_dir))
    web.add_page(
        "/solar.html",
        "<html><head><title>Solar capacity 2026</title></head><body><article><h1>Solar capacity 2026</h1>"
        "<p>Global solar capacity grew by 600 gigawatts in 2026, again a record year for solar.</p>"
        "</article></body></html>",
    )

    stale = ResearchCache(directory=tmp_path / "cache", ttl=1e-9)  # every source is stale
    updated = make_iterative([None], cache=stale).update(run_dir)

    changes = updated["changes"]
    assert changes["rechecked_topics"] == ["solar capacity", "battery storage"]
    assert changes["changed_sources"] == [web.url("/solar.html")]
    assert changes["unchanged_sources"] == [web.url("/storage.pdf")]
    assert changes["new_topics"] == []
    assert changes["new_sources"] == []
    assert "600 gigawatts" in updated["notes"][0]
    assert f"<{web.url('/solar.html')}>" in updated["report"].split("## Executive summary")[0]


def _figure_writer(url: str) -> MockChatGenerator:
    """A writer of our own: every part states the solar figure its prompt holds, citing the page."""

    def write(messages: list[ChatMessage]) -> str:
        [figure, *_] = re.findall(r"(\d+) gigawatts", "\n".join(m.text or "" for m in messages)) or ["no"]
        return f"## Solar\n\nGlobal solar capacity grew by {figure} gigawatts in one year [Solar capacity]({url}).\n"

    return MockChatGenerator(response_fn=write)


def test_an_update_where_a_page_changes_its_figure_gives_a_changed_claim_with_both_figures_and_sources(
    make_iterative: Callable[..., IterativeResearchAgent], web: LoopbackWebServer, tmp_path: Path
) -> None:
    run_dir, solar = tmp_path / "run", web.url("/solar.html")
    first = research(
        make_iterative(["solar capacity", None], writer_llm=_figure_writer(solar)), inputs=RunInputs(run_dir=run_dir)
    )
    web.add_page(
        "/solar.html",
        "<html><head><title>Solar capacity 2026</title></head><body><article><h1>Solar capacity 2026</h1>"
        "<p>Global solar capacity grew by 600 gigawatts in 2026, again a record year for solar in Zürich and "
        "São Paulo.</p></article></body></html>",
    )

    stale = ResearchCache(directory=tmp_path / "cache", ttl=1e-9)
    updated = make_iterative([None], cache=stale, writer_llm=_figure_writer(solar)).update(run_dir)

    assert "450 gigawatts" in first["report"]
    [changed] = updated["changes"]["changed_claims"]
    assert (changed["previous_figure"], changed["figure"]) == ("450 gigawatts", "600 gigawatts")
    assert (changed["previous_sources"], changed["sources"]) == ([solar], [solar])
    assert "600 gigawatts" in changed["claim"]
    assert "450 gigawatts" in changed["previous_claim"]
    assert updated["changes"]["new_claims"] == []
    assert updated["changes"]["no_longer_supported"] == []
    section = updated["report"].split("## Executive summary")[0]
    assert "- Changed claim: 450 gigawatts → 600 gigawatts, Global solar capacity grew by 600 gigawatts" in section
    assert f"(<{solar}> → <{solar}>)" in section


def test_an_update_lists_claims_no_longer_made_and_new_ones(
    make_iterative: Callable[..., IterativeResearchAgent], web: LoopbackWebServer, tmp_path: Path
) -> None:
    run_dir, solar, storage = tmp_path / "run", web.url("/solar.html"), web.url("/storage.pdf")
    old = "Emerging module **suppliers** in [Bern](javascript:alert(1)) shipped panels to every canton"
    new = "Grid battery storage doubled to 300 gigawatt hours of capacity across the continent"
    before = MockChatGenerator(response_fn=lambda messages: f"## Solar\n\n{old} [Solar]({solar}).\n")
    after = MockChatGenerator(response_fn=lambda messages: f"## Storage\n\n{new} [Storage]({storage}).\n")
    research(make_iterative(["solar capacity", None], writer_llm=before), inputs=RunInputs(run_dir=run_dir))

    updated = make_iterative(["battery storage", None], writer_llm=after).update(run_dir)

    [dropped] = updated["changes"]["no_longer_supported"]
    assert dropped["sources"] == [solar]
    assert "Emerging module" in dropped["claim"]
    [added] = updated["changes"]["new_claims"]
    assert (added["claim"], added["sources"]) == (f"{new} Storage.", [storage])  # as a reader sees it
    section = updated["report"].split("## Executive summary")[0]
    assert "- No longer supported (cited before, not now): Emerging module" in section
    assert "](javascript:" not in section  # the old claim is shown as text, its markup escaped
    assert f"- New claim: {new} Storage. (<{storage}>)" in section


def test_updating_a_directory_without_a_finished_run_is_a_usage_error(
    make_iterative: Callable[..., IterativeResearchAgent], tmp_path: Path
) -> None:
    with pytest.raises(RunDirError):
        make_iterative().update(tmp_path / "nothing")


def test_a_run_that_failed_part_way_resumes_without_searching_its_findings_again(
    make_iterative: Callable[..., IterativeResearchAgent], search: LoopbackSearchServer, tmp_path: Path
) -> None:
    run_dir = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt):  # the process is interrupted while the report is written
        research(
            make_iterative(["solar capacity", None], writer_llm=Interrupted(role="writer")),
            inputs=RunInputs(run_dir=run_dir),
        )
    searched = len(search.requests.wait_for(1))

    # The restored topic counts as round 1, so the analysis is asked for round 2 first.
    resumed = research(
        make_iterative(["(round 1 is restored)", "battery storage", None]), inputs=RunInputs(run_dir=run_dir)
    )

    assert resumed["topics"] == ["solar capacity", "battery storage"]
    assert len(search.requests.wait_for(searched + 1)) == searched + 1
    assert resumed["rounds"] == 2


@component
class NestedAfterFirstDecision:
    """An analysis model whose first decision is valid and whose later replies are ``[`` nested 1,200 deep."""

    def __init__(self) -> None:
        self.calls = 0

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None) -> dict[str, list[ChatMessage]]:
        self.calls += 1
        first = '{"nextSearchTopic": "solar capacity", "shouldContinue": true}'
        return {"replies": [ChatMessage.from_assistant(first if self.calls == 1 else "[" * 1200)]}


def test_a_decision_nested_too_deeply_is_retried_then_stops_the_rounds_with_the_report_written(
    make_iterative: Callable[..., IterativeResearchAgent], web: LoopbackWebServer
) -> None:
    analysis = NestedAfterFirstDecision()

    result = research(make_iterative(analysis_llm=analysis, depth=3))

    assert analysis.calls == 3  # the first decision, then the nested reply and its one retry
    assert result["exit_reason"] == "decision_failed"
    assert result["topics"] == ["solar capacity"]
    assert web.url("/solar.html") in result["report"]
    assert any("gave no valid decision" in w for w in result["warnings"])


def test_a_judge_reply_nested_too_deeply_leaves_the_claims_unknown(
    make_iterative: Callable[..., IterativeResearchAgent], web: LoopbackWebServer
) -> None:
    judge = MockChatGenerator(response_fn=lambda messages: "[" * 1200)

    result = research(make_iterative(["solar capacity", None], grounding=Grounding(judge_llm=judge)))

    assert web.url("/solar.html") in result["report"]
    assert result["grounding"]
    assert {v["verdict"] for v in result["grounding"]} == {"unknown"}
    assert any("was not the JSON asked for" in w for w in result["warnings"])
