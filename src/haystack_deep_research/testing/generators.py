"""
Scripted chat generators that play each role of a deep research run, with no model and no key.

``ScriptedChatGenerator(role=...)`` answers by fixed rules from the data its prompt was rendered with (the template
variables every prompt of the library carries in its meta), the tool names and the message roles, never from the
prompt's wording, so a whole run (with the real web_search and read_url tools pointed at loopback servers) produces a
real report::

    agent = create_deep_research_agent(
        scope_llm=ScriptedChatGenerator(role="scope"),
        orchestrator_llm=ScriptedChatGenerator(role="orchestrator", subtopics=["history", "current state"]),
        researcher_llm=ScriptedChatGenerator(role="researcher"),
        summarizer_llm=ScriptedChatGenerator(role="summarizer"),
        writer_llm=ScriptedChatGenerator(role="writer"),
        search_tool=WebSearchTool(api_key=Secret.from_token("test"), api_base_url=search.base_url),
        url_policy=UrlPolicy(allow_hosts=("127.0.0.1",)),
    )

``role="writer"`` plays every writer step: a whole report (the ``writer`` and ``rewrite`` prompts), one section
(``writer_section``, ``rewrite_section``: a ``##`` heading from the note's first line, then one cited finding per
allowed URL) and the opening (``writer_opening``, ``rewrite_opening``: a title and the brief's first words as the
executive summary, plus one citation of each ``invented_urls`` entry).

``fail=True`` makes a generator raise :class:`ScriptedModelError` on every call, to exercise failure paths.

``role="judge"`` plays the grounding judge (``create_deep_research_agent(grounding=True, judge_llm=...)``) by a
word rule: a claim is supported when every number in it appears in the source text and at least half of its words
of four or more letters do too (case-insensitive); otherwise it is unsupported.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from haystack import component, default_from_dict, default_to_dict
from haystack.dataclasses import ChatMessage, ChatRole, ToolCall

from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.prompts import (
    PAGE_SEPARATOR,
    READ_URL,
    RESEARCH_SUBTOPIC,
    WEB_SEARCH,
    WRITER_PART_TEMPLATES,
    prompt_of,
)

Role = Literal["scope", "orchestrator", "researcher", "summarizer", "writer", "judge"]
ROLES: tuple[str, ...] = ("scope", "orchestrator", "researcher", "summarizer", "writer")
"""The roles of the five models every run uses; ``"judge"`` is accepted too, for grounding."""
_ALL_ROLES = (*ROLES, "judge")

_URL = re.compile(r"https?://[^\s<>()\"'\]]+")
_LABEL = re.compile(r"^[A-Z][a-z]*:$")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_LONG_WORD = re.compile(r"[^\W\d_]{4,}")


class ScriptedModelError(RuntimeError):
    """Raised by a ``ScriptedChatGenerator`` created with ``fail=True``."""


def _last_user_text(messages: list[ChatMessage]) -> str:
    for message in reversed(messages):
        if message.is_from(ChatRole.USER) and message.text:
            return message.text
    return ""


def _named_prompt(messages: list[ChatMessage], *names: str) -> tuple[str, dict[str, Any]]:
    """The name and variables of the last user message rendered from one of the named templates."""
    for message in reversed(messages):
        found = prompt_of(message) if message.is_from(ChatRole.USER) else None
        if found is not None and (not names or found[0] in names):
            return found
    return "", {}


def _prompt(messages: list[ChatMessage], *names: str) -> dict[str, Any]:
    """The variables of the last user message rendered from one of the named templates (``{}`` if none)."""
    return _named_prompt(messages, *names)[1]


def _tool_results(messages: list[ChatMessage], *, errors: bool = True) -> list[tuple[str, str]]:
    return [
        (m.tool_call_result.origin.tool_name, str(m.tool_call_result.result))
        for m in messages
        if m.tool_call_result is not None and (errors or not m.tool_call_result.error)
    ]


def _words(text: str, limit: int) -> str:
    return " ".join(text.split()[:limit])


@component
class ScriptedChatGenerator:
    """
    A chat generator that answers like one role of a deep research run, by fixed rules over its prompt.

    :param role: "scope", "orchestrator", "researcher", "summarizer", "writer" or "judge".
    :param subtopics: For the orchestrator: the sub-topics it delegates, all in its first turn. Default: two
        sub-topics derived from the brief.
    :param read_top_k: For the researcher: how many search results it reads.
    :param invented_urls: For the researcher and the writer: URLs cited although never retrieved (to test
        citation verification).
    :param fail: Raise :class:`ScriptedModelError` on every call.
    :raises ConfigurationError: If the role is unknown.
    """

    def __init__(
        self,
        *,
        role: Role,
        subtopics: list[str] | None = None,
        read_top_k: int = 2,
        invented_urls: list[str] | None = None,
        fail: bool = False,
    ) -> None:
        if role not in _ALL_ROLES:
            raise ConfigurationError(f"role must be one of {', '.join(_ALL_ROLES)}; got {role!r}.")
        self.role = role
        self.subtopics = subtopics
        self.read_top_k = read_top_k
        self.invented_urls = list(invented_urls or [])
        self.fail = fail

    def to_dict(self) -> dict[str, Any]:
        """
        :returns: The serialized generator.
        """
        return default_to_dict(
            self,
            role=self.role,
            subtopics=self.subtopics,
            read_top_k=self.read_top_k,
            invented_urls=self.invented_urls,
            fail=self.fail,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ScriptedChatGenerator:
        """
        :param data: What ``to_dict`` returned.
        :returns: The generator.
        """
        return default_from_dict(cls, data)

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, list[ChatMessage]]:
        """
        Answer the prompt by the role's rules.

        :param messages: The prompt.
        :param tools: The tools offered (ignored: the rules know the library's tool names).
        :param kwargs: Other generator arguments (ignored).
        :returns: ``{"replies": [reply]}`` with usage counted in words.
        :raises ScriptedModelError: If created with ``fail=True``.
        """
        if self.fail:
            raise ScriptedModelError(f"scripted {self.role} model failure")
        if self.role == "researcher":
            reply = self._researcher(messages, can_call_tools=bool(tools))
        else:
            reply = getattr(self, f"_{self.role}")(messages)
        if isinstance(reply, str):
            reply = ChatMessage.from_assistant(reply)
        prompt_words = sum(len((m.text or "").split()) for m in messages)
        usage = {"prompt_tokens": prompt_words, "completion_tokens": len((reply.text or "").split())}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        finish = "tool_calls" if reply.tool_calls else "stop"
        reply.meta.update({"model": f"scripted-{self.role}", "usage": usage, "finish_reason": finish})
        return {"replies": [reply]}

    @component.output_types(replies=list[ChatMessage])
    async def run_async(
        self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any
    ) -> dict[str, list[ChatMessage]]:
        """
        Async variant of :meth:`run`.

        :param messages: The prompt.
        :param tools: The tools offered.
        :param kwargs: Other generator arguments.
        :returns: ``{"replies": [reply]}``.
        """
        return self.run(messages, tools, **kwargs)

    def _scope(self, messages: list[ChatMessage]) -> str:
        question = _prompt(messages, "scope").get("question") or _last_user_text(messages)
        return f"Research brief: find reliable, current sources that answer: {str(question).strip()}"

    def _orchestrator(self, messages: list[ChatMessage]) -> ChatMessage | str:
        if _tool_results(messages):
            return "Research is complete."
        brief = _last_user_text(messages)
        subtopics = self.subtopics or [f"Background: {brief}", f"Recent developments: {brief}"]
        calls = [ToolCall(tool_name=RESEARCH_SUBTOPIC, arguments={"subtopic": s}) for s in subtopics]
        return ChatMessage.from_assistant(tool_calls=calls)

    def _researcher(self, messages: list[ChatMessage], *, can_call_tools: bool) -> ChatMessage | str:
        subtopic = str(_prompt(messages, "researcher_task").get("subtopic") or _last_user_text(messages)).strip()
        if not _tool_results(messages) and can_call_tools:
            search = ToolCall(tool_name=WEB_SEARCH, arguments={"query": subtopic})
            return ChatMessage.from_assistant(tool_calls=[search])
        results = _tool_results(messages, errors=False)  # a failed call gives nothing to read or cite
        name, text = results[-1] if results else ("", "")
        if name == WEB_SEARCH and can_call_tools:
            urls = list(dict.fromkeys(_URL.findall(text)))[: self.read_top_k]
            if urls:
                arguments = {"urls": urls, "question": subtopic}
                return ChatMessage.from_assistant(tool_calls=[ToolCall(tool_name=READ_URL, arguments=arguments)])
        lines = []
        for tool, result in results:
            if tool != READ_URL:
                continue
            for block in result.split(PAGE_SEPARATOR):
                found = _URL.search(block)
                words = [w for w in block.split() if not _URL.search(w) and not _LABEL.match(w)]
                if found and words:
                    lines.append(f"- {_words(' '.join(words), 30)} [source]({found.group(0)})")
        lines += [f"- A further claim [unverified]({url})" for url in self.invented_urls]
        if not lines:
            return f"Findings on {subtopic}: no readable sources were found."
        return f"Findings on {subtopic}:\n" + "\n".join(lines)

    def _summarizer(self, messages: list[ChatMessage]) -> str:
        content = _prompt(messages, "summarizer", "summarizer_passages").get("content")
        return (
            _words(str(content if content is not None else _last_user_text(messages)), 40) or "The document is empty."
        )

    def _writer(self, messages: list[ChatMessage]) -> str:
        name, given = _named_prompt(messages, "writer", "rewrite", *WRITER_PART_TEMPLATES)
        if name.endswith("_section"):
            return self._section(given)
        if name.endswith("_opening"):
            brief = _words(str(given.get("brief") or ""), 40)
            findings = " ".join(f"A key finding [source]({url})." for url in self.invented_urls)
            return f"# Research report\n\n## Executive summary\n\n{brief} {findings}".strip() + "\n"
        urls = [str(url) for url in given.get("urls") or []] + self.invented_urls
        findings = "\n".join(f"- Finding {i} is supported by [source {i}]({u})." for i, u in enumerate(urls, 1))
        sources = "\n".join(f"- [source {i}]({u})" for i, u in enumerate(urls, 1))
        return (
            f"# Research report\n\n## Executive summary\n\n{_words(str(given.get('brief') or ''), 40)}\n\n"
            f"## Findings\n\n{findings or 'No findings.'}\n\n## Sources\n\n{sources or 'No sources.'}\n"
        )

    @staticmethod
    def _section(given: dict[str, Any]) -> str:
        number = given.get("number") or 1
        notes = [str(note) for note in given.get("notes") or []]
        heading = _words(notes[0].split("\n", 1)[0].lstrip("#"), 6) if notes else f"Part {number}"
        urls = [str(url) for url in given.get("urls") or []]
        lines = [f"- Finding {number}.{i} is supported by [source {i}]({u})." for i, u in enumerate(urls, 1)]
        findings = "\n".join(lines)
        return f"## {heading}\n\n{findings or 'No findings.'}\n"

    def _judge(self, messages: list[ChatMessage]) -> str:
        given = _prompt(messages, "judge")
        source = str(given.get("source") or "").lower()
        verdicts = []
        for number, claim in enumerate(given.get("claims") or [], 1):
            words = [w.lower() for w in _LONG_WORD.findall(str(claim))]
            numbers_found = all(n in source for n in _NUMBER.findall(str(claim)))
            words_found = sum(w in source for w in words) * 2 >= len(words)
            supported = numbers_found and words_found
            reason = "the source states it" if supported else "the source does not state it"
            verdicts.append({"id": number, "verdict": "supported" if supported else "unsupported", "reason": reason})
        return json.dumps({"verdicts": verdicts})
