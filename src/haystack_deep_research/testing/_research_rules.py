"""How the scripted ``researcher`` role answers: it calls the search tools it is offered, reads the top web results
with ``read_url``, and writes findings citing the pages read and the documents the stores returned; of a page that
could not be read it cites what its search result's snippet says, as a snippet."""

from __future__ import annotations

import re

from haystack.dataclasses import ChatMessage, ToolCall

from haystack_deep_research._prompts import (
    DATASTORE_TOOL_PREFIX,
    DOCUMENT_SEPARATOR,
    PAGE_SEPARATOR,
    READ_URL,
    WEB_SEARCH,
)
from haystack_deep_research.testing._messages import last_turn, last_user_text, prompt_variables, tool_results, words

__all__ = ["researcher_reply"]

_URL = re.compile(r"(?:https?|file|doc)://[^\s<>()\"'\]]+")
_LABEL = re.compile(r"^[A-Z][a-z]*:$")


def _is_store_search(name: str) -> bool:
    return name.startswith(DATASTORE_TOOL_PREFIX)


def researcher_reply(
    messages: list[ChatMessage], offered: list[str], *, read_top_k: int, invented_urls: list[str]
) -> ChatMessage | str:
    """
    The researcher's next turn: the searches, then ``read_url`` on the ``read_top_k`` top web results, then its
    findings (citing ``invented_urls`` too, never read).
    """
    given = prompt_variables(messages, "researcher_task", "execute_task", "replan_task")
    task = given.get("subtopic") or "; ".join(given.get("claims") or []) or given.get("question")
    subtopic = str(task or last_user_text(messages)).strip()
    if not tool_results(messages) and offered:
        names = [name for name in offered if name == WEB_SEARCH or _is_store_search(name)] or [WEB_SEARCH]
        calls = [ToolCall(tool_name=name, arguments={"query": subtopic}) for name in names]
        return ChatMessage.from_assistant(tool_calls=calls)
    searched = [text for name, text in last_turn(messages) if name == WEB_SEARCH]
    if searched and offered:
        urls = list(dict.fromkeys(url for text in searched for url in _URL.findall(text)))[:read_top_k]
        if urls:
            arguments = {"urls": urls, "question": subtopic}
            return ChatMessage.from_assistant(tool_calls=[ToolCall(tool_name=READ_URL, arguments=arguments)])
    lines = []
    for tool, result in tool_results(messages, errors=False):  # a failed call gives nothing to cite
        if tool == READ_URL:
            blocks = result.split(PAGE_SEPARATOR)
        elif _is_store_search(tool):
            blocks = result.split(DOCUMENT_SEPARATOR)
        else:
            continue
        for part in blocks:
            block = part
            if part.startswith("Could not read "):  # the failure is no finding; the snippet it gives may be one
                block = part.partition("<untrusted_snippet")[2].partition("</untrusted_snippet>")[0]
            found = _URL.search(block)
            text = " ".join(line for line in block.splitlines() if not line.lstrip().startswith("<"))
            kept = [w for w in text.split() if not _URL.search(w) and not _LABEL.match(w)]
            if found and kept:
                lines.append(f"- {words(' '.join(kept), 30)} [source]({found.group(0)})")
    lines += [f"- A further claim [unverified]({url})" for url in invented_urls]
    if not lines:
        return f"Findings on {subtopic}: no readable sources were found."
    return f"Findings on {subtopic}:\n" + "\n".join(lines)
