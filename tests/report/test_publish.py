"""What a report may cite: only what the run really read."""

from __future__ import annotations

from collections.abc import Callable

from haystack.components.agents import Agent
from haystack.dataclasses import ChatMessage

from haystack_deep_research.testing import LoopbackSearchServer, ScriptedChatGenerator

INVENTED = "https://invented.example/claim"


def test_a_run_that_read_nothing_verifies_nothing(
    make_agent: Callable[..., Agent], search: LoopbackSearchServer
) -> None:
    search.fail_next(400, count=10)  # every search fails: nothing is read, nothing is recorded
    agent = make_agent(researcher_llm=ScriptedChatGenerator(role="researcher", invented_urls=[INVENTED]))

    result = agent.run(messages=[ChatMessage.from_user("How fast is solar growing?")])

    assert any(INVENTED in note for note in result["notes"])  # the researchers did write it down
    assert result["citations"]["verified_urls"] == []
    assert f"]({INVENTED})" not in result["report"]
    assert result["exit_reason"] == "no_evidence"
