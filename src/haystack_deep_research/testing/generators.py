"""
Scripted chat generators that play each role of a deep research run, with no model and no key.

``ScriptedChatGenerator(role=...)`` reads its prompt the way a model would and answers by fixed rules, so a whole
run (with the real web_search and read_url tools pointed at loopback servers) produces a real report::

    agent = create_deep_research_agent(
        scope_llm=ScriptedChatGenerator(role="scope"),
        orchestrator_llm=ScriptedChatGenerator(role="orchestrator", subtopics=["history", "current state"]),
        researcher_llm=ScriptedChatGenerator(role="researcher"),
        summarizer_llm=ScriptedChatGenerator(role="summarizer"),
        writer_llm=ScriptedChatGenerator(role="writer"),
        search_tool=WebSearchTool(api_key=Secret.from_token("test"), api_base_url=search.base_url),
        url_policy=UrlPolicy(allow_hosts=("127.0.0.1",)),
    )

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

Role = Literal["scope", "orchestrator", "researcher", "summarizer", "writer", "judge"]
ROLES: tuple[str, ...] = ("scope", "orchestrator", "researcher", "summarizer", "writer")
"""The roles of the five models every run uses; ``"judge"`` is accepted too, for grounding."""
_ALL_ROLES = (*ROLES, "judge")

_URL = re.compile(r"https?://[^\s<>()\"'\]]+")
_SOURCE_LINE = re.compile(r"^Source: (\S+)$", re.MULTILINE)
_TITLE_LINE = re.compile(r"^Title: (.*)$", re.MULTILINE)
_SUMMARY = re.compile(r"Summary:\n(.+?)(?:\n\n|$)", re.DOTALL)
_JUDGED_SOURCE = re.compile(r"<untrusted_source[^>]*>\n(.*?)\n</untrusted_source>", re.DOTALL)
_JUDGED_CLAIM = re.compile(r"^(\d+)\. (.*)$", re.MULTILINE)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_LONG_WORD = re.compile(r"[^\W\d_]{4,}")
_TASK = "Sub-topic to research:"


class ScriptedModelError(RuntimeError):
    """Raised by a ``ScriptedChatGenerator`` created with ``fail=True``."""


def _last_user_text(messages: list[ChatMessage]) -> str:
    for message in reversed(messages):
        if message.is_from(ChatRole.USER) and message.text:
            return message.text
    return ""


def _after(text: str, marker: str) -> str:
    return text.split(marker, 1)[1].strip() if marker in text else text.strip()


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
        question = _after(_last_user_text(messages), "Research question:")
        return f"Research brief: find reliable, current sources that answer: {question}"

    def _orchestrator(self, messages: list[ChatMessage]) -> ChatMessage | str:
        if _tool_results(messages):
            return "Research is complete."
        brief = _last_user_text(messages)
        subtopics = self.subtopics or [f"Background: {brief}", f"Recent developments: {brief}"]
        calls = [ToolCall(tool_name="research_subtopic", arguments={"subtopic": s}) for s in subtopics]
        return ChatMessage.from_assistant(tool_calls=calls)

    def _researcher(self, messages: list[ChatMessage], *, can_call_tools: bool) -> ChatMessage | str:
        task = next((m.text for m in messages if m.is_from(ChatRole.USER) and _TASK in (m.text or "")), None)
        subtopic = _after(task or _last_user_text(messages), _TASK)
        if not _tool_results(messages) and can_call_tools:
            search = ToolCall(tool_name="web_search", arguments={"query": subtopic})
            return ChatMessage.from_assistant(tool_calls=[search])
        results = _tool_results(messages, errors=False)  # a failed call gives nothing to read or cite
        name, text = results[-1] if results else ("", "")
        if name == "web_search" and can_call_tools:
            urls = list(dict.fromkeys(_URL.findall(text)))[: self.read_top_k]
            if urls:
                arguments = {"urls": urls, "question": subtopic}
                return ChatMessage.from_assistant(tool_calls=[ToolCall(tool_name="read_url", arguments=arguments)])
        lines = []
        for _, result in results:
            for block in result.split("\n---\n"):
                source, title, summary = _SOURCE_LINE.search(block), _TITLE_LINE.search(block), _SUMMARY.search(block)
                if source and summary:
                    label = (title.group(1).strip() if title else "") or "source"
                    lines.append(f"- {_words(summary.group(1), 30)} [{label}]({source.group(1)})")
        lines += [f"- A further claim [unverified]({url})" for url in self.invented_urls]
        if not lines:
            return f"Findings on {subtopic}: no readable sources were found."
        return f"Findings on {subtopic}:\n" + "\n".join(lines)

    def _summarizer(self, messages: list[ChatMessage]) -> str:
        text = _last_user_text(messages)
        content = text.split(">", 1)[1] if "<untrusted_document" in text else text
        content = content.split("</untrusted_document>", 1)[0]
        return _words(content, 40) or "The document is empty."

    def _writer(self, messages: list[ChatMessage]) -> str:
        prompt = _last_user_text(messages)
        brief = _after(prompt.split("<untrusted_note", 1)[0], "Research brief:")
        allowed = prompt.rsplit("Allowed source URLs:", 1)[-1]
        urls = [u for u in _URL.findall(allowed)] + self.invented_urls
        findings = "\n".join(f"- Finding {i} is supported by [source {i}]({u})." for i, u in enumerate(urls, 1))
        sources = "\n".join(f"- [source {i}]({u})" for i, u in enumerate(urls, 1))
        return (
            f"# Research report\n\n## Executive summary\n\n{_words(brief, 40)}\n\n"
            f"## Findings\n\n{findings or 'No findings.'}\n\n## Sources\n\n{sources or 'No sources.'}\n"
        )

    def _judge(self, messages: list[ChatMessage]) -> str:
        prompt = _last_user_text(messages)
        found = _JUDGED_SOURCE.search(prompt)
        source = (found.group(1) if found else "").lower()
        claims = prompt.split("<untrusted_claims>", 1)[-1].split("</untrusted_claims>", 1)[0]
        verdicts = []
        for number, claim in _JUDGED_CLAIM.findall(claims):
            words = [w.lower() for w in _LONG_WORD.findall(claim)]
            numbers_found = all(n in source for n in _NUMBER.findall(claim))
            words_found = sum(w in source for w in words) * 2 >= len(words)
            supported = numbers_found and words_found
            reason = "the source states it" if supported else "the source does not state it"
            verdicts.append(
                {"id": int(number), "verdict": "supported" if supported else "unsupported", "reason": reason}
            )
        return json.dumps({"verdicts": verdicts})
