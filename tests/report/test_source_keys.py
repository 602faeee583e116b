"""The writer's parts cite sources by number; the published report cites their URLs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from haystack.components.agents import Agent
from haystack.components.generators.chat import MockChatGenerator
from haystack.dataclasses import ChatMessage

from haystack_deep_research._prompts import prompt_of
from haystack_deep_research.report.sections import SourceKeys, without_sources_list

A, B = "https://example.org/a.html", "https://example.org/b?x=1"


def test_notes_cite_by_number_and_replies_cite_by_url_again() -> None:
    keys = SourceKeys([A, B, A])

    assert keys.numbers([B, A]) == ["2", "1"]
    note = f'Growth was 4% ([source]({A})), storage doubled ([report](<{B}> "title")); see [other](https://x.test/).'
    assert (
        keys.shorten(note)
        == "Growth was 4% ([source](1)), storage doubled ([report](2)); see [other](https://x.test/)."
    )
    reply = "Growth was 4% [source](1) and [b]( 2 ); [made up](7), [rel](page.html), [anchor](#top), [full](https://x.test/)."
    assert keys.expand(reply) == (
        f"Growth was 4% [source]({A}) and [b]({B}); made up, rel, [anchor](#top), [full](https://x.test/)."
    )
    assert keys.expand("![chart](1)") == "![chart](1)"  # an image is not a citation


def test_a_notes_closing_sources_list_is_left_out() -> None:
    assert without_sources_list(f"## solar\n\nGrew [s]({A}).\n\nSources:\n- {A}\n") == f"## solar\n\nGrew [s]({A})."


class NumberWriter:
    """A writer that cites every allowed source by its number, and one number that is no source's."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []
        self.generator = MockChatGenerator(response_fn=self)

    def __call__(self, messages: list[ChatMessage]) -> ChatMessage:
        name, variables = prompt_of(messages[-1]) or ("", {})
        self.seen.append({"name": name, "text": messages[-1].text or "", **variables})
        cites = " ".join(f"A finding [source {key}]({key})." for key in variables.get("keys", []))
        if name == "writer_opening":
            return ChatMessage.from_assistant(f"# Energy\n\n## Executive summary\n\n{cites} A guess [x](99).")
        heading = str(variables["notes"][0]).split("\n", 1)[0]
        return ChatMessage.from_assistant(f"{heading}\n\n{cites}")


def test_a_report_written_from_numbers_cites_the_urls_read(make_agent: Callable[..., Agent]) -> None:
    writer = NumberWriter()
    result = make_agent(writer_llm=writer.generator).run(messages=[ChatMessage.from_user("How fast is solar growing?")])

    sections = [seen for seen in writer.seen if seen["name"] == "writer_section"]
    assert len(sections) == 2
    for seen in sections:  # the note cites by number and has no Sources list; the list numbers the URLs
        assert "](http" not in seen["notes"][0]
        assert "Sources:" not in seen["notes"][0]
        for key, url in zip(seen["keys"], seen["urls"], strict=True):
            assert f"\n{key}. {url}\n" in seen["text"]
    report = result["report"]
    assert "](1)" not in report
    assert "](2)" not in report
    assert "[x]" not in report
    assert "A guess x." in report
    verified = result["citations"]["verified_urls"]
    assert len(verified) == 2
    assert result["citations"]["unverified_urls"] == []
    assert all(f"]({url})" in report for url in verified)


def test_a_link_to_several_numbers_keeps_every_known_source() -> None:
    keys = SourceKeys([A, B])

    assert keys.expand("Tides [NASA; NOAA](1, 2), storage [NOAA](2,9).") == (
        f"Tides [NASA; NOAA]({A}), [NASA; NOAA]({B}), storage [NOAA]({B})."
    )


def test_a_title_in_brackets_is_cited_like_any_other() -> None:
    keys = SourceKeys([A])

    assert keys.shorten(f"Tables [[PDF] Tide tables]({A}).") == "Tables [[PDF] Tide tables](1)."
    assert keys.expand("Tables [[PDF] Tide tables](1).") == f"Tables [[PDF] Tide tables]({A})."


def test_only_a_closing_list_of_sources_is_left_out_of_a_note() -> None:
    listed = f"## Tides\n\nMoon [a]({A}).\n\n**Sources:**\n- [a]({A})\n2. {B}\n"
    prose = f"Intro\n\nSources\nThe sources of tidal energy are many.\n\n## Findings\nA finding [a]({A})."

    assert without_sources_list(listed) == f"## Tides\n\nMoon [a]({A})."
    assert without_sources_list(prose) == prose
