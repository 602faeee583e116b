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
        sources=Sources(
            search=WebSearchTool(api_key=Secret.from_token("test"), api_base_url=search.base_url),
            url_policy=UrlPolicy(allow_hosts=("127.0.0.1",)),
        ),
    )

The researcher calls the search tools it is offered, by name: ``web_search`` and every datastore's ``search_<name>``
(all in its first turn), then ``read_url`` on the top web results when offered, and cites the pages read and the
documents the stores returned. Over HTTP (see :class:`~haystack_deep_research.testing.LoopbackChatServer`) prompts
lose their meta: the writer then cites every address its prompt holds, and the analysis model (question, round,
depth) and the judge (source, claims) read what they need from the prompt's text.

``role="writer"`` plays the report writer of every shape, which writes the report in parts: one section
(``writer_section``, ``rewrite_section``: a ``##`` heading from the note's first line, then one cited finding per
allowed URL, which restates the first words of that page's summary when the note holds one, as the iterative agent's
findings do) and the opening (``writer_opening``, ``rewrite_opening``: a title — the brief itself when the prompt
asks for a lead-in to the findings, as the iterative agent's does — and the brief's first words as the
executive summary under the heading the prompt gives, plus one citation of each ``invented_urls`` entry, then one
short part per further heading the prompt asks for, such as the iterative agent's conclusions). Asked a question
about a finished run (``answer``, also over HTTP), it cites, for each passage, its first sentence that shares a word of
four letters or more with the question, and replies ``NOT_ANSWERED`` when none does. Over HTTP, where a prompt has no
meta, it writes a whole report citing every address the prompt holds.

``fail=True`` makes a generator raise :class:`ScriptedModelError` on every call, to exercise failure paths. Given a
``streaming_callback``, a generator streams its reply's text as one chunk before returning it.

``role="agent"`` plays a deep agent's model: its turns are ``steps`` in order (the turn number is the number of
assistant messages so far; after the last step it answers "Done."), and it also answers the prompts the deep agent's
layers send to the agent's own model: a reflection says the step was fine and keeps the plan, a conversation
summary keeps the first words of each message (and how many model turns it replaced, so the steps go on in order
after the conversation is condensed), and judging follows the judge's rule below.

``role="judge"`` plays the grounding judge (``create_deep_research_agent(grounding=Grounding(judge_llm=...))``) by a
word rule: a claim is supported when every number in it appears in the source text and at least half of its words
of four or more letters do too (case-insensitive); otherwise it is unsupported.

The research workflow (``create_research_workflow``) adds two roles. ``role="researcher"`` also plays its Execute
agent (the question of an ``execute_task``, or the claims of a ``replan_task``, is what it searches for).
``role="causal"`` answers a ``causal`` prompt with a numbered chain of the findings' cited lines.
The iterative agent (``create_iterative_research_agent``) adds ``role="analysis"``: round ``r`` of its decisions is
``steps[r - 1]`` (a topic, a list of topics, ``None`` to stop, or a raw reply), read from the prompt's ``round``
variable; without steps it searches an aspect of the question each round until ``depth``.

``role="summarize"`` plays the workflow's writer, which writes the summary in parts as every shape's writer does: a
section restates each cited line of its note whose URL is allowed; the opening gives the question's first words, how
many steps of the causal chain it considered, then states each of its ``unsupported_claims`` citing the first allowed
URL — unless its ``corrects`` rule drops it: ``"never"``; ``"on_rewrite"`` (dropped from a rewrite of the opening
that lists it as unsupported); ``"on_new_evidence"`` (dropped once a note mentions it, as the note of a replan about
it does) — and cites each ``invented_urls`` entry.
"""

from __future__ import annotations

import copy
import inspect
import json
import re
from typing import Any, Literal

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
"""The roles of the five models every run uses; ``"judge"`` is accepted too, for grounding, ``"agent"`` plays a
deep agent (``create_deep_agent``), ``"causal"`` and ``"summarize"`` play the research workflow's steps, and
``"analysis"`` the iterative agent's analysis model."""
_ALL_ROLES = (*ROLES, "judge", "agent", "causal", "summarize", "analysis")
Step = dict[str, Any] | list[Any] | str | None
"""One scripted step: for the deep agent a tool call ``{"tool_name": ..., "arguments": {...}}``, a list of them (one
turn) or a text reply; for the analysis model a round's decision (see ``_analysis_rules``)."""
Corrects = Literal["never", "on_rewrite", "on_new_evidence"]
_CORRECTS = ("never", "on_rewrite", "on_new_evidence")

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
    :param corrects: For summarize: when it drops an unsupported claim (see the module docstring).
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
        callback = kwargs.get("streaming_callback")
        if callback is not None:
            callback(self._chunk(result["replies"][0]))
        return result

    def _chunk(self, reply: ChatMessage) -> StreamingChunk:
        return StreamingChunk(content=reply.text or "", meta={"model": f"scripted-{self.role}"})

    def _answer(self, messages: list[ChatMessage], tools: Any) -> dict[str, list[ChatMessage]]:
        if self.fail:
            raise ScriptedModelError(f"scripted {self.role} model failure")
        if self.role == "researcher":
            reply = self._researcher(messages, _tool_names(tools) if tools else [])
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
        :param kwargs: Other generator arguments; a ``streaming_callback`` (plain or coroutine) receives the reply.
        :returns: ``{"replies": [reply]}``.
        """
        result = self._answer(messages, tools)
        callback = kwargs.get("streaming_callback")
        if callback is not None:
            delivered = callback(self._chunk(result["replies"][0]))
            if inspect.isawaitable(delivered):
                await delivered
        return result

    def _agent(self, messages: list[ChatMessage]) -> ChatMessage | str:
        found = prompt_of(messages[-1]) if messages else None
        name, given = found if found is not None else ("", {})
        if name == "judge":
            return self._judge(messages)
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

    def _scope(self, messages: list[ChatMessage]) -> str:
        question = prompt_variables(messages, "scope").get("question") or last_user_text(messages)
        return f"Research brief: find reliable, current sources that answer: {str(question).strip()}"

    def _orchestrator(self, messages: list[ChatMessage]) -> ChatMessage | str:
        if tool_results(messages):
            return "Research is complete."
        brief = last_user_text(messages)
        subtopics = self.subtopics or [f"Background: {brief}", f"Recent developments: {brief}"]
        calls = [ToolCall(tool_name=RESEARCH_SUBTOPIC, arguments={"subtopic": s}) for s in subtopics]
        return ChatMessage.from_assistant(tool_calls=calls)

    def _researcher(self, messages: list[ChatMessage], offered: list[str]) -> ChatMessage | str:
        return researcher_reply(messages, offered, read_top_k=self.read_top_k, invented_urls=self.invented_urls)

    def _summarizer(self, messages: list[ChatMessage]) -> str:
        content = prompt_variables(messages, "summarizer", "summarizer_passages").get("content")
        return words(str(content if content is not None else last_user_text(messages)), 40) or "The document is empty."

    def _analysis(self, messages: list[ChatMessage]) -> str:
        found = next((prompt_of(m) for m in reversed(messages) if prompt_of(m) is not None), None)
        name, given = found if found is not None else ("analysis", analysis_variables(last_user_text(messages)))
        return analysis_reply(name, given, self.steps)

    def _writer(self, messages: list[ChatMessage]) -> str:
        return writer_reply(messages, self.invented_urls)

    def _judge(self, messages: list[ChatMessage]) -> str:
        given = prompt_variables(messages, "judge") or judge_variables(last_user_text(messages))  # over HTTP: no meta
        return judge_reply(given)

    def _causal(self, messages: list[ChatMessage]) -> str:
        return causal_reply(prompt_variables(messages, "causal"))

    def _summarize(self, messages: list[ChatMessage]) -> str:
        return summarize_reply(messages, self.unsupported_claims, self.corrects, self.invented_urls)
