"""
One shape for a model request, whichever OpenAI API carried it.

Both the Chat Completions body (``messages``, ``tools``) and the Responses body (``instructions``, ``input``,
``tools``) are read into a :class:`Conversation`, so the role policies never see wire details.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from benchmarks.sim.tokens import MESSAGE_OVERHEAD_TOKENS, count_json, count_text

Api = Literal["chat", "responses"]


@dataclass(frozen=True)
class ToolSpec:
    """A function tool offered to the model."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True)
class ToolCall:
    """A function call the model made (or is about to make)."""

    call_id: str
    name: str
    arguments: dict[str, Any]


@dataclass
class Message:
    """One turn: ``role`` is system, user, assistant or tool; a tool turn carries ``tool_call_id``."""

    role: str
    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None


@dataclass
class Conversation:
    """A request as the policies see it."""

    api: Api
    model: str
    stream: bool
    messages: list[Message]
    tools: list[ToolSpec]
    include_usage: bool = True
    raw_tools: list[dict[str, Any]] = field(default_factory=list)
    max_output_tokens: int | None = None
    """The request's cap on the reply (``max_completion_tokens`` or ``max_tokens``; ``max_output_tokens``)."""

    def input_tokens(self) -> int:
        """Tokens of everything the model is sent: text, tool calls, tool results and tool schemas."""
        total = sum(count_json(t.parameters) + count_text(t.name + t.description) for t in self.tools)
        for message in self.messages:
            total += MESSAGE_OVERHEAD_TOKENS + count_text(message.text)
            total += sum(count_text(c.name) + count_json(c.arguments) for c in message.tool_calls)
        return total

    def first_user_text(self) -> str:
        """The text of the first user message, or an empty string."""
        return next((m.text for m in self.messages if m.role == "user"), "")

    def calls_made(self) -> list[ToolCall]:
        """Every tool call the assistant made so far, oldest first."""
        return [c for m in self.messages if m.role == "assistant" for c in m.tool_calls]

    def tool_results(self) -> dict[str, str]:
        """Tool results by the id of the call they answer."""
        return {m.tool_call_id: m.text for m in self.messages if m.role == "tool" and m.tool_call_id is not None}

    def all_text(self) -> str:
        """Every message's text joined, for roles that work from their whole input."""
        return "\n".join(m.text for m in self.messages if m.text)


def _parts_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_parts_text(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)
    return str(content)


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw or "{}")
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _cap(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def parse_chat(body: dict[str, Any]) -> Conversation:
    """
    Read a Chat Completions request body.

    :param body: The decoded JSON body of ``POST /v1/chat/completions``.
    :returns: The conversation.
    """
    messages = []
    for raw in body.get("messages") or []:
        calls = [
            ToolCall(
                c.get("id", ""),
                c.get("function", {}).get("name", ""),
                _arguments(c.get("function", {}).get("arguments")),
            )
            for c in raw.get("tool_calls") or []
        ]
        messages.append(
            Message(raw.get("role", "user"), _parts_text(raw.get("content")), calls, raw.get("tool_call_id"))
        )
    raw_tools = list(body.get("tools") or [])
    tools = [
        ToolSpec(f.get("name", ""), f.get("description") or "", f.get("parameters") or {})
        for f in (t.get("function", {}) for t in raw_tools)
    ]
    options = body.get("stream_options") or {}
    return Conversation(
        api="chat",
        model=str(body.get("model", "")),
        stream=bool(body.get("stream")),
        messages=messages,
        tools=tools,
        include_usage=bool(options.get("include_usage", False)),
        raw_tools=raw_tools,
        max_output_tokens=_cap(body.get("max_completion_tokens", body.get("max_tokens"))),
    )


def parse_responses(body: dict[str, Any]) -> Conversation:
    """
    Read a Responses API request body.

    :param body: The decoded JSON body of ``POST /v1/responses``.
    :returns: The conversation.
    """
    messages: list[Message] = []
    if body.get("instructions"):
        messages.append(Message("system", _parts_text(body["instructions"])))
    items = body.get("input") or []
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    for item in items:
        kind = item.get("type", "message")
        if kind == "function_call":
            call = ToolCall(item.get("call_id", ""), item.get("name", ""), _arguments(item.get("arguments")))
            if messages and messages[-1].role == "assistant" and not messages[-1].text:
                messages[-1].tool_calls.append(call)
            else:
                messages.append(Message("assistant", tool_calls=[call]))
        elif kind == "function_call_output":
            messages.append(Message("tool", _parts_text(item.get("output")), tool_call_id=item.get("call_id", "")))
        elif kind == "message":
            role = item.get("role", "user")
            messages.append(Message("system" if role == "developer" else role, _parts_text(item.get("content"))))
    raw_tools = [t for t in body.get("tools") or [] if t.get("type") == "function"]
    tools = [ToolSpec(t.get("name", ""), t.get("description") or "", t.get("parameters") or {}) for t in raw_tools]
    return Conversation(
        api="responses",
        model=str(body.get("model", "")),
        stream=bool(body.get("stream")),
        messages=messages,
        tools=tools,
        raw_tools=raw_tools,
        max_output_tokens=_cap(body.get("max_output_tokens")),
    )
