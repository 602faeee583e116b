"""Fixtures of the command's tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from haystack_deep_research.testing._server import LoopbackServer, RequestHandler


class _AnyModelServer(LoopbackServer):
    """A model server that is there, at every API's address: it refuses each request as a bad one (HTTP 400)."""

    def _handle(self, handler: RequestHandler) -> None:
        handler.read_body()
        handler.send_bytes(400, b'{"error": {"message": "not a request it serves"}}', content_type="application/json")


@pytest.fixture
def model_server() -> Iterator[str]:
    """The ``--base-url`` of a server that is there (the command checks it before a run); no model answers."""
    with _AnyModelServer() as server:
        yield f"{server.base_url}/v1"
