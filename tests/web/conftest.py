"""Fixtures for the web layer tests: a loopback HTTP server the tests script route by route."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from haystack_deep_research.web import FetchLimits, UrlPolicy

Handler = Callable[[BaseHTTPRequestHandler], None]


@dataclass
class LoopbackServer:
    """An HTTP server on 127.0.0.1 whose responses are set per path by the test."""

    port: int
    routes: dict[str, Handler] = field(default_factory=dict)
    seen_hosts: list[str] = field(default_factory=list)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def route(self, path: str, handler: Handler) -> None:
        self.routes[path] = handler

    def reply(
        self,
        path: str,
        body: bytes,
        *,
        status: int = 200,
        content_type: str | None = "text/html; charset=utf-8",
        headers: dict[str, str] | None = None,
    ) -> None:
        """Answer ``path`` with a complete response."""

        def handler(request: BaseHTTPRequestHandler) -> None:
            request.send_response(status)
            if content_type is not None:
                request.send_header("Content-Type", content_type)
            request.send_header("Content-Length", str(len(body)))
            for name, value in (headers or {}).items():
                request.send_header(name, value)
            request.end_headers()
            request.wfile.write(body)

        self.route(path, handler)

    def redirect(self, path: str, location: str, *, status: int = 302) -> None:
        self.reply(path, b"", status=status, content_type=None, headers={"Location": location})

    def stream(
        self,
        path: str,
        chunks: int,
        chunk: bytes,
        *,
        delay: float = 0.0,
        content_type: str = "text/plain",
        content_length: int | None = None,
    ) -> None:
        """Answer ``path`` with ``chunks`` writes of ``chunk``, ``delay`` seconds apart; the body ends at close."""

        def handler(request: BaseHTTPRequestHandler) -> None:
            request.send_response(200)
            request.send_header("Content-Type", content_type)
            if content_length is not None:
                request.send_header("Content-Length", str(content_length))
            request.end_headers()
            try:
                for _ in range(chunks):
                    request.wfile.write(chunk)
                    request.wfile.flush()
                    if delay:
                        time.sleep(delay)
            except OSError:
                return  # the client hung up, which is what the size and time limits are for

        self.route(path, handler)


class _RequestHandler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:
        owner = self.server.owner
        owner.seen_hosts.append(self.headers.get("Host", ""))
        handler = owner.routes.get(self.path)
        if handler is None:
            self.send_error(404)
            return
        handler(self)

    def log_message(self, format: str, *args: object) -> None:
        return


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    owner: LoopbackServer


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    httpd = _Server(("127.0.0.1", 0), _RequestHandler)
    owner = LoopbackServer(port=httpd.server_address[1])
    httpd.owner = owner
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield owner
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


@pytest.fixture
def loopback_policy() -> UrlPolicy:
    """A policy that lets the tests reach their own server on 127.0.0.1."""
    return UrlPolicy(allow_hosts=("127.0.0.1",))


@pytest.fixture
def quick_limits() -> FetchLimits:
    """Limits small enough that a failing test never waits long."""
    return FetchLimits(connect_timeout=2.0, read_timeout=2.0, total_timeout=5.0)
