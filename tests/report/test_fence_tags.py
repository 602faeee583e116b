"""The library's fence tags, echoed back by a model, never reach a report."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

import pytest
from haystack.components.agents import Agent
from haystack.components.generators.chat import MockChatGenerator
from haystack.dataclasses import ChatMessage

from haystack_deep_research._prompts import unfence
from haystack_deep_research.testing import LoopbackWebServer

ECHOES = [
    '<untrusted_page url="{url}" title="Solar">',
    "</untrusted_page>",
    "<\\/untrusted_document>",
    "<\\untrusted_notes>",
    "</UNTRUSTED_NOTES>",
    "< / untrusted_claims >",
    "<untr\u200busted_report>",
]


def _tags(text: str) -> list[str]:
    plain = "".join(c for c in unicodedata.normalize("NFKC", text) if unicodedata.category(c) != "Cf")
    return re.findall(r"<\\?/?\\?untrusted_", re.sub(r"\s+", "", plain).lower())


@pytest.mark.parametrize("tag", ECHOES)
def test_each_echoed_tag_is_removed_and_the_text_around_it_kept(tag: str) -> None:
    text = f"Solar grew fast. {tag.format(url='https://a.example/x')}It doubled."

    assert _tags(text)
    assert unfence(text) == "Solar grew fast. It doubled."


def test_a_writer_that_echoes_fence_tags_leaves_none_in_the_report(
    make_agent: Callable[..., Agent], web: LoopbackWebServer
) -> None:
    solar = web.url("/solar.html")
    echoes = "\n".join(tag.format(url=solar) for tag in ECHOES)

    def writer(messages: list[ChatMessage]) -> str:
        return f"# Solar\n\n{echoes}\n\n## Executive summary\n\nSolar grew by 450 gigawatts [Solar]({solar}).\n{echoes}"

    result = make_agent(writer_llm=MockChatGenerator(response_fn=writer)).run(
        messages=[ChatMessage.from_user("How fast is solar growing?")]
    )

    assert "450 gigawatts" in result["report"]
    assert _tags(result["report"]) == []
    assert solar in result["citations"]["verified_urls"]
