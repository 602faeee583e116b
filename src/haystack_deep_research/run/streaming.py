"""
Streaming every model of a run to one callback, each chunk tagged with its role.

A run holds one Haystack streaming callback (``ResearchRun.streaming_callback``): the one its shape's ``run`` was given
(``run(messages, streaming_callback=...)``, or ``RunInputs(streaming_callback=...)``); an Agent run by other means hands
its own to the library's tools (``tool_streaming_callback_passthrough``), and the first of them adopts it. Every model
call the library makes itself (:func:`~haystack_deep_research.run.phases.ask`) and every nested agent it runs passes it
on, wrapped so that each :class:`~haystack.dataclasses.StreamingChunk` carries the role of the model that produced it in
``chunk.meta[ROLE_META]`` (and a sub-researcher's sub-topic or a subagent's name in ``chunk.meta[AGENT_META]``). Chunks
stay Haystack's own ``StreamingChunk``; a tagged chunk is a copy, the original is never changed.

A coroutine callback reaches async model calls only: the sync path cannot await it (Haystack's own sync ``run``
refuses one too). A plain callback reaches both; on the async path it runs inline, as Haystack runs it.
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from haystack.dataclasses import StreamingChunk

__all__ = [
    "AGENT_META",
    "ROLE_META",
    "accepts_streaming",
    "drop_chunk",
    "for_async",
    "for_sync",
    "stream_usage_kwargs",
    "tag_chunk",
]

ROLE_META = "haystack_deep_research.role"
"""The ``StreamingChunk.meta`` key naming the role of the model that streamed the chunk."""
AGENT_META = "haystack_deep_research.agent"
"""The ``StreamingChunk.meta`` key naming the sub-researcher's sub-topic or the subagent that streamed the chunk."""

SyncCallback = Callable[[StreamingChunk], None]
AsyncCallback = Callable[[StreamingChunk], Awaitable[None]]


def _is_async(callback: Any) -> bool:
    method = getattr(type(callback), "__call__", None)  # noqa: B004 - the call method of a callable object
    return inspect.iscoroutinefunction(callback) or inspect.iscoroutinefunction(method)


def tag_chunk(chunk: StreamingChunk, role: str, agent: str = "") -> StreamingChunk:
    """
    :param chunk: A chunk as a model streamed it.
    :param role: The role of that model.
    :param agent: The sub-topic or subagent it works for, if any.
    :returns: A copy of the chunk whose meta names the role (a role already there, from a nested agent, is kept).
    """
    meta = {ROLE_META: role, **({AGENT_META: agent} if agent else {}), **chunk.meta}
    return dataclasses.replace(chunk, meta=meta)


def for_sync(callback: Any, role: str, agent: str = "") -> SyncCallback | None:
    """
    :param callback: The run's streaming callback, or ``None``.
    :param role: The role of the model it is passed to.
    :param agent: The sub-topic or subagent the model works for, if any.
    :returns: A plain callback tagging each chunk, or ``None`` (no callback, or a coroutine one).
    """
    if callback is None or _is_async(callback):
        return None

    def tagged(chunk: StreamingChunk) -> None:
        callback(tag_chunk(chunk, role, agent))

    return tagged


def for_async(callback: Any, role: str, agent: str = "") -> AsyncCallback | None:
    """
    :param callback: The run's streaming callback, or ``None``.
    :param role: The role of the model it is passed to.
    :param agent: The sub-topic or subagent the model works for, if any.
    :returns: A coroutine callback tagging each chunk, or ``None`` without a callback.
    """
    if callback is None:
        return None
    is_async = _is_async(callback)

    async def tagged(chunk: StreamingChunk) -> None:
        if is_async:
            await callback(tag_chunk(chunk, role, agent))
        else:
            callback(tag_chunk(chunk, role, agent))

    return tagged


def accepts_streaming(generator: Any) -> bool:
    """
    :param generator: A chat generator.
    :returns: Whether its ``run`` takes a ``streaming_callback`` (by name or through ``**kwargs``).
    """
    try:
        parameters = inspect.signature(generator.run).parameters
    except (TypeError, ValueError):
        return False
    return "streaming_callback" in parameters or any(p.kind is p.VAR_KEYWORD for p in parameters.values())


def drop_chunk(chunk: StreamingChunk) -> None:
    """A streaming callback that keeps nothing: the generator still assembles the whole reply."""


# Haystack's chat generators whose stream leaves the token usage out unless asked: module and class.
_USAGE_ON_REQUEST = (("haystack.components.generators.chat.openai", "OpenAIChatGenerator"),)


def stream_usage_kwargs(generator: Any) -> dict[str, Any]:
    """
    The generation settings that make a streamed reply carry its token usage, for generators that need them.

    Haystack's ``OpenAIChatGenerator`` (and subclasses such as Azure's) gets ``stream_options={"include_usage":
    True}`` unless its own ``generation_kwargs`` set ``stream_options``. Detection is by class, looked up only in
    modules already imported, so nothing is imported here.

    :param generator: A chat generator that is about to stream.
    :returns: The settings to add to the call, or ``{}``.
    """
    own = getattr(generator, "generation_kwargs", None) or {}
    if "stream_options" in own:
        return {}
    for module_name, class_name in _USAGE_ON_REQUEST:
        module = sys.modules.get(module_name)
        kind = getattr(module, class_name, None) if module is not None else None
        if isinstance(kind, type) and isinstance(generator, kind):
            return {"stream_options": {"include_usage": True}}
    return {}
