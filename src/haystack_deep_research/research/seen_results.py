"""
Keeping a sub-researcher's context small: search results it has already acted on keep only their titles and URLs.

A researcher searches, then reads the results it picked, then writes its summary from the pages it read; every model
call sends the whole conversation again, so the search snippets it chose from would be sent with every later call.
Before each tool step (the researcher's ``before_tool`` hook, see :class:`~.LoopGuardHook`) every ``web_search``
result of an earlier turn, one the model has already seen and acted on, loses its snippets: its titles and exact
URLs stay, so the model can still read any of them, followed by a line saying the snippets were left out. Page
summaries (``read_url`` results) are never shortened: they are what the researcher's summary is written from.

Only results in the library's own search format are condensed; a search tool of another shape is left as it is.
"""

from __future__ import annotations

import re

from haystack.dataclasses import ChatMessage, ChatRole

from haystack_deep_research._prompts import SEARCH_RESULTS_END, SNIPPET_LABEL, SNIPPETS_LEFT_OUT, WEB_SEARCH

__all__ = ["condense_seen_results"]

_SNIPPET = re.compile(
    r"\n" + re.escape(SNIPPET_LABEL) + r".*?(?=\n\n(?:\[\d+\] |" + re.escape(SEARCH_RESULTS_END) + "))", re.DOTALL
)


def _condensed(text: str) -> str | None:
    if SNIPPETS_LEFT_OUT in text or not text.rstrip().endswith(SEARCH_RESULTS_END):
        return None
    shorter = _SNIPPET.sub("", text)
    return f"{shorter}\n{SNIPPETS_LEFT_OUT}" if shorter != text else None


def condense_seen_results(messages: list[ChatMessage]) -> list[ChatMessage] | None:
    """
    Condense the search results that come before the last assistant turn (see the module docstring).

    :param messages: A researcher's conversation.
    :returns: The conversation with those results condensed, or ``None`` when nothing changed.
    """
    last_turn = max((i for i, m in enumerate(messages) if m.is_from(ChatRole.ASSISTANT)), default=-1)
    changed = False
    out = list(messages)
    for index in range(last_turn):
        result = messages[index].tool_call_result
        if result is None or result.error or result.origin.tool_name != WEB_SEARCH:
            continue
        shorter = _condensed(str(result.result))
        if shorter is not None:
            out[index] = ChatMessage.from_tool(shorter, origin=result.origin, meta=dict(messages[index].meta))
            changed = True
    return out if changed else None
