"""The scripted analysis model answers from the prompt's template variables, never from its wording."""

from __future__ import annotations

import json
from typing import Any

from haystack.dataclasses import ChatMessage

from haystack_deep_research._prompts import PROMPT_META_KEY
from haystack_deep_research.testing import ScriptedChatGenerator


def asked(steps: list[Any], name: str = "analysis", **variables: Any) -> str:
    prompt = ChatMessage.from_user("any wording", meta={PROMPT_META_KEY: {"name": name, "variables": variables}})
    reply = ScriptedChatGenerator(role="analysis", steps=steps).run(messages=[prompt])["replies"][0]
    return str(reply.text)


def test_round_r_answers_step_r() -> None:
    steps = ["a", ["b", "c"], None]

    assert json.loads(asked(steps, round=1)) == {"nextSearchTopic": "a", "shouldContinue": True}
    assert json.loads(asked(steps, round=2)) == {"nextSearchTopic": ["b", "c"], "shouldContinue": True}
    assert json.loads(asked(steps, round=3)) == {"nextSearchTopic": None, "shouldContinue": False}
    assert json.loads(asked(steps, round=9))["shouldContinue"] is False


def test_raw_replies_retries_and_refusals() -> None:
    step = {"reply": "not json", "retry": "fixed", "instead": "other"}

    assert asked([step], round=1) == "not json"
    assert json.loads(asked([step], name="analysis_retry", round=1))["nextSearchTopic"] == "fixed"
    assert json.loads(asked([step], round=1, refused=["x"]))["nextSearchTopic"] == "other"


def test_without_steps_each_round_searches_an_aspect_until_depth() -> None:
    first = json.loads(asked([], round=1, depth=2, question="Tides?"))
    past = json.loads(asked([], round=3, depth=2, question="Tides?"))

    assert first == {"nextSearchTopic": "Tides? (overview)", "shouldContinue": True}
    assert past["shouldContinue"] is False
