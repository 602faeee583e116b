"""
A research run as a chat reply: the question from OpenAI-style chat messages, and the run streamed as chunks (each
event a reasoning chunk, which chat UIs show as the model's thinking, then the report as content).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import aclosing
from typing import Any, cast

from haystack.dataclasses import ChatMessage, ReasoningContent, StreamingChunk

from haystack_deep_research.errors import InvalidQuestionError
from haystack_deep_research.events import Event, UsageRecorded
from haystack_deep_research.run import EventStream
from haystack_deep_research.run._lifecycle import check_question

__all__ = ["question_from_chat", "question_from_text", "stream_research"]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: [{"type": "text", "text": "..."}, ...]
        return " ".join(str(part.get("text") or "") for part in content if isinstance(part, Mapping))
    return ""


def question_from_chat(messages: Sequence[Mapping[str, Any]]) -> str:
    """
    :param messages: OpenAI-style chat messages (``{"role": "user", "content": "..."}``; content may be a list of
        text parts).
    :returns: The text of the last user message, stripped.
    :raises InvalidQuestionError: If there is no user message with text, or its text is longer than
        ``MAX_QUESTION_CHARS``.
    """
    for message in reversed(list(messages or [])):
        if isinstance(message, Mapping) and message.get("role") == "user":
            text = _text(message.get("content")).strip()
            if text:
                return check_question(text)
            break
    raise InvalidQuestionError("No research question: the last user message must hold the question as text.")


def question_from_text(question: Any) -> str:
    """
    :param question: A research question as a server received it (the ``question`` of a request body).
    :returns: The question, stripped.
    :raises InvalidQuestionError: If it is not a string, is blank, or is longer than ``MAX_QUESTION_CHARS``.
    """
    text = question.strip() if isinstance(question, str) else ""
    if not text:
        raise InvalidQuestionError("No research question: send {'question': '...'} with a non-empty question.")
    return check_question(text)


async def stream_research(
    agent: Any, question: str, *, progress: bool = True, **run_kwargs: Any
) -> AsyncGenerator[StreamingChunk, None]:
    """
    Run an agent and stream the run: one reasoning chunk per event, then the report as one content chunk; closing
    the stream early (a client that disconnects) cancels the run.

    :param agent: An agent of this library.
    :param question: The research question.
    :param progress: Whether to stream the events as reasoning chunks.
    :param run_kwargs: More arguments of ``run_async`` (``inputs``, ...).
    :returns: The chunks, as an async generator.
    """
    stream = EventStream(agent, messages=[ChatMessage.from_user(question)], **run_kwargs)
    async with aclosing(cast("AsyncGenerator[Event, None]", aiter(stream))) as events:
        async for event in events:
            if progress and not isinstance(event, UsageRecorded):  # a count per model call: the result has the total
                yield StreamingChunk(
                    content="", index=0, reasoning=ReasoningContent(reasoning_text=f"{event.describe()}\n")
                )
    result = stream.result or {}
    yield StreamingChunk(content=str(result.get("report") or ""), finish_reason="stop")
