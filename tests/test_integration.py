"""Live runs against OpenAI and Tavily. Skipped unless OPENAI_API_KEY and TAVILY_API_KEY are set."""

from __future__ import annotations

import pytest
from haystack.dataclasses import ChatMessage

from haystack_deep_research import create_deep_research_agent

pytestmark = pytest.mark.integration


def test_a_small_live_run_cites_only_pages_it_read() -> None:
    agent = create_deep_research_agent(max_subtopics=2, max_researcher_steps=6, max_search_results=3)
    result = agent.run(messages=[ChatMessage.from_user("What is the Haystack framework by deepset used for?")])

    assert result["report"].strip()
    assert result["notes"]
    read = {source["url"] for source in result["sources"] if source["kind"] == "page"}
    assert set(result["citations"]["verified_urls"]) <= read
    for url in result["citations"]["unverified_urls"]:
        assert f"]({url})" not in result["report"]  # anything unverified was taken out of the report
