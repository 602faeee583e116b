"""The writer writes the report in parts: the opening and one section per note, side by side, each short."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import openai
import pytest
from haystack import component
from haystack.components.agents import Agent
from haystack.components.generators.chat import MockChatGenerator
from haystack.dataclasses import ChatMessage
from haystack.utils import Secret

from haystack_deep_research import Sources, WebSearchTool
from haystack_deep_research._prompts import prompt_of
from haystack_deep_research.evidence.reading import headings
from haystack_deep_research.report.writer import WriteHook
from haystack_deep_research.testing import (
    LoopbackSearchServer,
    LoopbackWebServer,
    ScriptedChatGenerator,
    SearchDocument,
)

QUESTION = "How fast are the twenty markets growing?"
WORDS = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliett",
    "kilo",
    "lima",
    "mike",
    "november",
    "oscar",
    "papa",
    "quebec",
    "romeo",
    "sierra",
    "tango",
]
CAP = 120


@component
class OutputCap:
    """Wraps a generator; a reply longer than ``CAP`` words is cut there, with finish_reason "length"."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.longest = 0

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, list[ChatMessage]]:
        reply = self.inner.run(messages=messages, tools=tools)["replies"][0]
        words = (reply.text or "").split()
        self.longest = max(self.longest, len(words))
        if len(words) > CAP:
            reply = ChatMessage.from_assistant(" ".join(words[:CAP]), meta={**reply.meta, "finish_reason": "length"})
        return {"replies": [reply]}


@pytest.fixture
def markets() -> Iterator[tuple[LoopbackWebServer, LoopbackSearchServer]]:
    """Twenty pages, one per market, each the only good search result for its market."""
    with LoopbackWebServer() as web:
        documents = []
        for number, word in enumerate(WORDS, 1):
            fact = f"The {word} market grew by {number} percent in 2025."
            web.add_page(f"/{word}.html", f"<html><head><title>{word} market</title></head><body><p>{fact}</p></body>")
            documents.append(SearchDocument(web.url(f"/{word}.html"), f"{word} market", f"{word} {word} {fact}"))
        with LoopbackSearchServer(documents, require_api_key="test-key") as search:
            yield web, search


def _agent(
    make_agent: Callable[..., Agent], search: LoopbackSearchServer, monkeypatch: pytest.MonkeyPatch, **models: Any
) -> Agent:
    monkeypatch.setenv("MARKETS_TAVILY_KEY", "test-key")
    tool = WebSearchTool(api_key=Secret.from_env_var("MARKETS_TAVILY_KEY"), api_base_url=search.base_url, max_results=1)
    return make_agent(sources=Sources(search=tool), max_subtopics=20, max_concurrent_researchers=10, **models)


def test_a_report_on_twenty_subtopics_is_written_when_every_call_may_give_only_a_short_reply(
    make_agent: Callable[..., Agent],
    markets: tuple[LoopbackWebServer, LoopbackSearchServer],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    web, search = markets
    subtopics = [f"{w} market growth" for w in WORDS]
    capped = {
        "scope_llm": OutputCap(ScriptedChatGenerator(role="scope")),
        "orchestrator_llm": OutputCap(ScriptedChatGenerator(role="orchestrator", subtopics=subtopics)),
        "researcher_llm": OutputCap(ScriptedChatGenerator(role="researcher", read_top_k=1)),
        "summarizer_llm": OutputCap(ScriptedChatGenerator(role="summarizer")),
        "writer_llm": OutputCap(ScriptedChatGenerator(role="writer")),
    }
    agent = _agent(make_agent, search, monkeypatch, **capped)
    result = agent.run(messages=[ChatMessage.from_user(QUESTION)])

    report = result["report"]
    assert result["exit_reason"] == "subtopics_done"  # all 20 delegated: the orchestrator is not asked again
    assert len(result["notes"]) == 20
    assert not any("output limit" in warning for warning in result["warnings"])
    assert max(generator.longest for generator in capped.values()) <= CAP  # no reply was ever cut
    # One section per sub-topic, in the order they were asked for, each citing its own page; one of each other part.
    headings = [line for line in report.split("\n") if line.startswith("## ")]
    assert headings == ["## Executive summary", *(f"## {w} market growth" for w in WORDS), "## Sources"]
    assert report.count("\n# ") + report.startswith("# ") == 1
    assert result["citations"]["verified_urls"] == [web.url(f"/{w}.html") for w in WORDS]
    assert result["citations"]["unverified_urls"] == []
    # The single report the writer would write in one call is longer than any one call may be.
    whole = ScriptedChatGenerator(role="writer").run(_whole_report_prompt(result))["replies"][0]
    assert len((whole.text or "").split()) > CAP


def _whole_report_prompt(result: dict[str, Any]) -> list[ChatMessage]:
    """One prompt for the whole report, without a template's meta: the scripted writer then writes a whole report."""
    urls = result["citations"]["verified_urls"]
    return [ChatMessage.from_user("\n\n".join([result["brief"], *result["notes"], *urls]))]


class Flaky:
    """The scripted writer, except that ``fails(name, variables)`` makes a call raise ``error``."""

    def __init__(self, fails: Callable[[str, dict[str, Any]], bool], error: Callable[[], Exception]) -> None:
        self.fails, self.error = fails, error
        self.calls: list[str] = []
        self._writer = ScriptedChatGenerator(role="writer")
        self.generator = MockChatGenerator(response_fn=self)

    def __call__(self, messages: list[ChatMessage]) -> ChatMessage:
        name, variables = prompt_of(messages[-1]) or ("", {})
        self.calls.append(name)
        if self.fails(name, variables):
            raise self.error()
        return self._writer.run(messages)["replies"][0]


def _timeout() -> Exception:
    return openai.APITimeoutError(request=httpx.Request("POST", "https://api.openai.test/v1/responses"))


def _is_storage_section(name: str, variables: dict[str, Any]) -> bool:
    return name == "writer_section" and "## battery storage" in str(variables["notes"][0])


def test_a_section_the_writer_fails_on_twice_holds_its_note_and_the_rest_is_written(
    make_agent: Callable[..., Agent],
) -> None:
    writer = Flaky(_is_storage_section, lambda: ConnectionError("writer unavailable"))
    result = make_agent(writer_llm=writer.generator).run(messages=[ChatMessage.from_user(QUESTION)])

    report = result["report"]
    assert writer.calls.count("writer_section") == 2 + 1  # the storage section was tried twice, never more
    assert result["exit_reason"] == "text"
    assert "## solar capacity\n\n- Finding 1.1 is supported by" in report  # written by the writer
    storage = report.split("## battery storage\n\n", 1)[1]
    assert storage.startswith("*The report writer could not write this section (ConnectionError: writer unavailable)")
    assert "300 gigawatt hours" in storage  # the researcher's note, as written
    assert any(
        "the writer failed twice on section 2 of 2 ('battery storage') (ConnectionError: writer unavailable)" in w
        for w in result["warnings"]
    )
    assert not any("timed out" in warning for warning in result["warnings"])


def _timeout_underneath() -> Exception:
    error = RuntimeError("the generation failed")
    error.__cause__ = httpx.ReadTimeout("read timed out")
    return error


@pytest.mark.parametrize(("error", "kind"), [(_timeout, "APITimeoutError"), (_timeout_underneath, "RuntimeError")])
def test_a_part_that_timed_out_is_tried_once_more_and_the_warning_says_how_to_give_up_sooner(
    make_agent: Callable[..., Agent], error: Callable[[], Exception], kind: str
) -> None:
    failures = iter([True])
    writer = Flaky(lambda name, _: name == "writer_opening" and next(failures, False), error)
    result = make_agent(writer_llm=writer.generator).run(messages=[ChatMessage.from_user(QUESTION)])

    assert writer.calls.count("writer_opening") == 2
    assert result["report"].startswith("# Research report\n\n## Executive summary\n\nResearch brief:")
    [warning] = [w for w in result["warnings"] if w.startswith("write:")]
    assert f"the writer's call for the opening (title and executive summary) failed ({kind}" in warning
    assert "it timed out after the chat generator's client had retried it" in warning
    assert "max_retries" in warning
    assert warning.endswith("it succeeded when tried once more")


def test_a_writer_that_always_times_out_is_asked_twice_per_part_then_the_report_is_assembled_from_the_notes(
    make_agent: Callable[..., Agent],
) -> None:
    writer = Flaky(lambda name, _: True, _timeout)
    result = make_agent(writer_llm=writer.generator).run(messages=[ChatMessage.from_user(QUESTION)])

    assert writer.calls == ["writer_opening", "writer_section", "writer_section"] * 2
    assert result["exit_reason"] == "writer_failed"
    assert "The report writer failed (APITimeoutError" in result["report"]
    assert len(result["notes"]) == 2


def test_the_parts_read_as_one_document_whatever_a_part_adds_around_itself(
    make_agent: Callable[..., Agent], web: LoopbackWebServer
) -> None:
    solar = web.url("/solar.html")

    def chatty(messages: list[ChatMessage]) -> str:
        # Every part comes back as a whole report: a title, a summary, a section and a Sources list.
        name, variables = prompt_of(messages[-1]) or ("", {})
        topic = str(variables["notes"][0]).split("\n", 1)[0].lstrip("# ") if name == "writer_section" else "all"
        return (
            f"# Report on {topic}\n\n## Executive summary\n\nSummary of {topic}.\n\n## {topic.title()}\n\n"
            f"Solar grew by 450 gigawatts [Solar]({solar}).\n\n## Details\n\nMore on {topic}.\n\n"
            f"## Sources\n\n- [Solar]({solar})\n"
        )

    result = make_agent(writer_llm=MockChatGenerator(response_fn=chatty)).run(
        messages=[ChatMessage.from_user(QUESTION)]
    )

    report = result["report"]
    assert [line for line in report.split("\n") if line.startswith(("# ", "## "))] == [
        "# Report on all",
        "## Executive summary",
        "## Solar Capacity",
        "## Battery Storage",
        "## Sources",
    ]
    assert report.count("Summary of") == 1  # only the opening's summary stays
    assert report.count("### Details") == 2  # a part's own sub-parts stay, one level down
    assert report.count(f"]({solar})") == 2 + 1  # one citation per section, once in Sources


def test_headings_are_read_as_commonmark_reads_them(make_agent: Callable[..., Agent], web: LoopbackWebServer) -> None:
    solar = web.url("/solar.html")

    def writer(messages: list[ChatMessage]) -> str:
        name, variables = prompt_of(messages[-1]) or ("", {})
        if name != "writer_section":
            return "# Energy\n\n## Executive summary\n\nEnergy grew."
        topic = str(variables["notes"][0]).split("\n", 1)[0].lstrip("# ")
        # An underlined heading is a heading; a '#' line in a code fence or a list item is not one.
        return (
            f"{topic.title()}\n---\n\nSolar grew [Solar]({solar}).\n\n```\n# not a heading\n```\n\n"
            "- # a list item\n\nDetails\n=======\n\nMore."
        )

    report = make_agent(writer_llm=MockChatGenerator(response_fn=writer)).run(
        messages=[ChatMessage.from_user(QUESTION)]
    )["report"]

    assert [(h.level, h.title) for h in headings(report)] == [
        (1, "Energy"),
        (2, "Executive summary"),
        (2, "Solar Capacity"),
        (3, "Details"),
        (2, "Battery Storage"),
        (3, "Details"),
        (2, "Sources"),
    ]
    assert report.count("```\n# not a heading\n```") == 2  # code stays code
    assert report.count("- # a list item") == 2


def test_the_write_hook_round_trips_with_its_concurrency(make_agent: Callable[..., Agent]) -> None:
    hook = WriteHook(chat_generator=ScriptedChatGenerator(role="writer"), max_concurrency=7)

    restored = WriteHook.from_dict(hook.to_dict())

    assert restored.to_dict() == hook.to_dict()
    assert restored.max_concurrency == 7
    agent = make_agent(max_concurrent_researchers=3)
    [write] = [h for h in agent.hooks["after_run"] if isinstance(h, WriteHook)]
    assert write.max_concurrency == 6  # the parts are written twice as many at once as researchers run
    [widest] = [h for h in make_agent(max_concurrent_researchers=40).hooks["after_run"] if isinstance(h, WriteHook)]
    assert widest.max_concurrency == 50


DETAIL = " ".join(f"Detail sentence {n} adds context that only the section needs." for n in range(40))


@component
class LongNotes:
    """The scripted researcher, whose final notes run long: key findings first, then detail and a Sources list."""

    def __init__(self) -> None:
        self.inner = ScriptedChatGenerator(role="researcher")

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, list[ChatMessage]]:
        reply = self.inner.run(messages=messages, tools=tools)["replies"][0]
        if reply.tool_calls or not reply.text:
            return {"replies": [reply]}
        body, _, sources = reply.text.partition("\nSources")
        text = f"{body.rstrip()}\n\n{DETAIL}\n\nSources{sources}"
        return {"replies": [ChatMessage.from_assistant(text, meta=reply.meta)]}


def test_each_note_is_read_whole_once_and_the_opening_reads_only_its_key_lines(
    make_agent: Callable[..., Agent],
) -> None:
    seen: dict[str, list[list[str]]] = {}
    writer = ScriptedChatGenerator(role="writer")

    def recording(messages: list[ChatMessage]) -> ChatMessage:
        name, variables = prompt_of(messages[-1]) or ("", {})
        seen.setdefault(name, []).append([str(note) for note in variables.get("notes", [])])
        return writer.run(messages)["replies"][0]

    result = make_agent(researcher_llm=LongNotes(), writer_llm=MockChatGenerator(response_fn=recording)).run(
        messages=[ChatMessage.from_user(QUESTION)]
    )

    notes = result["notes"]
    assert len(notes) == 2
    assert all(DETAIL in note for note in notes)
    [opening] = seen["writer_opening"]
    assert len(opening) == 2
    assert not any("Detail sentence 39" in note for note in opening)  # the rest is its section's
    assert all("[...]" in note for note in opening)
    assert sum(len(note) for note in opening) < sum(len(note) for note in notes) / 3
    assert sorted(DETAIL in section[0] for section in seen["writer_section"]) == [True, True]  # each note whole, once
    assert result["exit_reason"] == "text"
    assert result["citations"]["unverified_urls"] == []
    assert len(result["citations"]["verified_urls"]) == 2


def test_a_notes_key_lines_end_at_a_sentence_and_leave_out_its_sources_list() -> None:
    from haystack_deep_research.report.sections import key_lines

    long_first = "A first sentence that runs on " + "and on " * 120 + "until it ends. Then more."
    note = "## solar\n\nSolar grew by 450 gigawatts [S](https://s.example/a). Storage doubled.\n\nSources:\n- https://s.example/a"

    assert key_lines(note) == "## solar\n\nSolar grew by 450 gigawatts [S](https://s.example/a). Storage doubled."
    assert key_lines(long_first, 100) == long_first.split(" Then", 1)[0] + "\n\n[...]"  # one sentence, whole
    assert key_lines("Short. " * 200, 60).count("Short.") == 8


def test_a_chinese_notes_key_lines_end_at_a_sentence_without_a_space_after_it() -> None:
    from haystack_deep_research.report.sections import key_lines

    sentence = "太阳能装机容量增长了百分之五十。"
    note = "## 太阳能\n\n" + sentence * 10

    assert key_lines(note, 60) == "## 太阳能\n\n" + sentence * 3 + "\n\n[...]"
