"""
A streamable-HTTP request whose client went away is cancelled, as if the client had cancelled it.

Over stdio the SDK cancels every request in flight when the client's end closes. Over streamable HTTP it does not:
a client whose connection drops (a crash, a reset, a closed laptop) without sending ``notifications/cancelled``
leaves its ``deep_research`` call running, reading and paying, to a report no one can receive (the server keeps no
event store, so the stream cannot be resumed). :class:`CancelOnDisconnect` is an ASGI middleware around the SDK's
app: when a POST's response ends before its answer was sent, it hands the SDK, in the same session, the
``notifications/cancelled`` the client would have sent for each request of that POST, so the run stops through the
SDK's own cancellation path (the tool's task is cancelled; so is the run).
"""

from __future__ import annotations

import json
from typing import Any

import anyio
from haystack import logging

from haystack_deep_research.serving.guard import ASGIApp, Message, Receive, Scope, Send

__all__ = ["CancelOnDisconnect"]

logger = logging.getLogger(__name__)

_KEPT_HEADERS = {b"host", b"origin", b"authorization", b"mcp-session-id", b"mcp-protocol-version"}
_CANCEL_SECONDS = 5.0


def _request_ids(body: bytes) -> list[Any]:
    """The ids of the JSON-RPC requests in a POST body (one message or a batch); none for anything else."""
    try:
        parsed = json.loads(body)
    except ValueError:
        return []
    messages = parsed if isinstance(parsed, list) else [parsed]
    return [m["id"] for m in messages if isinstance(m, dict) and "method" in m and m.get("id") is not None]


class CancelOnDisconnect:
    """
    ASGI middleware: cancel the requests of a POST whose client went away before their answer (module docstring).

    :param app: The SDK's streamable-HTTP app.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        body: list[bytes] = []
        answered = False

        async def receiving() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                body.append(message.get("body", b""))
            return message

        async def sending(message: Message) -> None:
            nonlocal answered
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                answered = True
            await send(message)

        try:
            await self.app(scope, receiving, sending)
        finally:
            if not answered and (ids := _request_ids(b"".join(body))):
                with anyio.CancelScope(shield=True), anyio.move_on_after(_CANCEL_SECONDS):
                    for request_id in ids:
                        await self._cancel(scope, request_id)

    async def _cancel(self, scope: Scope, request_id: Any) -> None:
        logger.info(
            "The client of request {request_id} went away before its answer: cancelling it.", request_id=request_id
        )
        notice = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": request_id, "reason": "the client went away"},
        }
        payload = json.dumps(notice).encode()
        headers = [(name, value) for name, value in scope["headers"] if name.lower() in _KEPT_HEADERS]
        headers += [(b"content-type", b"application/json"), (b"accept", b"application/json, text/event-stream")]
        delivered = False

        async def receive_notice() -> Message:
            nonlocal delivered
            if delivered:
                return {"type": "http.disconnect"}
            delivered = True
            return {"type": "http.request", "body": payload, "more_body": False}

        async def discard(message: Message) -> None:
            """The SDK's answer to the notice (202) goes nowhere: its client is gone."""

        await self.app({**scope, "headers": headers}, receive_notice, discard)
