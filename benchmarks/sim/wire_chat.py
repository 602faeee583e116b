"""Chat Completions wire format: the JSON body and the SSE chunks the ``openai`` client parses."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

from benchmarks.sim.reply import IdFactory, Reply, Usage, split_text

STREAM_PIECES = 16


def _usage(usage: Usage) -> dict[str, Any]:
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.total,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
    }


def _finish_reason(reply: Reply) -> str:
    return "tool_calls" if reply.tool_calls else "length" if reply.cut else "stop"


def completion(reply: Reply, *, model: str, usage: Usage, ids: IdFactory) -> dict[str, Any]:
    """
    A non-streaming ``chat.completion`` object.

    :param reply: The model turn.
    :param model: The model name to echo.
    :param usage: The billed tokens.
    :param ids: Where ids come from.
    :returns: The JSON body.
    """
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None, "refusal": None, "annotations": []}
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": c.call_id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
            for c in reply.tool_calls
        ]
    return {
        "id": ids.next("chatcmpl"),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": _finish_reason(reply)}],
        "usage": _usage(usage),
        "service_tier": "default",
        "system_fingerprint": "fp_sim",
    }


def chunks(reply: Reply, *, model: str, usage: Usage, ids: IdFactory, include_usage: bool) -> Iterator[dict[str, Any]]:
    """
    The ``chat.completion.chunk`` objects of a streamed turn, in order (the ``[DONE]`` marker is the server's job).

    The first chunk carries the role; text and each tool call's arguments follow in pieces; the last choice chunk
    carries the finish reason; with ``stream_options.include_usage`` a final chunk with no choices carries usage.

    :param reply: The model turn.
    :param model: The model name to echo.
    :param usage: The billed tokens.
    :param ids: Where ids come from.
    :param include_usage: Whether the client asked for the usage chunk.
    :returns: An iterator of chunk bodies.
    """
    chunk_id = ids.next("chatcmpl")
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {
            "id": chunk_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "system_fingerprint": "fp_sim",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }
        if include_usage:
            body["usage"] = None
        return body

    yield chunk({"role": "assistant", "content": "", "refusal": None})
    for piece in split_text(reply.text, STREAM_PIECES):
        yield chunk({"content": piece})
    for index, call in enumerate(reply.tool_calls):
        opening = {
            "index": index,
            "id": call.call_id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        yield chunk({"tool_calls": [opening]})
        for piece in split_text(json.dumps(call.arguments), 4):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    yield chunk({}, _finish_reason(reply))
    if include_usage:
        yield {
            "id": chunk_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "system_fingerprint": "fp_sim",
            "choices": [],
            "usage": _usage(usage),
        }
