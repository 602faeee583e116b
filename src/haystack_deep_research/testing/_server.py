"""
Shared plumbing of the loopback test servers: a threaded HTTP server on ``127.0.0.1``, a bounded stop, and the
thread-safe request log of :mod:`._request_log`.

Both :class:`~haystack_deep_research.testing.web_server.LoopbackWebServer` and
:class:`~haystack_deep_research.testing.search_server.LoopbackSearchServer` subclass :class:`LoopbackServer` and
only decide how to answer one request.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from haystack_deep_research import _checks
from haystack_deep_research.errors import UsageError
from haystack_deep_research.testing._request_log import LoggedRequest, RequestLog
from haystack_deep_research.testing._validation import check_path

__all__ = ["LoopbackServer", "RequestHandler"]

_HOST = "127.0.0.1"
_MAX_REQUEST_BODY = 10 * 1024 * 1024


class RequestHandler(BaseHTTPRequestHandler):
    """
    Hands every request to the owning :class:`LoopbackServer`, logs it, and never writes to stderr.

    Responses are buffered: the end of a response leaves the server only after the request is in the log, so a client
    that has read a whole response always finds its request logged (reading the log right after a request is never a
    race).
    """

    server: _QuietHTTPServer
    server_version = "LoopbackServer/1.0"
    wbufsize = 1 << 20  # buffered: the framework flushes after the handler (and the log entry) is done
    status_sent: int = 0
    json_body: Any = None

    def log_message(self, format: str, *args: Any) -> None:
        """Drop the default access log."""

    def send_response(self, code: int, message: str | None = None) -> None:
        """Remember the status for the request log, then send the status line."""
        self.status_sent = code
        super().send_response(code, message)

    def read_body(self) -> bytes:
        """
        Read the request body announced by ``Content-Length``.

        :returns: The body, empty when there is none (bodies over 10 MiB are cut short).
        """
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = 0
        return self.rfile.read(min(max(length, 0), _MAX_REQUEST_BODY)) if length > 0 else b""

    def read_json(self) -> Any:
        """The request body decoded as JSON (``None`` if empty or not JSON), also kept for the request log."""
        raw = self.read_body()
        try:
            self.json_body = json.loads(raw) if raw else None
        except ValueError:
            self.json_body = None
        return self.json_body

    def send_bytes(
        self, status: int, body: bytes, *, content_type: str, headers: Mapping[str, str] | None = None
    ) -> None:
        """
        Send a complete response; the body is left out for ``HEAD``.

        :param status: The status code.
        :param body: The response body.
        :param content_type: The ``Content-Type`` header.
        :param headers: Extra response headers; a ``Content-Type`` or ``Content-Length`` here wins.
        """
        merged = {"Content-Type": content_type, "Content-Length": str(len(body)), **(headers or {})}
        self.send_response(status)
        for name, value in merged.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _dispatch(self) -> None:
        started = time.monotonic()
        try:
            self.server.owner._handle(self)
        except (BrokenPipeError, ConnectionResetError):
            pass  # The client went away; the log still records what was sent.
        finally:
            self.server.owner._log.append(
                LoggedRequest(
                    method=self.command,
                    path=self.path,
                    status=self.status_sent,
                    started=started,
                    finished=time.monotonic(),
                    headers=dict(self.headers.items()),
                    json_body=self.json_body,
                )
            )

    do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = _dispatch


class _QuietHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # socketserver's 5 drops bursts of connections, each then retried a second later

    def __init__(self, owner: LoopbackServer) -> None:
        self.owner = owner
        super().__init__((_HOST, 0), owner.handler_class)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Swallow handler errors instead of printing a traceback to stderr."""


class LoopbackServer:
    """
    Base class of the loopback servers: an HTTP server on ``127.0.0.1`` with an ephemeral port, run in a daemon
    thread. Use it as a context manager, or call :meth:`start` and :meth:`stop`.

    Subclasses implement :meth:`_handle`, and may set :attr:`handler_class` to a :class:`RequestHandler` subclass
    (for example one that speaks HTTP/1.1 with keep-alive).
    """

    handler_class: type[RequestHandler] = RequestHandler
    """The request handler the server runs for every connection."""

    def __init__(self) -> None:
        self._log = RequestLog()
        self._httpd: _QuietHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._lock = threading.Lock()

    @property
    def requests(self) -> RequestLog:
        """The requests answered so far, oldest first: a live, thread-safe log (see :class:`RequestLog`)."""
        return self._log

    @property
    def running(self) -> bool:
        """Whether the server is between :meth:`start` and :meth:`stop`."""
        return self._httpd is not None

    @property
    def port(self) -> int:
        """The ephemeral port picked at :meth:`start`; raises :class:`UsageError` if the server is not running."""
        if self._httpd is None:
            raise UsageError(f"{type(self).__name__} is not running; call start() or use it in a `with` block.")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """The root URL without a trailing slash, like ``"http://127.0.0.1:54321"``; needs a running server."""
        return f"http://{_HOST}:{self.port}"

    def url(self, path: str = "/") -> str:
        """
        The full URL of a path on this server.

        :param path: A path starting with ``/``, optionally with a query string.
        :returns: For example ``"http://127.0.0.1:54321/docs/a.html"``.
        :raises ConfigurationError: If ``path`` does not start with ``/``.
        :raises UsageError: If the server is not running.
        """
        return self.base_url + check_path(path)

    def start(self) -> Self:
        """
        Bind an ephemeral port on ``127.0.0.1`` and serve in a daemon thread.

        :returns: The server itself.
        :raises UsageError: If the server is already running.
        """
        with self._lock:
            if self._httpd is not None:
                raise UsageError(f"{type(self).__name__} is already running; call stop() before starting it again.")
            self._stopping.clear()
            httpd = _QuietHTTPServer(self)
            thread = threading.Thread(
                target=httpd.serve_forever,
                kwargs={"poll_interval": 0.05},
                name=f"{type(self).__name__}-{httpd.server_address[1]}",
                daemon=True,
            )
            thread.start()
            self._httpd, self._thread = httpd, thread
        return self

    def stop(self, *, timeout: float = 5.0) -> None:
        """
        Stop serving, close the socket and wait for the server thread; does nothing if not running.

        Requests still being answered (a slow body, say) are cut short.

        :param timeout: The most seconds to wait for the server thread.
        :raises ConfigurationError: If ``timeout`` is not positive.
        """
        _checks.number_in_range("timeout", timeout, 0)
        with self._lock:
            httpd, thread = self._httpd, self._thread
            self._httpd = self._thread = None
        if httpd is None or thread is None:
            return
        self._stopping.set()
        deadline = time.monotonic() + timeout
        # shutdown() waits without a limit, so it runs in its own daemon thread and is waited on with one.
        stopper = threading.Thread(target=httpd.shutdown, name=f"{thread.name}-stop", daemon=True)
        stopper.start()
        stopper.join(max(deadline - time.monotonic(), 0.0))
        thread.join(max(deadline - time.monotonic(), 0.0))
        httpd.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _wait_or_stop(self, seconds: float) -> bool:
        """Sleep ``seconds``, waking early and returning ``True`` if the server is stopping."""
        return self._stopping.wait(seconds) if seconds > 0 else self._stopping.is_set()

    def _handle(self, handler: RequestHandler) -> None:
        """Answer one request through ``handler``; ``handler.command`` and ``handler.path`` say what was asked."""
        raise NotImplementedError
