"""
The scripted rules of the iterative agent's analysis model (``role="analysis"``): its decisions, answered from the
prompt's template variables, never from its wording (the agent's report is written by the scripted ``writer``, as
every shape's is).

The analysis model's turn is the prompt's ``round`` variable: round ``r`` answers ``steps[r - 1]``, and a round past
the last step stops. A step is:

- a topic (``str``) or several topics (``list``): ``{"nextSearchTopic": ..., "shouldContinue": true}``;
- ``None``: ``{"nextSearchTopic": null, "shouldContinue": false}``;
- ``{"reply": "..."}``: that text as it is (a chatty or malformed reply), and ``{"reply": ..., "retry": <step>}``
  answers the retry prompt (``analysis_retry``) with the other step;
- ``{"topic": <step>, "instead": <step>}``: the first step, and the second when asked again after its topics were
  refused as repeats.

Without steps, round ``r`` searches ``"<question> (<aspect r>)"`` until ``depth`` rounds ran. Over HTTP (no meta),
the question, the round and the depth are read from the prompt's ``Research question:`` and ``Search round R of D.``
lines (:func:`analysis_variables`).
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["analysis_reply", "analysis_variables"]

ASPECTS = ("overview", "recent developments", "open questions", "applications", "risks", "outlook")
_QUESTION = re.compile(r"Research question:\n(.+?)\n\nSearch round (\d+) of (\d+)\.", re.DOTALL)


def analysis_variables(text: str) -> dict[str, Any]:
    """
    The ``question``, ``round`` and ``depth`` of an analysis prompt's text without its meta (over HTTP); ``{}``
    when it has no such lines.
    """
    found = _QUESTION.search(text)
    if found is None:
        return {}
    return {"question": found.group(1).strip(), "round": int(found.group(2)), "depth": int(found.group(3))}


def _decision(step: Any) -> str:
    if isinstance(step, dict):
        if "reply" in step:
            return str(step["reply"])
        return _decision(step.get("topic"))
    if step is None:
        return json.dumps({"nextSearchTopic": None, "shouldContinue": False})
    return json.dumps({"nextSearchTopic": step, "shouldContinue": True}, ensure_ascii=False)


def analysis_reply(name: str, given: dict[str, Any], steps: list[Any]) -> str:
    """The analysis model's reply to a prompt (``analysis`` or ``analysis_retry``), by the scripted steps."""
    number = int(given.get("round") or 1)
    if not steps:
        if number > int(given.get("depth") or 3):
            return _decision(None)
        return _decision(f"{given.get('question')} ({ASPECTS[(number - 1) % len(ASPECTS)]})")
    step = steps[number - 1] if number - 1 < len(steps) else None
    if isinstance(step, dict):
        if name == "analysis_retry" and "retry" in step:
            return _decision(step["retry"])
        if given.get("refused") and "instead" in step:
            return _decision(step["instead"])
    return _decision(step)
