"""
Scripted chat generators that play each role of a deep research run, with no model and no key.

``ScriptedChatGenerator(role=...)`` answers by fixed rules from the template variables its prompt carries in its meta,
the tool names and the message roles, never from the prompt's wording; docs/testing.md says what each role answers.
"""

from __future__ import annotations

import copy
import inspect
import json
import re
from typing import Any, Literal, get_args

from haystack import component, default_to_dict
from haystack.dataclasses import ChatMessage, ChatRole, StreamingChunk, ToolCall
from haystack.tools import flatten_tools_or_toolsets

from haystack_deep_research._prompts import RESEARCH_SUBTOPIC, prompt_of
from haystack_deep_research._serialization import InitSerialized, init_parameters
from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.testing._rules import (
    analysis_reply,
    analysis_variables,
    causal_reply,
    judge_reply,
    judge_variables,
    last_user_text,
    prompt_variables,
    researcher_reply,
    summarize_reply,
    tool_results,
    words,
    writer_reply,
)

Role = Literal[
    "scope", "orchestrator", "researcher", "summarizer", "writer", "judge", "agent", "causal", "summarize", "analysis"
]
ROLES: tuple[str, ...] = ("scope", "orchestrator", "researcher", "summarizer", "writer")
"""The roles of the five models every run uses; :data:`Role` adds the judge's and those of the other shapes."""
_ALL_ROLES = get_args(Role)
Step = dict[str, Any] | list[Any] | str | None
"""One scripted step: for the deep agent a tool call ``{"tool_name": ..., "arguments": {...}}``, a list of them (one
turn) or a text reply; for the analysis model a round's decision (see docs/testing.md)."""
Corrects = Literal["never", "on_rewrite", "on_new_evidence"]
_CORRECTS = get_args(Corrects)

_TURNS = re.compile(r"\bturns: (\d+)")


class ScriptedModelError(RuntimeError):
    """Raised by a ``ScriptedChatGenerator`` created with ``fail=True``."""


def _tool_names(tools: Any) -> list[str]:
    try:
        return [tool.name for tool in flatten_tools_or_toolsets(tools)]
    except (TypeError, AttributeError):  # a bare list of names from a loopback server
        return [str(tool) for tool in tools or []]


def _condensed_turns(texts: list[str]) -> int:
    """The model turns a scripted conversation summary says it replaced (its summaries start with ``turns: N``)."""
    return max((int(found.group(1)) for text in texts if (found := _TURNS.search(text))), default=0)


@component
class ScriptedChatGenerator(InitSerialized):
    """
    A chat generator that answers like one role of a deep research run, by fixed rules over its prompt.

    :param role: "scope", "orchestrator", "researcher", "summarizer", "writer", "judge", "agent", "causal",
        "summarize" or "analysis".
    :param subtopics: For the orchestrator: the sub-topics it delegates, all in its first turn. Default: two
        sub-topics derived from the brief.
    :param read_top_k: For the researcher: how many search results it reads.
    :param invented_urls: For the researcher, the writer and summarize: URLs cited although never retrieved (to test
        citation verification).
    :param unsupported_claims: For summarize: claims it states although no finding supports them.
    :param corrects: For summarize: when it drops an unsupported claim (see docs/testing.md).
    :param fail: Raise :class:`ScriptedModelError` on every call.
    :param steps: For the deep agent: its turns; for the analysis model: its decisions, one per round (see
        :data:`Step`).
    :raises ConfigurationError: If the role or ``corrects`` is unknown.
    """

    def __init__(
        self,
        *,
        role: Role,
        subtopics: list[str] | None = None,
        read_top_k: int = 2,
        invented_urls: list[str] | None = None,
        unsupported_claims: list[str] | None = None,
        corrects: Corrects = "on_rewrite",
        fail: bool = False,
        steps: list[Step] | None = None,
    ) -> None:
        if role not in _ALL_ROLES:
            raise ConfigurationError(f"role must be one of {', '.join(_ALL_ROLES)}; got {role!r}.")
        if corrects not in _CORRECTS:
            raise ConfigurationError(f"corrects must be one of {', '.join(_CORRECTS)}; got {corrects!r}.")
        self.role = role
        self.subtopics = subtopics
        self.read_top_k = read_top_k
        self.invented_urls = list(invented_urls or [])
        self.unsupported_claims = list(unsupported_claims or [])
        self.corrects = corrects
        self.fail = fail
        self.steps = list(steps or [])

    def to_dict(self) -> dict[str, Any]:
        """:returns: The serialized generator (its lists copied)."""
        return default_to_dict(self, **{name: copy.copy(value) for name, value in init_parameters(self).items()})

    @component.output_types(replies=list[ChatMessage])
    def run(self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any) -> dict[str, list[ChatMessage]]:
        """
        Answer the prompt by the role's rules.

        :param messages: The prompt.
        :param tools: The tools offered; the researcher calls the search tools among them (``web_search`` and every
            datastore's ``search_<name>``), then ``read_url`` when offered.
        :param kwargs: Other generator arguments; a ``streaming_callback`` receives the reply's text as one chunk.
        :returns: ``{"replies": [reply]}`` with usage counted in words.
        :raises ScriptedModelError: If created with ``fail=True``.
        """
        result = self._answer(messages, tools)
        if (callback := kwargs.get("streaming_callback")) is not None:
            callback(self._chunk(result["replies"][0]))
        return result

    @component.output_types(replies=list[ChatMessage])
    async def run_async(
        self, messages: list[ChatMessage], tools: Any = None, **kwargs: Any
    ) -> dict[str, list[ChatMessage]]:
        """
        Async variant of :meth:`run`.

        :param messages: The prompt.
        :param tools: The tools offered.
        :param kwargs: Other generator arguments; a ``streaming_callback`` (plain or coroutine) receives the reply.
        :returns: ``{"replies": [reply]}``.
        """
        result = self._answer(messages, tools)
        if (callback := kwargs.get("streaming_callback")) is not None:
            delivered = callback(self._chunk(result["replies"][0]))
            if inspect.isawaitable(delivered):
                await delivered
        return result

    def _chunk(self, reply: ChatMessage) -> StreamingChunk:
        return StreamingChunk(content=reply.text or "", meta={"model": f"scripted-{self.role}"})

    def _answer(self, messages: list[ChatMessage], tools: Any) -> dict[str, list[ChatMessage]]:
        if self.fail:
            raise ScriptedModelError(f"scripted {self.role} model failure")
        reply = self._reply(messages, tools)
        if isinstance(reply, str):
            reply = ChatMessage.from_assistant(reply)
        prompt_words = sum(len((m.text or "").split()) for m in messages)
        usage = {"prompt_tokens": prompt_words, "completion_tokens": len((reply.text or "").split())}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        finish = "tool_calls" if reply.tool_calls else "stop"
        reply.meta.update({"model": f"scripted-{self.role}", "usage": usage, "finish_reason": finish})
        return {"replies": [reply]}

    def _reply(self, messages: list[ChatMessage], tools: Any) -> ChatMessage | str:
        if self.role == "agent":
            return self._agent(messages)
        if self.role == "scope":
            question = prompt_variables(messages, "scope").get("question") or last_user_text(messages)
            return f"Research brief: find reliable, current sources that answer: {str(question).strip()}"
        if self.role == "orchestrator":
            return self._orchestrator(messages)
        if self.role == "researcher":
            offered = _tool_names(tools) if tools else []
            return researcher_reply(messages, offered, read_top_k=self.read_top_k, invented_urls=self.invented_urls)
        if self.role == "summarizer":
            content = prompt_variables(messages, "summarizer", "summarizer_passages").get("content")
            text = str(content if content is not None else last_user_text(messages))
            return words(text, 40) or "The document is empty."
        if self.role == "analysis":
            found = next((prompt_of(m) for m in reversed(messages) if prompt_of(m) is not None), None)
            name, given = found if found is not None else ("analysis", analysis_variables(last_user_text(messages)))
            return analysis_reply(name, given, self.steps)
        if self.role == "writer":
            return writer_reply(messages, self.invented_urls)
        if self.role == "judge":
            return _judge(messages)
        if self.role == "causal":
            return causal_reply(prompt_variables(messages, "causal"))
        return summarize_reply(messages, self.unsupported_claims, self.corrects, self.invented_urls)

    def _agent(self, messages: list[ChatMessage]) -> ChatMessage | str:
        found = prompt_of(messages[-1]) if messages else None
        name, given = found if found is not None else ("", {})
        if name == "judge":
            return _judge(messages)
        if name == "reflect":
            plan = given.get("plan") or "1. Use the tools. 2. Answer."
            return json.dumps({"step_ok": True, "critique": "The step moved the task forward.", "plan": plan})
        if name == "condense":
            lines = [str(line) for line in given.get("transcript") or []]
            turns = _condensed_turns(lines) + sum(1 for line in lines if line.startswith("assistant"))
            return f"turns: {turns}\n" + "\n".join(f"- {words(line, 12)}" for line in lines)
        assistant = sum(1 for message in messages if message.is_from(ChatRole.ASSISTANT))
        turn = assistant + _condensed_turns([m.text or "" for m in messages if m.is_from(ChatRole.USER)])
        step = self.steps[turn] if turn < len(self.steps) else "Done."
        if isinstance(step, str) or step is None:
            return step or "Done."
        calls: list[dict[str, Any]] = step if isinstance(step, list) else [step]
        return ChatMessage.from_assistant(
            tool_calls=[
                ToolCall(tool_name=call["tool_name"], arguments=dict(call.get("arguments") or {})) for call in calls
            ]
        )

    def _orchestrator(self, messages: list[ChatMessage]) -> ChatMessage | str:
        if tool_results(messages):
            return "Research is complete."
        brief = last_user_text(messages)
        subtopics = self.subtopics or [f"Background: {brief}", f"Recent developments: {brief}"]
        calls = [ToolCall(tool_name=RESEARCH_SUBTOPIC, arguments={"subtopic": s}) for s in subtopics]
        return ChatMessage.from_assistant(tool_calls=calls)


def _judge(messages: list[ChatMessage]) -> str:
    given = prompt_variables(messages, "judge") or judge_variables(last_user_text(messages))  # over HTTP: no meta
    return judge_reply(given)
