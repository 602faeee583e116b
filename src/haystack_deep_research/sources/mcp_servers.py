"""
MCP servers as sources (see docs/sources.md): :class:`MCPServer`, a name and a stdio command or a streamable-HTTP URL,
and :class:`MCPSession`, one run's connection to one server through the official SDK (the ``[mcp]`` extra).

The SDK is async and its transports must be entered and left in one task, while a run's tools are called from the
Agent's worker threads and from event loops; so a session runs the connection on an event loop of its own, in a
daemon thread, and each tool call is a task there, waited for with the server's ``call_timeout``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from haystack_deep_research import _checks
from haystack_deep_research._serialization import FieldsSerialized
from haystack_deep_research.errors import ConfigurationError, MCPServerError, MissingExtraError

if TYPE_CHECKING:
    from mcp import ClientSession

__all__ = ["MCPServer", "MCPSession", "mcp_servers_from", "require_sdk"]

_NAME = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,29}[a-z0-9])?$")


@dataclass(frozen=True)
class MCPServer(FieldsSerialized):
    """
    One MCP server whose tools the researchers may call.

    :param name: A host name label (lower-case letters, digits and inner hyphens, at most 31 characters): the prefix
        of its tools' names and the host of the ``mcp://<name>/<tool>/<id>`` citations of what they return.
    :param command: The command that starts the server over stdio, as a list (``["python", "server.py"]``).
    :param url: The server's streamable-HTTP endpoint (``http://127.0.0.1:8000/mcp``), instead of a command.
    :param env: Environment variables for the command, on top of a minimal default environment.
    :param cwd: The command's working directory.
    :param description: What the server holds; shown to the researchers next to its tools.
    :param connect_timeout: Seconds to start the server and list its tools, more than 0 and up to 600.
    :param call_timeout: Seconds one tool call may take, more than 0 and up to 3600.
    :raises ConfigurationError: If a field is invalid, or both or neither of ``command`` and ``url`` are given.
    """

    name: str
    command: Sequence[str] | None = None
    url: str | None = None
    env: Mapping[str, str] | None = field(default=None, compare=False)
    cwd: str | None = None
    description: str = ""
    connect_timeout: float = 20.0
    call_timeout: float = 60.0

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise ConfigurationError(
                "an MCP server name must be lower-case letters, digits and hyphens, starting and ending with a letter "
                "or digit, at most 31 characters (it prefixes its tools' names and is the host of its citations "
                f"mcp://<name>/...); got {self.name!r}."
            )
        if (self.command is None) == (self.url is None):
            raise ConfigurationError(
                f"MCPServer {self.name!r} needs exactly one of command=[...] (a server started over stdio) or "
                "url='http://host:port/mcp' (a streamable-HTTP server)."
            )
        if self.command is not None:
            if isinstance(self.command, str) or not self.command or not all(isinstance(p, str) for p in self.command):
                raise ConfigurationError(
                    f"MCPServer {self.name!r}: command must be a non-empty list of strings, for example "
                    f"['python', 'server.py']; got {self.command!r}."
                )
            object.__setattr__(self, "command", tuple(self.command))
        if self.url is not None and (
            not isinstance(self.url, str) or not self.url.lower().startswith(("http://", "https://"))
        ):
            raise ConfigurationError(f"MCPServer {self.name!r}: url must be an http(s) URL; got {self.url!r}.")
        if self.env is not None and (
            not isinstance(self.env, Mapping)
            or not all(isinstance(k, str) and isinstance(v, str) for k, v in self.env.items())
        ):
            raise ConfigurationError(f"MCPServer {self.name!r}: env must map names to strings.")
        if self.cwd is not None and not isinstance(self.cwd, str):
            raise ConfigurationError(f"MCPServer {self.name!r}: cwd must be a string path.")
        if not isinstance(self.description, str):
            raise ConfigurationError(f"MCPServer {self.name!r}: description must be a string.")
        _checks.number_in_range(f"MCPServer({self.name!r}).connect_timeout", self.connect_timeout, 0, 600)
        _checks.number_in_range(f"MCPServer({self.name!r}).call_timeout", self.call_timeout, 0, 3600)


def mcp_servers_from(servers: Any) -> list[MCPServer]:
    """
    The ``mcp_servers`` of a :class:`~haystack_deep_research.Sources` (``None``, or a list of :class:`MCPServer` with
    distinct names), checked, in order; anything else raises ``ConfigurationError``.
    """
    if servers is None:
        return []
    if isinstance(servers, MCPServer):
        servers = [servers]
    if not isinstance(servers, list | tuple) or not all(isinstance(server, MCPServer) for server in servers):
        raise ConfigurationError(
            "mcp_servers must be a list of MCPServer, for example [MCPServer(name='wiki', command=['wiki-mcp'])]; "
            f"got {type(servers).__name__}."
        )
    names = [server.name for server in servers]
    if len(set(names)) != len(names):
        raise ConfigurationError(f"mcp_servers holds two servers of one name: {sorted(names)}.")
    return list(servers)


_CLOSE_TIMEOUT = 10.0
"""Seconds closing waits for the transport to end (the SDK gives a stdio server 2 s, then terminates it)."""


def require_sdk() -> None:
    """
    :raises MissingExtraError: If the ``mcp`` package is not installed (checked where servers are given, so the
        mistake shows when the agent is built, not in the middle of a run).
    """
    _sdk()


def _sdk() -> Any:
    try:
        import mcp
        from mcp.client.stdio import StdioServerParameters, stdio_client
        from mcp.client.streamable_http import streamable_http_client
    except ImportError as error:
        raise MissingExtraError("MCP servers as sources", extra="mcp", module="mcp") from error
    return mcp, StdioServerParameters, stdio_client, streamable_http_client


class MCPSession:
    """A connection to one MCP server, opened by :meth:`open` and closed by :meth:`close` (see the module docstring)."""

    def __init__(self, server: MCPServer) -> None:
        self.server = server
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._main: concurrent.futures.Future[None] | None = None
        self._stop: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._session: ClientSession | None = None
        self._tools: list[Any] | None = None
        self._failure: MCPServerError | None = None
        self._closed = False
        self._reported = False

    def open(self) -> list[Any]:
        """
        Connect, once: later calls return what the first one gave.

        :returns: The server's tools (the SDK's ``Tool`` objects).
        :raises MCPServerError: If the server did not start or answer within ``connect_timeout`` (also on later calls).
        :raises MissingExtraError: If the ``mcp`` package is not installed.
        """
        with self._lock:
            if self._tools is None and self._failure is None:
                if self._closed:
                    raise MCPServerError(
                        f"the connection to MCP server {self.server.name!r} is closed (its run ended)."
                    )
                try:
                    self._tools = self._connect()
                except MCPServerError as error:
                    self._failure = error
                    self._shutdown()
            if self._failure is not None:
                raise self._failure
            return list(self._tools or [])

    def first_report(self) -> bool:
        """:returns: ``True`` the first time it is asked: whoever saw the failure first reports it."""
        with self._lock:
            first, self._reported = not self._reported, True
            return first

    def _connect(self) -> list[Any]:
        sdk = _sdk()
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, name=f"mcp-{self.server.name}", daemon=True)
        thread.start()
        self._loop, self._thread = loop, thread
        ready: concurrent.futures.Future[list[Any]] = concurrent.futures.Future()
        self._main = asyncio.run_coroutine_threadsafe(self._serve(sdk, ready), loop)
        try:
            return ready.result(timeout=self.server.connect_timeout)
        except concurrent.futures.TimeoutError:
            raise MCPServerError(
                f"MCP server {self.server.name!r} did not start and list its tools within "
                f"{self.server.connect_timeout:g} s; check its {self._target()}, or raise connect_timeout."
            ) from None
        except Exception as error:
            raise MCPServerError(
                f"MCP server {self.server.name!r} could not be started ({type(error).__name__}: {error}); check its "
                f"{self._target()}."
            ) from error

    def _target(self) -> str:
        if self.server.url is not None:
            return f"url {self.server.url}"
        return f"command {list(self.server.command or [])}"

    def _transport(self, sdk: Any) -> Any:
        _mcp, parameters, stdio_client, streamable_http_client = sdk
        if self.server.url is not None:
            return streamable_http_client(self.server.url)
        command = list(self.server.command or [])
        params = parameters(
            command=command[0], args=command[1:], env=dict(self.server.env or {}) or None, cwd=self.server.cwd
        )
        return stdio_client(params)

    async def _serve(self, sdk: Any, ready: concurrent.futures.Future[list[Any]]) -> None:
        self._stop = asyncio.Event()
        self._task = asyncio.current_task()
        try:
            async with contextlib.AsyncExitStack() as stack:
                streams = await stack.enter_async_context(self._transport(sdk))
                session = await stack.enter_async_context(sdk[0].ClientSession(streams[0], streams[1]))
                await session.initialize()
                tools: list[Any] = []
                cursor = None
                while True:
                    listed = await session.list_tools(cursor=cursor) if cursor else await session.list_tools()
                    tools.extend(listed.tools)
                    cursor = getattr(listed, "next_cursor", None)
                    if not cursor:
                        break
                self._session = session
                ready.set_result(tools)
                await self._stop.wait()
        except Exception as error:  # handed to the opener; after opening, closing is all that is left to do
            if not ready.done():
                ready.set_exception(_leaf(error))
        except asyncio.CancelledError:
            if not ready.done():
                ready.set_exception(MCPServerError(f"opening MCP server {self.server.name!r} was cancelled."))
        finally:
            self._session = None

    def _call_coroutine(self, name: str, arguments: dict[str, Any]) -> Any:
        session = self._session
        if session is None:
            raise MCPServerError(f"MCP server {self.server.name!r} is not connected (it failed, or its run ended).")
        return session.call_tool(name, arguments, read_timeout_seconds=self.server.call_timeout)

    def _submit(self, name: str, arguments: dict[str, Any]) -> concurrent.futures.Future[Any]:
        self.open()
        loop = self._loop
        if loop is None or self._closed:
            raise MCPServerError(f"MCP server {self.server.name!r} is not connected (its run ended).")
        return asyncio.run_coroutine_threadsafe(self._call_coroutine(name, arguments), loop)

    def _failed(self, name: str, error: BaseException) -> MCPServerError:
        if isinstance(error, MCPServerError):
            return error
        from mcp import MCPError
        from mcp.types import REQUEST_TIMEOUT

        timed_out = isinstance(error, MCPError) and error.code == REQUEST_TIMEOUT
        if timed_out or isinstance(error, TimeoutError | concurrent.futures.TimeoutError):
            return MCPServerError(
                f"the call of {name!r} on MCP server {self.server.name!r} took more than "
                f"{self.server.call_timeout:g} s (its call_timeout); try a narrower request."
            )
        return MCPServerError(
            f"the call of {name!r} on MCP server {self.server.name!r} failed: {type(error).__name__}: {error}"
        )

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        """
        Call one tool of the server, waiting at most ``call_timeout``; returns the SDK's ``CallToolResult``.

        :raises MCPServerError: If the server is not connected, or the call failed or timed out.
        """
        future = self._submit(name, arguments)
        try:
            return future.result(timeout=self.server.call_timeout + 1)
        except Exception as error:
            future.cancel()
            raise self._failed(name, error) from error

    async def call_async(self, name: str, arguments: dict[str, Any]) -> Any:
        """Async variant of :meth:`call`."""
        future = await asyncio.to_thread(self._submit, name, arguments)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), timeout=self.server.call_timeout + 1)
        except Exception as error:
            future.cancel()
            raise self._failed(name, error) from error

    def close(self) -> None:
        """End the connection (and a stdio server's process); harmless if it never opened or is already closed."""
        with self._lock:
            self._closed = True
            self._shutdown()

    def _shutdown(self) -> None:
        loop, thread = self._loop, self._thread
        self._loop = self._thread = self._main = None
        if loop is None:
            return
        ending = asyncio.run_coroutine_threadsafe(self._end(cancel=self._tools is None), loop)
        with contextlib.suppress(concurrent.futures.TimeoutError):
            ending.result(timeout=_CLOSE_TIMEOUT)
        loop.call_soon_threadsafe(loop.stop)
        if thread is not None:
            thread.join(timeout=_CLOSE_TIMEOUT)
        if not loop.is_running():
            loop.close()

    async def _end(self, *, cancel: bool) -> None:
        """Let the connection's task leave its transport: at once if it never opened (cancelled), else when told to."""
        task, stop = self._task, self._stop
        if task is None:
            return
        if cancel or stop is None:
            task.cancel()
        else:
            stop.set()
        await asyncio.wait([task], timeout=_CLOSE_TIMEOUT)


def _leaf(error: BaseException) -> BaseException:
    """The first error inside an exception group (the SDK's task groups wrap what failed), else the error itself."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error
