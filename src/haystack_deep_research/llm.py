"""One call to a chat generator, sync or async, returning its first reply."""

from __future__ import annotations

import asyncio
from typing import Any

from haystack.dataclasses import ChatMessage


def first_reply(result: dict[str, Any]) -> ChatMessage | None:
    """
    Take the first reply of a chat generator's result.

    :param result: What ``run`` / ``run_async`` returned.
    :returns: The first reply, or ``None`` when there is none.
    """
    replies = result.get("replies") or []
    return replies[0] if replies else None


def call(generator: Any, messages: list[ChatMessage]) -> ChatMessage | None:
    """
    Call a chat generator once, without tools.

    :param generator: A Haystack chat generator.
    :param messages: The prompt.
    :returns: The first reply, or ``None`` when the generator returned none.
    """
    return first_reply(generator.run(messages=messages))


async def call_async(generator: Any, messages: list[ChatMessage]) -> ChatMessage | None:
    """
    Call a chat generator once, without tools, awaiting ``run_async`` where it has one.

    A generator without ``run_async`` runs in a worker thread, so the event loop is never blocked.

    :param generator: A Haystack chat generator.
    :param messages: The prompt.
    :returns: The first reply, or ``None`` when the generator returned none.
    """
    if hasattr(generator, "run_async"):
        return first_reply(await generator.run_async(messages=messages))
    return first_reply(await asyncio.to_thread(generator.run, messages=messages))
