"""The deep research agent with a cross-run cache: the same question again searches and fetches nothing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from haystack.components.agents import Agent
from haystack.dataclasses import ChatMessage

from haystack_deep_research import RunInputs
from haystack_deep_research.events import Event, PageRead, SearchDone
from haystack_deep_research.testing import LoopbackSearchServer, LoopbackWebServer


def test_the_same_question_again_is_answered_from_the_cache(
    make_agent: Callable[..., Agent], search: LoopbackSearchServer, web: LoopbackWebServer, tmp_path: Path
) -> None:
    question = [ChatMessage.from_user("How fast are solar and storage growing?")]
    first = make_agent(cache=tmp_path).run(messages=question)
    searched, fetched = len(search.requests.wait_for(2)), len(web.requests.wait_for(2))
    events: list[Event] = []

    second = make_agent(cache=tmp_path).run(messages=question, inputs=RunInputs(on_event=events.append))

    with pytest.raises(TimeoutError):
        search.requests.wait_for(searched + 1, timeout=0.3)
    assert len(web.requests) == fetched
    assert second["report"] == first["report"]
    assert {e.cached for e in events if isinstance(e, SearchDone | PageRead)} == {True}
    assert "summarize" not in second["usage_by_phase"]
