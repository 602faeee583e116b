"""report_type, tone and report_length: honoured by the writer of every shape, citations verified the same way."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from haystack import Pipeline, component
from haystack.components.agents import Agent
from haystack.components.generators.chat import MockChatGenerator
from haystack.dataclasses import ChatMessage
from tests.support import loopback_sources

from haystack_deep_research import (
    ConfigurationError,
    Grounding,
    ReportStyle,
    Sources,
    UrlPolicy,
    WebSearchTool,
    create_iterative_research_agent,
)
from haystack_deep_research.testing import ScriptedChatGenerator

INVENTED = "https://invented.example/made-up"
QUESTION = "How fast is solar growing?"
TYPES = {
    "research_report": "the usual form",
    "detailed_report": "a detailed report",
    "outline": "an outline",
    "resource_list": "an annotated resource list",
    "executive_brief": "an executive brief",
}


@component
class Recording:
    """A scripted writer that cites an invented URL and keeps every prompt it was sent."""

    def __init__(self, role: str = "writer") -> None:
        self.inner = ScriptedChatGenerator(role=role, invented_urls=[INVENTED])
        self.received: list[list[ChatMessage]] = []

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, list[ChatMessage]]:
        self.received.append(list(messages))
        return self.inner.run(messages=messages)

    def systems(self) -> list[str]:
        return [prompt[0].text or "" for prompt in self.received]


@pytest.mark.parametrize("report_type", list(TYPES))
def test_every_report_type_of_the_main_agent_is_asked_for_and_its_citations_verified(
    make_agent: Callable[..., Agent], report_type: str
) -> None:
    writer = Recording()

    result = make_agent(
        writer_llm=writer, style=ReportStyle(report_type=report_type, tone="analytical", report_length=800)
    ).run(messages=[ChatMessage.from_user(QUESTION)])

    systems = writer.systems()
    assert len(systems) == 3  # the opening and one section per note
    assert all(TYPES[report_type] in text for text in systems)
    assert all("analytical tone" in text and "about 800 words" in text for text in systems)
    assert INVENTED not in result["report"]
    assert INVENTED in result["citations"]["unverified_urls"]


def test_the_default_style_leaves_the_writer_prompts_as_they_were(make_agent: Callable[..., Agent]) -> None:
    writer = Recording()

    make_agent(writer_llm=writer).run(messages=[ChatMessage.from_user(QUESTION)])

    systems = writer.systems()
    assert len(systems) == 3  # the writer did write: the opening and one section per note
    assert not any("Form of the report" in text for text in systems)


def test_a_target_length_sets_the_words_of_each_part(make_agent: Callable[..., Agent]) -> None:
    writer = Recording()

    make_agent(writer_llm=writer, style=ReportStyle(report_length="long")).run(
        messages=[ChatMessage.from_user(QUESTION)]
    )

    opening, *sections = writer.systems()
    assert "at most 500 words" in opening
    assert all("at most 1250 words" in text for text in sections)


def test_a_hostile_tone_is_one_cleaned_line_and_stays_a_template_value(make_agent: Callable[..., Agent]) -> None:
    writer = Recording()
    tone = "calm {{ 7 * 7 }}\n\x1b[31m"

    make_agent(writer_llm=writer, style=ReportStyle(tone=tone)).run(messages=[ChatMessage.from_user(QUESTION)])

    assert all("calm {{ 7 * 7 }} [31m tone" in text for text in writer.systems())


def test_the_iterative_agent_writes_the_style_asked_for(make_search_tool: Callable[..., WebSearchTool]) -> None:
    writer = Recording()
    agent = create_iterative_research_agent(
        analysis_llm=ScriptedChatGenerator(role="analysis", steps=[["solar capacity"], None]),
        writer_llm=writer,
        summarizer_llm=ScriptedChatGenerator(role="summarizer"),
        sources=Sources(search=make_search_tool(max_results=2), url_policy=UrlPolicy(allow_hosts=("127.0.0.1",))),
        style=ReportStyle(report_type="executive_brief", tone="formal", report_length="short"),
        read_top_k=1,
    )

    result = agent.run(messages=[ChatMessage.from_user(QUESTION)])

    systems = writer.systems()
    assert len(systems) == 2  # the opening and the one finding's section, written in parts as every shape's report
    for system in systems:
        assert "an executive brief" in system
        assert "formal tone" in system
        assert "about 500 words" in system
    assert INVENTED not in result["report"]


def test_the_research_workflow_summary_writes_the_style_asked_for(make_workflow: Callable[..., Pipeline]) -> None:
    writer = Recording(role="summarize")

    result = make_workflow(
        summary_llm=writer, grounding=Grounding(threshold=0.0), style=ReportStyle(report_type="resource_list")
    ).run(messages=[ChatMessage.from_user(QUESTION)])

    assert any("an annotated resource list" in text for text in writer.systems())
    assert INVENTED not in result["report"]
    assert result["citations"]["unverified_urls"] == [INVENTED]


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"report_type": "poem"}, "research_report, detailed_report, outline, resource_list, executive_brief"),
        ({"tone": ""}, "objective, formal, analytical, informal"),
        ({"tone": "x" * 81}, "up to 80 characters"),
        ({"report_length": "huge"}, "short, medium, long"),
        ({"report_length": 10}, "from 100 to 20000"),
        ({"report_length": True}, "from 100 to 20000"),
    ],
)
def test_invalid_style_values_name_the_accepted_ones(options: dict[str, Any], named: str) -> None:
    with pytest.raises(ConfigurationError, match=named):
        ReportStyle(**options)


def test_a_style_round_trips() -> None:
    style = ReportStyle(report_type="outline", tone="informal", report_length=300)

    assert ReportStyle.from_dict(style.to_dict()) == style


def _section_of(words: int) -> Callable[[list[ChatMessage]], str]:
    """A writer of our own that answers every part with a section of ``words`` words (the last ones in Greek)."""
    return lambda messages: "## Ηλιακή ενέργεια\n\n" + " ".join(["ήλιος"] * words) + "\n"


@pytest.mark.parametrize(("words", "missed"), [(10, "short of"), (900, "well past")])
def test_a_report_far_from_its_target_length_gets_a_warning(
    make_agent: Callable[..., Agent], words: int, missed: str
) -> None:
    writer = MockChatGenerator(response_fn=_section_of(words))
    result = make_agent(writer_llm=writer, style=ReportStyle(report_length="short")).run(
        messages=[ChatMessage.from_user(QUESTION)]
    )

    [warning] = [w for w in result["warnings"] if "its target of about 500" in w]
    assert f"words, {missed} its target of about 500 (report_length='short')" in warning


def test_a_report_near_its_target_length_or_without_one_gets_no_length_warning(
    make_agent: Callable[..., Agent],
) -> None:
    near = make_agent(writer_llm=MockChatGenerator(response_fn=_section_of(150)), style=ReportStyle(report_length=500))
    free = make_agent(writer_llm=MockChatGenerator(response_fn=_section_of(900)))

    for agent in (near, free):
        result = agent.run(messages=[ChatMessage.from_user(QUESTION)])
        assert not any("its target of about" in w for w in result["warnings"])


HEADINGS = {
    "Comment la capacité solaire évolue-t-elle en Europe ?": ("Synthèse", "Sources"),
    "Wie schnell wächst die Solarenergie in Deutschland?": ("Zusammenfassung", "Quellen"),
    "¿Qué tan rápido crece la energía solar en España?": ("Resumen ejecutivo", "Fuentes"),
    "太阳能发电增长有多快?": ("执行摘要", "参考来源"),
    "太陽光発電はどのくらいの速さで成長していますか?": ("エグゼクティブサマリー", "出典"),
    QUESTION: ("Executive summary", "Sources"),
}


@pytest.mark.parametrize("question", list(HEADINGS))
def test_the_librarys_own_headings_follow_the_questions_language(
    make_agent: Callable[..., Agent], web: Any, question: str
) -> None:
    cited = f"Global solar capacity grew by 450 gigawatts in 2025 [Solar capacity 2025]({web.url('/solar.html')})."
    writer = MockChatGenerator(response_fn=lambda messages: f"# Solar\n\n## Solar\n\n{cited}\n")
    summary, sources = HEADINGS[question]

    report = make_agent(writer_llm=writer).run(messages=[ChatMessage.from_user(question)])["report"]

    headings = [line for line in report.split("\n") if line.startswith("## ")]
    assert headings[0] == f"## {summary}"
    assert headings[-1] == f"## {sources}"
    assert report.rstrip().endswith(f"- [Solar capacity 2025]({web.url('/solar.html')})")  # the list is under it
    assert "## Sources" not in report or sources == "Sources"


def test_a_german_iterative_report_has_german_headings_and_no_translation_request(
    make_search_tool: Callable[..., WebSearchTool],
) -> None:
    writer = Recording()
    agent = create_iterative_research_agent(
        analysis_llm=ScriptedChatGenerator(role="analysis", steps=["Solarenergie", None]),
        writer_llm=writer,
        summarizer_llm=ScriptedChatGenerator(role="summarizer"),
        read_top_k=1,
        sources=loopback_sources(make_search_tool(max_results=2), None),
    )

    report = agent.run(messages=[ChatMessage.from_user("Wie schnell wächst die Solarenergie in Deutschland?")])[
        "report"
    ]

    for heading in ("Zusammenfassung", "Wichtigste Ergebnisse", "Quellen"):
        assert f"## {heading}" in report
    assert "Executive summary" not in report


def _solar(web: Any) -> str:
    return web.url("/solar.html")


def test_an_outline_has_headings_and_bullets_and_no_prose(make_agent: Callable[..., Agent], web: Any) -> None:
    prose = f"Solar grew fast in 2025 [Solar capacity 2025]({_solar(web)}). Prices fell too.\nThey kept falling."
    writer = MockChatGenerator(response_fn=lambda messages: f"# Solar\n\n## Solar\n\n{prose}\n\n- Already a bullet.\n")

    report = make_agent(writer_llm=writer, style=ReportStyle(report_type="outline")).run(
        messages=[ChatMessage.from_user(QUESTION)]
    )["report"]

    body = [line for line in report.split("\n") if line.strip() and not line.startswith("#")]
    assert body
    assert all(line.startswith("- ") for line in body), body
    assert f"- Solar grew fast in 2025 [Solar capacity 2025]({_solar(web)})." in report
    assert "- Prices fell too." in report
    assert "- They kept falling." in report


def test_a_resource_list_quotes_the_passage_behind_each_resource(make_agent: Callable[..., Agent], web: Any) -> None:
    item = f"- [Solar capacity 2025]({_solar(web)}): installations worldwide and who built them."
    writer = MockChatGenerator(response_fn=lambda messages: f"# Solar\n\n## Resources\n\n{item}\n")

    result = make_agent(writer_llm=writer, style=ReportStyle(report_type="resource_list")).run(
        messages=[ChatMessage.from_user(QUESTION)]
    )

    lines = result["report"].split("\n")
    at = lines.index(item)
    assert lines[at + 1].startswith("  > ")
    assert "450 gigawatts" in lines[at + 1]  # the library's passage from the page read, not the writer's words
    assert "](" not in lines[at + 1]  # plain text: a page cannot put a link into the report this way


def test_an_executive_brief_is_brief(make_agent: Callable[..., Agent]) -> None:
    writer = MockChatGenerator(response_fn=_section_of(900))

    result = make_agent(writer_llm=writer, style=ReportStyle(report_type="executive_brief")).run(
        messages=[ChatMessage.from_user(QUESTION)]
    )

    assert any("well past its target of about 500" in w for w in result["warnings"])
