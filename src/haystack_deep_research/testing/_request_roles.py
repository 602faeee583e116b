"""
Which scripted role a Chat Completions request is for, told from what travels over HTTP: the tools offered and the
system message.

A prompt's meta does not travel, so :class:`~haystack_deep_research.testing.LoopbackChatServer` tells the role of a
request to its ``kit`` model (and checks the requests to a role-named model) by these rules: ``research_subtopic``
offered is the orchestrator, a search or ``read_url`` offered is a researcher, and otherwise the system message is
matched against the fixed opening of each of the library's chat templates (the text before its first template tag).
"""

from __future__ import annotations

import functools
import re

from haystack.dataclasses import ChatMessage, ChatRole

from haystack_deep_research import _prompts as prompts
from haystack_deep_research._prompts import DATASTORE_TOOL_PREFIX, READ_URL, RESEARCH_SUBTOPIC, WEB_SEARCH

__all__ = ["TEMPLATE_ROLES", "request_role"]

TEMPLATE_ROLES = {
    "scope": "scope",
    "scope_clarified": "scope",
    "scope_clarify": "scope",
    "summarizer": "summarizer",
    "summarizer_passages": "summarizer",
    "writer_opening": "writer",
    "rewrite_opening": "writer",
    "writer_section": "writer",
    "rewrite_section": "writer",
    "answer": "writer",
    "judge": "judge",
    "analysis": "analysis",
    "analysis_retry": "analysis",
    "causal": "causal",
    "structured": "summarize",
    "structured_retry": "summarize",
}
"""The scripted role that answers each chat template of the library, by template name."""

_TAG = re.compile(r"\{[{%#]")


@functools.cache
def _openings() -> tuple[tuple[str, str], ...]:
    """(fixed opening of the system template, role), longest opening first."""
    found = []
    for name in prompts.__all__:
        template = getattr(prompts, name)
        if isinstance(template, prompts.ChatTemplate) and template.name in TEMPLATE_ROLES:
            opening = _TAG.split(template.system, maxsplit=1)[0]
            if len(opening) >= 20:
                found.append((opening, TEMPLATE_ROLES[template.name]))
    return tuple(sorted(found, key=lambda pair: -len(pair[0])))


def request_role(messages: list[ChatMessage], tool_names: list[str]) -> str | None:
    """The role a request (its messages and the names of the tools it offers) is for, or ``None`` when nothing tells."""
    if RESEARCH_SUBTOPIC in tool_names:
        return "orchestrator"
    if any(name in (WEB_SEARCH, READ_URL) or name.startswith(DATASTORE_TOOL_PREFIX) for name in tool_names):
        return "researcher"
    system = next((m.text or "" for m in messages if m.is_from(ChatRole.SYSTEM)), "")
    return next((role for opening, role in _openings() if system.startswith(opening)), None)
