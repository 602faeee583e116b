"""Contradictions: two cited sources giving different figures for one quantity, found, judged, rendered escaped."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from haystack import component
from haystack.components.generators.chat import MockChatGenerator
from haystack.dataclasses import ChatMessage
from haystack.utils import Secret
from lxml import html as lxml_html

from haystack_deep_research import Grounding, Sources, UrlPolicy, WebSearchTool, create_iterative_research_agent
from haystack_deep_research.report import export_evidence, export_html, find_contradictions
from haystack_deep_research.report.contradictions import MAX_JUDGE_CALLS, figures_in
from haystack_deep_research.testing import LoopbackSearchServer, LoopbackWebServer, SearchDocument

QUESTION = "Wie viele Kliniken in der Schweiz nutzen künstliche Intelligenz für die Diagnostik?"
FILLER = [
    "Die Digitalisierung der Spitäler schreitet seit Jahren voran, doch der Alltag in den Abteilungen ändert sich "
    "langsamer, als es die Strategiepapiere vermuten lassen. Ärztinnen und Pflegende berichten von neuen "
    "Werkzeugen, aber auch von Schulungen, die zu kurz kommen, und von Systemen, die nicht miteinander sprechen.",
    "Im Jahr 2019 begann der Verband mit einer jährlichen Erhebung, an der inzwischen 212 Häuser teilnehmen. "
    "Die Fragebögen werden im Frühling verschickt und im Herbst ausgewertet; die Ergebnisse gehen an die Kantone.",
    "Besonders gefragt sind Anwendungen in der Radiologie, der Dermatologie und der Pathologie, wo Bilder in großer "
    "Zahl anfallen. Kleinere Häuser in ländlichen Regionen greifen häufiger auf Angebote von Partnerkliniken zurück.",
    "Kritische Stimmen verweisen auf Fragen des Datenschutzes und der Haftung, die noch nicht abschließend geklärt "
    "sind. Der Bund hat eine Arbeitsgruppe eingesetzt, die bis Ende des Jahres Empfehlungen vorlegen soll.",
]


def _page(title: str, figure_sentence: str) -> str:
    paragraphs = [*FILLER[:2], figure_sentence, *FILLER[2:]]
    body = "".join(f"<p>{paragraph}</p>" for paragraph in paragraphs)
    return f"<html><head><title>{title}</title></head><body><article><h1>{title}</h1>{body}</article></body></html>"


ZURICH = "Laut der Umfrage des Verbands nutzen 94 % der Kliniken in Zürich bereits KI-gestützte Diagnostik."
BERN = "Laut der Umfrage des Verbands nutzen 81 % der Kliniken in Zürich bereits KI-gestützte Diagnostik, weniger."
AGREEING = (
    "Laut der Umfrage des Verbands nutzen rund 93 Prozent der Kliniken in Zürich bereits KI-gestützte Diagnostik."
)


@component
class Decisions:
    """An analysis model of our own: searches the topic once, then stops."""

    def __init__(self) -> None:
        self.calls = 0

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None) -> dict[str, list[ChatMessage]]:
        self.calls += 1
        decision = {"nextSearchTopic": "KI Diagnostik Kliniken Umfrage", "shouldContinue": True}
        done = {"nextSearchTopic": None, "shouldContinue": False}
        return {"replies": [ChatMessage.from_assistant(json.dumps(decision if self.calls == 1 else done))]}


@component
class Summaries:
    """A summarizer of our own: the page's sentences that hold a figure."""

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None) -> dict[str, list[ChatMessage]]:
        text = messages[-1].text or ""
        found = re.findall(r"[^.\n]*\d+ (?:%|Prozent)[^.\n]*\.", text)
        return {"replies": [ChatMessage.from_assistant(" ".join(dict.fromkeys(found)) or "Nichts gefunden.")]}


def writer(first: str, second: str, figures: tuple[str, str]) -> MockChatGenerator:
    """A writer of our own: every part says what each of the two pages says, citing it."""

    def write(messages: list[ChatMessage]) -> str:
        return (
            "## Verbreitung\n\n"
            f"Laut der Umfrage des Verbands nutzen {figures[0]} der Kliniken in Zürich KI-gestützte Diagnostik "
            f"[Bericht A]({first}).\n\n"
            f"Eine andere Auswertung derselben Umfrage nennt {figures[1]} der Kliniken in Zürich "
            f"[Bericht B]({second}).\n"
        )

    return MockChatGenerator(response_fn=write)


@pytest.fixture
def pages() -> Iterator[LoopbackWebServer]:
    with LoopbackWebServer() as server:
        yield server


@pytest.fixture
def build(pages: LoopbackWebServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Any]]:
    """An iterative agent over two loopback pages; the test says what they and the writer state."""
    monkeypatch.setenv("LOOPBACK_TAVILY_KEY", "test-key")
    servers: list[LoopbackSearchServer] = []

    def make(first: str, second: str, *, figures: tuple[str, str], **options: Any) -> Any:
        pages.add_page("/a.html", _page("KI in Schweizer Kliniken - Bericht A", first))
        pages.add_page("/b.html", _page("Umfrage Spitaldigitalisierung - Bericht B", second))
        documents = [
            SearchDocument(pages.url("/a.html"), "Bericht A", "KI Diagnostik Kliniken Umfrage Zürich"),
            SearchDocument(pages.url("/b.html"), "Bericht B", "KI Diagnostik Kliniken Umfrage Zürich"),
        ]
        search = LoopbackSearchServer(documents, require_api_key="test-key").__enter__()
        servers.append(search)
        tool = WebSearchTool(api_key=Secret.from_env_var("LOOPBACK_TAVILY_KEY"), api_base_url=search.base_url)
        sources = Sources(search=tool, url_policy=UrlPolicy(allow_hosts=("127.0.0.1",)))
        return create_iterative_research_agent(
            analysis_llm=Decisions(),
            summarizer_llm=Summaries(),
            writer_llm=writer(pages.url("/a.html"), pages.url("/b.html"), figures),
            sources=sources,
            read_top_k=2,
            depth=1,
            **options,
        )

    yield make
    for server in servers:
        server.__exit__(None, None, None)


def _run(agent: Any) -> dict[str, Any]:
    return agent.run(messages=[ChatMessage.from_user(QUESTION)])


def test_two_pages_disagreeing_on_a_figure_give_one_contradiction_with_both_urls(
    build: Callable[..., Any], pages: LoopbackWebServer
) -> None:
    result = _run(build(ZURICH, BERN, figures=("94 %", "81 %")))

    [found] = result["contradictions"]
    assert found["quantity"] == "percent"
    assert found["found_by"] == "figures"
    assert {side["url"] for side in found["claims"]} == {pages.url("/a.html"), pages.url("/b.html")}
    assert {side["figure"] for side in found["claims"]} == {"94 %", "81 %"}
    assert "94 %" in found["why"]
    assert "81 %" in found["why"]
    assert all("Zürich" in side["passage"] for side in found["claims"])
    section = result["report"].split("## Widersprüche zwischen den Quellen")[1]
    assert "94 % ≠ 81 %" in section or "81 % ≠ 94 %" in section
    assert pages.url("/a.html") in section
    assert pages.url("/b.html") in section
    assert result["report"].index("## Widersprüche") < result["report"].rindex("## Quellen")


def test_agreeing_pages_give_none_and_no_section(build: Callable[..., Any]) -> None:
    result = _run(build(ZURICH, AGREEING, figures=("94 %", "rund 93 Prozent")))

    assert result["contradictions"] == []
    assert "Widersprüche" not in result["report"]
    assert result["citations"]["passages"]  # both pages were cited, their figures compared


HOSTILE = (
    "Laut der Umfrage des Verbands nutzen **81 %** der [Kliniken](javascript:alert(1)) in Zürich bereits "
    "KI-gestützte Diagnostik &lt;img src=x onerror=alert(1)&gt; # Überschrift."
)


def test_a_hostile_passage_renders_escaped_in_the_report_and_the_exports(
    build: Callable[..., Any], tmp_path: Any
) -> None:
    result = _run(build(ZURICH, HOSTILE, figures=("94 %", "81 %")))

    [found] = result["contradictions"]
    section = result["report"].split("## Widersprüche zwischen den Quellen")[1]
    assert "](javascript:" not in section
    assert re.search(r"(?<!\\)<img", section) is None
    assert "\\[Kliniken\\]\\(javascript\u2060:alert\\(1\\)\\)" in section  # a word joiner: no linkify either
    assert r"\<img src=x onerror=alert\(1\)\>" in section
    assert "onerror" in next(side["passage"] for side in found["claims"] if side["figure"] == "81 %")
    tree = lxml_html.fromstring(export_html(result))
    assert tree.xpath("//img | //script") == []
    assert [link for link in tree.xpath("//a/@href") if link.startswith("javascript")] == []
    assert "[Kliniken](javascript\u2060:alert(1))" in tree.text_content()  # shown as the text it is
    export_evidence(result, tmp_path / "evidence.csv")
    table = (tmp_path / "evidence.csv").read_text(encoding="utf-8")
    assert "contradicts" in table.splitlines()[0]
    assert "94 % ≠ 81 %" in table or "81 % ≠ 94 %" in table


@component
class ContradictionJudge:
    """A judge of our own: every claim supported; on two figures it answers as it is told, and counts the asks."""

    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.asked = 0

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None) -> dict[str, list[ChatMessage]]:
        text = messages[-1].text or ""
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        if text.startswith("Quantity:"):
            self.asked += 1
            return {"replies": [ChatMessage.from_assistant(self.answer, meta={"usage": usage})]}
        claims = re.findall(r"^(\d+)\. ", text, re.MULTILINE)
        verdicts = [{"id": int(number), "verdict": "supported", "reason": "ok"} for number in claims]
        return {"replies": [ChatMessage.from_assistant(json.dumps({"verdicts": verdicts}), meta={"usage": usage})]}


def test_the_judge_confirms_a_pair_with_its_reason_and_its_usage_is_counted(build: Callable[..., Any]) -> None:
    judge = ContradictionJudge('Sure: {"contradict": true, "why": "Bericht A nennt 94 %, Bericht B <b>81 %</b>."}')

    result = _run(build(ZURICH, BERN, figures=("94 %", "81 %"), grounding=Grounding(judge_llm=judge)))

    [found] = result["contradictions"]
    assert (found["found_by"], found["why"]) == ("judge", "Bericht A nennt 94 %, Bericht B <b>81 %</b>.")
    assert r"\<b\>81 %\</b\>" in result["report"]  # the judge's reason is untrusted text too
    assert 1 <= judge.asked <= MAX_JUDGE_CALLS
    assert result["usage_by_phase"]["ground"]["total_tokens"] >= 15 * (judge.asked + 1)


def test_the_judge_can_reject_a_pair_and_an_unreadable_answer_keeps_the_figures_verdict(
    build: Callable[..., Any],
) -> None:
    rejected = _run(
        build(
            ZURICH,
            BERN,
            figures=("94 %", "81 %"),
            grounding=Grounding(judge_llm=ContradictionJudge('{"contradict": false, "why": "different years"}')),
        )
    )
    unreadable = _run(
        build(
            ZURICH,
            BERN,
            figures=("94 %", "81 %"),
            grounding=Grounding(judge_llm=ContradictionJudge("I think they might disagree.")),
        )
    )

    assert rejected["contradictions"] == []
    assert "Widersprüche" not in rejected["report"]
    [kept] = unreadable["contradictions"]
    assert kept["found_by"] == "figures"
    assert any("was not the JSON asked for" in warning for warning in unreadable["warnings"])


def test_a_spent_budget_asks_the_judge_nothing_and_keeps_the_figures_verdict(build: Callable[..., Any]) -> None:
    from haystack_deep_research.report.contradictions import add_contradictions
    from haystack_deep_research.run import ResearchRun
    from haystack_deep_research.run._budget import RunBudget
    from haystack_deep_research.run._phases import drive

    first = _run(build(ZURICH, BERN, figures=("94 %", "81 %")))
    judge = ContradictionJudge('{"contradict": false, "why": "asked after the budget"}')
    spent = ResearchRun(question="Wie verbreitet ist KI?", budget=RunBudget(token_budget=10))
    spent.record_usage("research", {"prompt_tokens": 40, "completion_tokens": 10})

    report = drive(add_contradictions(spent, first["report"], first["citations"]["passages"], judge), max_concurrency=1)

    assert judge.asked == 0
    assert [found["found_by"] for found in spent.resource("contradictions", list)] == ["figures"]
    assert "94" in report


@pytest.mark.parametrize(
    ("text", "kind", "low", "high"),
    [
        ("Adoption reached 94 % in hospitals.", "percent", 94, 94),
        ("About 3.2 million people use it.", "count", 3.2e6 * 0.9, 3.2e6 * 1.1),
        ("Environ 4,1 millions de patients en France.", "count", 4.1e6 * 0.9, 4.1e6 * 1.1),
        ("Between 80 and 90 percent of the clinics.", "percent", 80, 90),
        ("Die Anlage liefert mehr als 40 GW.", "power", 40e9, float("inf")),
        ("The budget was $1,200 million last year.", "money USD", 1.2e9, 1.2e9),
        ("中国约有320万名用户。", "count", 3.2e6, 3.2e6),
    ],
)
def test_figures_are_read_with_their_units_ranges_and_approximate_words(
    text: str, kind: str, low: float, high: float
) -> None:
    [figure] = figures_in(text)

    assert figure.kind == kind
    assert figure.low == pytest.approx(low)
    assert figure.high == pytest.approx(high)


def test_years_and_numbers_without_a_unit_are_no_quantities() -> None:
    assert figures_in("In 2019, 212 hospitals answered; COVID-19 changed 3 things in 2020.") == []


def test_figures_for_different_years_or_subjects_do_not_contradict() -> None:
    def passage(url: str, text: str) -> dict[str, str]:
        return {"url": url, "title": url, "sentence": "s", "passage": text}

    years = [
        passage("https://a.example/", "Hospital AI adoption reached 81 % in 2020 across Swiss hospitals."),
        passage("https://b.example/", "Hospital AI adoption reached 94 % in 2024 across Swiss hospitals."),
    ]
    subjects = [
        passage("https://a.example/", "Hospital AI adoption reached 81 % across Swiss hospitals."),
        passage("https://b.example/", "Unemployment among young bakers fell to 4 % last spring."),
        passage("https://c.example/", "The copper market grew by 3 percent."),
        passage("https://d.example/", "The tin market grew by 4 percent."),
    ]
    same = [
        passage("https://a.example/", "Hospital AI adoption reached 81 % across Swiss hospitals."),
        passage("https://b.example/", "Across Swiss hospitals, AI adoption has reached 94 %."),
    ]

    assert find_contradictions(years) == []
    assert find_contradictions(subjects) == []
    assert len(find_contradictions(same)) == 1


def test_the_deep_research_agent_finds_them_in_its_report_and_returns_them(
    make_agent: Callable[..., Any], web: LoopbackWebServer
) -> None:
    solar, other = web.url("/solar.html"), web.url("/storage.pdf")
    for path, figure in (("/solar.html", "450 gigawatts"), ("/storage.pdf", "610 gigawatts")):
        web.add_page(path, _page("Solar capacity", f"Global solar capacity grew by {figure} in 2025, a record year."))
    said = (
        f"## Solar\n\nGlobal solar capacity grew by 450 gigawatts in 2025 [Solar]({solar}).\n\n"
        f"Another count says global solar capacity grew by 610 gigawatts in 2025 [Count]({other}).\n"
    )
    agent = make_agent(writer_llm=MockChatGenerator(response_fn=lambda messages: said))

    result = agent.run(messages=[ChatMessage.from_user("How fast did solar capacity grow in 2025?")])

    [found] = result["contradictions"]
    assert [side["url"] for side in found["claims"]] == [solar, other]
    assert [side["figure"] for side in found["claims"]] == ["450 gigawatts", "610 gigawatts"]
    assert "## Contradictions between sources" in result["report"]
    assert "450 gigawatts ≠ 610 gigawatts" in result["report"]


def test_passages_of_any_shape_give_no_error_and_no_contradiction() -> None:
    hostile: list[Any] = [None, "text", {"url": 3, "passage": "94 %"}, {"url": "https://a.example/", "passage": None}]
    hostile.append({"url": "https://a.example/", "passage": "9" * 5000 + " % " + "1,2" * 2000})

    assert find_contradictions(hostile) == []
