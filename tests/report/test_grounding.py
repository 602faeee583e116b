"""Grounding: cited claims are judged against the stored source text; the report is rewritten, then researched again."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import Any

import pytest
from haystack.components.agents import Agent
from haystack.components.generators.chat import MockChatGenerator
from haystack.dataclasses import ChatMessage
from tests.support import TRUE_CLAIM, VATICAN, plain_writer, truth_judge

from haystack_deep_research import Budgets, ConfigurationError, Grounding, create_deep_research_agent
from haystack_deep_research._prompts import prompt_of
from haystack_deep_research.agents import ResearchAgent
from haystack_deep_research.report.grounding import GroundingStage
from haystack_deep_research.report.sections import parse_report
from haystack_deep_research.report.writer import NoEvidenceStage, WriteHook
from haystack_deep_research.testing import LoopbackSearchServer, LoopbackWebServer, ScriptedChatGenerator

QUESTION = "How fast are solar power and grid storage growing?"
INVENTED = "https://invented.example/report"
FALSE_CLAIM = "Global solar capacity fell by 90 percent in 2025"
STORAGE_CLAIM = "Grid battery storage doubled in 2025 to 300 gigawatt hours"
MARK = "*(unsupported by the cited source)*"


class Writer:
    """
    Plays the writer's parts by template name: an opening without claims (signposts only, citing an invented URL in
    the first one),
    a solar section that states the false claim until ``fixed_by`` says the prompt lets it correct itself, and a
    storage section.
    """

    def __init__(self, web: LoopbackWebServer, search: LoopbackSearchServer, fixed_by: Callable[[str], bool]) -> None:
        self.solar, self.storage = web.url("/solar.html"), web.url("/storage.pdf")
        self.search, self.fixed_by = search, fixed_by
        self.prompts: list[tuple[str, str]] = []
        self.searches_seen: list[int] = []

    def __call__(self, messages: list[ChatMessage]) -> str:
        name, variables = prompt_of(messages[-1]) or ("", {})
        prompt = messages[-1].text or ""
        self.prompts.append((name, prompt))
        self.searches_seen.append(len(self.search.requests))
        if name.endswith("_opening"):
            extra = f" More context is in the [Blog]({INVENTED}) below." if len(self.prompts) == 1 else ""
            return f"# Solar and storage\n\n## Executive summary\n\nThis report covers solar and storage.{extra}\n"
        if "## solar capacity" in str(variables["notes"][0]):
            claim = TRUE_CLAIM if self.fixed_by(prompt) else FALSE_CLAIM
            return f"## Solar\n\n{claim} [Solar capacity 2025]({self.solar}).\n"
        return f"## Storage\n\n{STORAGE_CLAIM} [Battery storage report]({self.storage}).\n"

    def names(self) -> list[str]:
        return [name for name, _ in self.prompts]


class RecordingJudge:
    """The scripted judge, remembering each prompt it judged."""

    def __init__(self) -> None:
        self.prompts: list[str] = []
        self._judge = ScriptedChatGenerator(role="judge")
        self.generator = MockChatGenerator(response_fn=self)

    def __call__(self, messages: list[ChatMessage]) -> ChatMessage:
        self.prompts.append(messages[-1].text or "")
        return self._judge.run(messages)["replies"][0]


def _line_of(report: str, text: str) -> int:
    return next(number for number, line in enumerate(report.split("\n"), 1) if text in line)


RESEARCHED = "The notes now also hold new findings"
DRAFT = ["writer_opening", "writer_section", "writer_section"]


def _run(agent: Agent) -> dict[str, Any]:
    return agent.run(messages=[ChatMessage.from_user(QUESTION)])


def _agent(make_agent: Callable[..., Agent], writer: Writer, budgets: Budgets | None = None, **grounding: Any) -> Agent:
    grounding.setdefault("judge_llm", ScriptedChatGenerator(role="judge"))
    return make_agent(
        writer_llm=MockChatGenerator(response_fn=writer), grounding=Grounding(**grounding), budgets=budgets
    )


def test_without_grounding_the_outputs_are_present_and_empty(make_agent: Callable[..., Agent]) -> None:
    result = _run(make_agent())

    assert result["grounding_score"] is None
    assert (result["grounding"], result["regeneration_count"], result["replan_count"]) == ([], 0, 0)
    assert result["structured"] is None


def test_an_unsupported_claim_is_fixed_by_rewriting_from_the_same_notes_without_tools(
    make_agent: Callable[..., Agent], web: LoopbackWebServer, search: LoopbackSearchServer
) -> None:
    writer = Writer(web, search, fixed_by=lambda prompt: "not supported by the sources they cite" in prompt)
    judge = RecordingJudge()
    result = _run(_agent(make_agent, writer, judge_llm=judge.generator))

    # The first draft cited an invented URL, removed by verification before judging, and a claim its source does not
    # state; the judge saw each cited source once per draft, never the claim whose citation was removed.
    assert any("removed 1 citation(s) of URLs the run never retrieved" in w for w in result["warnings"])
    assert INVENTED not in result["report"]
    assert len(judge.prompts) == 4
    assert not any("More context" in p for p in judge.prompts)
    assert FALSE_CLAIM in judge.prompts[0]
    assert TRUE_CLAIM in judge.prompts[2]
    # The draft was written in parts; the rewrite wrote again only the section holding the unsupported claim.
    assert writer.names() == [*DRAFT, "rewrite_section"]
    feedback = writer.prompts[-1][1].split("A fact-checker", 1)[1]  # the rewrite lists only the unsupported claim
    assert FALSE_CLAIM in feedback
    assert STORAGE_CLAIM not in feedback
    assert f"{FALSE_CLAIM} [Solar capacity 2025]" in writer.prompts[-1][1]  # it saw its previous version
    # Regeneration ran no tool: the search server saw no request after the research phase.
    assert writer.searches_seen == [2, 2, 2, 2]
    assert len(search.requests) == 2
    assert result["tool_call_counts"]["research_subtopic"] == 2
    assert (result["regeneration_count"], result["replan_count"]) == (1, 0)
    assert result["grounding_score"] == 1.0
    assert TRUE_CLAIM in result["report"]
    assert FALSE_CLAIM not in result["report"]
    assert [v["verdict"] for v in result["grounding"]] == ["supported", "supported"]
    assert result["citations"]["verified_urls"] == [web.url("/solar.html"), web.url("/storage.pdf")]
    assert "ground" in result["usage_by_phase"]
    report = result["report"]
    assert report.startswith("# Solar and storage\n\n## Executive summary\n")
    assert [line for line in report.split("\n") if line.startswith("## ")] == [
        "## Executive summary",
        "## Solar",
        "## Storage",
        "## Sources",
    ]


def test_when_rewriting_is_not_enough_the_unsupported_claim_is_researched_again(
    make_agent: Callable[..., Agent], web: LoopbackWebServer, search: LoopbackSearchServer
) -> None:
    writer = Writer(web, search, fixed_by=lambda prompt: RESEARCHED in prompt)
    result = _run(_agent(make_agent, writer))

    assert (result["regeneration_count"], result["replan_count"]) == (1, 1)
    assert result["grounding_score"] == 1.0
    # A researcher really ran again: one more search, about the claim, and its note was appended.
    queries = [r.json_body["query"] for r in search.requests.snapshot()]
    assert len(queries) == 3
    assert FALSE_CLAIM in queries[2]
    assert len(result["notes"]) == 3
    assert FALSE_CLAIM in result["notes"][2]
    assert writer.names() == [*DRAFT, "rewrite_section", "rewrite_section"]
    assert writer.searches_seen[-1] == 3
    last = writer.prompts[-1][1]
    assert RESEARCHED in last
    assert result["notes"][2].split("\n", 1)[1].strip()[:40] in last  # the new note reached the solar section
    assert TRUE_CLAIM in result["report"]
    assert MARK not in result["report"]


def test_a_claim_that_stays_unsupported_is_marked_after_the_last_attempt(
    make_agent: Callable[..., Agent], web: LoopbackWebServer, search: LoopbackSearchServer
) -> None:
    writer = Writer(web, search, fixed_by=lambda prompt: False)
    result = _run(_agent(make_agent, writer))

    assert (result["regeneration_count"], result["replan_count"]) == (1, 2)
    # the draft's three parts, then the solar section once per rewrite: one rewrite, one after each replan
    assert writer.names() == [*DRAFT, "rewrite_section", "rewrite_section", "rewrite_section"]
    assert len(search.requests) == 4  # two researchers, then one per replan
    assert result["grounding_score"] == 0.5
    report = result["report"]
    assert f"{FALSE_CLAIM} [Solar capacity 2025]({web.url('/solar.html')}) {MARK}." in report
    assert report.count(MARK) == 1
    false, storage = result["grounding"]
    assert false["claim"] == f"{FALSE_CLAIM} Solar capacity 2025."  # as the judge saw it: link text, no URL
    assert (false["verdict"], false["marked"]) == ("unsupported", True)
    assert false["line"] == _line_of(report, FALSE_CLAIM)
    assert false["sources"] == [
        {"url": web.url("/solar.html"), "verdict": "unsupported", "reason": "the source does not state it"}
    ]
    assert (storage["verdict"], storage["marked"]) == ("supported", False)
    assert any("stay unsupported" in w for w in result["warnings"])


def test_a_score_at_the_threshold_needs_no_repair_but_unsupported_claims_are_still_marked(
    make_agent: Callable[..., Agent], web: LoopbackWebServer, search: LoopbackSearchServer
) -> None:
    writer = Writer(web, search, fixed_by=lambda prompt: False)
    result = _run(_agent(make_agent, writer, threshold=0.5))

    assert (result["regeneration_count"], result["replan_count"]) == (0, 0)
    assert writer.names() == DRAFT
    assert result["grounding_score"] == 0.5
    assert result["report"].count(MARK) == 1


def test_a_spent_token_budget_stops_repairs_but_not_marking(
    make_agent: Callable[..., Agent], web: LoopbackWebServer, search: LoopbackSearchServer
) -> None:
    writer = Writer(web, search, fixed_by=lambda prompt: False)
    # Enough for the research (about 1,650 scripted tokens), not for the draft and the judge on top.
    result = _run(_agent(make_agent, writer, budgets=Budgets(tokens=1_800)))

    assert len(result["notes"]) == 2
    assert (result["regeneration_count"], result["replan_count"]) == (0, 0)
    assert writer.names() == DRAFT
    assert result["grounding_score"] == 0.5
    assert result["report"].count(MARK) == 1
    assert any("token budget of 1,800 tokens is spent; the report is not repaired" in w for w in result["warnings"])


def test_a_failing_rewrite_keeps_the_previous_report(
    make_agent: Callable[..., Agent], web: LoopbackWebServer, search: LoopbackSearchServer
) -> None:
    draft = Writer(web, search, fixed_by=lambda prompt: False)

    def writer(messages: list[ChatMessage]) -> str:
        if "A fact-checker" in (messages[-1].text or ""):
            raise ConnectionError("writer unavailable")
        return draft(messages)

    judge = RecordingJudge()
    agent = make_agent(
        writer_llm=MockChatGenerator(response_fn=writer), grounding=Grounding(judge_llm=judge.generator, max_replans=0)
    )
    result = _run(agent)

    assert result["regeneration_count"] == 1
    assert len(judge.prompts) == 2  # the unchanged report was not judged again
    assert FALSE_CLAIM in result["report"]
    assert result["report"].count(MARK) == 1
    assert any("the rewrite failed (ConnectionError: writer unavailable)" in w for w in result["warnings"])


def test_malformed_judge_json_makes_claims_unknown_with_a_warning(
    make_agent: Callable[..., Agent], web: LoopbackWebServer, search: LoopbackSearchServer
) -> None:
    writer = Writer(web, search, fixed_by=lambda prompt: False)

    def judge(messages: list[ChatMessage]) -> str:
        if "storage" in (messages[-1].text or "").split("</untrusted_source>")[0]:
            return '```json\n{"verdicts": [{"id": 1, "verdict": "supported", "reason": "stated"}]}\n```'
        return "Both claims look fine to me!"

    result = _run(_agent(make_agent, writer, judge_llm=MockChatGenerator(response_fn=judge)))

    assert [v["verdict"] for v in result["grounding"]] == ["unknown", "supported"]
    assert result["grounding_score"] == 1.0  # only decided claims count
    assert result["regeneration_count"] == 0
    assert any("was not the JSON asked for" in w for w in result["warnings"])
    assert MARK not in result["report"]


def test_the_writer_is_the_judge_by_default(
    make_agent: Callable[..., Agent], web: LoopbackWebServer, search: LoopbackSearchServer
) -> None:
    writer = Writer(web, search, fixed_by=lambda prompt: False)
    judge = ScriptedChatGenerator(role="judge")

    def writer_and_judge(messages: list[ChatMessage]) -> Any:
        if "fact-checker" in (messages[0].text or ""):
            return judge.run(messages)["replies"][0]
        return writer(messages)

    agent = make_agent(writer_llm=MockChatGenerator(response_fn=writer_and_judge), grounding=Grounding(max_replans=0))
    result = _run(agent)

    assert [v["verdict"] for v in result["grounding"]] == ["unsupported", "supported"]
    assert result["regeneration_count"] == 1


async def test_grounding_also_runs_with_run_async(
    make_agent: Callable[..., Agent], web: LoopbackWebServer, search: LoopbackSearchServer
) -> None:
    writer = Writer(web, search, fixed_by=lambda prompt: RESEARCHED in prompt)
    result = await _agent(make_agent, writer).run_async(messages=[ChatMessage.from_user(QUESTION)])

    assert (result["regeneration_count"], result["replan_count"]) == (1, 1)
    assert len(search.requests) == 3
    assert result["grounding_score"] == 1.0


def test_a_grounded_agent_round_trips_and_the_restored_agent_grounds(
    make_agent: Callable[..., Agent], web: LoopbackWebServer
) -> None:
    agent = make_agent(grounding=Grounding(judge_llm=ScriptedChatGenerator(role="judge"), threshold=0.8))
    data = agent.to_dict()

    restored = ResearchAgent.from_dict(copy.deepcopy(data))

    assert restored.to_dict() == data
    write = next(h for h in restored.hooks["after_run"] if isinstance(h, WriteHook))
    stage, last = write.stages
    assert isinstance(stage, GroundingStage)
    assert isinstance(last, NoEvidenceStage)
    assert stage.threshold == 0.8
    result = _run(restored)
    # The scripted writer's "Finding 1.1 is supported by source 1" states nothing the sources say.
    assert result["grounding_score"] == 0.0
    assert result["regeneration_count"] == 1
    assert result["replan_count"] == 2
    assert len(result["grounding"]) >= 2
    assert len(re.findall(re.escape(MARK), result["report"])) == len(result["grounding"])


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (lambda: {"grounding": Grounding(threshold=1.5)}, "Grounding(threshold=...) must be a number from 0.0 to 1.0"),
        (
            lambda: {"grounding": Grounding(max_regenerations=6)},
            "Grounding(max_regenerations=...) must be an integer from 0 to 5",
        ),
        (lambda: {"grounding": Grounding(max_replans=-1)}, "Grounding(max_replans=...) must be an integer from 0 to 5"),
        (lambda: {"grounding": "yes"}, "grounding must be a Grounding (for example Grounding(threshold=0.7)), True or"),
        (lambda: {"grounding": Grounding(judge_llm="gpt-5.4")}, "Grounding(judge_llm=...) must be a Haystack chat"),
    ],
)
def test_bad_grounding_options_raise_a_configuration_error(options: Callable[[], dict[str, Any]], message: str) -> None:
    with pytest.raises(ConfigurationError, match=re.escape(message)):
        create_deep_research_agent(**options())


def test_a_judge_reply_nested_too_deeply_is_malformed_and_the_report_survives(
    make_agent: Callable[..., Agent], web: LoopbackWebServer
) -> None:
    agent = make_agent(grounding=Grounding(judge_llm=MockChatGenerator(response_fn=lambda messages: "[" * 1200)))

    result = _run(agent)

    assert web.url("/solar.html") in result["report"]
    assert result["grounding"]
    assert {v["verdict"] for v in result["grounding"]} == {"unknown"}
    assert result["exit_reason"] == "text"
    assert any("was not the JSON asked for" in w for w in result["warnings"])


UNCITED_MARK = "*(not supported by the sources read)*"


def test_an_invented_sentence_that_cites_nothing_is_judged_marked_and_lowers_the_score(
    make_agent: Callable[..., Agent], web: LoopbackWebServer
) -> None:
    writer = plain_writer(web.url("/solar.html"), f"{VATICAN}.")
    agent = make_agent(writer_llm=writer, grounding=Grounding(judge_llm=truth_judge("Vatican"), max_replans=0))

    result = _run(agent)

    assert result["grounding_score"] is not None
    assert result["grounding_score"] < 1.0
    report = result["report"]
    vatican_lines = [line for line in report.split("\n") if VATICAN in line]
    assert vatican_lines
    assert all(f"{VATICAN} {UNCITED_MARK}." in line for line in vatican_lines)
    judged = [g for g in result["grounding"] if VATICAN in g["sentence"]]
    assert judged
    assert all((g["verdict"], g["marked"]) == ("unsupported", True) for g in judged)
    assert all(g["sources"][0]["url"] == "evidence:read-passages" for g in judged)
    assert result["regeneration_count"] == 1  # the score was too low, so the report was written again
    assert result["grounding_unjudged"] == []
    assert any("stay unsupported" in w for w in result["warnings"])


def test_a_report_whose_only_uncited_sentences_are_signposts_stays_grounded(
    make_agent: Callable[..., Agent], web: LoopbackWebServer
) -> None:
    writer = plain_writer(
        web.url("/solar.html"), "This section covers the solar market. The evidence is summarised below."
    )
    agent = make_agent(writer_llm=writer, grounding=Grounding(judge_llm=truth_judge("Vatican")))

    result = _run(agent)

    assert result["grounding_score"] == 1.0
    assert (result["regeneration_count"], result["replan_count"]) == (0, 0)
    assert {g["sentence"].split(" [")[0] for g in result["grounding"]} == {TRUE_CLAIM}
    assert "*(" not in result["report"]
    assert result["grounding_unjudged"] == []


def test_a_rewrite_keeps_the_headings_of_a_report_in_another_language(
    make_agent: Callable[..., Agent], web: LoopbackWebServer
) -> None:
    writer = plain_writer(web.url("/solar.html"), f"{VATICAN}.")
    agent = make_agent(writer_llm=writer, grounding=Grounding(judge_llm=truth_judge("Vatican"), max_replans=0))

    result = agent.run(messages=[ChatMessage.from_user("Wie schnell wächst die Solarenergie in Deutschland?")])

    assert result["regeneration_count"] == 1
    report = result["report"]
    headings = [line for line in report.split("\n") if line.startswith("## ")]
    assert headings[0] == "## Zusammenfassung"
    assert headings[-1] == "## Quellen"
    assert headings.count("## Quellen") == 1
    assert "Executive summary" not in report
    assert "## Sources" not in report
    parts = parse_report(report)  # what a rewrite reads: the opening and the sections, not the Sources list
    assert parts is not None
    assert [part.heading for part in parts.sections] == ["Solar", "Solar (2)"]


def test_a_claim_citing_a_snippet_is_judged_against_the_snippet_alone_and_goes_when_it_says_more(
    make_agent: Callable[..., Agent], web: LoopbackWebServer
) -> None:
    web.add_page("/solar.html", "<html><body>gone</body></html>", status=404)
    web.add_page("/storage.pdf", "<html><body>gone</body></html>", status=404)
    solar, storage = web.url("/solar.html"), web.url("/storage.pdf")
    backed = "Grid battery storage doubled in 2025"  # what the storage result's snippet says, no more

    def writer(messages: list[ChatMessage]) -> str:
        name, variables = prompt_of(messages[-1]) or ("", {})
        if name.endswith("_opening"):
            return "# Solar and storage\n\n## Executive summary\n\nThis report covers solar and storage.\n"
        if "## solar capacity" in str(variables["notes"][0]):
            return f"## Solar\n\nGlobal solar capacity grew in 2025 [Solar capacity 2025]({solar}).\n"
        fixed = "not supported by the sources they cite" in (messages[-1].text or "")
        return f"## Storage\n\n{backed if fixed else STORAGE_CLAIM} [Battery storage report]({storage}).\n"

    judge = RecordingJudge()
    result = _run(
        make_agent(writer_llm=MockChatGenerator(response_fn=writer), grounding=Grounding(judge_llm=judge.generator))
    )

    # The page behind the snippet holds "300 gigawatt hours"; the snippet does not, so the claim saying it went.
    assert STORAGE_CLAIM not in result["report"]
    assert f"{backed} [Battery storage report]({storage})" in result["report"]
    assert [v["verdict"] for v in result["grounding"]] == ["supported", "supported"]
    assert result["regeneration_count"] == 1
    first = next(prompt for prompt in judge.prompts if STORAGE_CLAIM in prompt)
    assert "Grid battery storage doubled in 2025." in first
    assert "300" not in first.replace(STORAGE_CLAIM, "")  # the judge saw the snippet, nothing of the page
    assert f"[Battery storage report]({storage}) (search result snippet, not read)" in result["report"]
    assert result["exit_reason"] != "no_evidence"
