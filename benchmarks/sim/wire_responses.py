"""Responses API wire format: the ``response`` object and the typed SSE events the ``openai`` client parses."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

from benchmarks.sim.reply import IdFactory, Reply, Usage, split_text

STREAM_PIECES = 16


def _usage(usage: Usage) -> dict[str, Any]:
    return {
        "input_tokens": usage.input_tokens,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": usage.total,
    }


def _items(reply: Reply, ids: IdFactory) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if reply.text:
        items.append(
            {
                "id": ids.next("msg"),
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": reply.text, "annotations": [], "logprobs": []}],
            }
        )
    items.extend(
        {
            "id": ids.next("fc"),
            "type": "function_call",
            "call_id": call.call_id,
            "name": call.name,
            "arguments": json.dumps(call.arguments),
            "status": "completed",
        }
        for call in reply.tool_calls
    )
    return items


def _envelope(
    response_id: str, model: str, tools: list[dict[str, Any]], output: list[dict[str, Any]], usage: Usage | None
) -> dict[str, Any]:
    now = time.time()
    return {
        "id": response_id,
        "object": "response",
        "created_at": now,
        "completed_at": now if usage is not None else None,
        "status": "completed" if usage is not None else "in_progress",
        "model": model,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": tools,
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "metadata": {},
        "temperature": 1.0,
        "top_p": 1.0,
        "text": {"format": {"type": "text"}},
        "truncation": "disabled",
        "usage": _usage(usage) if usage is not None else None,
    }


def response(reply: Reply, *, model: str, usage: Usage, tools: list[dict[str, Any]], ids: IdFactory) -> dict[str, Any]:
    """
    A non-streaming ``response`` object.

    :param reply: The model turn.
    :param model: The model name to echo.
    :param usage: The billed tokens.
    :param tools: The function tools of the request, echoed as the API does.
    :param ids: Where ids come from.
    :returns: The JSON body.
    """
    return _envelope(ids.next("resp"), model, tools, _items(reply, ids), usage)


def events(
    reply: Reply, *, model: str, usage: Usage, tools: list[dict[str, Any]], ids: IdFactory
) -> Iterator[dict[str, Any]]:
    """
    The typed stream events of a turn, ``response.created`` to ``response.completed``, numbered in order.

    :param reply: The model turn.
    :param model: The model name to echo.
    :param usage: The billed tokens.
    :param tools: The function tools of the request, echoed.
    :param ids: Where ids come from.
    :returns: An iterator of event bodies (each has ``type``, the SSE event name).
    """
    response_id = ids.next("resp")
    items = _items(reply, ids)
    sequence = iter(range(1_000_000))

    def event(kind: str, **fields: Any) -> dict[str, Any]:
        return {"type": kind, "sequence_number": next(sequence), **fields}

    yield event("response.created", response=_envelope(response_id, model, tools, [], None))
    yield event("response.in_progress", response=_envelope(response_id, model, tools, [], None))
    for index, item in enumerate(items):
        if item["type"] == "message":
            yield from _message_events(event, index, item)
        else:
            yield from _call_events(event, index, item)
    yield event("response.completed", response=_envelope(response_id, model, tools, items, usage))


def _message_events(event: Any, index: int, item: dict[str, Any]) -> Iterator[dict[str, Any]]:
    text = item["content"][0]["text"]
    yield event("response.output_item.added", output_index=index, item={**item, "status": "in_progress", "content": []})
    empty_part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
    yield event("response.content_part.added", item_id=item["id"], output_index=index, content_index=0, part=empty_part)
    for piece in split_text(text, STREAM_PIECES):
        yield event(
            "response.output_text.delta",
            item_id=item["id"],
            output_index=index,
            content_index=0,
            delta=piece,
            logprobs=[],
        )
    yield event(
        "response.output_text.done", item_id=item["id"], output_index=index, content_index=0, text=text, logprobs=[]
    )
    yield event(
        "response.content_part.done", item_id=item["id"], output_index=index, content_index=0, part=item["content"][0]
    )
    yield event("response.output_item.done", output_index=index, item=item)


def _call_events(event: Any, index: int, item: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield event(
        "response.output_item.added", output_index=index, item={**item, "status": "in_progress", "arguments": ""}
    )
    for piece in split_text(item["arguments"], 4):
        yield event("response.function_call_arguments.delta", item_id=item["id"], output_index=index, delta=piece)
    yield event(
        "response.function_call_arguments.done",
        item_id=item["id"],
        output_index=index,
        name=item["name"],
        arguments=item["arguments"],
    )
    yield event("response.output_item.done", output_index=index, item=item)
