"""Reading a conversation the way the scripted roles do: the last user text, the prompt a message was rendered from,
tool results."""

from __future__ import annotations

from typing import Any

from haystack.dataclasses import ChatMessage, ChatRole

from haystack_deep_research._prompts import prompt_of

__all__ = ["last_turn", "last_user_text", "named_prompt", "prompt_variables", "tool_results", "words"]


def last_user_text(messages: list[ChatMessage]) -> str:
    for message in reversed(messages):
        if message.is_from(ChatRole.USER) and message.text:
            return message.text
    return ""


def named_prompt(messages: list[ChatMessage], *names: str) -> tuple[str, dict[str, Any]]:
    """The name and variables of the last user message rendered from one of the named templates."""
    for message in reversed(messages):
        found = prompt_of(message) if message.is_from(ChatRole.USER) else None
        if found is not None and (not names or found[0] in names):
            return found
    return "", {}


def prompt_variables(messages: list[ChatMessage], *names: str) -> dict[str, Any]:
    """The variables of the last user message rendered from one of the named templates (``{}`` if none)."""
    return named_prompt(messages, *names)[1]


def tool_results(messages: list[ChatMessage], *, errors: bool = True) -> list[tuple[str, str]]:
    return [
        (m.tool_call_result.origin.tool_name, str(m.tool_call_result.result))
        for m in messages
        if m.tool_call_result is not None and (errors or not m.tool_call_result.error)
    ]


def last_turn(messages: list[ChatMessage]) -> list[tuple[str, str]]:
    """The successful tool results after the last assistant message."""
    since = max((i for i, m in enumerate(messages) if m.is_from(ChatRole.ASSISTANT)), default=-1)
    return tool_results(messages[since + 1 :], errors=False)


def words(text: str, limit: int) -> str:
    return " ".join(text.split()[:limit])
