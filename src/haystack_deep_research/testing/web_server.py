"""
A static web server on ``127.0.0.1`` for tests: HTML pages, PDFs, redirects, slow bodies and raw (even broken or
hostile) responses at chosen paths, each added by one of :class:`LoopbackWebServer`'s ``add_*`` methods.
"""

from __future__ import annotations

import html
import re
import select
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from urllib.parse import urlsplit

from haystack_deep_research import _checks
from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.testing._server import LoopbackServer, RequestHandler, check_headers, check_path
from haystack_deep_research.testing.pdf import make_pdf

__all__ = ["LoopbackWebServer"]

_HTML = "text/html; charset=utf-8"
_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_STATUS_LINE = re.compile(rb"HTTP/\d(?:\.\d)? (\d{3})")


def _check_drip(
    body: bytes, delay_per_chunk: float, chunk_size: int, *, what: str, allow_zero_chunk: bool = False
) -> None:
    if not isinstance(body, bytes):
        raise ConfigurationError(f"body must be bytes for {what}; encode it first, got {type(body).__name__}.")
    _checks.number_in_range("delay_per_chunk", delay_per_chunk, 0, include_low=True)
    _checks.int_in_range("chunk_size", chunk_size, 0 if allow_zero_chunk else 1)


def _check_body(body: str | bytes) -> bytes:
    if isinstance(body, str):
        return body.encode("utf-8")
    if isinstance(body, bytes | bytearray | memoryview):
        return bytes(body)
    raise ConfigurationError(f"body must be str or bytes, got {type(body).__name__}.")


def _check_content_type(content_type: str) -> str:
    if not isinstance(content_type, str) or not content_type.strip() or "\n" in content_type or "\r" in content_type:
        raise ConfigurationError(f"content_type must be a one-line media type like 'text/plain', got {content_type!r}.")
    return content_type


@dataclass(frozen=True)
class _Route:
    body: bytes
    content_type: str
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    delay_per_chunk: float = 0.0
    chunk_size: int = 0  # 0 sends the body in one write
    content_length: bool = True  # False: no Content-Length; the body ends when the connection closes
    raw: bool = False  # the body is the whole response, status line and headers included
    hold_open: bool = False  # after the body, keep the connection open and silent
    stream: Callable[[], Iterable[bytes]] | None = None  # the body, made chunk by chunk for each request


class LoopbackWebServer(LoopbackServer):
    """
    A static web server on ``127.0.0.1`` with an ephemeral port, for fetching pages in tests with no network.

    Routes can be added before or after :meth:`start`. A path is matched exactly, first with its query string and
    then without it. Unknown paths get a 404 HTML page; ``GET`` and ``HEAD`` are answered, other methods get 405.
    Every request is logged in :attr:`requests`.
    """

    def __init__(self) -> None:
        super().__init__()
        self._routes: dict[str, _Route] = {}
        self._routes_lock = threading.Lock()

    def add_page(
        self,
        path: str,
        body: str | bytes,
        *,
        content_type: str = _HTML,
        status: int = 200,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """
        Serve a fixed body at ``path``, replacing any route already there.

        :param path: The path, starting with ``/``; it may carry a query string to match only that query.
        :param body: The body; a ``str`` is sent as UTF-8.
        :param content_type: The ``Content-Type`` header.
        :param status: The status code, 100 to 599.
        :param headers: Extra response headers, for example ``{"Cache-Control": "no-store"}``.
        :raises ConfigurationError: If an argument is out of range or of the wrong type.
        """
        status = _checks.int_in_range("status", status, 100, 599)
        self._add(path, _Route(_check_body(body), _check_content_type(content_type), status, check_headers(headers)))

    def add_pdf(self, path: str, pages: str | Sequence[str], *, title: str | None = None) -> None:
        """
        Serve a PDF made by :func:`~haystack_deep_research.testing.pdf.make_pdf` at ``path``.

        :param path: The path, starting with ``/``.
        :param pages: The text of each page; a single string makes one page.
        :param title: The document title, or ``None``.
        :raises ConfigurationError: If ``path`` or the PDF arguments are invalid.
        """
        self.add_page(path, make_pdf(pages, title=title), content_type="application/pdf")

    def add_redirect(self, path: str, location: str, *, status: int = 302) -> None:
        """
        Redirect ``path`` to ``location``.

        :param path: The path, starting with ``/``.
        :param location: The ``Location`` header, sent as given: a path on this server (``/b.html``) or any URL.
        :param status: One of 301, 302, 303, 307 and 308.
        :raises ConfigurationError: If ``status`` is not a redirect status or ``location`` is empty.
        """
        if status not in _REDIRECT_STATUSES:
            raise ConfigurationError(
                f"status must be one of {sorted(_REDIRECT_STATUSES)} for a redirect, got {status}."
            )
        if not isinstance(location, str) or not location.strip():
            raise ConfigurationError("location must be a non-empty URL or path, like '/new.html'.")
        body = f'<html><body><a href="{html.escape(location)}">Moved</a></body></html>'
        self.add_page(path, body, status=status, headers={"Location": location})

    def add_slow(
        self,
        path: str,
        body: bytes,
        *,
        delay_per_chunk: float,
        chunk_size: int = 1,
        content_type: str = _HTML,
        content_length: bool = True,
    ) -> None:
        """
        Serve ``body`` in ``chunk_size``-byte pieces, pausing ``delay_per_chunk`` seconds before each one.

        By default the full ``Content-Length`` is sent up front, so a client sees a slow body rather than a short
        one. The drip stops early when the server is stopped or the client disconnects.

        :param path: The path, starting with ``/``.
        :param body: The body to drip.
        :param delay_per_chunk: Seconds to wait before each chunk, 0 or more.
        :param chunk_size: Bytes per chunk, 1 or more.
        :param content_type: The ``Content-Type`` header.
        :param content_length: Whether to send ``Content-Length``; without it the body ends when the server closes
            the connection, so a client cannot tell a body cut short from a complete one.
        :raises ConfigurationError: If an argument is out of range or of the wrong type.
        """
        _check_drip(body, delay_per_chunk, chunk_size, what="a slow route")
        route = _Route(
            body,
            _check_content_type(content_type),
            headers={"Content-Length": str(len(body))} if content_length else {},
            delay_per_chunk=float(delay_per_chunk),
            chunk_size=chunk_size,
            content_length=bool(content_length),
        )
        self._add(path, route)

    def add_stream(
        self,
        path: str,
        chunks: Callable[[], Iterable[bytes]],
        *,
        content_type: str = _HTML,
        headers: Mapping[str, str] | None = None,
        content_length: int | None = None,
    ) -> None:
        """
        Serve a body made chunk by chunk for each request, never held whole: for bodies too large to keep in memory.

        :param path: The path, starting with ``/``.
        :param chunks: Called once per request; yields the body's chunks. It may count what it yields.
        :param content_type: The ``Content-Type`` header.
        :param headers: Extra response headers (``Content-Encoding`` for a compressed stream, say).
        :param content_length: The ``Content-Length`` to announce, or ``None`` for none (the body then ends when the
            connection closes).
        :raises ConfigurationError: If an argument is of the wrong type or out of range.
        """
        if not callable(chunks):
            raise ConfigurationError(f"chunks must be a callable returning an iterable of bytes; got {chunks!r}.")
        extra = check_headers(headers)
        if content_length is not None:
            extra["Content-Length"] = str(_checks.int_in_range("content_length", content_length, 0))
        checked = _check_content_type(content_type)
        self._add(path, _Route(b"", checked, headers=extra, content_length=content_length is not None, stream=chunks))

    def add_raw(
        self,
        path: str,
        response: bytes,
        *,
        delay_per_chunk: float = 0.0,
        chunk_size: int = 0,
        hold_open: bool = False,
    ) -> None:
        """
        Answer ``path`` with ``response`` written to the connection exactly as given: status line, headers and body.

        Use it for responses no well-behaved server sends: headers trickled a byte at a time, a ``Content-Length``
        that lies, a malformed status line, or (with ``b""``) a connection dropped without an answer. The request
        log records the status from the status line, or ``0`` when there is none.

        :param path: The path, starting with ``/``.
        :param response: The bytes to send, for example ``b"HTTP/1.1 200 OK\\r\\nContent-Length: 2\\r\\n\\r\\nhi"``.
        :param delay_per_chunk: Seconds to wait before each chunk, 0 or more.
        :param chunk_size: Bytes per chunk, 1 or more; 0 (the default) sends everything in one write.
        :param hold_open: After sending, keep the connection open and silent until the client leaves or the server
            stops (a server that stalls); by default the connection is closed.
        :raises ConfigurationError: If an argument is out of range or of the wrong type.
        """
        _check_drip(response, delay_per_chunk, chunk_size, what="a raw route", allow_zero_chunk=True)
        route = _Route(
            response,
            "",
            status=int(found.group(1)) if (found := _STATUS_LINE.match(response)) else 0,
            delay_per_chunk=float(delay_per_chunk),
            chunk_size=chunk_size,
            raw=True,
            hold_open=bool(hold_open),
        )
        self._add(path, route)

    def remove(self, path: str) -> None:
        """
        Stop serving ``path``; it answers 404 afterwards. Does nothing if no route is there.

        :param path: The path given when the route was added.
        :raises ConfigurationError: If ``path`` does not start with ``/``.
        """
        with self._routes_lock:
            self._routes.pop(check_path(path), None)

    def _add(self, path: str, route: _Route) -> None:
        with self._routes_lock:
            self._routes[check_path(path)] = route

    def _handle(self, handler: RequestHandler) -> None:
        if handler.command not in {"GET", "HEAD"}:
            handler.read_body()
            page = _error_page(HTTPStatus.METHOD_NOT_ALLOWED, f"{handler.command} is not supported here.")
            handler.send_bytes(405, page, content_type=_HTML, headers={"Allow": "GET, HEAD"})
            return
        with self._routes_lock:
            route = self._routes.get(handler.path) or self._routes.get(urlsplit(handler.path).path)
        if route is None:
            page = _error_page(HTTPStatus.NOT_FOUND, f"Nothing is served at {handler.path}.")
            handler.send_bytes(404, page, content_type=_HTML)
        elif route.raw:
            handler.status_sent = route.status
            handler.close_connection = True
            if self._drip(handler, route, flush_last=route.hold_open) and route.hold_open:
                self._hold(handler)
        elif route.stream is None and route.chunk_size == 0:
            handler.send_bytes(route.status, route.body, content_type=route.content_type, headers=route.headers)
        else:  # a body made for each request, or dripped
            handler.send_response(route.status)
            handler.send_header("Content-Type", route.content_type)
            for name, value in route.headers.items():
                handler.send_header(name, value)
            if not route.content_length:
                handler.close_connection = True
            handler.end_headers()
            if handler.command == "HEAD":
                return
            if route.stream is None:
                self._drip(handler, route)
                return
            for chunk in route.stream():
                if not self.running:
                    break
                handler.wfile.write(chunk)

    def _drip(self, handler: RequestHandler, route: _Route, *, flush_last: bool = False) -> bool:
        """
        Write the route's body chunk by chunk; ``False`` if the server stopped first. The last chunk is left in the
        buffer (the framework sends it once the request is logged) unless ``flush_last``.
        """
        handler.wfile.flush()
        size = route.chunk_size or max(len(route.body), 1)
        starts = range(0, len(route.body), size)
        for start in starts:
            if self._wait_or_stop(route.delay_per_chunk):
                handler.close_connection = True
                return False
            handler.wfile.write(route.body[start : start + size])
            if start != starts[-1] or flush_last:
                handler.wfile.flush()
        return True

    def _hold(self, handler: RequestHandler) -> None:
        """Keep the connection open, sending nothing, until the client closes it or the server stops."""
        while not self._wait_or_stop(0):
            readable, _, _ = select.select([handler.connection], [], [], 0.05)
            if readable and not handler.connection.recv(65536):
                return


def _error_page(status: HTTPStatus, detail: str) -> bytes:
    title = f"{status.value} {status.phrase}"
    page = f"<html><head><title>{title}</title></head><body><h1>{title}</h1><p>{html.escape(detail)}</p></body></html>"
    return page.encode("utf-8")
