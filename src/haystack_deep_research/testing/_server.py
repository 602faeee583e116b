"""
What the loopback test servers share: a threaded HTTP server on ``127.0.0.1`` with a bounded stop, the request log,
and the checks of a path and of headers (each raising a ``ConfigurationError`` that says what to change). Each
server subclasses :class:`LoopbackServer` and only decides how to answer one request.
"""

from __future__ import annotations

import bisect
import json
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self, overload

from haystack_deep_research import _checks
from haystack_deep_research.errors import ConfigurationError, UsageError

__all__ = ["LoggedRequest", "LoopbackServer", "RequestHandler", "RequestLog"]


@dataclass(frozen=True)
class LoggedRequest:
    """
    One request a loopback server answered: ``path`` as sent (query included), ``status`` ``0`` if none was sent,
    ``started`` and ``finished`` by ``time.monotonic()``, ``json_body`` ``None`` when the body was empty or not JSON.
    """

    method: str
    path: str
    status: int
    started: float
    finished: float
    headers: Mapping[str, str] = field(default_factory=dict)
    json_body: Any = None

    @property
    def duration(self) -> float:
        """Seconds between reading the request and finishing the response."""
        return self.finished - self.started


class RequestLog(Sequence[LoggedRequest]):
    """
    A thread-safe list of :class:`LoggedRequest`, in arrival order: a request is logged when its response is finished,
    which on a threaded server is not always the order they arrived in, so each is put in its place by ``started``.
    """

    def __init__(self) -> None:
        self._entries: list[LoggedRequest] = []
        self._changed = threading.Condition()

    def append(self, entry: LoggedRequest) -> None:
        with self._changed:
            bisect.insort(self._entries, entry, key=lambda logged: logged.started)
            self._changed.notify_all()

    def snapshot(self) -> list[LoggedRequest]:
        with self._changed:
            return list(self._entries)

    def clear(self) -> None:
        with self._changed:
            self._entries.clear()

    def wait_for(self, count: int, *, timeout: float = 5.0) -> list[LoggedRequest]:
        """
        Wait until at least ``count`` requests are logged (a raw route's client may read its answer before that).

        :param count: How many entries to wait for.
        :param timeout: The most seconds to wait.
        :returns: A snapshot of the log.
        :raises ConfigurationError: If ``count`` is negative or ``timeout`` is not positive.
        :raises TimeoutError: If fewer than ``count`` entries were logged within ``timeout`` seconds.
        """
        _checks.int_in_range("count", count, 0)
        _checks.number_in_range("timeout", timeout, 0)
        with self._changed:
            if not self._changed.wait_for(lambda: len(self._entries) >= count, timeout=timeout):
                raise TimeoutError(f"{len(self._entries)} of {count} requests were logged within {timeout} s.")
            return list(self._entries)

    def __len__(self) -> int:
        with self._changed:
            return len(self._entries)

    @overload
    def __getitem__(self, index: int) -> LoggedRequest: ...

    @overload
    def __getitem__(self, index: slice) -> list[LoggedRequest]: ...

    def __getitem__(self, index: int | slice) -> LoggedRequest | list[LoggedRequest]:
        with self._changed:
            return self._entries[index]

    def __iter__(self) -> Iterator[LoggedRequest]:
        return iter(self.snapshot())


def check_path(path: str) -> str:
    if not isinstance(path, str) or not path.startswith("/") or path.startswith("//"):
        raise ConfigurationError(f"path must start with a single '/', like '/docs/page.html'; got {path!r}.")
    if any(ch.isspace() for ch in path):
        raise ConfigurationError(f"path must not contain whitespace; percent-encode it (%20), got {path!r}.")
    return path


def check_headers(headers: Mapping[str, str] | None) -> dict[str, str]:
    result = dict(headers or {})
    for name, value in result.items():
        if not (name and isinstance(name, str) and isinstance(value, str)) or any(c in name + value for c in "\r\n"):
            raise ConfigurationError(
                f"headers must map non-empty one-line str names to one-line str values; got {name!r}."
            )
    return result


_HOST = "127.0.0.1"
_MAX_REQUEST_BODY = 10 * 1024 * 1024


class RequestHandler(BaseHTTPRequestHandler):
    """
    Hands every request to the owning :class:`LoopbackServer`, logs it, and never writes to stderr. Responses are
    buffered, so a client that has read a whole response always finds its request logged.
    """

    server: _QuietHTTPServer
    server_version = "LoopbackServer/1.0"
    wbufsize = 1 << 20  # buffered: the framework flushes after the handler (and the log entry) is done
    status_sent: int = 0
    json_body: Any = None

    def log_message(self, format: str, *args: Any) -> None:
        pass  # no access log

    def send_response(self, code: int, message: str | None = None) -> None:
        self.status_sent = code
        super().send_response(code, message)

    def read_body(self) -> bytes:
        """The request body announced by ``Content-Length`` (empty when none; over 10 MiB cut short)."""
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
        """Send a whole response (no body for HEAD); a ``Content-Type`` or ``Content-Length`` in ``headers`` wins."""
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
        pass  # no traceback on stderr


class LoopbackServer:
    """
    Base class of the loopback servers: an HTTP server on ``127.0.0.1`` with an ephemeral port, run in a daemon
    thread, as a context manager or between :meth:`start` and :meth:`stop`. Subclasses implement :meth:`_handle`.
    """

    handler_class: type[RequestHandler] = RequestHandler
    """The request handler of every connection (a subclass may speak HTTP/1.1 with keep-alive, say)."""

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
        :param path: A path starting with ``/``, optionally with a query string.
        :returns: Its full URL on this server, for example ``"http://127.0.0.1:54321/docs/a.html"``.
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
        Stop serving, close the socket and wait for the server thread; requests still being answered are cut short.

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
        """Sleep ``seconds``; ``True`` (at once) if the server is stopping."""
        return self._stopping.wait(seconds) if seconds > 0 else self._stopping.is_set()

    def _handle(self, handler: RequestHandler) -> None:
        raise NotImplementedError
